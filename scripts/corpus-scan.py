"""Count how 2020-22 research code uses the libraries compatfix serves, and which share of
its uses of removed names compatfix covers (issue 20, item 2).

    python scripts/corpus-scan.py list      # acceptance/corpus/repos.txt from /work/.mirror
    python scripts/corpus-scan.py scan      # -> acceptance/corpus/uses.json.gz, doors.json
    python scripts/corpus-scan.py resolve   # -> acceptance/corpus/resolution.json.gz
    python scripts/corpus-scan.py report    # -> acceptance/corpus/ranked.tsv, docs/removed-apis.md
    python scripts/corpus-scan.py all       # the four in order
    python scripts/corpus-scan.py resolve --python .venvs/corpus-tf4/bin/python --libraries transformers
                                            # -> resolution-transformers4.json.gz, the second figure

The interpreters are the corpus stacks (requirements/corpus.txt, corpus-tf4.txt; built by
``bash scripts/setup-stacks.sh corpus corpus-tf4``).

``scan`` reads each fetched repository (a bare git directory under ``--mirrors``, as the
session's ``fetch`` tool leaves it) at the commit repos.txt names, without a checkout: every
``.py`` blob goes through ``ast``, and imports are resolved to dotted names the way
``compatfix scan`` resolves them (aliases per file, attribute chains followed; see
compatfix/scan/_python.py), for the libraries in ``LIBRARIES``. It counts, per dotted name,
the uses in each repository: references and imports, keyword arguments of calls, classes
subclassed, and the positional-argument count of ``super().__init__(...)`` in those
subclasses. The GPU "doors" (nvidia-smi, pynvml, CUDA_VISIBLE_DEVICES, ...) go to doors.json.

``resolve`` looks every counted name up by behaviour, in child processes of this
interpreter (the modern stack): the longest importable module prefix is imported, the rest
is taken with getattr; once with ``COMPATFIX=0`` and once with compatfix active, as a user
runs. It also asks whether each name existed in 2020-22: in any of the old stacks'
API-surface records (``--surface``, recorded by scripts/api-surface.py; schema at its top) and, for the
standard library, in Python 3.8 (``--old-python``).

``resolve --libraries`` does the same for those libraries' names only, on another stack, into
``resolution-transformers4.json.gz``; ``report`` then also gives the figure with those
libraries' rows from it (transformers' last 4.x release in place of 5.x: what a user who keeps
transformers < 5 gets).

``report`` joins them: a *removed* name is one that existed then and does not resolve today
with compatfix off; it is *covered* when it resolves with compatfix on. The figure is the
share of the uses of removed names that are covered. Names that fail today but that no old
record knows (a typo, a repository's own attribute, a library without a record) are counted
apart, never in the figure.
"""

from __future__ import annotations

import argparse
import ast
import collections
import fnmatch
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator

from compatfix.scan._python import _dotted  # the scanner's own reading of a.b.c

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "acceptance" / "corpus"
REPOS_TXT = CORPUS / "repos.txt"
USES = CORPUS / "uses.json.gz"
DOORS = CORPUS / "doors.json"
RESOLUTION = CORPUS / "resolution.json.gz"
# The same lookups for some libraries only, on a stack with other releases of them
# (resolve --libraries): transformers' last 4.x release, for the second figure.
ALTERNATIVE_RESOLUTION = CORPUS / "resolution-transformers4.json.gz"
RANKED = CORPUS / "ranked.tsv"
DOC = ROOT / "docs" / "removed-apis.md"
DOC_HEADING = "## Use-weighted coverage (corpus scan)"
SURFACE_DIR = ROOT / "compatfix" / "inventory" / "surface"

# Third-party import roots the scan counts (issue 20's list).
THIRD_PARTY = (
    "numpy", "torch", "torchvision", "scipy", "sklearn", "skimage", "matplotlib", "pandas",
    "PIL", "pkg_resources", "setuptools", "mmcv", "mmdet", "mmseg", "timm", "apex",
    "pytorch_lightning", "transformers", "tensorboardX", "omegaconf", "hydra", "albumentations",
    "imgaug", "cv2", "yapf", "yaml",
)
# Standard-library modules that Python 3.12 and 3.13 removed (PEP 632, PEP 594, imp, ...).
STDLIB_REMOVED = (
    "distutils", "imp", "asynchat", "asyncore", "smtpd", "aifc", "audioop", "cgi", "cgitb",
    "chunk", "crypt", "imghdr", "mailcap", "msilib", "nis", "nntplib", "ossaudiodev", "pipes",
    "sndhdr", "spwd", "sunau", "telnetlib", "uu", "xdrlib", "lib2to3",
)
# Standard-library modules that stay but lost names since 3.8 (collections.Mapping,
# inspect.getargspec, time.clock, ...): counted so that those removals are found too.
STDLIB_KEPT = (
    "collections", "inspect", "time", "fractions", "base64", "xml", "typing", "asyncio",
    "unittest", "platform", "importlib", "json", "math", "os", "sys", "string", "random",
    "shutil", "subprocess", "threading", "logging", "datetime", "tempfile", "pickle", "io",
    "itertools", "functools", "glob", "argparse", "html", "urllib", "zipfile", "tarfile",
    "configparser", "array", "types", "abc", "warnings", "multiprocessing", "socket",
    "struct", "copy", "csv", "hashlib", "queue", "codecs", "email", "http", "contextlib",
    "enum", "pathlib", "traceback", "textwrap", "numbers", "operator", "gettext", "sre_compile",
    "sre_parse", "sre_constants", "locale", "binascii", "gzip", "ssl", "ctypes",
)
LIBRARIES = frozenset(THIRD_PARTY + STDLIB_REMOVED + STDLIB_KEPT)
STDLIB = frozenset(STDLIB_REMOVED + STDLIB_KEPT)

# GPU doors: the ways 2020-22 code asks about GPUs outside torch (issue 22's door list).
DOOR_MODULES = ("pynvml", "GPUtil", "gpustat", "cupy", "numba.cuda", "nvidia_smi", "py3nvml")
SHELL_CALLS = frozenset((
    "os.popen", "os.system", "subprocess.run", "subprocess.call", "subprocess.check_call",
    "subprocess.check_output", "subprocess.Popen", "subprocess.getoutput",
    "subprocess.getstatusoutput", "commands.getoutput",
))

MAX_FILE_BYTES = 2_000_000  # generated tables and vendored blobs, not code anyone reads


# --------------------------------------------------------------------------------------
# repos.txt

def git_dir(mirror: Path) -> Path:
    """The git directory the fetch tool left: ``repo`` (bare) or ``repo/.git``."""
    for candidate in (mirror / "repo" / ".git", mirror / "repo"):
        if (candidate / "HEAD").exists():
            return candidate
    raise FileNotFoundError("no git directory under %s" % mirror)


def read_repos(path: Path = REPOS_TXT) -> list[tuple[str, str, str]]:
    """(owner/name, commit, date) for each line of repos.txt."""
    rows = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, commit, date = line.split()[:3]
            rows.append((name, commit, date))
    return rows


def cmd_list(args: argparse.Namespace) -> None:
    """Write repos.txt: each repository's snapshot commit and date. The repositories are
    those repos.txt already names (the chosen corpus), or with ``--all`` every mirror."""
    if REPOS_TXT.exists() and not args.all:
        mirrors = [Path(args.mirrors) / name.replace("/", "+", 1) for name, _, _ in read_repos()]
    else:
        mirrors = [m for m in Path(args.mirrors).iterdir() if "+" in m.name and m.is_dir()]
    rows = []
    for mirror in sorted(mirrors, key=lambda p: p.name.lower()):
        gd = git_dir(mirror)
        out = subprocess.run(["git", "--git-dir", str(gd), "log", "-1", "--format=%H %cs"],
                             capture_output=True, text=True, check=True).stdout.split()
        rows.append("%s %s %s" % (mirror.name.replace("+", "/", 1), out[0], out[1]))
    CORPUS.mkdir(parents=True, exist_ok=True)
    REPOS_TXT.write_text("# owner/name commit commit-date: the newest stored snapshot of each, as fetched\n"
                         + "\n".join(rows) + "\n")
    print("%d repositories -> %s" % (len(rows), REPOS_TXT.relative_to(ROOT)))


# --------------------------------------------------------------------------------------
# scan

def _interesting(dotted: str) -> bool:
    head = dotted.partition(".")[0]
    return head in LIBRARIES or dotted.startswith(DOOR_MODULES)


def _constant_strings(node: ast.AST) -> Iterator[str]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            yield sub.value


class FileScan(ast.NodeVisitor):
    """One file's counts. Aliases are per file, not per scope, and a rebound name is not
    followed: compatfix scan's rules, so both count the same uses."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.names: collections.Counter[str] = collections.Counter()
        self.keywords: collections.Counter[tuple[str, str]] = collections.Counter()
        self.subclasses: collections.Counter[str] = collections.Counter()
        self.super_init: collections.Counter[tuple[str, int]] = collections.Counter()
        self.doors: collections.Counter[str] = collections.Counter()

    def resolve(self, node: ast.expr) -> str | None:
        parts = _dotted(node)
        if parts is None or parts[0] not in self.aliases:
            return None
        return ".".join([self.aliases[parts[0]], *parts[1:]])

    def _count(self, dotted: str) -> None:
        if _interesting(dotted):
            self.names[dotted] += 1
        for door in DOOR_MODULES:
            if dotted == door or dotted.startswith(door + "."):
                self.doors["import or use of " + door] += 1
                break

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                head = alias.name.partition(".")[0]
                self.aliases[head] = head
            self._count(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        for alias in node.names:
            if alias.name == "*":
                self._count(node.module)
                continue
            dotted = "%s.%s" % (node.module, alias.name)
            self.aliases[alias.asname or alias.name] = dotted
            self._count(dotted)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = self.resolve(node)
        if dotted is None:
            self.generic_visit(node)
            return
        self._count(dotted)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self.resolve(node.value) == "os.environ" and isinstance(node.slice, ast.Constant) \
                and node.slice.value == "CUDA_VISIBLE_DEVICES":
            self.doors["CUDA_VISIBLE_DEVICES " + ("read" if isinstance(node.ctx, ast.Load) else "set")] += 1
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        dotted = self.resolve(func) if isinstance(func, (ast.Attribute, ast.Name)) else None
        if dotted is not None:
            if _interesting(dotted):
                for keyword in node.keywords:
                    if keyword.arg is not None:
                        self.keywords[(dotted, keyword.arg)] += 1
            if dotted in SHELL_CALLS and any("nvidia-smi" in s for s in _constant_strings(node)):
                self.doors["nvidia-smi through " + dotted] += 1
            if dotted in ("os.environ.get", "os.getenv") and node.args and \
                    isinstance(node.args[0], ast.Constant) and node.args[0].value == "CUDA_VISIBLE_DEVICES":
                self.doors["CUDA_VISIBLE_DEVICES read"] += 1
            if dotted in ("os.environ.setdefault", "os.putenv") and node.args and \
                    isinstance(node.args[0], ast.Constant) and node.args[0].value == "CUDA_VISIBLE_DEVICES":
                self.doors["CUDA_VISIBLE_DEVICES set"] += 1
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        bases = [b for b in (self.resolve(base) for base in node.bases) if b and _interesting(b)]
        for base in bases:
            self.subclasses[base] += 1
        if bases:
            for arity in _super_init_arities(node, bases):
                self.super_init[(bases[0], arity)] += 1
        self.generic_visit(node)


def _super_init_arities(cls: ast.ClassDef, bases: list[str]) -> Iterator[int]:
    """The positional-argument counts of ``super().__init__(...)`` (and of
    ``Base.__init__(self, ...)``) in the class's own ``__init__``; -1 where ``*args`` makes
    the count unknowable."""
    base_names = {b.rpartition(".")[2] for b in bases}
    for item in cls.body:
        if not (isinstance(item, ast.FunctionDef) and item.name == "__init__"):
            continue
        for sub in ast.walk(item):
            if not (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr == "__init__"):
                continue
            target = sub.func.value
            args = sub.args
            if isinstance(target, ast.Call) and isinstance(target.func, ast.Name) and target.func.id == "super":
                pass
            elif isinstance(target, (ast.Name, ast.Attribute)) and (_dotted(target) or [""])[-1] in base_names:
                args = args[1:]  # Base.__init__(self, ...)
            else:
                continue
            if any(isinstance(a, ast.Starred) for a in args):
                yield -1
            else:
                yield len(args)


def _blobs(gd: Path, commit: str) -> list[tuple[str, str]]:
    """(path, blob sha) of every .py file at the commit."""
    out = subprocess.run(["git", "--git-dir", str(gd), "ls-tree", "-r", "-z", commit],
                         capture_output=True, check=True).stdout.decode("utf-8", "replace")
    rows = []
    for entry in out.split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        mode, kind, sha = meta.split()
        if kind == "blob" and path.endswith(".py") and mode != "120000":
            rows.append((path, sha))
    return rows


def _read_blobs(gd: Path, shas: list[str]) -> Iterator[bytes | None]:
    """Each blob's bytes, in order; None where it is missing from the snapshot."""
    proc = subprocess.Popen(["git", "--git-dir", str(gd), "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    stdin = proc.stdin

    def feed() -> None:  # from a thread: git blocks on a full stdout pipe until we read it
        stdin.write("".join(sha + "\n" for sha in shas).encode())
        stdin.close()

    threading.Thread(target=feed, daemon=True).start()
    for _ in shas:
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            yield None
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        yield data
    proc.wait()


def scan_repository(gd: Path, commit: str) -> dict[str, Any]:
    totals: dict[str, Any] = {key: collections.Counter() for key in
                              ("names", "keywords", "subclasses", "super_init", "doors")}
    stats = {"py_files": 0, "parsed": 0, "unparsable": 0, "too_large": 0, "missing": 0}
    blobs = _blobs(gd, commit)
    for (path, _), data in zip(blobs, _read_blobs(gd, [sha for _, sha in blobs])):
        stats["py_files"] += 1
        if data is None:
            stats["missing"] += 1
            continue
        if len(data) > MAX_FILE_BYTES:
            stats["too_large"] += 1
            continue
        try:
            tree = ast.parse(data, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            stats["unparsable"] += 1
            continue
        stats["parsed"] += 1
        walker = FileScan()
        try:
            walker.visit(tree)
        except RecursionError:
            stats["unparsable"] += 1
            continue
        for key in totals:
            totals[key].update(getattr(walker, key))
    return {"stats": stats, **totals}


def cmd_scan(args: argparse.Namespace) -> None:
    repos = read_repos()
    merged: dict[str, dict[str, list[list[int]]]] = {key: collections.defaultdict(list) for key in
                                                     ("names", "keywords", "subclasses", "super_init")}
    doors: dict[str, dict[str, int]] = collections.defaultdict(dict)
    stats = []
    for index, (name, commit, _date) in enumerate(repos):
        gd = git_dir(Path(args.mirrors) / name.replace("/", "+", 1))
        result = scan_repository(gd, commit)
        stats.append(result["stats"])
        for key in merged:
            for item, count in result[key].items():
                label = item if isinstance(item, str) else "%s|%s" % item
                merged[key][label].append([index, count])
        for door, count in result["doors"].items():
            doors[door][name] = count
        print("%3d %-55s %6d .py, %4d unparsable" % (index, name, result["stats"]["py_files"],
                                                    result["stats"]["unparsable"]), flush=True)
    data = {
        "schema": 1,
        "repos": [name for name, _, _ in repos],
        "stats": stats,
        "libraries": sorted(LIBRARIES),
        **{key: dict(sorted(value.items())) for key, value in merged.items()},
    }
    with gzip.open(USES, "wt", encoding="utf-8") as fh:
        json.dump(data, fh, separators=(",", ":"))
    torch_cuda = {name: {"uses": sum(c for _, c in per), "repos": len(per)}
                  for name, per in merged["names"].items() if name.startswith("torch.cuda.")}
    DOORS.write_text(json.dumps({
        "repos_scanned": len(repos),
        "torch_cuda_top": dict(sorted(torch_cuda.items(), key=lambda kv: (-kv[1]["uses"], kv[0]))[:30]),
        "doors": {door: {"uses": sum(per.values()), "repos": len(per),
                         "top_repos": sorted(per, key=lambda r: -per[r])[:10]}
                  for door, per in sorted(doors.items(), key=lambda kv: -sum(kv[1].values()))},
    }, indent=1) + "\n")
    print("-> %s, %s" % (USES.relative_to(ROOT), DOORS.relative_to(ROOT)))


def load_uses(path: Path = USES) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


# --------------------------------------------------------------------------------------
# resolve: a child process per mode; each line of its output is one name's answer

CHILD = r'''
import importlib, inspect, json, signal, sys, warnings
warnings.simplefilter("ignore")
out = open(sys.argv[2], "a", buffering=1)
class Timeout(BaseException):
    pass
def on_alarm(signum, frame):
    raise Timeout("no answer in 60 s")
signal.signal(signal.SIGALRM, on_alarm)
def describe(exc):
    return "%s: %s" % (type(exc).__name__, str(exc)[:200])
def walk(obj, attrs):
    for attr in attrs:
        obj = getattr(obj, attr)
    return obj
def resolve(name):
    # Import the longest importable module prefix (so its submodules are loaded), then
    # take the rest by attribute access from the root, as code does (pl.__version__.split
    # is the string's method even where a submodule pl.__version__ exists); failing that,
    # from the imported module itself.
    parts = name.split(".")
    module, import_error, missing = None, None, None
    for cut in range(len(parts), 0, -1):
        modname = ".".join(parts[:cut])
        try:
            module = importlib.import_module(modname)
        except BaseException as exc:
            absent = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
            # the module itself (or a package above it) does not exist: a name to take by
            # getattr; any other failure means a module that exists failed to import
            is_absent = bool(absent) and (modname == absent or modname.startswith(absent + "."))
            if not is_absent and import_error is None:  # it exists but failed to import: keep why
                import_error = describe(exc)
                if isinstance(exc, ModuleNotFoundError):
                    missing = getattr(exc, "name", None)
            continue
        break
    else:
        return {"ok": False, "error": import_error or "ModuleNotFoundError: No module named %r" % parts[0],
                "missing": missing or (parts[0] if import_error is None else None)}
    try:
        return {"ok": True, "obj": walk(sys.modules[parts[0]], parts[1:])}
    except BaseException as exc:
        error = describe(exc)
    try:
        return {"ok": True, "obj": walk(module, parts[cut:])}
    except BaseException:
        pass
    return {"ok": False, "error": import_error or error, "missing": missing}
def params(obj):
    try:
        sig = inspect.signature(obj, follow_wrapped=False)
    except (TypeError, ValueError):
        return None
    names, var_kw, positional = [], False, 0
    var_pos = False
    for p in sig.parameters.values():
        if p.kind == p.VAR_KEYWORD: var_kw = True
        elif p.kind == p.VAR_POSITIONAL: var_pos = True
        else:
            if p.kind != p.POSITIONAL_ONLY: names.append(p.name)
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD): positional += 1
    python_level = inspect.isfunction(inspect.unwrap(obj)) if not isinstance(obj, type) else False
    return {"names": names, "var_kw": var_kw, "var_pos": var_pos, "positional": positional,
            "python": python_level or inspect.ismethod(obj)}
for line in sys.stdin:
    request = json.loads(line)
    kind, name = request["kind"], request["name"]
    print(json.dumps({"start": [kind, name]}), file=out)
    signal.alarm(60)  # an import that hangs is answered as a failure, not waited on
    try:
        r = resolve(name)
    except Timeout as exc:
        r = {"ok": False, "error": "Timeout: %s" % exc}
    finally:
        signal.alarm(0)
    answer = {"kind": kind, "name": name, "ok": r["ok"]}
    if not r["ok"]:
        answer["error"] = r["error"]
        if r.get("missing"):
            answer["missing"] = r["missing"]
    elif kind == "signature":
        obj = r["obj"]
        answer["call"] = params(obj)
        if isinstance(obj, type):
            answer["init"] = params(obj.__init__) if obj.__init__ is not object.__init__ else {
                "names": [], "var_kw": False, "var_pos": False, "positional": 1, "object": True,
                # only where __new__ is object's too does "takes no arguments" hold (torch.Tensor,
                # numpy.ndarray take theirs in a C __new__ that inspect cannot see)
                "python": obj.__new__ is object.__new__}
    print(json.dumps({"done": answer}), file=out)
'''


def _run_child(python: str, env: dict[str, str], requests: list[dict[str, str]], log: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Answers for every request; a request that kills the child is answered as a crash
    and the child restarted after it."""
    answers: dict[tuple[str, str], dict[str, Any]] = {}
    script = Path(tempfile.mkdtemp(prefix="corpus20-")) / "child.py"
    script.write_text(CHILD)
    remaining = list(requests)
    while remaining:
        log.write_text("")
        proc = subprocess.run([python, str(script), "x", str(log)], env=env, cwd=tempfile.gettempdir(),
                              input="".join(json.dumps(r) + "\n" for r in remaining), text=True,
                              capture_output=True, timeout=3600)
        started = None
        for line in log.read_text().splitlines():
            record = json.loads(line)
            if "start" in record:
                started = tuple(record["start"])
            else:
                answer = record["done"]
                answers[(answer["kind"], answer["name"])] = answer
                started = None
        if started is not None:
            answers[started] = {"kind": started[0], "name": started[1], "ok": False,
                                "error": "crashed the interpreter (rc %d)" % proc.returncode}
        remaining = [r for r in remaining if (r["kind"], r["name"]) not in answers]
        if remaining and started is None:
            raise RuntimeError("child stopped without an answer: rc %d\n%s" % (proc.returncode, proc.stderr[-2000:]))
    script.unlink()
    script.parent.rmdir()
    return answers


def _old_surface(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        record = json.load(fh)
    return record["modules"], {"label": record.get("label"), "python": record.get("python"),
                               "distributions": record.get("distributions", {}),
                               "libraries": sorted(record.get("libraries", {}))}


def old_lookup(name: str, modules: dict[str, Any], roots: set[str]) -> str:
    """Whether ``name`` existed in the old record: "yes", "no", or "unrecorded" (its library
    has no record). Past what the record describes (attributes of values and objects), a
    name whose owner existed counts as existing; an attribute of a routine does not."""
    parts = name.split(".")
    if parts[0] not in roots:
        return "unrecorded"
    for cut in range(len(parts), 0, -1):
        modname = ".".join(parts[:cut])
        if modname in modules:
            break
    else:
        return "no"
    rest = parts[cut:]
    module = modules[modname]
    if module.get("status") != "ok":
        return "yes" if not rest else "no"
    current: Any = module
    for depth, attr in enumerate(rest):
        if "attrs" in current:  # a module
            entry = current["attrs"].get(attr)
            if entry is None:
                return "no"
            if entry.get("k") == "mod":
                target = entry.get("o") or "%s.%s" % (modname, attr)
                sub = modules.get(target)
                if sub is None or sub.get("status") != "ok":
                    return "yes"
                current, modname = sub, target
                continue
            if entry.get("k") == "cls":
                origin = entry.get("o")
                if "m" not in entry and origin:
                    mod, _, qual = origin.partition(":")
                    owner = modules.get(mod, {}).get("attrs", {}).get(qual)
                    if owner is not None and "m" in owner:
                        entry = owner
                current = entry
                continue
            if entry.get("k") == "fn" and depth < len(rest) - 1:
                below = rest[depth + 1]  # a routine has no attributes but its dunders
                return "yes" if below.startswith("__") and below.endswith("__") else "no"
            return "yes"  # a value or other object: its attributes are not recorded
        members = current.get("m")
        if members is None:
            return "yes"
        if attr.startswith("__") and attr.endswith("__") or attr in members:
            return "yes"
        return "no"
    return "yes"


STDLIB_CHILD = r'''
import importlib, json, sys, warnings
warnings.simplefilter("ignore")
for line in sys.stdin:
    name = line.strip()
    parts = name.split(".")
    ok = False
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except BaseException:
            continue
        ok = True
        for attr in parts[cut:]:
            try:
                obj = getattr(obj, attr)
            except BaseException:
                ok = False
                break
        break
    print(json.dumps([name, ok]), flush=True)
'''


def _of_libraries(name: str, libraries: list[str] | None) -> bool:
    return not libraries or name.partition(".")[0] in libraries


def cmd_resolve(args: argparse.Namespace) -> None:
    uses = load_uses()
    names = sorted(n for n in uses["names"] if _of_libraries(n, args.libraries))
    classes = sorted(n for n in {key.partition("|")[0] for key in uses["keywords"]}
                     | set(uses["subclasses"]) | {key.partition("|")[0] for key in uses["super_init"]}
                     if _of_libraries(n, args.libraries))
    out_path = RESOLUTION if not args.libraries else ALTERNATIVE_RESOLUTION
    requests = [{"kind": "name", "name": n} for n in names] + [{"kind": "signature", "name": n} for n in classes]
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("COMPATFIX")}
    base_env.setdefault("CUDA_VISIBLE_DEVICES", "")
    base_env["PYTHONWARNINGS"] = "ignore"
    base_env["MPLBACKEND"] = "Agg"
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="corpus20-resolve-") as tmp:
        for mode, extra in (("off", {"COMPATFIX": "0"}), ("on", {})):
            env = dict(base_env, **extra)
            print("resolving %d names, %d signatures, compatfix %s" % (len(names), len(classes), mode), flush=True)
            answers = _run_child(args.python, env, requests, Path(tmp) / ("log-" + mode))
            results[mode] = answers
        stdlib_names = [n for n in names if n.partition(".")[0] in STDLIB]
        old_stdlib: dict[str, bool] = {}
        if args.old_python and Path(args.old_python).exists():
            proc = subprocess.run([args.old_python, "-I", "-S", "-c", STDLIB_CHILD], cwd=tmp,
                                  input="\n".join(stdlib_names) + "\n", capture_output=True, text=True, timeout=1800)
            old_stdlib = dict(json.loads(line) for line in proc.stdout.splitlines())
    surface_paths = args.surface if args.surface is not None else sorted(SURFACE_DIR.glob("record-*.json.gz"))
    records = [_old_surface(Path(path)) for path in surface_paths]
    surface_meta = [meta for _, meta in records]
    old_version = subprocess.run([args.old_python, "-c", "import sys; print(sys.version.split()[0])"],
                                 capture_output=True, text=True).stdout.strip() if args.old_python else ""
    out_names = {}
    for n in names:
        off, on = results["off"][("name", n)], results["on"][("name", n)]
        if n.partition(".")[0] in STDLIB:
            old = "unrecorded" if n not in old_stdlib else ("yes" if old_stdlib[n] else "no")
        else:
            old = _any_record(old_lookup(n, modules, set(meta["libraries"])) for modules, meta in records)
        row = {"off": off["ok"], "on": on["ok"], "old": old}
        if not off["ok"]:
            row["error"] = off.get("error")
            if off.get("missing"):
                row["missing"] = off["missing"]  # a module that is not installed here
        if not on["ok"] and on.get("error") != off.get("error"):
            row["error_on"] = on.get("error")
        out_names[n] = row
    out_signatures = {}
    for n in classes:
        off, on = results["off"][("signature", n)], results["on"][("signature", n)]
        out_signatures[n] = {"off": {k: off.get(k) for k in ("ok", "call", "init")},
                             "on": {k: on.get(k) for k in ("ok", "call", "init")},
                             "old": [shape for shape in (_old_signature(n, modules, set(meta["libraries"]))
                                                         for modules, meta in records) if shape]}
    import platform
    versions = subprocess.run([args.python, "-c", VERSIONS], capture_output=True, text=True,
                              env=dict(base_env, COMPATFIX="0")).stdout
    data = {"schema": 1, "python": platform.python_version(), "versions": json.loads(versions or "{}"),
            "old_surface": surface_meta, "old_stdlib_python": old_version,
            "libraries": args.libraries or None, "names": out_names, "signatures": out_signatures}
    with gzip.open(out_path, "wt", encoding="utf-8") as fh:
        json.dump(data, fh, separators=(",", ":"), sort_keys=True)
    print("-> %s" % out_path.relative_to(ROOT))


VERSIONS = r'''
import json
from importlib import metadata
names = {"numpy": "numpy", "torch": "torch", "torchvision": "torchvision", "scipy": "scipy",
         "scikit-learn": "sklearn", "scikit-image": "skimage", "matplotlib": "matplotlib",
         "pandas": "pandas", "Pillow": "PIL", "setuptools": "pkg_resources", "mmcv": "mmcv",
         "mmdet": "mmdet", "mmsegmentation": "mmseg", "timm": "timm", "pytorch-lightning": "pytorch_lightning",
         "transformers": "transformers", "tensorboardX": "tensorboardX", "omegaconf": "omegaconf",
         "hydra-core": "hydra", "albumentations": "albumentations", "imgaug": "imgaug",
         "opencv-python-headless": "cv2", "yapf": "yapf", "PyYAML": "yaml", "compatfix": "compatfix"}
found = {}
for dist in names:
    try:
        found[dist] = metadata.version(dist)
    except metadata.PackageNotFoundError:
        pass
print(json.dumps(found))
'''


def _any_record(answers: Iterable[str]) -> str:
    """A name existed in 2020-22 when any old record has it; it did not when a record of
    its library lacks it; else no record knows its library."""
    seen = set(answers)
    return "yes" if "yes" in seen else "no" if "no" in seen else "unrecorded"


def _old_signature(name: str, modules: dict[str, Any], roots: set[str]) -> dict[str, str] | None:
    """The old record's call and __init__ shapes of a class or function, where it has them."""
    parts = name.split(".")
    if parts[0] not in roots:
        return None
    for cut in range(len(parts) - 1, 0, -1):
        modname = ".".join(parts[:cut])
        if modname in modules and cut == len(parts) - 1:
            entry = modules[modname].get("attrs", {}).get(parts[-1])
            if entry is None:
                return None
            origin = entry.get("o")
            if origin and ":" in origin and "s" not in entry and "i" not in entry:
                mod, _, qual = origin.partition(":")
                entry = modules.get(mod, {}).get("attrs", {}).get(qual) or entry
            return {k: entry[k] for k in ("s", "i") if k in entry} or None
    return None


# --------------------------------------------------------------------------------------
# report

SHAPE_PARAM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _shape_accepts(shape: str, keyword: str) -> bool:
    inner = shape.strip()[1:-1]
    params = [p.strip() for p in inner.split(",") if p.strip()]
    positional_only = "/" in params
    seen_slash = not positional_only
    for p in params:
        if p == "/":
            seen_slash = True
            continue
        if p.startswith("**"):
            return True
        bare = p.lstrip("*").rstrip("=")
        if bare == keyword and seen_slash and not p.startswith("*"):
            return True
    return False


def _shape_positional(shape: str) -> tuple[int, bool]:
    inner = shape.strip()[1:-1]
    count, var = 0, False
    for p in (p.strip() for p in inner.split(",")):
        if not p or p == "/":
            continue
        if p.startswith("**"):
            continue
        if p.startswith("*"):
            if p == "*":
                break
            var = True
            break
        count += 1
    return count, var


def _accepts(params: dict[str, Any] | None, keyword: str) -> bool | None:
    if params is None:
        return None
    return params["var_kw"] or keyword in params["names"]


def _accepts_positional(params: dict[str, Any] | None, count: int) -> bool | None:
    if params is None:
        return None
    return params["var_pos"] or params["positional"] - 1 >= count  # minus self


def _today(sig: dict[str, Any]) -> dict[str, Any] | None:
    """A class's __init__ parameters, or a function's; None for anything else."""
    return sig.get("init") if sig.get("init") is not None else sig.get("call")


def entries(uses: dict[str, Any], resolution: dict[str, Any]) -> list[dict[str, Any]]:
    """Every counted use that fails today with compatfix off, with whether it existed in
    2020-22 (``old``: yes / no / unrecorded; "not-installed" where what fails is a module
    that is not installed here) and whether compatfix covers it.

    Keyword and ``super().__init__`` entries are checked against signatures only where
    today's callable is Python-level (a C type's inspect signature says nothing of what it
    accepts) and the old record has its shape."""
    rows = []
    repo_count = len(uses["repos"])
    for name, per_repo in uses["names"].items():
        res = resolution["names"].get(name)
        if res is None or res["off"]:
            continue
        rows.append({"kind": "name", "entry": name, "uses": sum(c for _, c in per_repo),
                     "repos": len(per_repo), "repo_ids": [index for index, _ in per_repo], "covered": res["on"],
                     "old": "not-installed" if res.get("missing") else res["old"],
                     "error": res.get("error_on") or res.get("error")})
    for key, per_repo in uses["keywords"].items():
        target, _, keyword = key.partition("|")
        sig = resolution["signatures"].get(target)
        if sig is None or not sig["off"]["ok"]:
            continue
        today = _today(sig["off"])
        if today is None or not today.get("python") or _accepts(today, keyword):
            continue
        key_shape = "i" if sig["off"].get("init") is not None else "s"
        old_shapes = [shape[key_shape] for shape in sig.get("old") or [] if key_shape in shape]
        old_flag = "unrecorded" if not old_shapes else (
            "yes" if any(_shape_accepts(shape, keyword) for shape in old_shapes) else "no")
        rows.append({"kind": "keyword", "entry": "%s(%s=)" % (target, keyword),
                     "uses": sum(c for _, c in per_repo), "repos": len(per_repo),
                     "repo_ids": [index for index, _ in per_repo],
                     "covered": bool(_accepts(_today(sig["on"]), keyword)), "old": old_flag,
                     "error": "today's signature has no parameter %r" % keyword})
    for key, per_repo in uses["super_init"].items():
        target, _, arity = key.partition("|")
        count = int(arity)
        sig = resolution["signatures"].get(target)
        if count < 0 or sig is None or not sig["off"]["ok"]:
            continue
        today = sig["off"].get("init")
        if today is None or not today.get("python") or _accepts_positional(today, count):
            continue
        old_shapes = [_shape_positional(shape["i"]) for shape in sig.get("old") or [] if "i" in shape]
        if old_shapes:
            old_flag = "yes" if any(var or positional - 1 >= count for positional, var in old_shapes) else "no"
        else:
            old_flag = "unrecorded"
        rows.append({"kind": "super-init", "entry": "%s.__init__ with %d positional argument%s (subclass super().__init__)"
                     % (target, count, "" if count == 1 else "s"),
                     "uses": sum(c for _, c in per_repo), "repos": len(per_repo),
                     "repo_ids": [index for index, _ in per_repo],
                     "covered": bool(_accepts_positional(sig["on"].get("init"), count)), "old": old_flag,
                     "error": "today's __init__ takes %d positional argument(s)" % (today["positional"] - 1)})
    rows.sort(key=lambda r: (-r["uses"], r["entry"]))
    assert all(0 < r["repos"] <= repo_count for r in rows)
    return rows


def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figure counts the removed entries in scope (``mark_scope``); the share of all
    removed uses, out-of-scope ones included, is kept beside it."""
    every_removed = [r for r in rows if r["old"] == "yes"]
    removed = [r for r in every_removed if not r.get("out_of_scope")]
    out_of_scope = [r for r in every_removed if r.get("out_of_scope")]
    unconfirmed = [r for r in rows if r["old"] != "yes"]
    total = sum(r["uses"] for r in removed)
    covered = sum(r["uses"] for r in removed if r["covered"])
    every_total = sum(r["uses"] for r in every_removed)
    every_covered = sum(r["uses"] for r in every_removed if r["covered"])
    return {
        "removed_entries": len(removed), "removed_uses": total, "covered_uses": covered,
        "covered_entries": sum(1 for r in removed if r["covered"]),
        "share": covered / total if total else 1.0,
        "all_removed_uses": every_total, "all_covered_uses": every_covered,
        "share_of_all": every_covered / every_total if every_total else 1.0,
        "out_of_scope_entries": len(out_of_scope), "out_of_scope_uses": sum(r["uses"] for r in out_of_scope),
        # each entry weighed by the repositories using it, so vendored copies weigh less
        "removed_repo_weight": sum(r["repos"] for r in removed),
        "covered_repo_weight": sum(r["repos"] for r in removed if r["covered"]),
        "unconfirmed_entries": len(unconfirmed), "unconfirmed_uses": sum(r["uses"] for r in unconfirmed),
        "unconfirmed_covered_uses": sum(r["uses"] for r in unconfirmed if r["covered"]),
        **{"%s_%s" % (flag.replace("-", "_"), what): fn([r for r in rows if r["old"] == flag])
           for flag in ("unrecorded", "no", "not-installed")
           for what, fn in (("entries", len), ("uses", lambda rs: sum(r["uses"] for r in rs)),
                            ("covered_uses", lambda rs: sum(r["uses"] for r in rs if r["covered"])))},
    }


# One line per uncovered removed entry: why compatfix does not restore it. Keys are entry
# names or prefixes (the longest prefix wins); report() fails for an uncovered entry in scope
# without one.
EXPLANATIONS_FILE = CORPUS / "explanations.json"
# Removed entries that no shim could make old PyTorch code need on today's stack, keyed the
# same way: TensorFlow classes (transformers 5 has no TensorFlow; such code needs TensorFlow,
# not compatfix), Caffe2's operators (gone with Caffe2). They are listed with their reason and
# kept out of the figure's denominator; the share of all removed uses is printed beside it.
OUT_OF_SCOPE_FILE = CORPUS / "out-of-scope.json"


def mark_scope(rows: list[dict[str, Any]], out_of_scope: dict[str, str]) -> list[dict[str, Any]]:
    """Sets each removed row's ``out_of_scope`` to its reason, or None where it is in scope."""
    for r in rows:
        r["out_of_scope"] = _explain(r["entry"], out_of_scope) if r["old"] == "yes" else None
    return rows


def load_rows(uses: dict[str, Any], resolution: dict[str, Any]) -> list[dict[str, Any]]:
    out_of_scope = json.loads(OUT_OF_SCOPE_FILE.read_text()) if OUT_OF_SCOPE_FILE.exists() else {}
    return mark_scope(entries(uses, resolution), out_of_scope)


def why_uncovered(rows: list[dict[str, Any]], explanations: dict[str, str]) -> dict[str, str]:
    """Entry -> reason, for every removed entry that is uncovered or out of scope."""
    reasons = {}
    for r in rows:
        if r["old"] != "yes" or (r["covered"] and not r["out_of_scope"]):
            continue
        reason = r["out_of_scope"] or _explain(r["entry"], explanations)
        if reason is None:
            raise SystemExit("no explanation for uncovered entry %r: add one to %s"
                             % (r["entry"], EXPLANATIONS_FILE.relative_to(ROOT)))
        reasons[r["entry"]] = reason
    return reasons


def unused_explanations(rows: list[dict[str, Any]], explanations: dict[str, str]) -> list[str]:
    """Explanation keys that no uncovered entry reads any more: a shim has covered what they
    explained, so the reason they give would be wrong if a new entry came to match them."""
    wanted = [r["entry"] for r in rows if not r["covered"] and r["old"] in ("yes", "unrecorded")]
    used = {_explain_key(entry, explanations) for entry in wanted}
    return sorted(set(explanations) - used)


def _explain(entry: str, explanations: dict[str, str]) -> str | None:
    key = _explain_key(entry, explanations)
    return explanations[key] if key else None


def _explain_key(entry: str, explanations: dict[str, str]) -> str | None:
    best = None
    for key in explanations:
        # "a.b": the entry a.b and what is below it; "a.TF*", "a.*_MAP*": every entry that matches
        if ("*" in key and fnmatch.fnmatchcase(entry, key)) or entry == key or \
                entry.startswith((key + ".", key + "(", key + " ")):
            if best is None or len(key) > len(best):
                best = key
    return best


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_section(uses: dict[str, Any], resolution: dict[str, Any], rows: list[dict[str, Any]],
                   explanations: dict[str, str], doors: dict[str, Any], top: int) -> str:
    fig = figures(rows)
    reasons = why_uncovered(rows, explanations)
    stats = uses["stats"]
    versions = resolution.get("versions", {})
    surface = resolution.get("old_surface", [])
    total_uses = sum(c for per in uses["names"].values() for _, c in per)
    lines = [
        DOC_HEADING, "",
        "Generated by `python scripts/corpus-scan.py report` from acceptance/corpus/ (uses.json.gz, "
        "resolution.json.gz); the full ranked list is acceptance/corpus/ranked.tsv.", "",
        "**%.2f%%** of the uses of removed names in %d real 2020-22 repositories are covered: "
        "%d of %d uses (%d of %d entries) resolve with compatfix on. Every uncovered entry has "
        "its reason in ranked.tsv (`why`)."
        % (100 * fig["share"], len(uses["repos"]), fig["covered_uses"], fig["removed_uses"],
           fig["covered_entries"], fig["removed_entries"]),
        "The figure leaves out %d entries with %d uses that no shim could make PyTorch code need "
        "(listed under \"Out of scope\" below: TensorFlow classes, Caffe2 operators, ...); counting "
        "them, %.2f%% of all %d uses of removed names are covered."
        % (fig["out_of_scope_entries"], fig["out_of_scope_uses"], 100 * fig["share_of_all"],
           fig["all_removed_uses"]),
        "Without transformers, the largest single source (its 5.x release dropped much of the "
        "4.x API): %.2f%% (%d of %d uses)." % _share_without(rows, "transformers"),
        "Weighed by repositories instead (each entry counts once per repository that uses it, so "
        "that vendored copies weigh less): %.2f%% (%d of %d)."
        % (100 * fig["covered_repo_weight"] / max(fig["removed_repo_weight"], 1), fig["covered_repo_weight"],
           fig["removed_repo_weight"]), "",
        "Method: the corpus is acceptance/corpus/repos.txt (owner/name, snapshot commit and date). "
        "Every `.py` file at that commit is parsed with `ast` (%d files, %d unparsable: Python 2 "
        "or broken, skipped); imports are resolved as `compatfix scan` resolves them (aliases per "
        "file, attribute chains followed), and %d uses of %d dotted names of the libraries named in "
        "scripts/corpus-scan.py are counted, with call keywords, subclassed classes and "
        "`super().__init__` argument counts. Each name is then looked up by behaviour in a child "
        "process of the modern stack (Python %s; %s): the longest importable module prefix is "
        "imported and the rest taken with getattr, once with `COMPATFIX=0`, once with compatfix "
        "active. A name is *removed* when it fails with compatfix off and existed in 2020-22: in "
        "any of the old stacks' API-surface records (scripts/api-surface.py; %s), or, for the "
        "standard library, in Python %s. It is *covered* when it resolves with compatfix on."
        % (sum(s["py_files"] for s in stats), sum(s["unparsable"] for s in stats), total_uses,
           len(uses["names"]), resolution.get("python", "?"),
           ", ".join("%s %s" % kv for kv in sorted(versions.items())),
           "; ".join("%s on Python %s: %s" % (meta["label"], meta["python"], ", ".join(
               "%s %s" % kv for kv in sorted(meta["distributions"].items()))) for meta in surface) or "none",
           resolution.get("old_stdlib_python") or "?"), "",
        "Failing today but not counted in the figure (ranked.tsv has them all, by `old`): "
        "%d entries, %d uses (%d covered) without an old record of their library or of the signature they call (%s: "
        "`old=unrecorded`); %d entries, %d uses (%d covered) that the "
        "old records do not have (`old=no`: a repository's own attribute reached through an alias, "
        "an instance attribute, a typo, or a name removed before the records' versions, such as "
        "scipy.misc.imresize, which SciPy 1.2 dropped); %d entries, %d uses (%d covered, "
        "by the apex and mmcv stand-ins) whose module needs a library or compiled extension this "
        "stack lacks (`old=not-installed`: apex, mmcv's ops, numba, ...: unknown, not missing)."
        % (fig["unrecorded_entries"], fig["unrecorded_uses"], fig["unrecorded_covered_uses"],
           ", ".join(sorted({_library_of(r) for r in rows
                             if r["old"] == "unrecorded"})) or "none",
           fig["no_entries"], fig["no_uses"], fig["no_covered_uses"],
           fig["not_installed_entries"], fig["not_installed_uses"], fig["not_installed_covered_uses"]), "",
        "By library (the entry's top-level module):", "",
        "| Library | Removed entries | Uses | Covered uses | Covered |", "|---|---|---|---|---|",
        *_library_rows(rows), "",
        "### Top uncovered removed entries", "",
        "| Entry | Uses | Repos | Why it is not covered |", "|---|---|---|---|",
    ]
    uncovered = [r for r in rows if r["old"] == "yes" and not r["covered"] and not r["out_of_scope"]]
    for r in uncovered[:top]:
        lines.append("| `%s` | %d | %d | %s |" % (_md_cell(r["entry"]), r["uses"], r["repos"],
                                                _md_cell(reasons[r["entry"]])))
    if not uncovered:
        lines.append("| (none) | | | |")
    lines += _alternative_section(uses, rows, top)
    lines += ["", "### Out of scope (not in the figure)", "",
              "| Reason | Entries | Uses | Repos | Most used |", "|---|---|---|---|---|"]
    for reason, group in _out_of_scope_groups(rows):
        lines.append("| %s | %d | %d | %d | %s |" % (
            _md_cell(reason), len(group), sum(r["uses"] for r in group),
            len({index for r in group for index in r["repo_ids"]}),
            ", ".join("`%s`" % _md_cell(r["entry"]) for r in group[:3])))
    lines += ["", "### Most used removed entries that compatfix covers", "",
              "| Entry | Uses | Repos |", "|---|---|---|"]
    for r in [r for r in rows if r["old"] == "yes" and r["covered"]][:15]:
        lines.append("| `%s` | %d | %d |" % (_md_cell(r["entry"]), r["uses"], r["repos"]))
    unconfirmed = [r for r in rows if r["old"] == "unrecorded" and not r["covered"]]
    lines += ["", "### Failing today in libraries without an old record (not in the figure)", "",
              "| Entry | Uses | Repos | Why |", "|---|---|---|---|"]
    for r in unconfirmed[:top]:
        reason = _explain(r["entry"], explanations) or "unverified: no old record of this library to compare with"
        lines.append("| `%s` | %d | %d | %s |" % (_md_cell(r["entry"]), r["uses"], r["repos"], _md_cell(reason)))
    lines += ["", "### Standard-library modules that Python 3.12 and 3.13 removed", "",
              "They still import on the 3.11 stack this figure is measured on, so they are not in it; "
              "their uses in the corpus, for the 3.12/3.13 runs. compatfix brings them back there "
              "through the redistributions pyproject.toml declares for those interpreters (%s; "
              "tests/test_dead_batteries.py checks each on the py312 and py313 stacks):"
              % (", ".join(_dead_battery_dependencies()) or "none"), "",
              "| Module | Uses | Repos |", "|---|---|---|"]
    for module, (count, repos) in _stdlib_removed_uses(uses):
        lines.append("| %s | %d | %d |" % (module, count, repos))
    lines += ["", "### GPU doors in the corpus", "",
              "How the corpus asks about GPUs outside torch (acceptance/corpus/doors.json):", "",
              "| Door | Uses | Repos |", "|---|---|---|"]
    for door, info in doors["doors"].items():
        lines.append("| %s | %d | %d |" % (_md_cell(door), info["uses"], info["repos"]))
    return "\n".join(lines) + "\n"


def _alternative_section(uses: dict[str, Any], rows: list[dict[str, Any]], top: int) -> list[str]:
    """The figure again with transformers' last 4.x release in place of today's 5.x
    (resolve --libraries transformers on the corpus-tf4 stack), for users who keep
    transformers < 5: its transformers rows replace the main ones."""
    if not ALTERNATIVE_RESOLUTION.exists():
        return []
    with gzip.open(ALTERNATIVE_RESOLUTION, "rt", encoding="utf-8") as fh:
        alternative = json.load(fh)
    libraries = set(alternative.get("libraries") or ())
    of_them = [r for r in load_rows(uses, alternative) if _library_of(r) in libraries]
    combined = figures([r for r in rows if _library_of(r) not in libraries] + of_them)
    own = figures(of_them)
    versions = alternative.get("versions", {})
    release = ", ".join("%s %s" % (name, versions.get(name, "?")) for name in sorted(libraries))
    lines = ["", "### With transformers 4.x kept (%s)" % release, "",
             "The same lookups on a stack with %s instead (requirements/corpus-tf4.txt; %s): a user who keeps "
             "transformers < 5 for 2020-22 code. Of its uses of names that this release lacks and 2020-22 had, "
             "%.2f%% are covered (%d of %d); with the other libraries as above, the figure is %.2f%% (%d of %d). "
             "The shims for names that 4.x itself removed are gated at the release that removed each "
             "(`compatfix list`); what is still uncovered here, most used first:"
             % (release, ALTERNATIVE_RESOLUTION.relative_to(ROOT), 100 * own["share"], own["covered_uses"],
                own["removed_uses"], 100 * combined["share"], combined["covered_uses"], combined["removed_uses"]),
             "", "| Entry | Uses | Repos | Error with compatfix on |", "|---|---|---|---|"]
    uncovered = [r for r in of_them if r["old"] == "yes" and not r["covered"] and not r["out_of_scope"]]
    for r in uncovered[:top]:
        lines.append("| `%s` | %d | %d | %s |" % (_md_cell(r["entry"]), r["uses"], r["repos"],
                                                _md_cell((r["error"] or "")[:160])))
    if not uncovered:
        lines.append("| (none) | | | |")
    return lines


def _library_of(row: dict[str, Any]) -> str:
    """An entry's library: its top-level module (``torch`` of ``torch.onnx.export(x=)``)."""
    return re.split(r"[.(]", row["entry"], maxsplit=1)[0]


def _out_of_scope_groups(rows: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    groups: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for r in rows:
        if r.get("out_of_scope"):
            groups[r["out_of_scope"]].append(r)
    return sorted(groups.items(), key=lambda kv: -sum(r["uses"] for r in kv[1]))


def _share_without(rows: list[dict[str, Any]], library: str) -> tuple[float, int, int]:
    kept = [r for r in rows if r["old"] == "yes" and not r.get("out_of_scope") and _library_of(r) != library]
    total = sum(r["uses"] for r in kept)
    covered = sum(r["uses"] for r in kept if r["covered"])
    return (100 * covered / total if total else 100.0, covered, total)


def _dead_battery_dependencies() -> list[str]:
    """The distributions pyproject.toml declares for Python 3.12 and newer only."""
    text = (ROOT / "pyproject.toml").read_text()
    return sorted(set(re.findall(r'"([A-Za-z0-9_.-]+)[^"]*;\s*python_version\s*>=\s*\'3\.1[2-9]\'"', text)))


def _stdlib_removed_uses(uses: dict[str, Any]) -> list[tuple[str, tuple[int, int]]]:
    per: dict[str, tuple[int, set[int]]] = {}
    for name, per_repo in uses["names"].items():
        module = name.partition(".")[0]
        if module in STDLIB_REMOVED:
            count, repos = per.setdefault(module, (0, set()))
            per[module] = (count + sum(c for _, c in per_repo), repos | {index for index, _ in per_repo})
    return sorted(((m, (c, len(r))) for m, (c, r) in per.items()), key=lambda kv: (-kv[1][0], kv[0]))


def _library_rows(rows: list[dict[str, Any]]) -> list[str]:
    per: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for r in rows:
        if r["old"] == "yes" and not r.get("out_of_scope"):
            library = _library_of(r)
            per[library][0] += 1
            per[library][1] += r["uses"]
            per[library][2] += r["uses"] if r["covered"] else 0
    return ["| %s | %d | %d | %d | %.1f%% |" % (library, n, uses, covered, 100 * covered / uses)
            for library, (n, uses, covered) in sorted(per.items(), key=lambda kv: (-kv[1][1], kv[0]))]


RANKED_HEADER = "kind\tentry\tuses\trepos\told\tcovered\tscope\terror\twhy\n"


def _tsv_cell(text: str) -> str:
    return text.replace("\t", " ").replace("\n", " ")


def cmd_report(args: argparse.Namespace) -> None:
    uses = load_uses()
    with gzip.open(RESOLUTION, "rt", encoding="utf-8") as fh:
        resolution = json.load(fh)
    doors = json.loads(DOORS.read_text())
    explanations = json.loads(EXPLANATIONS_FILE.read_text()) if EXPLANATIONS_FILE.exists() else {}
    rows = load_rows(uses, resolution)
    reasons = why_uncovered(rows, explanations)
    stale = unused_explanations(rows, explanations)
    if stale:
        raise SystemExit("explanations for entries that are covered now or no longer found, remove them "
                         "from %s: %s" % (EXPLANATIONS_FILE.relative_to(ROOT), ", ".join(stale)))
    with RANKED.open("w") as fh:
        fh.write(RANKED_HEADER)
        for r in rows:
            fh.write("%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n" % (
                r["kind"], r["entry"], r["uses"], r["repos"], r["old"], "yes" if r["covered"] else "no",
                "out" if r["out_of_scope"] else "in", _tsv_cell(r["error"] or ""),
                _tsv_cell(reasons.get(r["entry"], ""))))
    section = render_section(uses, resolution, rows, explanations, doors, args.top)
    text = DOC.read_text()
    head, found, _ = text.partition("\n" + DOC_HEADING + "\n")
    DOC.write_text(head.rstrip("\n") + "\n\n" + section)
    fig = figures(rows)
    print("covered %d of %d uses of removed names (%.2f%%) -> %s, %s" % (
        fig["covered_uses"], fig["removed_uses"], 100 * fig["share"], RANKED.relative_to(ROOT), DOC.relative_to(ROOT)))


def main(argv: Iterable[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("list", "scan", "resolve", "report", "all"))
    parser.add_argument("--mirrors", default="/work/.mirror")
    parser.add_argument("--python", default=sys.executable, help="the modern stack's interpreter")
    parser.add_argument("--old-python", default=os.path.expanduser("~/.pyenv/versions/3.8.18/bin/python"),
                        help="Python 3.8, for the standard library's 2020-22 names")
    parser.add_argument("--surface", nargs="*", default=None,
                        help="the old stacks' API-surface records (default: %s/record-*.json.gz)"
                        % SURFACE_DIR.relative_to(ROOT))
    parser.add_argument("--libraries", nargs="*", default=None,
                        help="resolve: only these libraries' names, into %s (for the second figure)"
                        % ALTERNATIVE_RESOLUTION.relative_to(ROOT))
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--all", action="store_true", help="list: every mirror, not only repos.txt's")
    args = parser.parse_args(list(argv) if argv is not None else None)
    commands = {"list": [cmd_list], "scan": [cmd_scan], "resolve": [cmd_resolve], "report": [cmd_report],
                "all": [cmd_list, cmd_scan, cmd_resolve, cmd_report]}
    for command in commands[args.command]:
        command(args)


if __name__ == "__main__":
    main()
