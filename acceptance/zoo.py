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

sys.path.insert(0, HERE)  # recipes import acceptance/synthetic.py and this module by name


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
    # Variables for every step; {data}, {out} and {repo} are filled in (PYTHONPATH={repo}
    # stands in for an editable install of a repository that is a package).
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


_SITE_PACKAGES = re.compile(r"^.*/(?:site|dist)-packages/")
_STDLIB = re.compile(r"^.*/lib/python3\.\d+/")
_ZOO_CLONE = re.compile(r"^/tmp/zoo/[^/]+/")  # where the README tells users to clone


def plain_path(path: str, clone: str | None = None) -> tuple[str, str]:
    """A file named as a reader can find it, not as it lay on the machine of the run, and
    where it belongs: (path relative to the repository, ""), (``pkg/mod.py``, "installed
    package"), (``socket.py``, "standard library"). Results stored before paths were recorded
    this way are cleaned the same way (their clones lay under /tmp/zoo/NAME, as
    acceptance/README.md has it)."""
    if clone and path.startswith(clone.rstrip("/") + "/"):
        return path[len(clone.rstrip("/")) + 1:], ""
    if _SITE_PACKAGES.match(path):
        return _SITE_PACKAGES.sub("", path), "installed package"
    if _STDLIB.match(path):
        return _STDLIB.sub("", path), "standard library"
    return _ZOO_CLONE.sub("", path), ""


def plain_location(path: str, line: str | int, clone: str | None = None, function: str = "") -> str:
    """``file:line[ in function][ (installed package)]`` (plain_path)."""
    shown, origin = plain_path(path, clone)
    return "%s:%s%s%s" % (shown, line, " in %s" % function if function else "",
                          " (%s)" % origin if origin else "")


def plain_frame(where: str, clone: str | None = None) -> str:
    """fault_frame's ``path:line in function``, made plain (plain_location)."""
    match = re.match(r"^(/.+):(\d+) in (\S+)$", where)
    return plain_location(match.group(1), match.group(2), clone, match.group(3)) if match else where


def plain_paths_in(text: str, clone: str | None = None, scratch: str | None = None) -> str:
    """Every absolute path in an error message made plain (plain_path); the run's scratch
    folder, which the harness made, named by its role (``<data>``, ``<out>``)."""
    if scratch:
        text = text.replace(os.path.join(scratch, "data"), "<data>").replace(os.path.join(scratch, "out"), "<out>")
        text = text.replace(scratch, "<scratch>")
    text = re.sub(r"/tmp/zoo-[^/\s'\"]+-(?:pth|runner)-[^/\s'\"]+/(data|out)", r"<\1>", text)

    def shown(match: re.Match) -> str:
        name, origin = plain_path(match.group(0), clone)
        return name + (" (%s)" % origin if origin else "")
    return re.sub(r"(?<![\w.<])/[^\s'\":]+", shown, text)


def run_mode(recipe: Recipe, clone: str, stack: str, mode: str, keep: bool) -> dict[str, Any]:
    python = venv_python(stack)
    scratch = tempfile.mkdtemp(prefix="zoo-%s-%s-%s-" % (recipe.name, stack, mode))
    data, out = os.path.join(scratch, "data"), os.path.join(scratch, "out")
    os.makedirs(out)
    recipe.make_data(data)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPATFIX")}
    env.pop("PYTHONPATH", None)
    env.update(
        PYTHONPYCACHEPREFIX=os.path.join(scratch, "pycache"),  # keep __pycache__ out of the clone
        OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
        COMPATFIX_TRUST_STORE=os.path.join(scratch, "trusted-checkpoints.tsv"),
    )
    bin_folder = os.path.join(scratch, "bin")
    env["PATH"] = bin_folder + os.pathsep + env.get("PATH", "")
    places = {"data": data, "out": out, "repo": os.path.normpath(os.path.join(clone, recipe.workdir))}
    env.update({key: value.format(**places) for key, value in recipe.env.items()})
    env.update(recipe.stack_env.get(stack, {}))
    if mode == "pth":
        env.update(COMPATFIX_DEVICE="cpu")
    repo = os.path.normpath(os.path.join(clone, recipe.workdir))
    cwd = recipe.run_from.format(out=out, data=data) if recipe.run_from else repo
    os.makedirs(cwd, exist_ok=True)
    result: dict[str, Any] = {"stack": stack, "mode": mode, "steps": [], "status": "pass", "reports": "every step"}
    opt_in = {k: v for k, v in {**recipe.env, **recipe.stack_env.get(stack, {})}.items() if k.startswith("COMPATFIX")}
    if opt_in:
        result["opt_in"] = " ".join("%s=%s" % item for item in sorted(opt_in.items()))
    reports = []
    for step in recipe.steps:
        # One report per step: each step is a run of its own, and a run replaces the
        # report an earlier run left at the same path.
        report = os.path.join(scratch, "report-%s.json" % step.name)
        reports.append(report)
        path_python(bin_folder, python, mode, report)
        if mode == "pth":
            env["COMPATFIX_REPORT"] = report
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
            record.update(error=plain_paths_in(problem, repo, scratch), where=plain_frame(fault_frame(output), repo))
        result["steps"].append(record)
        print("[zoo] %s %s/%s %s: %s (%.0fs)%s" % (
            recipe.name, stack, mode, step.name, "ok" if not problem else "FAIL", seconds,
            "" if not problem else "\n      " + problem), flush=True)
        if problem:
            result["status"] = "fail at %s" % step.name
            break
    result.update(shims_from_reports(reports, repo))
    if result["status"] != "pass" or keep:
        print("[zoo] logs and outputs kept in %s" % scratch, flush=True)
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def shims_from_reports(paths: list[str], repo: str) -> dict[str, Any]:
    """Shims applied in any process of any step, those that something actually used, and
    where each use of a restored name was (``sites``: shim -> plain file:line, see
    plain_path). A redirected call (CPU mode, a launcher option) has no site in the report.
    A step that stopped before writing its report adds nothing."""
    processes = []
    for path in paths:
        try:
            with open(path) as handle:
                processes += json.load(handle).get("processes", [])
        except (OSError, ValueError):
            pass
    applied, used, failed = set(), set(), set()
    sites: dict[str, set[str]] = {}
    for process in processes:
        applied.update(item["shim"] for item in process.get("applied", []))
        failed.update("%s: %s" % (item["shim"], item.get("error", "")) for item in process.get("failed", []))
        for item in process.get("deprecated_uses", []):
            used.add(item["shim"])
            sites.setdefault(item["shim"], set()).add(plain_location(item["file"], item["line"], repo))
        used.update(item["shim"] for item in process.get("redirected", []))
    return {"applied": sorted(applied), "used": sorted(used), "failed_shims": sorted(failed),
            "sites": {shim: sorted(where) for shim, where in sorted(sites.items())}}


# --- the table ----------------------------------------------------------------------------

def stack_description(stack: str) -> str:
    python = venv_python(stack)
    code = (
        "import importlib.metadata as m, sys\n"
        "names = ['torch', 'numpy', 'timm', 'mmcv', 'mmcv-full', 'mmsegmentation', 'mmdet', 'pytorch-lightning',"
        " 'hydra-core']\n"
        "out = ['py%d.%d' % sys.version_info[:2]]\n"
        "for n in names:\n"
        "    try: out.append('%s %s' % (n, m.version(n)))\n"
        "    except Exception: pass\n"
        "print(', '.join(out))\n"
    )
    env = dict(os.environ, COMPATFIX="0")
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    return proc.stdout.strip() or stack


def status_of(run: dict[str, Any]) -> str:
    """The run's status, naming the opt-in shims it ran with: a pass that needs one is not
    a pass of compatfix's defaults."""
    return run["status"] + (" (with `%s`)" % run["opt_in"] if run.get("opt_in") else "")


# --- what the static scan predicted, against what the runs used ---------------------------

SCAN_SCRIPT = """
import importlib.util, json, os, re, sys
from compatfix.registry import all_shims
from compatfix.scan import build_index, scan
folder, packages = sys.argv[1], sys.argv[2:]
result = scan([folder]).to_json()
visible = sorted({source.shim.name for pattern in build_index(all_shims()[0]).patterns.values()
                  for source in pattern.sources if source.shim is not None})
# The 2020-22 packages the repository imports, as installed in this stack: their own uses of
# restored names are the environment's, not the repository's.
imports = re.compile(r"^[ \\t]*(?:from|import)[ \\t]+(%s)\\b" % "|".join(packages), re.M)
imported = set()
for base, dirs, files in os.walk(folder):
    for name in files:
        if name.endswith(".py"):
            with open(os.path.join(base, name), errors="replace") as handle:
                imported.update(imports.findall(handle.read()))
installed = {}
for package in sorted(imported):
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.submodule_search_locations:
        installed[package] = scan(list(spec.submodule_search_locations)).to_json()["shims"]
print(json.dumps({"shims": result["shims"], "files_scanned": result["files_scanned"], "visible": visible,
                  "installed_packages": installed,
                  "findings": [{k: f[k] for k in ("file", "line", "name", "shim", "status")}
                               for f in result["findings"] if f.get("shim")]}))
"""

# Packages of the 2020-22 stacks that repositories build on (scan_repository scans those a
# repository imports); today's libraries themselves (torch, numpy) are not among them.
ERA_PACKAGES = ("timm", "mmcv", "mmseg", "mmdet", "pytorch_lightning", "apex", "tensorboardX", "yacs", "imgaug",
                "hydra", "omegaconf", "torchmetrics")


def scan_repository(recipe: Recipe, clone: str, stack: str) -> dict[str, Any]:
    """``compatfix scan`` of the folder the README's commands run in, on the stack's own
    installed versions (a finding's status depends on them); the shims the scan can see at
    all (those with names in its index); and the scan of the era's packages that the
    repository imports, as installed in the stack."""
    folder = os.path.normpath(os.path.join(clone, recipe.workdir))
    env = dict(os.environ, COMPATFIX="0")
    proc = subprocess.run([venv_python(stack), "-P", "-c", SCAN_SCRIPT, folder, *ERA_PACKAGES],
                          capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        return {"stack": stack, "error": first_error(proc.stdout + proc.stderr)}
    return dict(json.loads(proc.stdout), stack=stack)


def _installed_only(shim: str, runs: list[dict[str, Any]], found: dict[str, Any]) -> bool:
    """The runs used ``shim`` only from an installed package's (or Python's own) code, not
    from the repository's: every recorded use was there; or, where no use of it was recorded
    (a redirected call; results kept before sites were), the repository's scan does not
    find it and the scan of the installed packages it imports does."""
    sites = [site for run in runs for site in run.get("sites", {}).get(shim, [])]
    if sites:
        return all("(installed package)" in site or "(standard library)" in site for site in sites)
    return shim not in found["shims"] and any(shim in shims for shims in found.get("installed_packages", {}).values())


def prediction(row: dict[str, Any]) -> dict[str, Any] | None:
    """Precision and recall of the row's scan against the shims its runs used.

    predicted: the shims the scan says fix a finding in the repository (status "fixed").
    observed: the shims the runs on the scan's stack used, counting only those the scan can
    see (with names in its index) and leaving out those used only from an installed
    package's code (_installed_only: the scan reads the repository, not site-packages).
    """
    found = row.get("scan")
    if not found or "error" in found:
        return None
    # A stack this machine lacks is scanned on another (the table says which).
    runs = [run for run in row["runs"] if run["stack"] == found["stack"]] or row["runs"]
    visible = set(found["visible"])
    used = {shim for run in runs for shim in run["used"]}
    installed = {shim for shim in used & visible if _installed_only(shim, runs, found)}
    observed = (used & visible) - installed
    predicted = set(found["shims"])
    hits = predicted & observed
    by: dict[str, set[str]] = {}
    for shim in installed:
        by[shim] = {site.split("/")[0].split(":")[0] for run in runs for site in run.get("sites", {}).get(shim, [])} or \
            {package for package, shims in found.get("installed_packages", {}).items() if shim in shims}
    return {
        "installed_by": {shim: sorted(packages) for shim, packages in by.items()},
        "predicted": sorted(predicted), "observed": sorted(observed), "hits": sorted(hits),
        "misses": sorted(observed - predicted), "extra": sorted(predicted - observed),
        "installed": sorted(installed), "invisible": sorted(used - visible),
    }


def _behaviour_shims(names: list[str]) -> str:
    """The shims a scan cannot name, CPU mode's counted rather than listed."""
    cpu = sum(name.startswith("cpu.") for name in names)
    parts = ["`%s`" % name for name in names if not name.startswith("cpu.")]
    if cpu:
        parts.append("%d of CPU mode's (`cpu.*`)" % cpu)
    return ", ".join(parts) or "none"


def _ratio(numerator: int, denominator: int) -> str:
    return "%.2f" % (numerator / denominator) if denominator else "n/a"


STATUS_HELP = [
    "What a status means, and what to do:",
    "",
    "- **pass**: every command ran to its end and left what it should (a checkpoint, an accuracy",
    "  or mIoU line, a resume message). Install compatfix and run the README's commands as they are.",
    "- **pass (with `COMPATFIX_ENABLE=…`)**: it passes only with the opt-in shim named there. Set",
    "  that variable (or pass `--enable …`) when you run it: compatfix's defaults alone are not enough.",
    "- **fail at STEP**: the command of that step stopped; \"What is left\" gives the first error and",
    "  where it was raised. The steps before it passed. Until that is fixed, the repository needs a",
    "  change of its own code or environment there (the notes below the table say which, where known).",
    "- **fail: the clone changed**: the run wrote into the repository's own files; compatfix must",
    "  leave a clone as it was, so this counts as a failure even where training worked.",
]


def last_step_only(run: dict[str, Any]) -> str:
    """" (last step only)" for a run of several steps stored before each step had a report of
    its own: its shims applied and used are its last step's."""
    return " (last step only)" if len(run["steps"]) > 1 and run.get("reports") != "every step" else ""


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
        "redirected); \"applied\" (below the table) are all shims the run applied, over all its steps",
        "(\"last step only\": that run's record covers its last step only). The `cpu.*` shims",
        "are CPU mode's (`--device cpu`), which the zoo uses because it has no GPU: on a GPU machine a",
        "run does not use them. OpenMMLab's own model-zoo configs across mmcv 1.2-1.7 (mmseg 0.x,",
        "mmdet 2.x) are in [openmmlab-matrix.md](openmmlab-matrix.md).",
        "",
    ] + STATUS_HELP + [
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
                failed = next((s for s in run["steps"] if not s["ok"]), None)
                if failed:
                    left = left or "`%s` at %s" % (plain_paths_in(failed["error"]).replace("|", "\\|").replace("`", "'"),
                                                   plain_frame(failed.get("where") or "") or "?")
            lines.append("| [%s](https://github.com/%s) | `%s` | %s | %s (%s) | %s | %s | %s | %s |" % (
                row["repo"], row["repo"], row["commit"][:7] + row["commit"][40:], row["field"],
                run["stack"], run.get("stack_versions", ""), run["mode"],
                status_of(run), (", ".join("`%s`" % s for s in sorted(run["used"])) or "none") + last_step_only(run),
                left or "nothing"))
    lines += prediction_section(rows)
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
            lines.append("- %s/%s: %s; applied: %s%s%s" % (
                run["stack"], run["mode"], status_of(run), ", ".join(sorted(run["applied"])) or "none",
                last_step_only(run), ("; FAILED shims: " + "; ".join(run["failed_shims"])) if run["failed_shims"] else ""))
        lines.append("")
    with open(TABLE, "w") as handle:
        handle.write("\n".join(lines))


def prediction_section(rows: list[dict[str, Any]]) -> list[str]:
    """docs/compatibility.md's section on `compatfix scan` against the runs' reports."""
    lines = [
        "", "## Does `compatfix scan` predict what the run needs?", "",
        "`compatfix scan` reads a repository without running it and names the shims that fix what",
        "it finds (docs/scan.md). Here each zoo repository's scan (of the folder its commands run in,",
        "on the stack it ran on) is compared with the shims its runs used, by shim name:",
        "",
        "- **predicted**: the shims the scan says fix a finding here (status \"fixed\");",
        "- **observed**: the shims the runs on that stack used (\"Shims used\" above), counting only those a static",
        "  scan can name at all: the ones with names (a module, an attribute, a call, an argument) in",
        "  the scan's index. Left out: shims that change behaviour without a name to find (CPU mode's",
        "  `cpu.*`, the checkpoint-loading policy, launcher and runner fixes; docs/scan.md,",
        "  \"Limitations\"), and shims whose every recorded use was in an installed package's code",
        "  (timm 0.3.2's or mmcv's own `torch._six` imports) rather than the repository's: the scan",
        "  reads the repository, and those packages are the environment's.",
        "- **precision** = predicted and observed / predicted; **recall** = predicted and observed /",
        "  observed. Overall figures add the counts of all repositories. A miss (observed, not",
        "  predicted) is a bug of the scan or of its data.",
        "",
        "Precision is lower than recall by design: the scan reports every use in every file, and the",
        "zoo's short CPU runs reach only some of them. `argparse.local_rank_from_env` acts only under",
        "`torchrun` (the README commands here use `torch.distributed.launch`); the apex shims act only",
        "on the `--amp`/apex branches, which CPU runs do not take; other scripts (evaluation tools,",
        "other tasks of the repository) are not run at all. A predicted shim that a run does not use",
        "costs nothing: it applies only when its names are used.",
        "",
    ]
    table = ["| Repository | Scanned on (runs on) | Files | Predicted | Observed | Precision | Recall | Missed | "
             "Used only by installed packages | Not nameable (behaviour shims) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    total_predicted = total_observed = total_hits = 0
    misses = []
    for row in rows:
        scores = prediction(row)
        if scores is None:
            found = row.get("scan")
            table.append("| %s | | | | | | | %s | | |" % (
                row["repo"], "not scanned" if not found else "scan failed: `%s`" % found["error"]))
            continue
        total_predicted += len(scores["predicted"])
        total_observed += len(scores["observed"])
        total_hits += len(scores["hits"])
        names = lambda items: ", ".join("`%s`" % name for name in items) or "none"  # noqa: E731
        table.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            row["repo"], row["scan"]["stack"] + ("" if row["scan"]["stack"] in {r["stack"] for r in row["runs"]} else
                                                 " (%s)" % ", ".join(sorted({r["stack"] for r in row["runs"]}))),
            row["scan"]["files_scanned"], names(scores["predicted"]),
            names(scores["observed"]), _ratio(len(scores["hits"]), len(scores["predicted"])),
            _ratio(len(scores["hits"]), len(scores["observed"])), names(scores["misses"]),
            ", ".join("`%s` (%s)" % (shim, ", ".join(scores["installed_by"][shim])) for shim in scores["installed"])
            or "none", _behaviour_shims(scores["invisible"])))
        misses += [(row, shim) for shim in scores["misses"]]
    behaviour = sum(len([n for n in prediction(row)["invisible"] if not n.startswith("cpu.")])
                    for row in rows if prediction(row) is not None)
    lines += ["Overall: precision %s (%d of %d predicted shims were used), recall %s (%d of %d used shims "
              "were predicted)." % (_ratio(total_hits, total_predicted), total_hits, total_predicted,
                                    _ratio(total_hits, total_observed), total_hits, total_observed),
              "Counted with the behaviour shims outside CPU mode as well (which the scan does not try to",
              "predict: `torch.comparisons_contiguous`, the checkpoint-loading policy, ...), recall would be %s "
              "(%d of %d)." % (_ratio(total_hits, total_observed + behaviour), total_hits, total_observed + behaviour),
              ""]
    lines += table
    lines += unforeseen_failures(rows)
    lines += ["", "### Known misses", ""]
    if not misses:
        lines.append("None: every shim a run used, of those a scan can name, was predicted.")
    for row, shim in misses:
        sites = sorted({site for run in row["runs"] for site in run.get("sites", {}).get(shim, [])})
        cause = MISS_CAUSES.get((row["repo"], shim), "not yet explained")
        lines.append("- %s, `%s`%s: %s" % (row["repo"], shim, " (used at %s)" % ", ".join(sites) if sites else "",
                                           cause))
    return lines


def unforeseen_failures(rows: list[dict[str, Any]]) -> list[str]:
    """The failing runs whose error the scan did not report at the place it was raised: a
    breakage that neither a shim nor the inventory knows (or one outside the repository)."""
    lines = ["", "### Failures the scan did not foresee", "",
             "Runs that stopped, where the scan has no finding at the line that raised (the notes of each",
             "repository, below, say what is missing). A line in an installed package's code is outside",
             "what the scan reads.", ""]
    found = False
    for row in rows:
        seen = set()
        for run in row["runs"]:
            failed = next((step for step in run["steps"] if not step["ok"]), None)
            if failed is None or not failed.get("where"):
                continue
            match = re.match(r"^(.+?):(\d+) in \S+( \((installed package|standard library)\))?$", failed["where"])
            if not match:
                continue
            place = (match.group(1), int(match.group(2)))
            if place in seen:
                continue
            seen.add(place)
            scanned = row.get("scan", {}).get("findings", [])
            if any((f["file"], f["line"]) == place for f in scanned):
                continue
            found = True
            lines.append("- %s (%s): `%s` at %s%s" % (
                row["repo"], run["stack"], plain_paths_in(failed["error"]).replace("`", "'")[:200], failed["where"],
                "; outside the repository" if match.group(3) else "; the scan has no finding there"))
    if not found:
        lines.append("None.")
    return lines


# Why the scan missed a shim a run used, as far as it has been traced (repository, shim).
MISS_CAUSES: dict[tuple[str, str], str] = {}


def store_scan(recipe: Recipe, clone: str, stack: str) -> None:
    """Add the scan of the clone (scan_repository) to the recipe's stored result."""
    path = os.path.join(RESULTS, recipe.name + ".json")
    with open(path) as handle:
        row = json.load(handle)
    row["scan"] = scan_repository(recipe, clone, stack)
    with open(path, "w") as handle:
        json.dump(row, handle, indent=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("recipe", nargs="?")
    parser.add_argument("clone", nargs="?")
    parser.add_argument("--stack", action="append", help="default: the recipe's stacks")
    parser.add_argument("--mode", choices=["pth", "runner", "both"], default="both")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder of passing runs")
    parser.add_argument("--table", action="store_true", help="only regenerate docs/compatibility.md")
    parser.add_argument("--scan-only", action="store_true",
                        help="only run compatfix scan on CLONE (on the recipe's first stack) and store it")
    args = parser.parse_args(argv)
    if args.table:
        write_table()
        return 0
    if not args.recipe or not args.clone:
        parser.error("RECIPE and CLONE are needed")
    recipe = load_recipe(args.recipe)
    clone = os.path.abspath(args.clone)
    if args.scan_only:
        store_scan(recipe, clone, (args.stack or recipe.stacks)[0])
        write_table()
        return 0
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
    if "scan" in stored:
        row["scan"] = stored["scan"]
    with open(path, "w") as handle:
        json.dump(row, handle, indent=1)
    # The scan is of the recipe's own stack, where this machine has it (its findings' status
    # depends on the installed versions), whichever stack this run was on.
    store_scan(recipe, clone, recipe.stacks[0] if os.path.exists(venv_python(recipe.stacks[0])) else runs[0]["stack"])
    write_table()
    return 0 if all(r["status"] == "pass" for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
