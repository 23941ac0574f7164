"""The real-repository acceptance zoo: run a repository's stock commands under compatfix.

    python acceptance/zoo.py RECIPE CLONE [--stack modern] [--mode pth|runner|both]
    python acceptance/zoo.py --table            # only regenerate docs/compatibility.md

RECIPE names a module in acceptance/recipes/ (``microsoft__Swin-Transformer``); CLONE is a
local git clone of that repository, at the commit you want tested. For each stack and each
activation mode the harness

1. generates tiny synthetic data in a temporary folder (the recipe says which layout);
2. runs the recipe's steps, the repository's own README commands with only the
   command-line overrides the repository itself offers, each under a time limit:
   - ``pth``: ``python …`` with the stack's installed compatfix.pth, ``COMPATFIX_DEVICE=cpu``
     and ``COMPATFIX_REPORT`` in the environment (docs/cpu-mode.md, docs/activation.md);
   - ``runner``: ``python -m compatfix --device cpu --report R …``;
3. checks what each step must leave behind (a checkpoint, a log line);
4. checks that the clone is byte-identical afterwards: ``git status --porcelain`` is empty
   and a hash of every tracked file is unchanged (bytecode goes to PYTHONPYCACHEPREFIX);
5. reads the ``--report`` JSON for the shims that were applied and those that were used;
6. stores the result in acceptance/results/RECIPE.json and regenerates
   docs/compatibility.md from all stored results.

The harness never changes the clone: outputs go to the temporary folder. It is not part
of the test suite (nothing here is collected by ``pytest tests``).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RECIPES = os.path.join(HERE, "recipes")
RESULTS = os.path.join(HERE, "results")
TABLE = os.path.join(ROOT, "docs", "compatibility.md")

sys.path.insert(0, HERE)
import synthetic  # noqa: E402  (acceptance/synthetic.py, next to this file)


@dataclass
class Step:
    """One README command. ``argv`` starts with ``python``; placeholders: {data} (the
    synthetic data folder), {out} (this run's output folder), {port} (a free port),
    {checkpoint} (the newest file matching the recipe's CHECKPOINT glob under {out}),
    {repo} (the clone's WORKDIR, for recipes that run from RUN_FROM)."""

    name: str
    argv: list[str]
    expect: str | None = None  # glob under {out} that must match afterwards
    expect_log: str | None = None  # regex that stdout+stderr must contain
    timeout: int = 600


@dataclass
class Recipe:
    name: str
    repo: str
    field: str
    stacks: list[str]
    make_data: Callable[[str], None]
    steps: list[Step]
    checkpoint: str | None = None
    workdir: str = "."  # relative to the clone: where the README's commands are run
    # Where they run instead, for code that writes into the current folder without an
    # option to move it (``{out}``): the commands then name the scripts as {repo}/script.py.
    run_from: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    # Per stack, on top of ``env``: an opt-in shim a stack needs (COMPATFIX_ENABLE=...) is
    # named here, and the table shows it beside the status.
    stack_env: dict[str, dict[str, str]] = field(default_factory=dict)
    installs: str = ""  # extra pip packages the recipe needed in the stack venv
    notes: str = ""


def load_recipe(name: str) -> Recipe:
    path = os.path.join(RECIPES, name + ".py")
    spec = importlib.util.spec_from_file_location("zoo_recipe_" + name.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Recipe(
        name=name,
        repo=module.REPO,
        field=module.FIELD,
        stacks=list(module.STACKS),
        make_data=module.make_data,
        steps=list(module.STEPS),
        checkpoint=getattr(module, "CHECKPOINT", None),
        workdir=getattr(module, "WORKDIR", "."),
        run_from=getattr(module, "RUN_FROM", None),
        env=dict(getattr(module, "ENV", {})),
        stack_env={stack: dict(values) for stack, values in getattr(module, "STACK_ENV", {}).items()},
        installs=getattr(module, "INSTALLS", ""),
        notes=getattr(module, "NOTES", ""),
    )


# --- the clone stays byte-identical -------------------------------------------------------

def tree_state(clone: str) -> tuple[str, str]:
    """(``git status --porcelain``, sha256 over every tracked file's path and bytes)."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored=no"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=clone, capture_output=True, check=True
    ).stdout.split(b"\0")
    digest = hashlib.sha256()
    for name in sorted(f for f in files if f):
        path = os.path.join(clone.encode(), name)
        digest.update(name + b"\0")
        if os.path.islink(path):
            digest.update(b"link:" + os.readlink(path))
        elif os.path.isfile(path):
            with open(path, "rb") as handle:
                digest.update(hashlib.sha256(handle.read()).digest())
        else:
            digest.update(b"missing")
    return status, digest.hexdigest()


def commit_of(clone: str) -> str:
    return subprocess.run(
        ["git", "log", "-1", "--format=%H %cs"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()


# --- running one step ---------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def venv_python(stack: str) -> str:
    return os.path.join(ROOT, ".venvs", stack, "bin", "python")


def command_for(step_argv: list[str], python: str, mode: str, report: str) -> list[str]:
    """``python …`` becomes the stack's python (under the runner in runner mode); a
    ``bash script.sh …`` command runs as it is, and finds ``python`` on PATH (path_python)."""
    if step_argv[0] == "bash":
        return step_argv
    assert step_argv[0] == "python", "a step's command starts with python or bash"
    if mode == "runner":
        return [python, "-m", "compatfix", "--device", "cpu", "--report", report] + step_argv[1:]
    return [python] + step_argv[1:]


def path_python(folder: str, python: str, mode: str, report: str) -> str:
    """A folder whose ``python`` is the stack's python, or the stack's python under
    ``python -m compatfix`` in runner mode: a repository's shell scripts (dist_train.sh)
    say ``python …``, and they run unmodified with this folder first on PATH."""
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, "python")
    with open(target, "w") as handle:
        if mode == "runner":
            handle.write('#!/bin/sh\nexec "%s" -m compatfix --device cpu --report "%s" "$@"\n' % (python, report))
        else:
            handle.write('#!/bin/sh\nexec "%s" "$@"\n' % python)
    os.chmod(target, 0o755)
    return folder


def _first_traceback(output: str) -> list[str]:
    """The lines of the first traceback: in a launched run, the worker's own error comes
    first, and the launcher's ChildFailedError after it."""
    # torch.distributed's elastic agent prefixes a worker's lines with "[rank0]: ".
    lines = [re.sub(r"^\[rank\d+\]: ", "", line) for line in output.splitlines()]
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("Traceback (most recent")), None)
    if start is None:
        return []
    indent = len(lines[start]) - len(lines[start].lstrip())
    for end in range(start + 1, len(lines)):
        line = lines[end]
        if line.strip() and len(line) - len(line.lstrip()) <= indent and not line.lstrip().startswith(
                ("File ", "Traceback", "During handling", "The above exception")):
            return lines[start:end + 1]
    return lines[start:]


def first_error(output: str) -> str:
    """The exception line of the first traceback (or the last line of output)."""
    block = _first_traceback(output)
    if block:
        return block[-1].strip()[:400]
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return (lines[-1] if lines else "(no output)")[:400]


def fault_frame(output: str) -> str:
    """The innermost ``File "…", line N, in f`` of the first traceback."""
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', "\n".join(_first_traceback(output)))
    if not frames:
        return ""
    path, line, function = frames[-1]
    return "%s:%s in %s" % (path, line, function)


def run_mode(recipe: Recipe, clone: str, stack: str, mode: str, keep: bool) -> dict[str, Any]:
    python = venv_python(stack)
    scratch = tempfile.mkdtemp(prefix="zoo-%s-%s-%s-" % (recipe.name, stack, mode))
    data, out = os.path.join(scratch, "data"), os.path.join(scratch, "out")
    os.makedirs(out)
    recipe.make_data(data)
    report = os.path.join(scratch, "report.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPATFIX")}
    env.pop("PYTHONPATH", None)
    env.update(
        PYTHONPYCACHEPREFIX=os.path.join(scratch, "pycache"),  # keep __pycache__ out of the clone
        OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
        COMPATFIX_TRUST_STORE=os.path.join(scratch, "trusted-checkpoints.tsv"),
    )
    env["PATH"] = path_python(os.path.join(scratch, "bin"), python, mode, report) + os.pathsep + env.get("PATH", "")
    env.update(recipe.env)
    env.update(recipe.stack_env.get(stack, {}))
    if mode == "pth":
        env.update(COMPATFIX_DEVICE="cpu", COMPATFIX_REPORT=report)
    repo = os.path.join(clone, recipe.workdir)
    cwd = recipe.run_from.format(out=out, data=data) if recipe.run_from else repo
    os.makedirs(cwd, exist_ok=True)
    result: dict[str, Any] = {"stack": stack, "mode": mode, "steps": [], "status": "pass"}
    opt_in = {k: v for k, v in {**recipe.env, **recipe.stack_env.get(stack, {})}.items() if k.startswith("COMPATFIX")}
    if opt_in:
        result["opt_in"] = " ".join("%s=%s" % item for item in sorted(opt_in.items()))
    for step in recipe.steps:
        values = {"data": data, "out": out, "port": str(free_port()), "checkpoint": "", "repo": repo}
        if recipe.checkpoint and "{checkpoint}" in " ".join(step.argv):
            found = sorted(glob.glob(os.path.join(out, recipe.checkpoint), recursive=True), key=os.path.getmtime)
            values["checkpoint"] = found[-1] if found else os.path.join(out, "NO-CHECKPOINT")
        argv = [part.format(**values) for part in step.argv]
        command = command_for(argv, python, mode, report)
        started = time.time()
        try:
            proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=step.timeout)
            output, code = proc.stdout + proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as exc:
            output = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            output += (exc.stderr or b"").decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
            output, code = output + "\nTIMEOUT after %ds" % step.timeout, "timeout"
        seconds = round(time.time() - started, 1)
        with open(os.path.join(scratch, "%s.log" % step.name), "w") as handle:
            handle.write(" ".join(command) + "\n\n" + output)
        problem = None
        if code != 0:
            problem = first_error(output) if code != "timeout" else "timeout after %ds" % step.timeout
        elif step.expect and not glob.glob(os.path.join(out, step.expect), recursive=True):
            problem = "exit 0 but no %s under the output folder" % step.expect
        elif step.expect_log and not re.search(step.expect_log, output):
            problem = "exit 0 but the log lacks /%s/" % step.expect_log
        record = {"step": step.name, "command": " ".join(step.argv), "seconds": seconds, "ok": problem is None}
        if problem:
            record.update(error=problem, where=fault_frame(output))
        result["steps"].append(record)
        print("[zoo] %s %s/%s %s: %s (%.0fs)%s" % (
            recipe.name, stack, mode, step.name, "ok" if not problem else "FAIL", seconds,
            "" if not problem else "\n      " + problem), flush=True)
        if problem:
            result["status"] = "fail at %s" % step.name
            break
    result.update(shims_from_report(report))
    if result["status"] != "pass" or keep:
        print("[zoo] logs and outputs kept in %s" % scratch, flush=True)
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def shims_from_report(path: str) -> dict[str, list[str]]:
    """Shims applied in any process, and those that something actually used."""
    try:
        with open(path) as handle:
            report = json.load(handle)
    except (OSError, ValueError):
        return {"applied": [], "used": [], "failed_shims": []}
    applied, used, failed = set(), set(), set()
    for process in report.get("processes", []):
        applied.update(item["shim"] for item in process.get("applied", []))
        failed.update("%s: %s" % (item["shim"], item.get("error", "")) for item in process.get("failed", []))
        used.update(item["shim"] for item in process.get("deprecated_uses", []))
        used.update(item["shim"] for item in process.get("redirected", []))
    return {"applied": sorted(applied), "used": sorted(used), "failed_shims": sorted(failed)}


# --- the table ----------------------------------------------------------------------------

def stack_description(stack: str) -> str:
    python = venv_python(stack)
    code = (
        "import importlib.metadata as m, sys\n"
        "names = ['torch', 'numpy', 'timm', 'mmcv', 'mmcv-full', 'mmsegmentation', 'mmdet']\n"
        "out = ['py%d.%d' % sys.version_info[:2]]\n"
        "for n in names:\n"
        "    try: out.append('%s %s' % (n, m.version(n)))\n"
        "    except Exception: pass\n"
        "print(', '.join(out))\n"
    )
    env = dict(os.environ, COMPATFIX="0")
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    return proc.stdout.strip() or stack


# Shims renamed after some results were recorded (compatfix's module-mirroring names):
# the table shows today's names. cpu.torch.device was split into eight shims.
RENAMED = {
    "cpu.mmcv.MMDataParallel.cpu_step": "cpu.mmcv.parallel.mmdp_cpu_step",
    "cpu.mmcv.MMDistributedDataParallel": "cpu.mmcv.parallel.mmddp_scatter",
    "cpu.mmcv.MMSyncBN": "cpu.mmcv.ops.sync_bn",
    "cpu.mmcv.scatter_to_cpu": "cpu.mmcv.parallel.scatter_to_cpu",
    "cpu.torch.device": "cpu.torch.* (then one shim, cpu.torch.device; now tensor_moves, factories, "
                        "load_map_location, ...)",
    "mmcv.cnn.syncbn_specify_ddp_gpu_num": "mmcv.utils.syncbn_specify_ddp_gpu_num",
    "mmcv.config_yapf_verify": "mmcv.utils.config_yapf_verify",
    "mmcv.registry_user_class_wins": "mmcv.utils.registry_user_class_wins",
    "pillow.draw_textsize": "PIL.ImageDraw.textsize",
    "pillow.font_getsize": "PIL.ImageFont.getsize",
    "pillow.resampling_constants": "PIL.Image.resampling_constants",
    "python.collections_abc_aliases": "collections.abc_aliases",
    "python.inspect_getargspec": "inspect.getargspec",
    "torch.load.data_only_classes": "torch.serialization.load_data_only_classes",
    "torch.load.trusted_files": "torch.serialization.load_trusted_files",
}


def current_names(names: list[str]) -> list[str]:
    return sorted({RENAMED.get(name, name) for name in names})


def status_of(run: dict[str, Any]) -> str:
    """The run's status, naming the opt-in shims it ran with: a pass that needs one is not
    a pass of compatfix's defaults."""
    return run["status"] + (" (with `%s`)" % run["opt_in"] if run.get("opt_in") else "")


def write_table() -> None:
    rows = []
    for path in sorted(glob.glob(os.path.join(RESULTS, "*.json"))):
        with open(path) as handle:
            row = json.load(handle)
        name = os.path.splitext(os.path.basename(path))[0]
        if os.path.exists(os.path.join(RECIPES, name + ".py")):
            recipe = load_recipe(name)  # notes and installs may be written after the run
            row["notes"], row["installs"] = recipe.notes, recipe.installs
        rows.append(row)
    runs = [run for row in rows for run in row["runs"]]
    passing = sorted({row["repo"] for row in rows if all(r["status"] == "pass" for r in row["runs"])})
    lines = [
        "# Compatibility: real repositories under compatfix",
        "",
        "Generated by `python acceptance/zoo.py` (see acceptance/README.md); do not edit by hand.",
        "Each repository's own README commands run unmodified on tiny synthetic data, on the CPU",
        "(`--device cpu`), once through the venv's `compatfix.pth` alone (`pth`) and once through",
        "`python -m compatfix` (`runner`). The clone is checked to be byte-identical afterwards.",
        "\"Shims used\" are those the `--report` shows were exercised (a restored name used, a call",
        "redirected); \"applied\" are all shims the run applied. A shim that only restores names",
        "applies at the first use of one of them, so a run lists it only where the code used one;",
        "rows recorded before that change (all of them up to 2026-12-02) list it wherever it applied.",
        "OpenMMLab's own model-zoo configs across mmcv 1.2-1.7 (mmseg 0.x, mmdet 2.x) are in",
        "[openmmlab-matrix.md](openmmlab-matrix.md).",
        "",
        "Repositories: %d; passing on every stack and mode: %d; runs: %d, passing: %d (%d of them with an "
        "opt-in shim)." % (len(rows), len(passing), len(runs), sum(r["status"] == "pass" for r in runs),
                           sum(r["status"] == "pass" and bool(r.get("opt_in")) for r in runs)),
        "",
        "| Repository | Commit | Field | Stack | Mode | Status | Shims used | What is left |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for run in row["runs"]:
            left = run.get("left", "")
            if run["status"] != "pass":
                failed = next(s for s in run["steps"] if not s["ok"])
                left = left or "`%s` at %s" % (failed["error"].replace("|", "\\|"), failed.get("where") or "?")
            lines.append("| [%s](https://github.com/%s) | `%s` | %s | %s (%s) | %s | %s | %s | %s |" % (
                row["repo"], row["repo"], row["commit"][:7] + row["commit"][40:], row["field"],
                run["stack"], run.get("stack_versions", ""), run["mode"],
                status_of(run), ", ".join("`%s`" % s for s in current_names(run["used"])) or "none", left or "nothing"))
    lines += ["", "## Commands and shims applied, per repository", ""]
    for row in rows:
        lines += ["### %s (%s)" % (row["repo"], row["commit"]), ""]
        if row.get("installs"):
            lines += ["Extra packages installed into the stack venv: %s." % row["installs"], ""]
        if row.get("notes"):
            lines += [row["notes"], ""]
        lines += ["Run from `%s`:" % (row.get("run_from") or row["workdir"]), "", "```"]
        lines += [step["command"] for step in row["commands"]]
        lines += ["```", ""]
        for run in row["runs"]:
            lines.append("- %s/%s: %s; applied: %s%s" % (
                run["stack"], run["mode"], status_of(run), ", ".join(current_names(run["applied"])) or "none",
                ("; FAILED shims: " + "; ".join(run["failed_shims"])) if run["failed_shims"] else ""))
        lines.append("")
    with open(TABLE, "w") as handle:
        handle.write("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("recipe", nargs="?")
    parser.add_argument("clone", nargs="?")
    parser.add_argument("--stack", action="append", help="default: the recipe's stacks")
    parser.add_argument("--mode", choices=["pth", "runner", "both"], default="both")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder of passing runs")
    parser.add_argument("--table", action="store_true", help="only regenerate docs/compatibility.md")
    args = parser.parse_args(argv)
    if args.table:
        write_table()
        return 0
    if not args.recipe or not args.clone:
        parser.error("RECIPE and CLONE are needed")
    recipe = load_recipe(args.recipe)
    clone = os.path.abspath(args.clone)
    before = tree_state(clone)
    if before[0]:
        parser.error("the clone has local changes; the zoo runs stock code only:\n" + before[0])
    modes = ["pth", "runner"] if args.mode == "both" else [args.mode]
    runs = []
    for stack in args.stack or recipe.stacks:
        for mode in modes:
            run = run_mode(recipe, clone, stack, mode, args.keep)
            run["stack_versions"] = stack_description(stack)
            after = tree_state(clone)
            if after != before:
                run["status"] = "fail: the clone changed"
                run["left"] = "the run changed the source tree: %s" % (after[0].strip() or "tracked bytes differ")
                print("[zoo] the clone changed:\n" + after[0], flush=True)
            runs.append(run)
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, recipe.name + ".json")
    stored = {}
    if os.path.exists(path):
        with open(path) as handle:
            stored = json.load(handle)
    # Runs of other stacks/modes stay; the ones just made replace their earlier selves.
    kept = [r for r in stored.get("runs", []) if (r["stack"], r["mode"]) not in {(x["stack"], x["mode"]) for x in runs}]
    row = {
        "repo": recipe.repo, "commit": commit_of(clone), "field": recipe.field, "workdir": recipe.workdir,
        "run_from": recipe.run_from,
        "installs": recipe.installs, "notes": recipe.notes,
        "commands": [{"step": s.name, "command": " ".join(s.argv)} for s in recipe.steps],
        "runs": sorted(kept + runs, key=lambda r: (r["stack"], r["mode"])),
    }
    with open(path, "w") as handle:
        json.dump(row, handle, indent=1)
    write_table()
    return 0 if all(r["status"] == "pass" for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
