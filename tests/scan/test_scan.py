"""compatfix scan: what it finds in a hand-written repository (tests/fixtures/scan_repo),
that every name the registry and the inventory know is findable (a file generated from
the records themselves), its requirement readers, its outputs and exit codes, a
2,000-file repository, and its comparison with a run report."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest

from compatfix import inventory, registry
from compatfix.scan import _index, _requirements, compare_with_report, main, scan
from compatfix.scan._status import CHANGED, FIXED, NOT_FIXED, UNPARSED, WORKS
from support import FIXTURES, run_python

REPO = os.path.join(FIXTURES, "scan_repo")
SHIMS = registry.builtin_shims(registry.DEVICE_PACKAGES)
# Records in files that are being rewritten on another branch; they get their replacement there.
@pytest.fixture(scope="module")
def repo_result():
    return scan([REPO])


def found(result, file=None):
    return {(f.file, f.line, f.rule, f.status) for f in result.findings if file is None or f.file == file}


# the data ------------------------------------------------------------------------------------

def test_every_shim_of_compatfix_says_its_replacement():
    missing = {shim.name for shim in SHIMS if not shim.replacement and shim.device is None}
    assert not missing


def test_every_inventory_entry_says_its_replacement():
    assert [r.names for r in inventory.REMOVALS if not r.replacement] == []


def test_every_restored_name_and_provided_module_has_its_own_replacement():
    """A name a shim restores, or a module it provides, is a key of its renames or rewrites:
    the scan shows a replacement for that name, not only the record's summary. CPU mode's
    shims are not fixes to port: the code they serve is right on a machine with a GPU."""
    for shim in (shim for shim in SHIMS if shim.device is None):
        keys = set(shim.renames) | set(shim.rewrites)
        expected = {"%s.%s" % (t, n) for t in shim.targets for n in shim.restores}
        if shim.kind == registry.PROVIDE:
            expected |= set(shim.targets)
        assert expected - keys == set(), shim.name


def test_a_name_is_renamed_or_rewritten_never_both():
    with pytest.raises(ValueError, match="either renamed or rewritten"):
        registry.Shim("x.y", targets=["x"], apply=lambda m: None, broke="", summary="",
                      renames={"x.a": "b"}, rewrites={"x.a": "c"})


def test_every_key_parses():
    index = _index.build_index(SHIMS)
    assert index.patterns
    for key, pattern in index.patterns.items():
        assert pattern.name and pattern.sources, key


def _code_for(key: str) -> str:
    """A line of Python that uses ``key`` (written from the key, so from the records)."""
    pattern = _index.parse_key(key)
    if pattern.with_keyword:
        arguments = "%s=1" % pattern.with_keyword
    elif pattern.string_argument is not None:
        arguments = repr(pattern.string_argument)
    else:
        arguments = ""
    name = pattern.name
    if name.startswith("*."):
        return "thing.%s(%s)" % (name[2:], arguments)
    if name.endswith(".*"):
        name = name[:-2] + ".some_function"
    root = name.partition(".")[0]
    use = "%s(%s)" % (name, arguments) if pattern.call else name
    return "import %s\n%s" % (root, use)


def test_every_shim_and_inventory_name_is_found(tmp_path):
    """One file per key of every record: the scan finds each key, with each record that
    declares it. The keys are read from the records, so a new record is checked at once."""
    index = _index.build_index(SHIMS)
    for number, key in enumerate(sorted(index.patterns)):
        (tmp_path / ("use_%03d.py" % number)).write_text(_code_for(key) + "\n")
    result = scan([str(tmp_path)])
    matched = {(f.file, f.rule) for f in result.findings}
    for number, key in enumerate(sorted(index.patterns)):
        for source in index.patterns[key].sources:
            assert ("use_%03d.py" % number, source.id) in matched, key
    covered = {source.shim.name for p in index.patterns.values() for source in p.sources if source.shim}
    restoring = {shim.name for shim in SHIMS if shim.restores or shim.kind == registry.PROVIDE}
    assert restoring - covered == set()
    with_names = {removal.names for removal in inventory.REMOVALS if removal.renames or removal.rewrites}
    found_removals = {s.removal.names for p in index.patterns.values() for s in p.sources if s.removal}
    assert with_names == found_removals


# a realistic repository ------------------------------------------------------------------------

def test_finds_the_uses_in_a_hand_written_repository(repo_result):
    uses = found(repo_result)
    expected = {
        ("train.py", 9, "apex.amp", FIXED),  # from apex import amp
        ("train.py", 10, "apex.parallel", FIXED),  # ... import DistributedDataParallel as ApexDDP
        ("train.py", 18, "argparse.local_rank_spelling", FIXED),
        ("train.py", 18, "argparse.local_rank_from_env", FIXED),
        ("train.py", 25, "yaml.default_loader", FIXED),  # yaml.load(handle)
        ("train.py", 31, "apex.amp", FIXED),  # amp.initialize(...)
        ("train.py", 33, "numpy.builtin_aliases", FIXED),  # .astype(np.float)
        ("train.py", 34, "numpy.builtin_aliases", FIXED),  # dtype=np.int
        ("train.py", 36, "numpy.asscalar", FIXED),
        ("models/backbone.py", 2, "collections.abc_aliases", FIXED),
        ("models/backbone.py", 5, "mmcv._ext", FIXED),
        ("models/backbone.py", 6, "torch._six", FIXED),
        ("models/backbone.py", 13, "torch._six", FIXED),  # container_abcs.Iterable
        ("models/backbone.py", 27, "collections.abc_aliases", FIXED),  # collections.Mapping
        ("models/backbone.py", 29, "torch.linalg_removals", FIXED),  # torch.qr
        ("tools/convert.py", 1, "inventory:imp", WORKS),  # Python 3.11 still has imp
        ("tools/convert.py", 2, "inventory:distutils", WORKS),
        ("tools/convert.py", 4, "scipy.misc.imresize", FIXED),
        ("tools/convert.py", 4, "inventory:scipy.misc.imrotate", NOT_FIXED),  # no shim restores it
        ("tools/legacy_eval.py", 2, "syntax-error", UNPARSED),
    }
    assert expected - uses == set()
    # what is not a use: a Loader passed positionally, torch.fft the module, skipped folders
    assert not any(f.file == "train.py" and f.line == 27 for f in repo_result.findings)
    assert not any(f.file == "models/backbone.py" and f.line == 30 for f in repo_result.findings)
    assert not any(f.file.startswith(("node_modules/", ".venv/")) for f in repo_result.findings)


def test_a_finding_says_the_replacement_and_whether_it_is_mechanical(repo_result):
    by_name = {f.name: f for f in repo_result.findings}
    assert (by_name["numpy.float"].replacement, by_name["numpy.float"].mechanical) == ("float", True)
    assert (by_name["torch._six.inf"].replacement, by_name["torch._six.inf"].mechanical) == ("math.inf", True)
    assert by_name["numpy.asscalar"].mechanical is False
    assert "a.item()" in by_name["numpy.asscalar"].replacement
    assert "1.24" in by_name["numpy.float"].broke


def test_requirements_pins_and_the_unrelated_apex(repo_result):
    requirements = {(f.file, f.line, f.rule) for f in repo_result.findings if f.kind == "requirement"}
    assert {
        ("requirements.txt", 2, "requirement:torch"),
        ("requirements.txt", 3, "requirement:numpy"),
        ("requirements.txt", 4, "apex"),
        ("requirements/extra.txt", 1, "requirement:mmcv"),
        ("environment.yml", 6, "requirement:torch"),
    } <= requirements
    numpy_pin = next(f for f in repo_result.findings if f.rule == "requirement:numpy")
    assert "numpy.builtin_aliases" in numpy_pin.why and "np.float" in numpy_pin.broke
    assert "np.asscalar" not in numpy_pin.broke  # removed in 1.23, which the pin allows
    apex = next(f for f in repo_result.findings if f.rule == "apex" and f.kind == "requirement")
    assert "Pyramid" in apex.why
    # opencv-python and pyyaml name nothing compatfix knows about
    assert not any("opencv" in f.name or "pyyaml" in f.name for f in repo_result.findings)


@pytest.mark.parametrize("line, expected", [
    ("numpy<1.24", ("numpy", "<1.24")),
    ("torch==1.7.1+cu110 ; python_version >= '3.6'", ("torch", "==1.7.1+cu110")),
    ("timm[extra] ~= 0.4.5  # paper", ("timm", ">=0.4.5,==0.4.*")),
    ("-r other.txt", None),
    ("git+https://github.com/NVIDIA/apex", None),
])
def test_requirement_lines(line, expected):
    assert _requirements.parse_line(line) == expected


def test_conda_lines():
    assert _requirements.parse_line("pytorch=1.7.1=py3.8_cuda10.1", conda=True) == ("pytorch", "==1.7.1.*")
    assert _requirements.parse_line("conda-forge::numpy<1.20", conda=True) == ("numpy", "<1.20")


def test_setup_py_cfg_and_pyproject(tmp_path):
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(install_requires=['numpy<1.20'])\n")
    (tmp_path / "setup.cfg").write_text("[options]\ninstall_requires =\n    torch==1.8.0\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["scipy<1.2"]\n')
    result = scan([str(tmp_path)])
    assert {(f.file, f.line, f.rule) for f in result.findings} == {
        ("setup.py", 2, "requirement:numpy"), ("setup.cfg", 3, "requirement:torch"),
        ("pyproject.toml", 3, "requirement:scipy")}


# output and exit codes -------------------------------------------------------------------------

def test_json_output_and_exit_code(capsys):
    assert main(["--json", REPO]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["needs_action"] > 0
    assert "numpy.builtin_aliases" in data["shims"]
    first = data["findings"][0]
    assert {"file", "line", "column", "rule", "shim", "status", "replacement", "mechanical", "needs_action"} <= set(first)


def test_exit_zero_and_clean_code(tmp_path, capsys):
    assert main(["--exit-zero", REPO]) == 0
    (tmp_path / "ok.py").write_text("import numpy as np\nx = np.float64(1)\n")
    (tmp_path / "fixed.py").write_text("import numpy as np\nx = np.float(1)\n")
    assert main([str(tmp_path)]) == 0  # a shim fixes it here: nothing needs action
    out = capsys.readouterr().out
    assert "fixed.py:2:5  fixed" in out and "rename to float" in out


def test_usage_errors_exit_2(capsys):
    assert main(["/no/such/path"]) == 2
    assert main(["--format", "xml", REPO]) == 2
    capsys.readouterr()


def test_sarif_output(capsys):
    main(["--format", "sarif", REPO])
    log = json.loads(capsys.readouterr().out)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    rules = {rule["id"] for rule in run["tool"]["driver"]["rules"]}
    assert {result["ruleId"] for result in run["results"]} == rules
    levels = {result["ruleId"]: result["level"] for result in run["results"]}
    assert levels["numpy.builtin_aliases"] == "note" and levels["syntax-error"] == "error"
    location = run["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%" and location["region"]["startLine"] >= 1


def test_runs_as_a_module_without_importing_the_targets():
    """python -m compatfix.scan imports none of the libraries it looks for."""
    code = ("import sys, runpy; sys.argv = ['scan', '--exit-zero', %r]\n"
            "try:\n    runpy.run_module('compatfix.scan', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'torch', 'yaml', 'mmcv', 'skimage') if m in sys.modules))") % REPO
    result = run_python("-c", code, compatfix=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


# scale and comparison ---------------------------------------------------------------------------

def test_a_repository_of_2000_files(tmp_path):
    """It completes on 2,000 files; the time is printed (pytest -s), never asserted."""
    body = ("import numpy as np\nimport torch\nfrom torch._six import inf\n\n\n"
            + "".join("def f%d(x):\n    return np.asarray(x, dtype=np.float) * %d + torch.ones(3).sum()\n\n" % (i, i)
                      for i in range(20)))
    for package in range(40):
        folder = tmp_path / ("package_%02d" % package)
        folder.mkdir()
        for module in range(50):
            (folder / ("module_%02d.py" % module)).write_text(body)
    started = time.perf_counter()
    result = scan([str(tmp_path)])
    elapsed = time.perf_counter() - started
    assert result.files == 2000
    assert len(result.findings) == 2000 * 21
    print("\ncompatfix scan: 2000 files in %.2f s" % elapsed, file=sys.stderr)


def test_compare_with_report():
    scan_json = {"root": "/repo", "shims": ["numpy.builtin_aliases", "torch._six", "yaml.default_loader"],
                 "findings": [
                     {"file": "train.py", "line": 3, "shim": "numpy.builtin_aliases"},
                     {"file": "train.py", "line": 9, "shim": "numpy.builtin_aliases"},
                     {"file": "utils.py", "line": 1, "shim": "torch._six"},
                 ]}
    report = {"processes": [
        {"applied": [{"shim": "numpy.builtin_aliases"}, {"shim": "torch._six"},
                     {"shim": "torch.comparisons_contiguous"}, {"shim": "cpu.torch.tensor_moves"}],
         "deprecated_uses": [{"shim": "numpy.builtin_aliases", "name": "float", "file": "/repo/train.py", "line": 3},
                             {"shim": "numpy.builtin_aliases", "name": "int", "file": "/repo/eval.py", "line": 7}]},
        {"applied": [{"shim": "argparse.local_rank_spelling"}], "deprecated_uses": []},
    ]}
    scores = compare_with_report(scan_json, report)
    shims = scores["shims"]
    # predicted 3; actual and visible to scan: builtin_aliases, torch._six, local_rank_spelling
    assert shims["true_positive"] == ["numpy.builtin_aliases", "torch._six"]
    assert shims["false_positive"] == ["yaml.default_loader"]
    assert shims["false_negative"] == ["argparse.local_rank_spelling"]
    assert shims["precision"] == pytest.approx(2 / 3) and shims["recall"] == pytest.approx(2 / 3)
    assert scores["not_visible"] == ["cpu.torch.tensor_moves", "torch.comparisons_contiguous"]
    uses = scores["uses"]  # only numpy.builtin_aliases recorded uses: torch._six's finding is not counted
    assert uses["true_positive"] == [("train.py", 3, "numpy.builtin_aliases")]
    assert uses["precision"] == pytest.approx(1 / 2) and uses["recall"] == pytest.approx(1 / 2)


# names back with another meaning, removed standard-library modules, Python ranges ------------

def test_np_bool_and_np_long_are_changed_not_fixed_on_numpy_2(tmp_path):
    """numpy 2 has np.bool (numpy's bool_) and np.long (a C long) again; the shim restores
    them on numpy < 2 only, so on numpy 2 a use runs, with another meaning."""
    import numpy  # the installed numpy decides what is true here

    (tmp_path / "masks.py").write_text("import numpy as np\nm = np.zeros(3, dtype=np.bool)\nn = np.long(3)\n"
                                       "x = np.float(1)\n")
    result = scan([str(tmp_path)])
    by_name = {f.name: f for f in result.findings}
    assert by_name["numpy.float"].status == FIXED
    major = int(numpy.__version__.split(".")[0])
    for name in ("numpy.bool", "numpy.long"):
        finding = by_name[name]
        if major >= 2:
            # what the status says: the name is there again, and is not the builtin the code meant
            assert getattr(numpy, name.split(".")[1]) not in (bool, int)
            assert finding.status == CHANGED and not finding.needs_action, finding
            assert "another meaning" in finding.broke and "numpy %s" % numpy.__version__ in finding.why
        else:
            assert finding.status == FIXED
    assert main(["--exit-zero", str(tmp_path)]) == 0


def test_the_python_range_a_repository_declares(tmp_path, capsys):
    running = "%d.%d" % sys.version_info[:2]
    outside = "<%d.%d" % (sys.version_info[0], sys.version_info[1])  # excludes the running Python
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(\n    name='x',\n"
                                       "    python_requires='>=3.6,%s',\n)\n" % outside)
    (tmp_path / "setup.cfg").write_text("[options]\npython_requires = >=3.6, %s\n" % outside)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = ">=3.6,%s"\n' % outside)
    (tmp_path / "environment.yml").write_text("name: x\ndependencies:\n  - python=3.7\n  - pip\n")
    inside = tmp_path / "inside"
    inside.mkdir()
    (inside / "pyproject.toml").write_text('[project]\nname = "y"\nrequires-python = ">=%s"\n' % running)
    result = scan([str(tmp_path)])
    python = {(f.file, f.line, f.status) for f in result.findings if f.rule == "requirement:python"}
    assert python == {("setup.py", 4, "conflict"), ("setup.cfg", 2, "conflict"), ("pyproject.toml", 3, "conflict"),
                      ("environment.yml", 3, "conflict")}
    finding = next(f for f in result.findings if f.file == "setup.py")
    assert finding.why.startswith("Python %d.%d.%d is running here, outside >=3.6,%s" % (sys.version_info[:3] + (outside,)))
    assert main([str(tmp_path)]) == 1
    capsys.readouterr()


@pytest.mark.parametrize("module, release", [
    ("asyncore", "3.12"), ("asynchat", "3.12"), ("smtpd", "3.12"), ("distutils", "3.12"), ("imp", "3.12"),
    ("aifc", "3.13"), ("audioop", "3.13"), ("cgi", "3.13"), ("cgitb", "3.13"), ("chunk", "3.13"),
    ("crypt", "3.13"), ("imghdr", "3.13"), ("mailcap", "3.13"), ("msilib", "3.13"), ("nis", "3.13"),
    ("nntplib", "3.13"), ("ossaudiodev", "3.13"), ("pipes", "3.13"), ("sndhdr", "3.13"), ("spwd", "3.13"),
    ("sunau", "3.13"), ("telnetlib", "3.13"), ("uu", "3.13"), ("xdrlib", "3.13"), ("lib2to3", "3.13"),
])
def test_every_standard_library_module_python_removed_is_found(tmp_path, module, release):
    (tmp_path / "old.py").write_text("import %s\n" % module)
    (finding,) = scan([str(tmp_path)]).findings
    expected = WORKS if sys.version_info[:2] < tuple(int(part) for part in release.split(".")) else None
    assert finding.name == module and finding.rule.startswith("inventory:")  # one rule per entry
    assert "python %s" % release in finding.broke
    if expected is not None:
        assert finding.status == expected and ("removed in %s" % release) in finding.why
