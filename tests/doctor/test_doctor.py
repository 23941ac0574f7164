"""Tests for ``compatfix doctor``: each check on fake package trees (problem and clean
case), plus the real environment of the test stacks."""

import ast
import ctypes
import importlib.machinery
import os
import subprocess
import sys
import textwrap
from importlib import metadata

import pytest

from compatfix import doctor
from compatfix.doctor import Finding
from support import clean_env, run_python

EXT = importlib.machinery.EXTENSION_SUFFIXES[0]  # e.g. .cpython-311-x86_64-linux-gnu.so


def write(path, text="", binary=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    if binary is not None:
        path.write_bytes(binary)
    else:
        path.write_text(textwrap.dedent(text))
    return path


def dist_info(site, name, version, summary="", top_level=None, extra=""):
    folder = site / ("%s-%s.dist-info" % (name, version))
    write(folder / "METADATA", "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n%s"
          % (name, version, summary, extra))
    if top_level is not None:
        write(folder / "top_level.txt", top_level + "\n")
    return folder


def severities(findings):
    return [(f.check, f.severity) for f in findings]


# --- apex -------------------------------------------------------------------------------


def impostor_apex(site, with_metadata=True):
    """The PyPI 'apex' 0.9.x layout: a Pyramid web toolkit."""
    for name in ("__init__.py", "views.py", "models.py", "forms.py", "lib/__init__.py",
                 "lib/libapex.py"):
        write(site / "apex" / name)
    if with_metadata:
        dist_info(site, "Apex", "0.9.10.dev0",
                  "Pyramid toolkit to add Velruse, Flash Messages, CSRF, ReCaptcha and Sessions",
                  extra="Requires-Dist: pyramid\nRequires-Dist: velruse\n")


def nvidia_apex(site, parts):
    write(site / "apex" / "__init__.py", "import torch\n")
    for part in parts:
        write(site / "apex" / part / "__init__.py")
    dist_info(site, "apex", "0.1", "PyTorch Extensions written by NVIDIA")


def test_apex_impostor_with_pyramid_metadata(tmp_path):
    impostor_apex(tmp_path)
    [finding] = doctor.check_apex([str(tmp_path)])
    assert (finding.check, finding.severity) == ("apex", "error")
    assert "not NVIDIA apex" in finding.summary
    assert "Pyramid web toolkit" in finding.summary and "0.9.10.dev0" in finding.summary
    assert "pip uninstall apex" in finding.advice
    assert "stand-in" in finding.advice and "from source" in finding.advice


def test_apex_impostor_without_metadata_is_still_an_error(tmp_path):
    impostor_apex(tmp_path, with_metadata=False)
    [finding] = doctor.check_apex([str(tmp_path)])
    assert finding.severity == "error"
    assert "not NVIDIA apex" in finding.summary and "Pyramid" not in finding.summary


@pytest.mark.parametrize("parts, missing", [
    (("optimizers", "normalization", "contrib", "mlp"), "apex.amp or apex.parallel"),
    (("amp", "optimizers", "normalization"), "apex.parallel"),
])
def test_apex_without_amp_or_parallel_warns(tmp_path, parts, missing):
    nvidia_apex(tmp_path, parts)
    [finding] = doctor.check_apex([str(tmp_path)])
    assert (finding.check, finding.severity) == ("apex", "warning")
    assert "has no %s:" % missing in finding.summary
    assert "2025-05-08" in finding.summary and "cb65b8ed~1" in finding.advice


def test_apex_complete_nvidia_apex_is_fine(tmp_path):
    nvidia_apex(tmp_path, ("amp", "parallel", "optimizers", "normalization", "contrib"))
    assert doctor.check_apex([str(tmp_path)]) == []


def test_apex_absent_is_info(tmp_path):
    [finding] = doctor.check_apex([str(tmp_path)])
    assert (finding.check, finding.severity) == ("apex", "info")
    assert "not installed" in finding.summary and "stand-in" in finding.summary


class _ClaimsApex:
    """A meta-path finder answering for apex, as compatfix's stand-in finder may."""

    def __init__(self, location):
        self.location = location

    def find_spec(self, name, path=None, target=None):
        if name != "apex":
            return None
        spec = importlib.machinery.ModuleSpec("apex", None, is_package=True)
        spec.submodule_search_locations.append(self.location)
        return spec


def test_apex_lookup_ignores_meta_path_finders(tmp_path, monkeypatch):
    (tmp_path / "standin").mkdir()
    standin = _ClaimsApex(str(tmp_path / "standin"))
    monkeypatch.setattr(sys, "meta_path", [standin] + sys.meta_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    [finding] = doctor.check_apex()
    assert finding.severity == "info"


@pytest.mark.stack("modern", "paper", "numpy1")
def test_apex_real_environment_has_no_apex():
    # None of the stacks installs apex, so the real lookup must say so.
    assert severities(doctor.check_apex()) == [("apex", "info")]


# --- mmcv ops ---------------------------------------------------------------------------


def fake_mmcv(site, version, ext_name=None):
    write(site / "mmcv" / "__init__.py", "from .version import __version__\n")
    write(site / "mmcv" / "version.py", "__version__ = '%s'\n" % version)
    if ext_name is not None:
        write(site / "mmcv" / ext_name, binary=b"\x7fELF")


def test_mmcv_lite_build_names_what_compatfix_provides(tmp_path, monkeypatch):
    # compatfix's mmcv._ext shim covers this mmcv: the doctor no longer says that
    # `import mmcv.ops` fails; it names the fallbacks and what another op does.
    monkeypatch.delenv("COMPATFIX_DISABLE", raising=False)
    fake_mmcv(tmp_path, "1.7.2")
    [finding] = doctor.check_mmcv_ops([str(tmp_path)])
    assert (finding.check, finding.severity) == ("mmcv-ops", "info")
    assert "mmcv 1.7.2 has no compiled ops" in finding.summary
    assert "compatfix provides mmcv._ext" in finding.summary
    for op in ("nms", "roi_align", "roi_pool", "deform_conv", "modulated_deform_conv", "sigmoid_focal_loss"):
        assert op in finding.summary
    assert "raises MissingCompiledOpError" in finding.summary
    # The old failure is said only as what happens without compatfix.
    assert "Without compatfix" in finding.summary
    assert finding.summary.index("Without compatfix") < finding.summary.index("No module named 'mmcv._ext'")
    assert "mmcv-full==1.7.2" in finding.advice


def test_mmcv_lite_build_names_every_fallback_the_standin_has(tmp_path):
    from compatfix.mmcv_standin import ext

    fake_mmcv(tmp_path, "1.3.0")
    [finding] = doctor.check_mmcv_ops([str(tmp_path)])
    # Every op family the stand-in has (ext.FALLBACKS, which its error message also lists).
    assert all(family in finding.summary for family in ext.FALLBACKS)
    assert ext.fallback_names() in finding.summary


def test_mmcv_lite_build_warns_when_the_ext_shim_is_disabled(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPATFIX_DISABLE", "mmcv._ext")
    fake_mmcv(tmp_path, "1.7.2")
    [finding] = doctor.check_mmcv_ops([str(tmp_path)])
    assert (finding.check, finding.severity) == ("mmcv-ops", "warning")
    assert "mmcv 1.7.2" in finding.summary and "no compiled ops" in finding.summary
    assert "No module named 'mmcv._ext'" in finding.summary
    assert "MMCV_WITH_OPS=1" in finding.advice and "mmcv-full==1.7.2" in finding.advice


@pytest.mark.stack("modern", "paper", "mmold")
def test_doctor_says_what_a_real_lite_import_does(tmp_path):
    # What the doctor says about the real lite build, checked against the real import:
    # mmcv.ops imports under compatfix, an op with a fallback runs, another op raises
    # MissingCompiledOpError naming itself; with the shim disabled the import fails.
    [finding] = doctor.check_mmcv_ops()
    assert finding.severity == "info", finding
    code = (
        "import torch, mmcv.ops\n"
        "from mmcv.ops import nms\n"
        "boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 10., 10.]]); scores = torch.tensor([0.9, 0.8])\n"
        "print('NMS', nms(boxes, scores, 0.5)[1].tolist())\n"
        "from mmcv.utils import ext_loader\n"
        "ext = ext_loader.load_ext('_ext', ['box_iou_rotated'])\n"
        "try:\n    ext.box_iou_rotated(boxes, boxes)\n"
        "except Exception as exc:\n    print('OTHER', type(exc).__name__, 'box_iou_rotated' in str(exc))\n"
    )
    on = run_python("-c", code, env=clean_env())
    assert "NMS [0]" in on.stdout and "OTHER MissingCompiledOpError True" in on.stdout, on.stdout + on.stderr
    off = run_python("-c", "import mmcv.ops", env=clean_env(COMPATFIX_DISABLE="mmcv._ext"))
    assert "No module named 'mmcv._ext'" in off.stderr


def test_mmcv_full_build_is_fine(tmp_path):
    fake_mmcv(tmp_path, "1.7.2", "_ext" + EXT)
    assert doctor.check_mmcv_ops([str(tmp_path)]) == []


def test_mmcv_ops_built_for_another_python_count_as_missing(tmp_path):
    # This interpreter cannot import it, so compatfix's stand-in is what `import mmcv.ops` gets.
    fake_mmcv(tmp_path, "1.3.0", "_ext.cpython-99-x86_64-linux-gnu.so")
    [finding] = doctor.check_mmcv_ops([str(tmp_path)])
    assert (finding.severity, "compatfix provides mmcv._ext" in finding.summary) == ("info", True)


def test_mmcv_2_is_info_about_runner(tmp_path):
    fake_mmcv(tmp_path, "2.1.0", "_ext" + EXT)
    [finding] = doctor.check_mmcv_ops([str(tmp_path)])
    assert (finding.check, finding.severity) == ("mmcv-ops", "info")
    assert "mmcv.runner" in finding.summary and "mmengine" in finding.summary


def test_mmcv_absent_is_fine(tmp_path):
    assert doctor.check_mmcv_ops([str(tmp_path)]) == []


@pytest.mark.stack("modern", "paper", "mmold")
def test_mmcv_ops_real_lite_build_is_reported():
    # Both stacks build mmcv from its sdist with MMCV_WITH_OPS=0 (requirements/*-mmcv.txt).
    [finding] = doctor.check_mmcv_ops()
    assert (finding.check, finding.severity) == ("mmcv-ops", "info")
    assert "mmcv %s " % metadata.version("mmcv") in finding.summary


# --- mmcv version pair ------------------------------------------------------------------

# The three shapes of the import-time assert, as written by mmseg 0.11 (list-based
# digit_version, inclusive MAX), mmseg 0.30 (exclusive MAX) and mmdet 2.x (``and`` form).
MMSEG_0_11 = """\
    import mmcv

    MMCV_MIN = '{low}'
    MMCV_MAX = '{high}'

    def digit_version(version_str):
        return []

    mmcv_min_version = digit_version(MMCV_MIN)
    mmcv_max_version = digit_version(MMCV_MAX)
    mmcv_version = digit_version(mmcv.__version__)

    assert (mmcv_min_version <= mmcv_version <= mmcv_max_version), \\
        f'MMCV=={{mmcv.__version__}} is used but incompatible. ' \\
        f'Please install mmcv>={{mmcv_min_version}}, <={{mmcv_max_version}}.'
"""
MMSEG_0_30 = MMSEG_0_11.replace("mmcv_version <= mmcv_max_version",
                                "mmcv_version < mmcv_max_version")
MMDET_2 = """\
    import mmcv
    from mmcv import digit_version

    mmcv_minimum_version = '{low}'
    mmcv_maximum_version = '{high}'
    mmcv_version = digit_version(mmcv.__version__)

    assert (mmcv_version >= digit_version(mmcv_minimum_version)
            and mmcv_version <= digit_version(mmcv_maximum_version)), \\
        f'MMCV=={{mmcv.__version__}} is used but incompatible. ' \\
        f'Please install mmcv>={{mmcv_minimum_version}}, <={{mmcv_maximum_version}}.'
"""


def pair(site, package, template, low, high, mmcv_version):
    write(site / package / "__init__.py", template.format(low=low, high=high))
    if mmcv_version is not None:
        fake_mmcv(site, mmcv_version)
    return doctor.check_mm_version_pair([str(site)])


@pytest.mark.parametrize("template, low, high, mmcv_version", [
    (MMSEG_0_11, "1.1.4", "1.3.0", "1.3.0"),  # MAX is inclusive in 0.11
    (MMSEG_0_11, "1.1.4", "1.3.0", "1.1.4"),
    (MMSEG_0_30, "1.3.13", "1.8.0", "1.7.2"),
    (MMSEG_0_30, "2.0.0rc4", "2.2.0", "2.0.0"),
    (MMSEG_0_30, "2.0.0rc4", "2.2.0", "2.0.0rc4"),
])
def test_mmseg_accepts(tmp_path, template, low, high, mmcv_version):
    assert pair(tmp_path, "mmseg", template, low, high, mmcv_version) == []


@pytest.mark.parametrize("template, low, high, mmcv_version, wanted", [
    (MMSEG_0_11, "1.1.4", "1.3.0", "1.7.2", "mmcv>=1.1.4, <=1.3.0"),
    (MMSEG_0_11, "1.1.4", "1.3.0", "1.3.0.post1", "mmcv>=1.1.4, <=1.3.0"),
    (MMSEG_0_30, "1.3.13", "1.8.0", "1.8.0", "mmcv>=1.3.13, <1.8.0"),  # exclusive in 0.30
    (MMSEG_0_30, "1.3.13", "1.8.0", "1.3.0", "mmcv>=1.3.13, <1.8.0"),
    (MMSEG_0_30, "2.0.0rc4", "2.2.0", "2.0.0rc3", "mmcv>=2.0.0rc4, <2.2.0"),
])
def test_mmseg_rejects(tmp_path, template, low, high, mmcv_version, wanted):
    [finding] = pair(tmp_path, "mmseg", template, low, high, mmcv_version)
    assert (finding.check, finding.severity) == ("mm-version-pair", "error")
    assert finding.summary == (
        "import mmseg will fail: MMCV==%s is used but incompatible. Please install %s."
        % (mmcv_version, wanted))
    assert "mmseg" in finding.advice and "__init__.py" in finding.advice


def test_mmdet_and_form_bounds(tmp_path):
    [finding] = pair(tmp_path, "mmdet", MMDET_2, "1.3.17", "1.8.0", "1.2.0")
    assert finding.summary.startswith("import mmdet will fail: MMCV==1.2.0")
    assert finding.summary.endswith("Please install mmcv>=1.3.17, <=1.8.0.")
    assert doctor.check_mm_version_pair([str(tmp_path)]) == [finding]
    fake_mmcv(tmp_path, "1.8.0")  # inclusive upper bound
    assert doctor.check_mm_version_pair([str(tmp_path)]) == []


def test_mmseg_without_mmcv_fails_to_import(tmp_path):
    [finding] = pair(tmp_path, "mmseg", MMSEG_0_30, "1.3.13", "1.8.0", None)
    assert finding.severity == "error"
    assert finding.summary == "import mmseg will fail: it imports mmcv, which is not installed"
    assert "mmcv>=1.3.13, <1.8.0" in finding.advice


def test_package_without_version_assert_is_ignored(tmp_path):
    write(tmp_path / "mmseg" / "__init__.py", "MMCV_MIN = '1.3.13'\nMMCV_MAX = '1.8.0'\n")
    fake_mmcv(tmp_path, "0.1.0")
    assert doctor.check_mm_version_pair([str(tmp_path)]) == []


@pytest.mark.parametrize("version, digits", [
    ("1.3.0", (1, 3, 0, 0, 0, 0)),
    ("1.6", (1, 6, 0, 0, 0, 0)),
    ("1.2.3.4.5", (1, 2, 3, 4, 0, 0)),
    ("2.0.0rc4", (2, 0, 0, 0, -1, 4)),
    ("2.0.0b1", (2, 0, 0, 0, -2, 1)),
    ("2.0.0a0", (2, 0, 0, 0, -3, 0)),
    ("1.0.0.dev0", (1, 0, 0, 0, -4, 0)),
    ("1.7.2.post1", (1, 7, 2, 0, 1, 1)),
    ("1.7.2+cu118", (1, 7, 2, 0, 0, 0)),
    ("not-a-version", None),
])
def test_digit_version(version, digits):
    assert doctor._digit_version(version) == digits


def _real_mmseg_init():
    return metadata.distribution("mmsegmentation").locate_file("mmseg/__init__.py")


@pytest.mark.stack("modern", "paper")
def test_digit_version_matches_installed_mmseg():
    """Order versions with the installed mmseg's own digit_version and with ours."""
    tree = ast.parse(_real_mmseg_init().read_text())
    [function] = [n for n in tree.body
                  if isinstance(n, ast.FunctionDef) and n.name == "digit_version"]
    namespace = {}
    exec(compile(ast.Module([ast.parse("import warnings\n").body[0], function], []),
                 "digit_version", "exec"), namespace)
    if "parse" in {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}:
        namespace["parse"] = pytest.importorskip("packaging.version").parse
    theirs = namespace["digit_version"]
    versions = ["1.1.4", "1.2.7", "1.3.0", "1.3.13", "1.7.2", "1.8.0", "2.0.0rc1",
                "2.0.0rc4", "2.0.0", "2.1.0"]
    for a in versions:
        if isinstance(theirs(a), tuple):  # the packaging-based one: same digits exactly
            assert doctor._digit_version(a) == theirs(a)
        for b in versions:
            assert (theirs(a) < theirs(b)) == (doctor._digit_version(a) < doctor._digit_version(b))


@pytest.mark.stack("modern", "paper")
def test_real_mmseg_pair_is_accepted():
    # mmseg 0.30.0 + mmcv 1.7.2 (modern), mmseg 0.11.0 + mmcv 1.3.0 (paper: accepted only
    # because 0.11's MAX is inclusive).
    tree = ast.parse(_real_mmseg_init().read_text())
    expected = {"0.30.0": {"min": True, "max": False}, "0.11.0": {"min": True, "max": True}}
    assert doctor._assert_inclusive(tree) == expected[metadata.version("mmsegmentation")]
    assert doctor.check_mm_version_pair() == []


@pytest.mark.stack("modern", "paper")
def test_real_mmseg_source_rejects_other_mmcv(tmp_path):
    write(tmp_path / "mmseg" / "__init__.py", _real_mmseg_init().read_text())
    fake_mmcv(tmp_path, "9.0.0")
    [finding] = doctor.check_mm_version_pair([str(tmp_path)])
    wanted = {"0.30.0": "mmcv>=1.3.13, <1.8.0", "0.11.0": "mmcv>=1.1.4, <=1.3.0"}
    assert finding.summary.endswith(
        "Please install %s." % wanted[metadata.version("mmsegmentation")])


# --- torch CUDA vs driver ---------------------------------------------------------------


@pytest.mark.parametrize("driver, cuda, ok", [
    (12040, "12.6", True),  # minor-version compatibility within a major
    (12040, "12.4", True),
    (13000, "13.0", True),
    (13020, "12.8", True),
    (12090, "13.0", False),
    (11080, "12.1", False),
    (10020, "10.2", True),  # before CUDA 11 the exact version was needed
    (10010, "10.2", False),
    (11000, "10.2", True),
])
def test_driver_supports_cuda(driver, cuda, ok):
    assert doctor.driver_supports_cuda(driver, cuda) is ok


def fake_torch(site, cuda):
    write(site / "torch" / "__init__.py")
    write(site / "torch" / "version.py", """\
        from typing import Optional

        __version__ = '2.14.1'
        debug = False
        cuda: Optional[str] = %r
        hip: Optional[str] = None
        """ % (cuda,))


def test_torch_newer_cuda_than_driver_is_an_error(tmp_path):
    fake_torch(tmp_path, "13.0")
    [finding] = doctor.check_torch_cuda_driver([str(tmp_path)], lambda: 12040)
    assert (finding.check, finding.severity) == ("torch-cuda-driver", "error")
    assert "CUDA 13.0" in finding.summary and "CUDA 12.4 at most" in finding.summary
    assert "CUDA 13.x or newer" in finding.advice


def test_torch_cuda_covered_by_driver_is_fine(tmp_path):
    fake_torch(tmp_path, "12.6")
    assert doctor.check_torch_cuda_driver([str(tmp_path)], lambda: 12040) == []


def test_torch_cuda_without_driver_is_info(tmp_path):
    fake_torch(tmp_path, "13.0")
    [finding] = doctor.check_torch_cuda_driver([str(tmp_path)], lambda: None)
    assert (finding.check, finding.severity) == ("torch-cuda-driver", "info")
    assert finding.summary.startswith("no NVIDIA driver: this CUDA build of torch")


def test_torch_cpu_build_or_absent_needs_no_driver(tmp_path):
    assert doctor.check_torch_cuda_driver([str(tmp_path)], lambda: None) == []
    fake_torch(tmp_path, None)
    assert doctor.check_torch_cuda_driver([str(tmp_path)], lambda: 10000) == []


class _FakeLibcuda:
    def __init__(self, status, value):
        self.status, self.value = status, value

    def cuDriverGetVersion(self, pointer):
        pointer._obj.value = self.value
        return self.status


@pytest.mark.parametrize("library, expected", [
    (_FakeLibcuda(0, 12040), 12040),
    (_FakeLibcuda(34, 0), None),  # CUDA_ERROR_STUB_LIBRARY: the toolkit's stub libcuda
    (None, None),  # no libcuda at all
])
def test_cuda_driver_version(monkeypatch, library, expected):
    def load(name):
        assert name in ("libcuda.so.1", "nvcuda.dll")
        if library is None:
            raise OSError("libcuda.so.1: cannot open shared object file")
        return library

    monkeypatch.setattr(ctypes, "CDLL", load)
    assert doctor.cuda_driver_version() == expected


@pytest.mark.stack("modern", "paper")
def test_torch_cuda_driver_real_environment():
    # torch 2.14.1+cu130 is installed; whether a driver is depends on the machine (none
    # on the CPU test machines: the info finding).
    driver = doctor.cuda_driver_version()
    findings = doctor.check_torch_cuda_driver()
    if driver is None:
        assert severities(findings) == [("torch-cuda-driver", "info")]
        assert "CUDA 13.0" in findings[0].summary
    else:
        assert (findings == []) is doctor.driver_supports_cuda(driver, "13.0")


# --- NumPy ABI ------------------------------------------------------------------------

NUMPY1_BUILT = b"\x7fELF\0...numpy.core._multiarray_umath\0_ARRAY_API\0"
NUMPY2_BUILT = b"\x7fELF\0numpy._core._multiarray_umath\0numpy.core._multiarray_umath\0"
NO_NUMPY = b"\x7fELF\0PyInit__C\0libc.so.6\0" * 100


def numpy_site(site, numpy_version="2.1.0"):
    write(site / "numpy" / "__init__.py")
    dist_info(site, "numpy", numpy_version)
    # numpy's own binaries always match it, whatever they contain.
    write(site / "numpy" / "_core" / ("_multiarray_umath" + EXT), binary=NUMPY1_BUILT)


def scan(site):
    return doctor.check_numpy_abi([str(site)], [str(site)])


def test_numpy1_built_binaries_grouped_by_distribution(tmp_path):
    numpy_site(tmp_path)
    write(tmp_path / "oldpkg" / ("_a" + EXT), binary=NUMPY1_BUILT)
    write(tmp_path / "oldpkg" / "sub" / "_b.so", binary=NO_NUMPY + NUMPY1_BUILT)
    dist_info(tmp_path, "old_dist", "1.0", top_level="oldpkg")
    write(tmp_path / ("legacy" + EXT), binary=NUMPY1_BUILT)  # a top-level module
    legacy = dist_info(tmp_path, "legacy_mod", "0.3")
    write(legacy / "RECORD", "legacy%s,,\nlegacy_mod-0.3.dist-info/METADATA,,\n" % EXT)
    write(tmp_path / "newpkg" / ("_c" + EXT), binary=NUMPY2_BUILT)
    write(tmp_path / "plain" / "_d.so", binary=NO_NUMPY)
    write(tmp_path / "oldpkg" / "_e.so.1", binary=NUMPY1_BUILT)  # not an extension name
    findings = scan(tmp_path)
    assert severities(findings) == [("numpy-abi", "error")] * 2
    legacy_finding, old_finding = findings
    assert legacy_finding.summary.startswith(
        "legacy_mod (legacy): 1 compiled module built against NumPy 1.x (e.g. legacy%s), "
        "which numpy 2.1.0 refuses" % EXT)
    assert old_finding.summary.startswith(
        "old_dist (oldpkg): 2 compiled modules built against NumPy 1.x")
    assert "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.1.0" in \
        old_finding.summary
    assert "(e.g. oldpkg%s_a%s)" % (os.sep, EXT) in old_finding.summary
    assert "pip install -U old_dist" in old_finding.advice and "numpy<2" in old_finding.advice


def test_numpy2_built_binaries_are_fine(tmp_path):
    numpy_site(tmp_path)
    write(tmp_path / "newpkg" / ("_c" + EXT), binary=NUMPY2_BUILT)
    write(tmp_path / "plain" / "_d.pyd", binary=NO_NUMPY)
    write(tmp_path / "empty" / "_e.so", binary=b"")
    assert scan(tmp_path) == []


def test_numpy_abi_skips_cuda_dirs_and_huge_files(tmp_path):
    numpy_site(tmp_path)
    for skipped in ("nvidia/cu13/lib", "triton/_C", "cuda/bindings"):
        write(tmp_path / skipped / "_x.so", binary=NUMPY1_BUILT)
    huge = write(tmp_path / "hugepkg" / "_h.so", binary=NUMPY1_BUILT)
    os.truncate(huge, doctor._MAX_BINARY_SIZE + 1)  # sparse: no disk space used
    assert scan(tmp_path) == []


def test_numpy_abi_unowned_binary_is_named_by_directory(tmp_path):
    numpy_site(tmp_path)
    write(tmp_path / "orphan" / "_x.so", binary=NUMPY1_BUILT)
    [finding] = scan(tmp_path)
    assert finding.summary.startswith("orphan: 1 compiled module")


def test_numpy_abi_needs_numpy_2(tmp_path):
    write(tmp_path / "oldpkg" / "_a.so", binary=NUMPY1_BUILT)
    assert scan(tmp_path) == []  # numpy not installed
    numpy_site(tmp_path, "1.26.4")
    assert scan(tmp_path) == []


def _site_packages():
    return os.path.dirname(os.path.dirname(metadata.distribution("numpy").locate_file(
        "numpy/__init__.py")))


def _numpy_generator_extension():
    """numpy.random._generator's binary, a Cython module using the NumPy C API."""
    random_dir = os.path.join(_site_packages(), "numpy", "random")
    [name] = [f for f in os.listdir(random_dir) if f.startswith("_generator.") and f.endswith(EXT)]
    return os.path.join(random_dir, name)


@pytest.mark.stack("modern", "paper")
def test_numpy2_heuristic_on_real_numpy2_builds():
    """torch 2.14 and numpy 2.x's own extensions: built with numpy 2 headers."""
    site_dir = _site_packages()
    libtorch_python = os.path.join(site_dir, "torch", "lib", "libtorch_python.so")
    for path in (libtorch_python, _numpy_generator_extension()):
        with open(path, "rb") as binary:
            data = binary.read()
        assert b"numpy._core._multiarray_umath" in data  # the heuristic's premise
        assert not doctor._built_with_numpy1(path)


@pytest.mark.stack("modern", "paper")
def test_numpy_abi_real_environment_is_clean():
    assert doctor.check_numpy_abi() == []


@pytest.mark.stack("numpy1")
def test_numpy1_heuristic_on_real_numpy1_build(tmp_path):
    """numpy 1.26.4's own extensions are numpy-1.x builds: flagged once numpy 2 is around."""
    real = _numpy_generator_extension()
    with open(real, "rb") as binary:
        data = binary.read()
    assert b"numpy._core._multiarray_umath" not in data
    assert doctor._built_with_numpy1(real)
    assert doctor.check_numpy_abi() == []  # numpy 1.26 is installed: nothing is stale
    numpy_site(tmp_path)
    write(tmp_path / "legacy_ext" / os.path.basename(real), binary=data)
    assert severities(scan(tmp_path)) == [("numpy-abi", "error")]


# --- running and formatting -------------------------------------------------------------


def test_format_findings_empty():
    assert doctor.format_findings([]) == "compatfix doctor: no problems found"


def test_format_findings_blocks_and_tally():
    findings = [
        Finding("apex", "error", "apex is wrong", "uninstall it"),
        Finding("mmcv-ops", "warning", "no ops", "rebuild"),
        Finding("numpy-abi", "error", "stale binary", "upgrade"),
        Finding("torch-cuda-driver", "info", "no driver", "cpu only"),
    ]
    text = doctor.format_findings(findings)
    blocks = text.split("\n\n")
    assert blocks[0] == "ERROR [apex] apex is wrong\n    uninstall it"
    assert blocks[1] == "WARNING [mmcv-ops] no ops\n    rebuild"
    assert len(blocks) == 5
    assert blocks[-1] == "compatfix doctor: 2 errors, 1 warning, 1 info"


def test_run_checks_reports_a_crashing_check(monkeypatch):
    def broken():
        raise RuntimeError("boom")

    def fine():
        return [Finding("fine", "info", "ok", "nothing")]

    monkeypatch.setattr(doctor, "_CHECKS", (("broken", broken), ("fine", fine)))
    crashed, ok = doctor.run_checks()
    assert (crashed.check, crashed.severity) == ("broken", "warning")
    assert "RuntimeError('boom')" in crashed.summary
    assert ok.check == "fine"


def test_run_checks_runs_every_check():
    assert doctor._CHECKS == (
        ("apex", doctor.check_apex),
        ("mmcv-ops", doctor.check_mmcv_ops),
        ("mm-version-pair", doctor.check_mm_version_pair),
        ("torch-cuda-driver", doctor.check_torch_cuda_driver),
        ("numpy-abi", doctor.check_numpy_abi),
        ("removed-apis", doctor.check_removed_apis),
    )


@pytest.mark.stack("modern", "paper", "numpy1")
def test_doctor_never_imports_what_it_inspects(tmp_path):
    """Importing the module, and running every check, leaves the targets unimported."""
    code = textwrap.dedent("""\
        import sys
        targets = ("numpy", "torch", "mmcv", "mmseg", "mmdet", "apex", "cv2")
        import compatfix.doctor as doctor
        print(sorted(t for t in targets if t in sys.modules))
        doctor.run_checks()
        print(sorted(t for t in targets if t in sys.modules))
        """)
    result = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[]", "[]"]
