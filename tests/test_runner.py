"""``python -m compatfix [options] script.py args…`` and ``… -m module args…``.

Differential tests: the same program (tests/fixtures/runner/app) runs plainly, with
compatfix off (COMPATFIX=0), and under ``python -m compatfix``; the exit status, stdout
and stderr must be identical, character for character. The probe prints what a program
sees of how it was started (``sys.argv``, ``sys.path``, the ``__main__`` module's
globals, ``__spec__``, ``__loader__``, pickling of a ``__main__`` class, what a
multiprocessing spawn child makes of ``__main__``) and then exits, fails or raises as
its first argument asks. Nothing is normalised: nothing printed may differ.

Then the runner's own options: usage errors, --disable, --report, --strict, --, -h,
--version.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import zipfile
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata

import pytest

from support import FIXTURES, clean_env, run_python

FIXTURES = FIXTURES
APP = os.path.join(FIXTURES, "runner", "app")
PLUGIN = os.path.join(FIXTURES, "plugin")  # the hook tests' plugin: a shim that fails
TIMEOUT = 60


def _line_of(path, text):
    with open(path) as handle:
        return next(number for number, line in enumerate(handle, 1) if text in line)


# Where the probe calls into its sibling: the first frame of its tracebacks and warnings.
PROBE_CALL_LINE = _line_of(os.path.join(APP, "tools", "probe.py"), "helper.main(")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """A private copy of the probe app, plus a zip app and a symlinked folder."""
    root = str(tmp_path_factory.mktemp("runner") / "app")
    shutil.copytree(APP, root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    with zipfile.ZipFile(os.path.join(root, "app.zip"), "w") as archive:
        archive.write(os.path.join(root, "tools", "__main__.py"), "__main__.py")
        archive.write(os.path.join(root, "tools", "helper.py"), "helper.py")
    os.symlink(os.path.join(root, "tools"), os.path.join(root, "linkdir"), target_is_directory=True)
    return root


def both(args, cwd, env_extra=None):
    """(plain run with compatfix off, run under `python -m compatfix`), concurrently."""
    extra = dict(env_extra or {})
    with ThreadPoolExecutor(2) as pool:
        plain = pool.submit(
            run_python, *args, env=clean_env(False, **extra), cwd=cwd, timeout=TIMEOUT
        )
        under = pool.submit(
            run_python, "-m", "compatfix", *args, env=clean_env(True, **extra), cwd=cwd, timeout=TIMEOUT
        )
        return plain.result(), under.result()


def shown(stdout):
    """The probe's `key: repr` lines as a dict."""
    values = {}
    for line in stdout.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            values[key] = ast.literal_eval(value)
    return values


def assert_same(plain, under):
    assert under.stdout == plain.stdout
    assert under.stderr == plain.stderr
    assert under.returncode == plain.returncode
    # The equality above already says it; spelled out for the reader of a failure.
    frames = [line for line in under.stderr.splitlines() if line.lstrip().startswith('File "')]
    assert not [f for f in frames if "_runner.py" in f or os.path.join("compatfix", "__main__.py") in f]


# --- the differential matrix ------------------------------------------------------------

MAIN_GLOBALS = [
    "__name__", "__doc__", "__package__", "__loader__", "__spec__",
    "__annotations__", "__builtins__", "__file__", "__cached__",
]


def test_script_in_a_subfolder_with_args(app):
    args = ["tools/probe.py", "report", "--lr", "0.1", "-m", "x", "--", "--disable", "y"]
    plain, under = both(args, cwd=app)
    assert plain.returncode == 0, plain.stderr
    assert_same(plain, under)
    seen = shown(plain.stdout)
    script = os.path.join(app, "tools", "probe.py")
    assert seen["sys.argv"] == args
    assert seen["sys.path[0]"] == os.path.join(app, "tools")
    assert seen["globals_at_start"] == MAIN_GLOBALS
    assert seen["__name__"] == "__main__"
    assert seen["__file__"] == script
    assert seen["__spec__"] is None and seen["__package__"] is None and seen["__cached__"] is None
    assert seen["__loader__"] == {
        "type": "_frozen_importlib_external.SourceFileLoader", "name": "__main__", "path": script,
    }
    assert seen["__builtins__"] == ("module", True)
    assert seen["__main__ is this module"] is True
    assert seen["sibling"] == ("helper", os.path.join(app, "tools", "helper.py"))
    data, same_class, value = seen["pickle"]
    assert b"__main__" in data and same_class and value == 3
    assert seen["spawn child payload"] == "__mp_main__.Payload(7)"  # __main__.Payload, unpickled in the child
    assert seen["spawn child payload_class_is_main_class"] is True
    assert seen["spawn child main_name"] == "__mp_main__"
    assert seen["spawn child main_file"] == script
    assert seen["spawn child argv"] == args
    assert seen["spawn child path"] == seen["sys.path"]
    assert "%s:%d: DeprecationWarning: deprecated in __main__" % (script, PROBE_CALL_LINE) in plain.stderr


def test_module_with_args(app):
    plain, under = both(["-m", "tools.probe", "report", "a", "--b"], cwd=app)
    assert plain.returncode == 0, plain.stderr
    assert_same(plain, under)
    seen = shown(plain.stdout)
    module_file = os.path.join(app, "tools", "probe.py")
    assert seen["sys.argv"] == [module_file, "report", "a", "--b"]
    assert seen["sys.path[0]"] == app  # the cwd, as `python -m` puts it
    assert seen["globals_at_start"] == MAIN_GLOBALS
    assert seen["__name__"] == "__main__"
    assert seen["__file__"] == module_file
    assert seen["__package__"] == "tools"
    assert seen["__spec__"]["name"] == "tools.probe"
    assert seen["__spec__"]["origin"] == module_file
    assert seen["__loader__"]["type"] == "_frozen_importlib_external.SourceFileLoader"
    assert seen["__builtins__"] == ("module", True)
    assert seen["sibling"][0] == "tools.helper"
    assert seen["spawn child payload"] == "__mp_main__.Payload(7)"  # __main__.Payload, unpickled in the child
    assert seen["spawn child main_spec"] == "tools.probe"


def test_package_runs_its_main(app):
    # No spawn pool here: a spawn child does not re-run a package's __main__ (so it could
    # not unpickle __main__.Payload, and the pool would hang), plainly or not.
    plain, under = both(["-m", "tools", "exit0", "a"], cwd=app)
    assert plain.returncode == 0, plain.stderr
    assert_same(plain, under)
    seen = shown(plain.stdout)
    assert seen["__spec__"]["name"] == "tools.__main__"
    assert seen["__file__"] == os.path.join(app, "tools", "__main__.py")
    assert seen["__package__"] == "tools"


@pytest.mark.parametrize(
    "args, cwd, status",
    [
        (["tools", "exit3"], "", 3),  # a folder with __main__.py
        (["app.zip", "exit0"], "", 0),  # a zip app
        (["./tools", "exit0"], "", 0),
        (["./tools/probe.py", "exit0"], "", 0),  # __file__ keeps the ./, as CPython's does
        (["linkdir/../tools/probe.py", "exit0"], "", 0),
        (["linkdir/probe.py", "exit0"], "", 0),  # sys.path[0] is the real folder
        (["probe.py", "exit0"], "tools", 0),  # run from the script's own folder
        (["{app}/tools/probe.py", "exit0"], "", 0),  # an absolute path
    ],
    ids=["folder", "zip", "dot-folder", "dot-script", "dotdot-script", "symlinked-folder", "in-its-folder", "absolute"],
)
def test_other_ways_to_name_the_program(app, args, cwd, status):
    args = [arg.format(app=app) for arg in args]
    plain, under = both(args, cwd=os.path.join(app, cwd))
    assert plain.returncode == status, plain.stderr
    assert_same(plain, under)
    assert shown(plain.stdout)["sys.argv"] == args


@pytest.mark.parametrize(
    "args, status, stderr_has",
    [
        (["tools/probe.py", "exit3"], 3, None),
        (["-m", "tools.probe", "exit3"], 3, None),
        (["tools/probe.py", "exit0"], 0, None),
        (["tools/probe.py", "exitmsg"], 1, "the probe exits with a message\n"),
        (["-m", "tools", "exitmsg"], 1, "the probe exits with a message\n"),
        (["tools/probe.py", "raise"], 1, "RuntimeError: the probe failed on purpose\natexit handler ran\n"),
        (["-m", "tools.probe", "raise"], 1, 'File "<frozen runpy>"'),
        (["app.zip", "raise"], 1, "RuntimeError: the probe failed on purpose"),
        (["tools/probe.py", "excepthook"], 1, "custom excepthook: RuntimeError: the probe failed on purpose; "
                                              "frames: ['<module>', 'main', 'fail']"),
        (["tools/broken.py"], 1, "SyntaxError"),
        (["-m", "tools.broken"], 1, "SyntaxError"),
        (["tools/missing.py"], 2, "can't open file"),
        (["-m", "missing_module"], 1, ": No module named missing_module\n"),
        (["-m", "tools.missing"], 1, ": No module named tools.missing\n"),
        (["-m", "nomain"], 1, "'nomain' is a package and cannot be directly executed"),
    ],
    ids=[
        "exit3", "module-exit3", "exit-none", "exit-message", "package-exit-message",
        "uncaught", "module-uncaught", "zip-uncaught", "excepthook",
        "syntax-error", "module-syntax-error", "missing-script", "missing-module",
        "missing-submodule", "package-without-main",
    ],
)
def test_exit_status_and_stderr(app, args, status, stderr_has):
    plain, under = both(args, cwd=app)
    assert plain.returncode == status, plain.stderr
    if stderr_has:
        assert stderr_has in plain.stderr
    assert_same(plain, under)


def test_traceback_of_an_uncaught_exception_has_no_runner_frames(app):
    plain, under = both(["tools/probe.py", "raise"], cwd=app)
    assert_same(plain, under)
    assert under.stderr.count("Traceback (most recent call last):") == 2  # the cause, then the error
    first = under.stderr.split("Traceback (most recent call last):\n")[2].splitlines()[0]
    assert first == '  File "%s", line %d, in <module>' % (os.path.join(app, "tools", "probe.py"), PROBE_CALL_LINE)


def test_keyboard_interrupt_traceback(tmp_path):
    script = tmp_path / "interrupted.py"
    script.write_text("raise KeyboardInterrupt\n")
    plain, under = both([str(script)], cwd=str(tmp_path))
    assert plain.returncode == under.returncode == -2
    assert under.stderr == plain.stderr


# --- the runner's options ------------------------------------------------------------

NP_PROBE = os.path.join(APP, "np_probe.py")


def run_np_probe(*options, env_extra=None, cwd=None, args=()):
    env = clean_env(True, **(env_extra or {}))
    result = run_python("-m", "compatfix", *options, NP_PROBE, *args, env=env, cwd=cwd, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    "argv",
    [
        ["--bogus", NP_PROBE],
        ["-u", NP_PROBE],  # python's own options go before -m compatfix
        ["--strict=yes", NP_PROBE],
        ["--disable"],
        ["--report"],
        ["-m"],
        ["--disable", "numpy.builtin_aliases"],
        [],
    ],
    ids=["unknown-option", "python-option", "flag-with-value", "no-value", "no-report-path", "no-module",
         "no-program", "nothing"],
)
def test_usage_errors_exit_2_without_running_anything(argv):
    result = run_python("-m", "compatfix", *argv, timeout=TIMEOUT)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("compatfix: ")
    assert "usage: python -m compatfix [options] script.py [args ...]" in result.stderr


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help(flag):
    result = run_python("-m", "compatfix", "--disable", "numpy.builtin_aliases", flag, NP_PROBE, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: python -m compatfix [options] script.py [args ...]\n")
    assert "--disable NAME[,NAME]" in result.stdout and "--report PATH" in result.stdout
    assert result.stderr == ""


def test_version():
    result = run_python("-m", "compatfix", "--version", timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "compatfix %s\n" % metadata.version("compatfix")
    assert result.stderr == ""


def test_compatfix_is_active_in_the_program():
    state = run_np_probe()
    assert state["np.float"] == "float" and state["np.float_"] == "float64" and state["np.trapz"]
    assert state["activated_by"] in ("pth", "cli")


def test_without_compatfix_the_names_are_missing():
    # The baseline that makes the option tests meaningful.
    result = run_python(NP_PROBE, env=clean_env(False), timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    state = json.loads(result.stdout)
    assert state["np.float"] is None and state["np.float_"] is None and not state["np.trapz"]


@pytest.mark.parametrize("options", [["--disable", "numpy.builtin_aliases"], ["--disable=numpy.builtin_aliases"]])
def test_disable_turns_one_shim_off(options):
    state = run_np_probe(*options)
    assert state["np.float"] is None  # numpy's own AttributeError
    assert "np.float" in state["np.float error"] and "deprecated alias" in state["np.float error"]
    assert state["np.float_"] == "float64"  # numpy.numpy2_aliases is still on
    assert state["np.trapz"]
    assert state["env"]["COMPATFIX_DISABLE"] == "numpy.builtin_aliases"


def test_disable_adds_to_the_environment_and_to_itself():
    state = run_np_probe(
        "--disable", "numpy.builtin_aliases", "--disable", "numpy.numpy24_removals",
        env_extra={"COMPATFIX_DISABLE": "torch._six"},
    )
    assert state["env"]["COMPATFIX_DISABLE"] == "torch._six,numpy.builtin_aliases,numpy.numpy24_removals"
    assert state["np.float"] is None and not state["np.trapz"]
    assert state["np.float_"] == "float64"


def test_double_dash_ends_the_options():
    state = run_np_probe(
        "--disable", "numpy.builtin_aliases", "--", args=["--strict", "-h", "--version", "--disable", "x"]
    )
    assert state["argv"] == ["--strict", "-h", "--version", "--disable", "x"]
    assert state["env"]["COMPATFIX_STRICT"] is None
    assert state["env"]["COMPATFIX_DISABLE"] == "numpy.builtin_aliases"
    assert state["np.float"] is None and state["np.float_"] == "float64"


def test_options_after_the_script_belong_to_the_script():
    state = run_np_probe(args=["--disable", "numpy.builtin_aliases", "--strict"])
    assert state["argv"] == ["--disable", "numpy.builtin_aliases", "--strict"]
    assert state["env"]["COMPATFIX_DISABLE"] is None and state["env"]["COMPATFIX_STRICT"] is None
    assert state["np.float"] == "float"


def test_report_relative_path_is_written_where_the_run_started(tmp_path):
    # The program changes directory and starts a child; both add to the one report.
    env = clean_env(True)
    result = run_python(
        "-m", "compatfix", "--report", "report.json", NP_PROBE, "--chdir", "sub", "--child",
        env=env, cwd=str(tmp_path), timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "sub" / "report.json").exists()
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["compatfix_version"] == metadata.version("compatfix")
    processes = report["processes"]
    assert len(processes) == 2  # the program and its child, same run id
    assert sorted(p["argv"][0] for p in processes) == ["-c", NP_PROBE]
    for process in processes:
        applied = {entry["shim"] for entry in process["applied"]}
        assert {"numpy.builtin_aliases", "numpy.numpy2_aliases"} <= applied
    parent = next(p for p in processes if p["argv"][0] == NP_PROBE)
    uses = {(use["name"], use["file"]) for use in parent["deprecated_uses"]}
    assert ("numpy.float", NP_PROBE) in uses


STRICT_PROBE = os.path.join(APP, "strict_probe.py")


def run_strict_probe(*options, **env_extra):
    env = clean_env(True, PYTHONPATH=PLUGIN, **env_extra)
    return run_python("-m", "compatfix", *options, STRICT_PROBE, env=env, timeout=TIMEOUT)


def test_a_failing_shim_is_only_a_warning_without_strict():
    result = run_strict_probe()
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["strict: None", "child exit status: 0", "parent imported fakelib.core"]
    assert "shim 'test.broken' failed to apply to fakelib.core" in result.stderr


@pytest.mark.parametrize("how", ["option", "environment"])
def test_strict_makes_a_failing_shim_an_error_in_the_whole_tree(how):
    result = run_strict_probe("--strict") if how == "option" else run_strict_probe(COMPATFIX_STRICT="1")
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["strict: '1'", "child exit status: 1"]
    assert result.stderr.count("CompatfixError: shim 'test.broken' failed to apply to fakelib.core (strict mode)") == 2
    assert result.stderr.splitlines()[-1].startswith("compatfix._engine.CompatfixError: ")


# --- -c and - (stdin), as python has them ---------------------------------------------------

# What a -c / stdin program sees of how it was started; then a warning and a traceback,
# which must read as python's own.
CODE_PROBE = (
    "import sys, warnings\n"
    "g = dict(globals())\n"
    "print('argv:', repr(sys.argv))\n"
    "print('path0:', repr(sys.path[0]))\n"
    "print('globals:', repr(list(g)))\n"
    "print('loader:', repr(g['__loader__']), 'spec:', repr(g['__spec__']), 'file:', repr(g.get('__file__')))\n"
    "print('main:', sys.modules['__main__'].__dict__ is globals())\n"
    "warnings.warn('from the program', UserWarning)\n"
    "def fail():\n"
    "    raise RuntimeError('the program failed on purpose')\n"
    "fail()\n"
)


def test_dash_c_runs_as_python_c(tmp_path):
    plain, under = both(["-c", CODE_PROBE, "a", "--disable", "x"], cwd=str(tmp_path))
    assert plain.returncode == 1, plain.stderr
    assert_same(plain, under)
    assert "argv: ['-c', 'a', '--disable', 'x']\npath0: ''\n" in plain.stdout
    assert 'File "<string>", line 11, in <module>' in plain.stderr


def test_dash_c_glued_to_its_code():
    result = run_python("-m", "compatfix", "-cimport sys; print(sys.argv)", "z", timeout=TIMEOUT)
    assert (result.returncode, result.stdout) == (0, "['-c', 'z']\n"), result.stderr


def test_dash_runs_the_program_from_stdin(tmp_path):
    import subprocess
    import sys

    def run(*args, compatfix):
        return subprocess.run([sys.executable, *args, "-", "x"], input=CODE_PROBE, capture_output=True, text=True,
                              env=clean_env(compatfix), cwd=str(tmp_path), timeout=TIMEOUT)

    plain, under = run(compatfix=False), run("-m", "compatfix", compatfix=True)
    assert plain.returncode == 1, plain.stderr
    assert_same(plain, under)
    assert "argv: ['-', 'x']\npath0: ''\n" in plain.stdout and "file: '<stdin>'" in plain.stdout
    assert 'File "<stdin>", line 11, in <module>' in plain.stderr
