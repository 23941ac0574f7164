"""The rest of the pkg_resources surface 2020-22 code used, in the stand-in:
``parse_requirements`` + ``require`` (YOLOv5's ``check_requirements``),
``declare_namespace`` (pytorch-lightning 1.0's ``__init__``), ``from pkg_resources import
packaging`` (OpenAI CLIP), ``load_entry_point`` (old setuptools' console scripts) and the
resource streams and listings.

Red and green on the py312 stack, where pkg_resources is really gone; expected values
from the installed distributions' own metadata and from the files the tests write. On
the modern stack the stand-in is compared with setuptools' real pkg_resources, call by
call, on the same inputs."""

from __future__ import annotations

import importlib.util

import json
import os

import pytest

from support import run_python

gone = pytest.mark.stack("py312")

REQUIREMENTS = """\
# YOLOv5-style requirements.txt
numpy>=1.18.5  # base
pytest>=7, \\
  <1000
# pycocotools>=2.0  # COCO mAP
packaging
no-such-distribution-x>=1.0
"""


def write_namespace_package(root) -> tuple[str, str]:
    """A package ``nspkg`` split over two folders, its __init__ declaring the namespace as
    pytorch-lightning 1.0's did; the second folder holds the submodule ``extra``."""
    first, second = os.path.join(str(root), "first"), os.path.join(str(root), "second")
    for folder in (first, second):
        os.makedirs(os.path.join(folder, "nspkg"))
        with open(os.path.join(folder, "nspkg", "__init__.py"), "w") as handle:
            handle.write("__import__('pkg_resources').declare_namespace(__name__)\n")
    with open(os.path.join(second, "nspkg", "extra.py"), "w") as handle:
        handle.write("VALUE = 'from the second folder'\n")
    return first, second


@gone
def test_yolo_check_requirements_without_and_with_compatfix(tmp_path):
    (tmp_path / "requirements.txt").write_text(REQUIREMENTS)
    code = """
    import json
    import pkg_resources as pkg
    with open(%r) as f:
        requirements = [f"{x.name}{x.specifier}" for x in pkg.parse_requirements(f)]
    print(json.dumps(requirements))
    for r in requirements:
        try:
            pkg.require(r)
            print(r, "ok")
        except (pkg.DistributionNotFound, pkg.VersionConflict) as e:
            print(r, type(e).__name__)
    """ % str(tmp_path / "requirements.txt")
    off = run_python(code=code, compatfix=False)
    assert off.returncode != 0 and "No module named 'pkg_resources'" in off.stderr
    on = run_python(code=code)
    lines = on.stdout.splitlines()
    # specifier clauses come out sorted by packaging: "<1000,>=7"
    assert json.loads(lines[0]) == ["numpy>=1.18.5", "pytest<1000,>=7", "packaging", "no-such-distribution-x>=1.0"], \
        on.stderr[-2000:]
    # pytest and packaging are installed in every stack; numpy in some
    numpy = "ok" if importlib.util.find_spec("numpy") else "DistributionNotFound"
    assert lines[1:] == ["numpy>=1.18.5 " + numpy, "pytest<1000,>=7 ok", "packaging ok",
                         "no-such-distribution-x>=1.0 DistributionNotFound"], on.stdout + on.stderr[-2000:]


@gone
def test_declare_namespace_spans_the_folders(tmp_path):
    first, second = write_namespace_package(tmp_path)
    code = """
    import json, sys
    sys.path[:0] = [%r, %r]
    import nspkg
    from nspkg import extra
    print(extra.VALUE)
    print(json.dumps(list(nspkg.__path__)))
    """ % (first, second)
    off = run_python(code=code, compatfix=False)
    assert off.returncode != 0 and "No module named 'pkg_resources'" in off.stderr
    on = run_python(code=code)
    lines = on.stdout.splitlines()
    assert lines[:1] == ["from the second folder"], on.stderr[-2000:]
    assert json.loads(lines[1]) == [os.path.join(first, "nspkg"), os.path.join(second, "nspkg")]


@gone
def test_packaging_entry_points_and_resources():
    result = run_python(
        code="""
        import importlib.metadata as metadata, os, pytest
        from pkg_resources import packaging
        import pkg_resources
        # CLIP's test
        assert packaging.version.parse("1.7.0") < packaging.version.parse("1.7.1")
        declared = metadata.distribution("pytest").entry_points.select(group="console_scripts", name="pytest")
        module, _, attr = next(iter(declared)).value.partition(":")
        target = getattr(__import__(module, fromlist=[attr]), attr)
        assert pkg_resources.load_entry_point("pytest", "console_scripts", "pytest") is target
        assert pkg_resources.get_entry_info("pytest", "console_scripts", "pytest").module_name == module
        assert "pytest" in pkg_resources.get_entry_map("pytest", "console_scripts")
        try:
            pkg_resources.load_entry_point("pytest", "console_scripts", "no-such-script")
        except ImportError:
            pass
        else:
            raise AssertionError("no ImportError")
        folder = os.path.dirname(pytest.__file__)
        assert sorted(pkg_resources.resource_listdir("pytest", "")) == sorted(os.listdir(folder))
        assert pkg_resources.resource_isdir("_pytest", "config") and not pkg_resources.resource_isdir("pytest", "__init__.py")
        with pkg_resources.resource_stream("pytest", "__init__.py") as stream, open(pytest.__file__, "rb") as handle:
            assert stream.read() == handle.read()
        assert pkg_resources.Requirement.parse("torch>=1.7,<2").specs in ([("<", "2"), (">=", "1.7")],
                                                                          [(">=", "1.7"), ("<", "2")])
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


# --- modern: the stand-in against setuptools' real pkg_resources ------------------------------

COMPARE = """
import json, sys, warnings
warnings.simplefilter("ignore")
if sys.argv[1] == "standin":
    from compatfix import pkg_resources_standin as pkg
else:
    import pkg_resources as pkg
    assert "setuptools" in pkg.__file__ or "pkg_resources" in pkg.__file__
text = sys.argv[2]
out = {
    "lines": list(pkg.yield_lines(text)),
    "requirements": [[r.name, str(r.specifier), sorted(r.specs), sorted(r.extras), str(r.marker)]
                     for r in pkg.parse_requirements(text.splitlines(True))],
    "safe_name": [pkg.safe_name(name) for name in ("torch_vision", "a b..c", "Py-Yaml")],
    "entry_point": pkg.get_entry_info("pytest", "console_scripts", "pytest").module_name,
    "loaded": (lambda f: f.__module__ + "." + f.__qualname__)(pkg.load_entry_point("pytest", "console_scripts", "pytest")),
    "entry_map": sorted(pkg.get_entry_map("pytest", "console_scripts")),
    "version": str(pkg.get_distribution("pytest").version),
    "required": sorted(dist.project_name.lower() for dist in pkg.require("pytest")),
    "listing": sorted(pkg.resource_listdir("_pytest", "config")),
    "isdir": [pkg.resource_isdir("_pytest", name) for name in ("config", "python.py", "missing")],
    "stream": len(pkg.resource_stream("pytest", "__init__.py").read()),
    "packaging": pkg.packaging.version.parse("1.7.1") > pkg.packaging.version.parse("1.7.0"),
}
sys.path[:0] = sys.argv[3:5]
import nspkg
from nspkg import extra
out["namespace"] = list(nspkg.__path__)
print(json.dumps(out))
"""

COMPARED_TEXT = REQUIREMENTS + "torchvision[extra]>=0.8; python_version >= '3'\n\n   # indented comment\nPyYAML==5.3.1\n"


@pytest.mark.stack("modern")
def test_the_stand_in_answers_as_the_real_pkg_resources(tmp_path):
    first, second = write_namespace_package(tmp_path)
    answers = {}
    for which in ("real", "standin"):
        result = run_python("-c", COMPARE, which, COMPARED_TEXT, first, second)
        assert result.returncode == 0, result.stderr[-3000:]
        answers[which] = json.loads(result.stdout.splitlines()[-1])
    assert answers["standin"] == answers["real"]
    assert answers["real"]["namespace"] == [os.path.join(first, "nspkg"), os.path.join(second, "nspkg")]
