"""Observability and bad configuration: `compatfix list`, the JSON report, the docs
catalogue, and options that are wrong but must never break the program."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support import NEUTRAL_CWD, REPO_ROOT, clean_env, run_python

DOCS = os.path.join(REPO_ROOT, "docs")


def compatfix(*args, **env):
    return run_python("-m", "compatfix.cli", *args, env=clean_env(**env))


def test_list_shows_every_shim_and_whether_it_applies_here():
    result = compatfix("list", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["numpy.builtin_aliases"]["applies"] is True
    assert rows["numpy.builtin_aliases"]["why"].startswith("numpy 2.")
    assert rows["torch._six"]["applies"] is True
    assert rows["torch._six.names"]["applies"] is False
    assert "outside >=1.8,<2.0" in rows["torch._six.names"]["why"]
    text = compatfix("list", COMPATFIX_DISABLE="torch.*").stdout
    assert "disabled by COMPATFIX_DISABLE=torch.*" in text


def test_list_does_not_import_targets():
    result = run_python(
        code="import sys; from compatfix import cli; cli.main(['list']); "
        "print('IMPORTED', [m for m in ('numpy', 'torch', 'timm') if m in sys.modules])"
    )
    assert result.stdout.splitlines()[-1] == "IMPORTED []", result.stderr


def test_docs_catalogue_is_generated_from_the_registry():
    generated = compatfix("list", "--markdown").stdout
    with open(os.path.join(DOCS, "shims.md"), encoding="utf-8") as handle:
        assert handle.read() == generated, "regenerate: compatfix list --markdown > docs/shims.md"


def test_report_lists_applied_skipped_and_where_restored_names_were_used(tmp_path):
    script = tmp_path / "legacy.py"
    script.write_text(
        "import numpy as np\n"
        "x = np.zeros(3).astype(np.float)\n"
        "from torch._six import inf\n"
    )
    report = tmp_path / "report.json"
    result = run_python("-m", "compatfix", "--report", str(report), str(script))
    assert result.returncode == 0, result.stderr
    (process,) = json.loads(report.read_text())["processes"]
    applied = {(a["shim"], a["module"]) for a in process["applied"]}
    assert ("numpy.builtin_aliases", "numpy") in applied and ("torch._six", "torch._six") in applied
    uses = {(u["name"], u["file"], u["line"]) for u in process["deprecated_uses"]}
    assert ("numpy.float", str(script), 2) in uses
    assert ("torch._six.inf", str(script), 3) in uses
    assert process["failed"] == []


def test_report_merges_every_process_of_a_run(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(
        "import multiprocessing as mp\n"
        "def child():\n"
        "    import numpy as np; np.float\n"
        "if __name__ == '__main__':\n"
        "    import numpy\n"
        "    p = mp.get_context('spawn').Process(target=child); p.start(); p.join()\n"
        "    raise SystemExit(p.exitcode)\n"
    )
    report = tmp_path / "report.json"
    result = run_python("-m", "compatfix", "--report", str(report), str(script))
    assert result.returncode == 0, result.stderr
    processes = json.loads(report.read_text())["processes"]
    assert len(processes) == 2
    assert [p for p in processes if any(u["name"] == "numpy.float" for u in p["deprecated_uses"])]
    # A second run replaces the first run's report instead of adding to it.
    run_python("-m", "compatfix", "--report", str(report), str(script))
    assert len(json.loads(report.read_text())["processes"]) == 2


def test_bad_configuration_prints_one_line_and_changes_nothing_else(tmp_path):
    code = "import numpy as np; print(np.float is float)"
    cases = {
        "COMPATFIX_DISABLE": ("no.such.shim", "matches no shim"),
        "COMPATFIX_DEVICE": ("tpu", "not a known device"),
        "COMPATFIX_REPORT": (str(tmp_path / "missing-folder" / "r.json"), "not writable"),
        "COMPATFIX_STRICT": ("maybe", "not a yes/no value"),
    }
    for variable, (value, message) in cases.items():
        result = run_python(code=code, env=clean_env(**{variable: value}))
        assert result.returncode == 0, (variable, result.stderr)
        assert result.stdout.split() == ["True"], variable
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and message in lines[0], (variable, result.stderr)


def test_runner_usage_errors_do_not_run_anything(tmp_path):
    result = run_python("-m", "compatfix", "--bogus", "x.py")
    assert result.returncode == 2 and "unknown option '--bogus'" in result.stderr


def test_doctor_runs():
    result = compatfix("doctor")
    assert result.returncode in (0, 1), result.stderr
    assert result.stdout.strip()


def test_report_includes_forked_dataloader_workers(tmp_path):
    script = tmp_path / "loader.py"
    script.write_text(
        "import numpy as np, torch\n"
        "assert np.NaN != np.NaN  # the parent uses a restored name first: numpy's shims apply in it\n"
        "class Data(torch.utils.data.Dataset):\n"
        "    def __len__(self): return 4\n"
        "    def __getitem__(self, i): return np.zeros(2, dtype=np.float)\n"
        "loader = torch.utils.data.DataLoader(Data(), num_workers=2, multiprocessing_context='fork')\n"
        "print(sum(len(batch) for batch in loader))\n"
    )
    report = tmp_path / "report.json"
    result = run_python("-m", "compatfix", "--report", str(report), str(script))
    assert result.stdout.split() == ["4"], result.stderr
    processes = json.loads(report.read_text())["processes"]
    workers = [p for p in processes if any(u["line"] == 5 for u in p["deprecated_uses"])]
    assert len(processes) == 3 and len(workers) == 2, processes
    assert all(p["applied"] == [] for p in workers)  # the parent applied the shims


def test_the_console_script_is_installed():
    script = os.path.join(os.path.dirname(sys.executable), "compatfix")
    result = run_python(script, "list", python=sys.executable)
    assert result.returncode == 0 and "numpy.builtin_aliases" in result.stdout, result.stderr


# --- the console script: conventions (issue 19) ---------------------------------------------

CONSOLE_SCRIPT = os.path.join(os.path.dirname(sys.executable), "compatfix")


def console(*args, env=None, cwd=None, python=None):
    """``compatfix ARGS`` through the installed console script (``python``: run that
    script's code with another interpreter or flags, e.g. ``[sys.executable, "-I"]``)."""
    command = [*(python or []), CONSOLE_SCRIPT, *args]
    return run_python(*command[1:], python=command[0], env=clean_env() if env is None else env, cwd=cwd)


def test_version_option():
    from importlib import metadata

    result = console("--version")
    assert (result.returncode, result.stdout, result.stderr) == (0, "compatfix %s\n" % metadata.version("compatfix"), "")


def test_status_says_compatfix_is_active_and_how():
    result = console("status")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "compatfix %s is active in %s (by compatfix.pth, read at start-up)\n" % (
        __import__("compatfix").__version__, sys.executable)
    state = json.loads(console("status", "--json").stdout)
    assert state["active"] is True and state["interpreter"] == sys.executable


@pytest.mark.parametrize("how, reason", [
    ("COMPATFIX=0", "COMPATFIX=0 switches it off"),
    ("COMPATFIX=off", "COMPATFIX=off switches it off"),
    ("-I", "python -I (isolated mode) keeps it off"),
    ("-S", "python -S: the site module did not run, so no .pth file was read"),
    ("no .pth", "there is no compatfix.pth in this interpreter's site-packages"),
])
def test_status_says_why_compatfix_is_not_active(how, reason):
    import sysconfig

    site_packages = sysconfig.get_paths()["purelib"]
    python, env = [sys.executable], clean_env()
    if how.startswith("COMPATFIX="):
        env["COMPATFIX"] = how.partition("=")[2]
    elif how == "-I":
        python.append("-I")
    elif how == "-S":  # the venv's site-packages by hand, as no site module adds it
        python.append("-S")
        env["PYTHONPATH"] = site_packages
    else:  # the venv's base interpreter, importing compatfix from the venv's folder
        python = [os.path.realpath(sys.executable)]
        env["PYTHONPATH"] = site_packages
    result = console("status", python=python, env=env)
    assert result.returncode == 1, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("compatfix %s is NOT active in " % __import__("compatfix").__version__), first
    assert reason in first
    assert "python -m compatfix script.py" in first  # what still runs a program with it


def test_compatfix_0_list_says_off_instead_of_applies():
    on = console("list")
    assert on.stdout.splitlines()[0].endswith("(by compatfix.pth, read at start-up)")
    assert " applies " in on.stdout
    off = console("list", env=clean_env(COMPATFIX="0"))
    assert off.returncode == 0, off.stderr
    header, rows = off.stdout.split("\n", 1)
    assert "is NOT active" in header and "COMPATFIX=0 switches it off" in header
    assert " applies " not in rows
    assert "numpy.builtin_aliases      off " in rows
    listed = {row["name"]: row for row in json.loads(console("list", "--json", env=clean_env(COMPATFIX="0")).stdout)}
    assert not any(row["applies"] for row in listed.values())
    assert listed["numpy.builtin_aliases"]["why"].startswith(
        "compatfix is off here (COMPATFIX=0 switches it off); under python -m compatfix it would apply: numpy 2.")


def fake_nvidia_apex_without_amp(folder):
    """An NVIDIA apex build without apex.amp and apex.parallel: a doctor warning."""
    (folder / "apex" / "optimizers").mkdir(parents=True)
    (folder / "apex" / "__init__.py").write_text("")
    (folder / "apex" / "optimizers" / "__init__.py").write_text("")
    (folder / "apex-0.1.dist-info").mkdir()
    (folder / "apex-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: apex\nVersion: 0.1\nSummary: PyTorch Extensions written by NVIDIA\n")


def test_doctor_json_and_exit_codes(tmp_path):
    clean = console("doctor", "--json")
    assert clean.returncode == 0, clean.stderr  # this stack: info findings only
    report = json.loads(clean.stdout)
    assert report["activation"]["active"] is True and report["needs_action"] is False
    assert {f["severity"] for f in report["findings"]} == {"info"}
    assert set(report["findings"][0]) == {"check", "severity", "summary", "advice"}
    text = console("doctor")
    assert text.returncode == 0 and text.stdout.splitlines()[0].startswith("compatfix ")
    fake_nvidia_apex_without_amp(tmp_path)
    warned = console("doctor", "--json", env=clean_env(PYTHONPATH=str(tmp_path)))
    assert warned.returncode == 1, warned.stderr
    report = json.loads(warned.stdout)
    assert report["needs_action"] is True
    assert [f["severity"] for f in report["findings"] if f["check"] == "apex"] == ["warning"]
    usage = console("doctor", "--bogus")
    assert usage.returncode == 2 and "unrecognized arguments: --bogus" in usage.stderr


def test_run_takes_python_c_and_stdin():
    result = console("run", "-c", "import sys, numpy as np; print(sys.argv, repr(sys.path[0]), np.float)", "a", "b")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "['-c', 'a', 'b'] '' <class 'float'>\n"
    piped = subprocess.run(
        [CONSOLE_SCRIPT, "run", "-", "x"], input="import sys, numpy as np; print(sys.argv, np.float)\n",
        capture_output=True, text=True, env=clean_env(), cwd=NEUTRAL_CWD)
    assert (piped.returncode, piped.stdout) == (0, "['-', 'x'] <class 'float'>\n"), piped.stderr


@pytest.mark.parametrize("form", [["python"], ["--", "python"], ["--", "{bin}/python3", "-u"]])
def test_run_python_means_the_interpreter(form):
    bin_folder = os.path.dirname(sys.executable)
    program = [word.format(bin=bin_folder) for word in form]
    code = "import sys, numpy as np; print(sys.argv, hasattr(np, 'float'), hasattr(np, 'float_'))"
    env = clean_env(PATH=bin_folder + os.pathsep + os.environ.get("PATH", ""))
    result = console("run", "--disable", "numpy.builtin_aliases", *program, "-c", code, "q", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "['-c', 'q'] False True\n"  # the option reached the program


def test_run_a_command_or_an_interpreter_without_compatfix_says_what_to_do(tmp_path):
    command = console("run", "ls", "-l")
    assert command.returncode == 2 and command.stdout == ""
    assert command.stderr.count("\n") == 1 and "'ls' is a command, not a Python script" in command.stderr
    assert "-- python" in command.stderr
    # The base interpreter of this venv has no compatfix (the venv has it).
    other = console("run", "--", os.path.realpath(sys.executable), "-c", "print('ran')")
    assert other.returncode == 2 and other.stdout == ""
    assert "has no compatfix installed" in other.stderr


@pytest.mark.parametrize("option, value, message", [
    ("--disable", "numpy.bogus", "compatfix: --disable: 'numpy.bogus' matches no shim (see `compatfix list`)\n"),
    ("--enable", "no.such,numpy.*", "compatfix: --enable: 'no.such' matches no shim (see `compatfix list`)\n"),
    ("--device", "gpu", "compatfix: --device: 'gpu' is not a known device (known: cpu)\n"),
    ("--report", "/no/such/folder/r.json",
     "compatfix: --report: '/no/such/folder/r.json' cannot be written: its folder /no/such/folder does not exist\n"),
])
def test_a_bad_option_value_is_a_usage_error_naming_the_option(tmp_path, option, value, message):
    script = tmp_path / "ran.py"
    script.write_text("print('ran')\n")
    result = console("run", option, value, str(script))
    assert (result.returncode, result.stdout, result.stderr) == (2, "", message)


def test_a_bad_environment_value_is_a_warning_naming_the_variable(tmp_path):
    script = tmp_path / "ran.py"
    script.write_text("import numpy\nprint('ran')\n")
    result = console("run", str(script), env=clean_env(COMPATFIX_DEVICE="gpu"))
    assert result.returncode == 0 and result.stdout == "ran\n"
    assert "compatfix: COMPATFIX_DEVICE='gpu' is not a known device" in result.stderr


def test_scan_and_trust_are_subcommands():
    # Each lives in its own module; either runs, or says it is not installed (never a traceback).
    for command in ("scan", "trust"):
        result = console(command, "--help")
        assert "Traceback" not in result.stderr, result.stderr
        assert result.returncode == 0 or "is not part of this installation" in result.stderr


def test_the_catalogue_gives_one_line_to_rewrites_that_say_the_same():
    from compatfix.cli import catalogue_markdown
    from compatfix.registry import Shim

    shim = Shim("x.names", targets=["x"], apply=lambda module: None, broke="b", summary="s",
                rewrites={"x.B_MAP": "write them out", "x.A_MAP": "write them out", "x.f": "call g"})
    lines = [line for line in catalogue_markdown([shim]).splitlines() if line.startswith("- Rewrite")]
    assert lines == ["- Rewrite `x.A_MAP`, `x.B_MAP`: write them out (not mechanical)",
                     "- Rewrite `x.f`: call g (not mechanical)"]
