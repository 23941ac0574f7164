"""``[tool.compatfix]`` in the nearest pyproject.toml: read by ``python -m compatfix`` and
the ``compatfix`` command only, with the options' names; a command-line option, then the
environment, then the table."""

from __future__ import annotations

import json
import os
import sys

from support import clean_env, run_python

from compatfix import _project_config

CONSOLE_SCRIPT = os.path.join(os.path.dirname(sys.executable), "compatfix")

# What the program sees of numpy's restored names and of the settings it was given.
PROBE = (
    "import json, os, numpy as np\n"
    "print(json.dumps({'np.float': hasattr(np, 'float'), 'np.float_': hasattr(np, 'float_'),\n"
    "    'env': {k: os.environ.get(k) for k in ('COMPATFIX_DISABLE', 'COMPATFIX_ENABLE', 'COMPATFIX_STRICT',\n"
    "                                           'COMPATFIX_REPORT', 'COMPATFIX_DEVICE')}}))\n"
)


def project(tmp_path, table: str):
    """A project folder with ``table`` as its [tool.compatfix], and the probe two folders down."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'legacy'\n\n[tool.compatfix]\n" + table)
    script = tmp_path / "tools" / "train" / "probe.py"
    script.parent.mkdir(parents=True)
    script.write_text(PROBE)
    return script


def run(*args, cwd, **env):
    return run_python(*args, env=clean_env(**env), cwd=str(cwd))


def seen(result):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_nearest_pyproject_above_the_script_is_read(tmp_path):
    script = project(tmp_path, "disable = ['numpy.builtin_aliases']\n")
    elsewhere = tmp_path.parent  # the cwd plays no part for a script
    state = seen(run("-m", "compatfix", str(script), cwd=elsewhere))
    assert state["np.float"] is False and state["np.float_"] is True
    assert state["env"]["COMPATFIX_DISABLE"] == "numpy.builtin_aliases"


def test_a_nearer_pyproject_without_the_table_hides_the_one_above(tmp_path):
    script = project(tmp_path, "disable = ['numpy.builtin_aliases']\n")
    (script.parent / "pyproject.toml").write_text("[project]\nname = 'inner'\n")
    assert seen(run("-m", "compatfix", str(script), cwd=tmp_path))["np.float"] is True


def test_modules_and_code_use_the_current_folder(tmp_path):
    script = project(tmp_path, "disable = 'numpy.builtin_aliases,numpy.numpy2_aliases'\n")
    for args in (["-c", PROBE], ["-m", "probe"]):
        state = seen(run("-m", "compatfix", *args, cwd=script.parent))
        assert state["np.float"] is False and state["np.float_"] is False, args


def test_interpreter_start_never_reads_it(tmp_path):
    script = project(tmp_path, "disable = ['numpy.builtin_aliases']\n")
    state = seen(run(str(script), cwd=script.parent))  # plain python: compatfix.pth only
    assert state["np.float"] is True and state["env"]["COMPATFIX_DISABLE"] is None


def test_options_then_environment_then_the_table(tmp_path):
    script = project(tmp_path, "disable = ['numpy.builtin_aliases']\nreport = 'from-table.json'\nstrict = true\n")
    # An option's --enable wins over the table's disable, though disabling wins otherwise.
    state = seen(run("-m", "compatfix", "--enable", "numpy.builtin_aliases", str(script), cwd=tmp_path))
    assert state["np.float"] is True and state["env"]["COMPATFIX_DISABLE"] is None
    assert state["env"]["COMPATFIX_STRICT"] == "1"
    # So does the environment's.
    state = seen(run("-m", "compatfix", str(script), cwd=tmp_path, COMPATFIX_ENABLE="numpy.builtin_aliases"))
    assert state["np.float"] is True
    # The report: relative to the pyproject.toml; the environment's, then the option's win.
    assert seen(run("-m", "compatfix", str(script), cwd=script.parent))["env"]["COMPATFIX_REPORT"] == str(
        tmp_path / "from-table.json")
    assert (tmp_path / "from-table.json").exists()
    env_report = str(tmp_path / "from-env.json")
    state = seen(run("-m", "compatfix", str(script), cwd=tmp_path, COMPATFIX_REPORT=env_report))
    assert state["env"]["COMPATFIX_REPORT"] == env_report
    state = seen(run("-m", "compatfix", "--report", "opt.json", str(script), cwd=tmp_path,
                     COMPATFIX_REPORT=env_report))
    assert state["env"]["COMPATFIX_REPORT"] == str(tmp_path / "opt.json")
    # Lists add up: the table's, the environment's, the options'.
    state = seen(run("-m", "compatfix", "--disable", "torch._six", str(script), cwd=tmp_path,
                     COMPATFIX_DISABLE="numpy.numpy2_aliases"))
    assert state["env"]["COMPATFIX_DISABLE"] == "numpy.builtin_aliases,numpy.numpy2_aliases,torch._six"


def test_a_bad_table_is_an_error_naming_the_file_and_the_key(tmp_path):
    script = project(tmp_path, "disable = ['numpy.bogus']\ndevice = 'gpu'\nstrict = 'yes'\ncolour = 1\n")
    result = run("-m", "compatfix", str(script), cwd=tmp_path)
    where = "compatfix: %s [tool.compatfix]" % (tmp_path / "pyproject.toml")
    assert (result.returncode, result.stdout) == (2, "")
    assert sorted(result.stderr.splitlines()) == sorted([
        where + ": strict must be true or false, not 'yes'",
        where + ": unknown key 'colour' (known: disable, enable, strict, report, device)",
        where + " disable: 'numpy.bogus' matches no shim (see `compatfix list`)",
        where + " device: 'gpu' is not a known device (known: cpu)",
    ])


def test_compatfix_list_reads_it_from_the_current_folder(tmp_path):
    script = project(tmp_path, "disable = ['numpy.builtin_aliases']\n")
    listed = run_python(CONSOLE_SCRIPT, "list", "--json", env=clean_env(), cwd=str(script.parent))
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["numpy.builtin_aliases"]["applies"] is False
    assert rows["numpy.builtin_aliases"]["why"] == "disabled by COMPATFIX_DISABLE=numpy.builtin_aliases"
    assert rows["numpy.numpy2_aliases"]["applies"] is True
    (tmp_path / "pyproject.toml").write_text("[tool.compatfix]\ndevice = 'gpu'\n")
    listed = run_python(CONSOLE_SCRIPT, "list", "--json", env=clean_env(), cwd=str(script.parent))
    assert listed.returncode == 0
    assert "[tool.compatfix] device: 'gpu' is not a known device" in listed.stderr
    assert "[tool.compatfix] is ignored here" in listed.stderr


def test_without_a_toml_reader_the_table_is_skipped_with_one_message(tmp_path, monkeypatch):
    project(tmp_path, "strict = true\n")
    monkeypatch.setattr(_project_config, "_toml_loads", lambda: None)
    config = _project_config.load(str(tmp_path))
    assert config.env == {}
    [problem] = config.problems
    assert "needs tomli on Python" in problem and "it is ignored" in problem


def test_a_project_that_never_names_compatfix_is_not_parsed(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'plain'\n")
    monkeypatch.setattr(_project_config, "_toml_loads", lambda: (_ for _ in ()).throw(AssertionError("parsed")))
    assert _project_config.load(str(tmp_path)) == _project_config.NONE
