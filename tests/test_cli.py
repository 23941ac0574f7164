"""Observability and bad configuration: `compatfix list`, the JSON report, the docs
catalogue, and options that are wrong but must never break the program."""

from __future__ import annotations

import json
import os
import sys

from support import REPO_ROOT, clean_env, run_python

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
