"""Record the API surface of a stack's libraries, and diff an old stack's against today's.

    OLD_PYTHON scripts/api-surface.py record --label old-2021 --out compatfix/inventory/surface/record-old-2021.json.gz
    NEW_PYTHON scripts/api-surface.py record --label py311 --probe OLD_RECORD... --out build/api-surface/record-py311.json.gz
    python scripts/api-surface.py diff OLD_RECORD... --new NEW_RECORD... --out compatfix/inventory/surface/diff.json.gz --docs docs/api-surface.md
    python scripts/api-surface.py restatus     # the statuses again, from the committed table alone
    python scripts/api-surface.py regenerate   # all of the above, for every stack whose venv exists

``record`` runs under the interpreter of the stack it records (Python 3.8 or newer, standard
library only, compatfix off). For each library it walks the package's modules in a child
process (test packages and ``__main__`` skipped), imports each one, and records every
attribute of it, public and private, with the signatures of functions, classes, their
``__init__`` and ``__setstate__``, and the members of public classes. A module that does not
import is recorded with its error; one that takes longer than ``--timeout`` seconds is
recorded as a timeout and the walk goes on in a fresh child. ``--probe`` (the new side) also
imports every module and looks up every attribute an old record has, so that a name served
by a module ``__getattr__``, or a module below a package that fails to import, is not taken
for a removal.

``diff`` runs under today's interpreter with compatfix importable: every module, attribute,
class member and signature of the old records that a new record lacks or changed so that an
old call breaks, each with a status computed from compatfix's own data (``shim`` /
``no-shim`` with a reason / ``not-applicable``, see ``status_of``). It also writes the summary
docs/api-surface.md. ``restatus`` recomputes the statuses of the committed table, for when a
shim is added; no stack is needed for it.

Record schema (JSON, gzip-compressed when the name ends in .gz; ``schema`` is 1):

    {"schema": 1, "label": "old-2021", "python": "3.8.18", "platform": "linux",
     "distributions": {"torch": "1.10.2", ...},       # distribution -> installed version
     "libraries": {"torch": "torch", "PIL": "Pillow", ...},   # import root -> distribution
     "modules": {"torch.utils.data.sampler": MODULE, ...}}

    MODULE = {"status": "ok" | "error" | "timeout" | "crashed" | "skipped",
              "error": "ModuleNotFoundError: ..."  (error/skipped: why),
              "ext": true                         (an extension module, .so/.pyd),
              "all": [...]                        (its __all__, where it has one),
              "attrs": {NAME: ATTR, ...}}         (status ok)

    ATTR = {"k": "mod" | "cls" | "fn" | "obj" | "val",   # module, class, routine, other callable, value
            "o": "module:qualname"   (where the object is defined, when not here; for "mod":
                                      the module's own name when it is not MODULE.NAME),
            "t": "int"               (obj / val: the type's name),
            "d": 1                   (cls / fn: its docstring mentions a deprecation),
            "r": "Resize"            (with "d": the name the note points to instead, if any),
            "s": SHAPE               (fn, obj, cls: the call signature, where inspect has one),
            "i": SHAPE               (cls: __init__; "(self)" when it is object's),
            "ss": SHAPE              (cls: __setstate__, when the class has one),
            "m": {NAME: MEMBER}}     (public classes: members other than dunders, __call__ kept)

    MEMBER = ["f" | "p" | "c" | "v", SHAPE or null]   # method, property/descriptor, class, value
           | ["^", "module:qualname"]                   # inherited, from that class

    SHAPE = "(self, data_source, /, x=, *args, y, z=, **kwargs)": the parameters' names and
            kinds, "=" for a default; annotations and default values are left out. ``cls``
            and ``fn`` signatures are recorded where the object is defined (``o`` absent),
            and for routines whose ``__module__`` is not an importable module.

Table schema (``diff``'s output, compatfix/inventory/surface/diff.json.gz, one entry a line):

    {"schema": 1, "generated_by": "...",
     "old": {LABEL: {"python": "3.8.18", "distributions": {...}}, ...},   # likewise "new"
     "entries": [ENTRY, ...]}                                           # sorted by name

    ENTRY = {"kind": "module" | "attribute" | "member" | "signature",
             "name": "torch.utils.data.sampler.Sampler.__init__",  # where it is defined
             "module": "torch.utils.data.sampler", "library": "torch" (the distribution),
             "change": "removed" | "removed with its module" | "fails to import: ..." |
                       what breaks an old call ("parameter data_source removed; ..."),
             "old" / "new": SHAPE (signatures; "old" also for a removed member's),
             "old_kind", "old_type", "origin", "deprecated", "replaced_by", "in_all", "ext":
                 the old attribute's ATTR facts (kind, value type, where it was defined, "d",
                 "r", in the module's __all__, an extension module),
             "aliases": [...]   (other public paths to the same old object, at most six),
             "moved_to": "..."  (a public path on every new stack with the same name and kind),
             "needs" / "blocked_by": the module / name whose absence stops a module's import,
             "old_stacks" / "new_stacks": [LABEL, ...]  (where it was / is missing or changed),
             "status": "shim" | "no-shim" | "not-applicable",
             "shim", "via", "key" (status shim: the registry's claim, see ``Coverage``),
             "reason", "why"  (otherwise: the rules' words and the first rule's code)}

Only the standard library is used by ``record`` (the old interpreter has nothing else).
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import inspect
import io
import json
import os
import pkgutil
import platform
import selectors
import subprocess
import sys
import types
import warnings

SCHEMA = 1

# import root -> distribution, for the libraries 2020-22 code imports (issue 20, item 1)
LIBRARIES = {
    "torch": "torch",
    "torchvision": "torchvision",
    "numpy": "numpy",
    "scipy": "scipy",
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "matplotlib": "matplotlib",
    "pandas": "pandas",
    "PIL": "Pillow",
    "pkg_resources": "setuptools",
    "pytorch_lightning": "pytorch-lightning",
    # issue 20, item 4: the other libraries that 2020-22 code imports
    "transformers": "transformers",
    "tensorboardX": "tensorboardX",
    "omegaconf": "omegaconf",
    "hydra": "hydra-core",
    "albumentations": "albumentations",
    "imgaug": "imgaug",
    "cv2": "opencv-python-headless",
}

# module attributes every module has: not part of any library's surface
MODULE_DUNDERS = frozenset({
    "__builtins__", "__cached__", "__file__", "__loader__", "__spec__", "__package__",
    "__path__", "__name__", "__doc__", "__annotations__", "__getattr__", "__dir__",
    "__warningregistry__", "__all__", "__initializing__",
})

# A module path component that marks a test package, or a module that must not be run.
TEST_COMPONENTS = frozenset({"tests", "test", "conftest", "__main__", "benchmarks", "setup"})
SKIPPED_PREFIXES = ("torch.testing._internal",)  # torch's test harness (imports every backend)


def skip_reason(module_name: str) -> str | None:
    parts = module_name.split(".")
    if module_name.startswith(SKIPPED_PREFIXES) or any(
            part in TEST_COMPONENTS or part.startswith("test_") for part in parts):
        return "test package or entry point, not walked"
    return None


# -- record: the child process that walks one library -----------------------------------

def shape(obj: object) -> str | None:
    """The parameters of ``obj``'s signature, as SHAPE (see the schema)."""
    try:
        signature = inspect.signature(obj)  # type: ignore[arg-type]
    except (ValueError, TypeError, RuntimeError, AttributeError):
        return None
    except Exception:  # a broken __signature__ or __wrapped__ of some library object
        return None
    parts: list[str] = []
    keyword_marker = False
    positional_only = False
    for parameter in signature.parameters.values():
        kind = parameter.kind
        if kind is not inspect.Parameter.POSITIONAL_ONLY and positional_only:
            parts.append("/")
            positional_only = False
        default = "" if parameter.default is inspect.Parameter.empty else "="
        if kind is inspect.Parameter.POSITIONAL_ONLY:
            positional_only = True
            parts.append(parameter.name + default)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            keyword_marker = True
            parts.append("*" + parameter.name)
        elif kind is inspect.Parameter.KEYWORD_ONLY:
            if not keyword_marker:
                parts.append("*")
                keyword_marker = True
            parts.append(parameter.name + default)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            parts.append("**" + parameter.name)
        else:
            parts.append(parameter.name + default)
    if positional_only:
        parts.append("/")
    return "(" + ", ".join(parts) + ")"


def docstring(obj: object) -> str:
    try:
        doc = obj.__doc__  # type: ignore[attr-defined]
    except Exception:
        return ""
    return doc[:3000] if isinstance(doc, str) else ""


# what a deprecation note names instead: "deprecated in favor of Resize", "use X instead"
REPLACEMENT_PATTERNS = (
    r"in favou?r of\s+[`'\"]*([A-Za-z_][\w.]*)",
    r"[Uu]se\s+[`'\"]*([A-Za-z_][\w.]*(?:\(\))?)[`'\"]*\s+instead",
    r"[Pp]lease use\s+[`'\"]*([A-Za-z_][\w.]*)",
)


def replacement_in(doc: str) -> str | None:
    """The name a deprecation note in ``doc`` points to, if it names one."""
    import re

    for pattern in REPLACEMENT_PATTERNS:
        found = re.search(pattern, doc)
        if found and found.group(1).strip(".") not in ("the", "a", "an", "this"):
            return found.group(1).strip(".")
    return None


def origin_of(obj: object) -> tuple[str, str]:
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return (module if isinstance(module, str) else "", qualname if isinstance(qualname, str) else "")


def _definer(cls: type, name: str) -> type | None:
    for klass in getattr(cls, "__mro__", (cls,)):
        try:
            if name in vars(klass):
                return klass
        except TypeError:
            continue
    return None


def init_shape(cls: type) -> str | None:
    """``cls.__init__``'s parameters; "(self)" for object's when ``__new__`` is object's too
    (object.__init__ then refuses any argument: a subclass's ``super().__init__(x)`` fails)."""
    init_owner = _definer(cls, "__init__")
    if init_owner is None or init_owner is object:
        new_owner = _definer(cls, "__new__")
        if new_owner is None or new_owner is object:
            return "(self)"
        return shape(vars(new_owner)["__new__"])
    raw = vars(init_owner)["__init__"]
    return shape(raw)


def member_entry(cls: type, name: str) -> list | None:
    owner = _definer(cls, name)
    if owner is None or owner is object:
        return None
    if owner is not cls:
        module, qualname = origin_of(owner)
        return ["^", module + ":" + qualname]
    raw = vars(cls)[name]
    if isinstance(raw, (staticmethod, classmethod)):
        return ["f", shape(raw.__func__)]
    if inspect.isclass(raw):
        return ["c", None]
    if isinstance(raw, property) or inspect.isdatadescriptor(raw) or inspect.ismemberdescriptor(raw):
        return ["p", None]
    if inspect.isroutine(raw) or callable(raw):
        return ["f", shape(raw)]
    return ["v", None]


def class_members(cls: type) -> dict[str, list]:
    members: dict[str, list] = {}
    try:
        names = dir(cls)
    except Exception:
        return members
    for name in names:
        if name.startswith("__") and name.endswith("__") and name != "__call__":
            continue
        try:
            entry = member_entry(cls, name)
        except Exception:
            continue
        if entry is not None:
            members[name] = entry
    return members


def describe(obj: object, module_name: str, name: str) -> dict:
    if isinstance(obj, types.ModuleType):
        entry: dict = {"k": "mod"}
        if obj.__name__ != module_name + "." + name:
            entry["o"] = obj.__name__
        return entry
    # a value's __doc__ is its type's: only a class's or a routine's speaks of the object itself
    doc = docstring(obj) if inspect.isclass(obj) or inspect.isroutine(obj) else ""
    deprecated = "deprecat" in doc.lower()
    if inspect.isclass(obj):
        entry = {"k": "cls"}
        defined_in, qualname = origin_of(obj)
        if (defined_in, qualname) != (module_name, name):
            entry["o"] = defined_in + ":" + qualname
        if defined_in == module_name:  # the definition site: record its detail once
            entry["s"] = shape(obj)
            entry["i"] = init_shape(obj)
            if _definer(obj, "__setstate__") not in (None, object):
                entry["ss"] = shape(getattr(obj, "__setstate__"))
            if not name.startswith("_"):
                entry["m"] = class_members(obj)
    elif inspect.isroutine(obj):
        entry = {"k": "fn"}
        defined_in, qualname = origin_of(obj)
        if (defined_in, qualname) != (module_name, name):
            entry["o"] = defined_in + ":" + qualname
        if defined_in == module_name or defined_in not in sys.modules:
            entry["s"] = shape(obj)
    elif callable(obj):
        entry = {"k": "obj", "t": type(obj).__name__, "s": shape(obj)}
    else:
        entry = {"k": "val", "t": type(obj).__name__}
    if deprecated:
        entry["d"] = 1
        replacement = replacement_in(doc)
        if replacement:
            entry["r"] = replacement
    return {key: value for key, value in entry.items() if value is not None}


def hidden_names(module: types.ModuleType) -> set[str]:
    """Names a module serves through ``__getattr__`` and leaves out of ``dir()``: the keys of
    its module-level tables of deprecated or former names (numpy 1.20-1.24's
    ``__deprecated_attrs__``, ``__expired_functions__``, ``__former_attrs__``)."""
    found: set[str] = set()
    if "__getattr__" not in vars(module):
        return found
    for key, value in list(vars(module).items()):
        lowered = key.lower()
        if not any(word in lowered for word in ("deprecat", "former", "expired")):
            continue
        if isinstance(value, dict):
            found.update(k for k in value if isinstance(k, str) and k.isidentifier())
        elif isinstance(value, (list, tuple, set, frozenset)):
            found.update(k for k in value if isinstance(k, str) and k.isidentifier())
    return found


def module_record(module: types.ModuleType, probe_names: set[str]) -> dict:
    name = module.__name__
    record: dict = {"status": "ok"}
    spec_file = getattr(module, "__file__", None) or ""
    if spec_file.endswith((".so", ".pyd")):
        record["ext"] = True
    declared = getattr(module, "__all__", None)
    if isinstance(declared, (list, tuple)) and all(isinstance(n, str) for n in declared):
        record["all"] = sorted(set(declared))
    try:
        names = set(dir(module))
    except Exception:
        names = set(vars(module))
    names |= set(record.get("all", ())) | hidden_names(module) | probe_names
    attrs: dict = {}
    for attribute in sorted(names - MODULE_DUNDERS):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = getattr(module, attribute)
        except Exception:
            continue
        try:
            attrs[attribute] = describe(value, name, attribute)
        except Exception as exc:  # an object whose introspection raises
            attrs[attribute] = {"k": "val", "t": "<%s>" % type(exc).__name__}
    record["attrs"] = attrs
    return record


def error_text(exc: BaseException) -> str:
    return ("%s: %s" % (type(exc).__name__, exc))[:300]


def walk_worker(root: str, skip_file: str, probe_file: str | None) -> int:
    """The child: emit one JSON line per module of ``root`` on the protocol pipe (the real
    stdout; the libraries' own prints go to stderr)."""
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    with open(skip_file, encoding="utf-8") as handle:
        skip = set(json.load(handle))
    probe: dict[str, list[str]] = {}
    if probe_file:
        with open(probe_file, encoding="utf-8") as handle:
            probe = json.load(handle)
    done: set[str] = set()

    def emit(name: str, record: dict) -> None:
        done.add(name)
        protocol.write(json.dumps({"module": name, "record": record}) + "\n")
        protocol.flush()

    def visit(name: str, walk_children: bool) -> None:
        if name in skip or name in done:
            return
        reason = skip_reason(name)
        if reason:
            emit(name, {"status": "skipped", "error": reason})
            return
        protocol.write(json.dumps({"begin": name}) + "\n")
        protocol.flush()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = importlib.import_module(name)
        except BaseException as exc:  # ImportError, SystemExit, anything an import raises
            if isinstance(exc, KeyboardInterrupt):
                raise
            emit(name, {"status": "error", "error": error_text(exc)})
            return
        emit(name, module_record(module, set(probe.get(name, ()))))
        path = getattr(module, "__path__", None)
        if walk_children and path is not None:
            try:
                children = sorted(info.name for info in pkgutil.iter_modules(list(path)))
            except Exception:
                children = []
            for child in children:
                visit(name + "." + child, True)

    visit(root, True)
    for name in sorted(probe):  # the old modules the walk did not reach
        if name == root or name.startswith(root + "."):
            visit(name, False)
    protocol.close()
    return 0


# -- record: the parent ------------------------------------------------------------------

def distribution_versions(distributions: list[str]) -> dict[str, str]:
    try:
        from importlib import metadata  # Python 3.8 has it
    except ImportError:
        return {}
    versions = {}
    for distribution in distributions + ["setuptools"]:
        try:
            versions[distribution] = metadata.version(distribution)
        except Exception:
            continue
    return versions


def walk_library(root: str, timeout: float, probe: dict[str, list[str]], scratch: str) -> dict[str, dict]:
    """Every module of ``root``, walked by child processes: one that hangs on a module past
    ``timeout`` or dies is replaced by a fresh one that skips the modules already done."""
    modules: dict[str, dict] = {}
    probe_file = None
    if probe:
        probe_file = os.path.join(scratch, "probe-%s.json" % root)
        with open(probe_file, "w", encoding="utf-8") as handle:
            json.dump({name: names for name, names in probe.items()
                       if name == root or name.startswith(root + ".")}, handle)
    skip_file = os.path.join(scratch, "skip-%s.json" % root)
    environment = dict(os.environ, COMPATFIX="0", MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    while True:
        with open(skip_file, "w", encoding="utf-8") as handle:
            json.dump(sorted(modules), handle)
        command = [sys.executable, os.path.abspath(__file__), "_walk", root, skip_file]
        if probe_file:
            command.append(probe_file)
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 stdin=subprocess.DEVNULL, env=environment, cwd=scratch)
        assert child.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(child.stdout, selectors.EVENT_READ)
        reader = io.TextIOWrapper(child.stdout, encoding="utf-8")
        pending = None
        stalled = False
        while True:
            if not selector.select(timeout):
                stalled = True
                break
            line = reader.readline()
            if not line:
                break
            message = json.loads(line)
            if "begin" in message:
                pending = message["begin"]
            else:
                modules[message["module"]] = message["record"]
                pending = None
        if stalled:
            child.kill()
        child.wait()
        selector.close()
        if pending is None:
            return modules
        modules[pending] = {"status": "timeout" if stalled else "crashed",
                            "error": "no answer in %ds" % timeout if stalled else
                            "the interpreter died importing it (exit %s)" % child.returncode}
        print("  %s: %s" % (pending, modules[pending]["status"]), file=sys.stderr)


def load_record(path: str) -> dict:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
        return json.load(handle)


def write_json(path: str, data: object, lines: bool = False) -> None:
    """Deterministic output: sorted keys, compact, gzip without a time stamp for ``.gz``."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    if lines:  # one entry a line, so that a regenerated table reads as a diff
        entries = data["entries"]  # type: ignore[index]
        head = {key: value for key, value in data.items() if key != "entries"}  # type: ignore[union-attr]
        body = ",\n".join(json.dumps(entry, sort_keys=True, separators=(",", ":")) for entry in entries)
        text = json.dumps(head, sort_keys=True, separators=(",", ":"))[:-1] + ',"entries":[\n' + body + "\n]}"
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    if path.endswith(".gz"):
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as handle:
            handle.write(text.encode("utf-8") + b"\n")
    else:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")


def record_command(arguments: argparse.Namespace) -> int:
    import tempfile

    libraries = dict(LIBRARIES)
    if arguments.library:
        libraries = {root: LIBRARIES.get(root, root) for root in arguments.library}
    probe: dict[str, list[str]] = {}
    for path in arguments.probe or ():
        for name, module in load_record(path)["modules"].items():
            if module.get("status") == "ok":
                probe.setdefault(name, [])
                probe[name] = sorted(set(probe[name]) | set(module.get("attrs", ())))
    versions = distribution_versions(sorted(set(libraries.values())))
    modules: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="api-surface-") as scratch:
        for root in libraries:
            if libraries[root] not in versions:
                print("%s: %s is not installed" % (arguments.label, libraries[root]), file=sys.stderr)
                continue
            print("%s: walking %s" % (arguments.label, root), file=sys.stderr)
            found = walk_library(root, arguments.timeout, probe, scratch)
            modules.update(found)
            failed = sum(1 for m in found.values() if m["status"] not in ("ok", "skipped"))
            print("  %d modules, %d not importable" % (len(found), failed), file=sys.stderr)
    record = {
        "schema": SCHEMA,
        "label": arguments.label,
        "python": platform.python_version(),
        "platform": sys.platform,
        "distributions": versions,
        "libraries": {root: libraries[root] for root in libraries if libraries[root] in versions},
        "modules": modules,
    }
    write_json(arguments.out, record)
    return 0


# -- diff --------------------------------------------------------------------------------

def parse_shape(text: str) -> list[tuple[str, str, bool]]:
    """SHAPE -> [(name, kind, has_default)], kind one of P (positional-only), PK, VP (*args),
    K (keyword-only), VK (**kwargs)."""
    inner = text.strip()[1:-1].strip()
    if not inner:
        return []
    parameters: list[tuple[str, str, bool]] = []
    keyword_only = False
    for part in inner.split(", "):
        if part == "/":
            parameters = [(name, "P" if kind == "PK" else kind, default) for name, kind, default in parameters]
        elif part == "*":
            keyword_only = True
        elif part.startswith("**"):
            parameters.append((part[2:], "VK", False))
        elif part.startswith("*"):
            parameters.append((part[1:], "VP", False))
            keyword_only = True
        else:
            default = part.endswith("=")
            parameters.append((part.rstrip("="), "K" if keyword_only else "PK", default))
    return parameters


def call_breaks(old: str, new: str) -> list[str]:
    """How a call that ``old``'s signature accepts can fail against ``new``'s: a removed
    parameter, a new required one, a positional that became keyword-only (or the reverse),
    fewer positional slots, lost ``*args``/``**kwargs``. Empty when every old call still binds."""
    before, after = parse_shape(old), parse_shape(new)
    new_kinds = {kind for _, kind, _ in after}
    if "VP" in new_kinds and "VK" in new_kinds:
        return []  # (*args, **kwargs) binds any call
    problems: list[str] = []
    named_after = {name: (kind, default) for name, kind, default in after if kind in ("P", "PK", "K")}
    named_before = {name: (kind, default) for name, kind, default in before if kind in ("P", "PK", "K")}
    positional_before = [name for name, kind, _ in before if kind in ("P", "PK")]
    positional_after = [name for name, kind, _ in after if kind in ("P", "PK")]
    reported: set[str] = set()
    for index, name in enumerate(positional_before):
        if index < len(positional_after):
            if positional_after[index] != name and name in positional_after:
                problems.append("%s moved from position %d to %d" % (
                    name, index + 1, positional_after.index(name) + 1))
                reported.add(name)
            continue  # a renamed parameter still takes the same positional argument
        if "VP" in new_kinds:
            continue
        reported.add(name)
        if name in positional_after:
            problems.append("%s moved from position %d to %d" % (name, index + 1, positional_after.index(name) + 1))
        elif named_after.get(name, ("",))[0] == "K":
            problems.append("%s became keyword-only" % name)
        elif name in named_after or "VK" in new_kinds:
            problems.append("%s can no longer be passed by position" % name)
        else:
            problems.append("parameter %s removed" % name)
    for name, (kind, _) in named_before.items():
        if name in reported:
            continue
        if name in named_after:
            new_kind = named_after[name][0]
            if kind == "PK" and new_kind == "K":
                problems.append("%s became keyword-only" % name)
            elif kind in ("PK", "K") and new_kind == "P":
                problems.append("%s became positional-only" % name)
        elif kind != "P" and "VK" not in new_kinds:
            problems.append("parameter %s removed" % name)
    for name, (kind, default) in named_after.items():
        if default or kind == "P":  # a positional-only parameter's name is not part of the call
            continue
        if name not in named_before:
            problems.append("new required parameter %s" % name)
        elif named_before[name][1]:
            problems.append("%s lost its default" % name)
    required_positional_only = sum(1 for _, kind, default in after if kind == "P" and not default)
    if required_positional_only > len(positional_before):
        problems.append("needs %d positional arguments, took at most %d" % (
            required_positional_only, len(positional_before)))
    old_kinds = {kind for _, kind, _ in before}
    if "VP" in old_kinds and "VP" not in new_kinds:
        problems.append("*args no longer accepted")
    if "VK" in old_kinds and "VK" not in new_kinds:
        problems.append("**kwargs no longer accepted")
    return problems


def missing_module_of(error: str) -> str | None:
    prefix = "ModuleNotFoundError: No module named '"
    if error.startswith(prefix):
        return error[len(prefix):].split("'")[0]
    return None


def missing_name_of(error: str) -> str | None:
    """The dotted name whose absence an import error reports: ``module 'numpy' has no
    attribute 'float'``, ``cannot import name 'X' from 'Y'``, numpy 2's "`np.sctypes` was
    removed"; None for any other error."""
    import re

    for pattern, template in (
            (r"^AttributeError: module '([\w.]+)' has no attribute '(\w+)'", "{0}.{1}"),
            (r"^ImportError: cannot import name '(\w+)' from '([\w.]+)'", "{1}.{0}"),
            (r"^AttributeError: `np\.(\w+)` was removed", "numpy.{0}")):
        found = re.match(pattern, error)
        if found:
            return template.format(*found.groups())
    return None


class Stack:
    """A record with the look-ups the diff needs."""

    def __init__(self, record: dict) -> None:
        self.record = record
        self.label: str = record["label"]
        self.modules: dict[str, dict] = record["modules"]
        self.libraries: dict[str, str] = record["libraries"]

    def versions(self) -> dict:
        """The table's account of this stack: Python's version and each library's."""
        installed = self.record["distributions"]
        return {"python": self.record["python"],
                "distributions": {name: installed[name] for name in sorted(set(self.libraries.values()))}}

    def attribute(self, module: str, name: str) -> dict | None:
        found = self.modules.get(module)
        if not found or found.get("status") != "ok":
            return None
        return found["attrs"].get(name)

    def detail(self, module: str, name: str) -> dict | None:
        """The class or function entry that carries the detail (signature, members): here,
        or where ``o`` says the object is defined."""
        entry = self.attribute(module, name)
        for _ in range(4):
            if entry is None or "o" not in entry or entry["k"] == "mod":
                return entry
            origin_module, _, qualname = entry["o"].partition(":")
            if "." in qualname or (origin_module, qualname) == (module, name):
                return None
            module, name = origin_module, qualname
            entry = self.attribute(module, name)
        return None

    def member(self, class_detail: dict, name: str) -> list | None:
        entry = class_detail.get("m", {}).get(name)
        for _ in range(8):
            if entry is None or entry[0] != "^":
                return entry
            module, _, qualname = entry[1].partition(":")
            owner = self.attribute(module, qualname) if "." not in qualname else None
            if owner is None or "m" not in owner:
                return ["?", None]  # inherited from a class outside the record: present, no signature
            entry = owner["m"].get(name)
        return None

    def definitions(self) -> dict[tuple[str, str, str], list[str]]:
        """(root of the library that defines it, kind, name) of each public class and
        routine -> the public dotted paths it is reachable by, the places that define it
        first, then the shorter paths."""
        index: dict[tuple[str, str, str], list[tuple[bool, int, str]]] = {}
        for module, found in self.modules.items():
            if found.get("status") != "ok" or any(part.startswith("_") for part in module.split(".")):
                continue
            for name, entry in found["attrs"].items():
                if entry["k"] in ("cls", "fn") and not name.startswith("_"):
                    path = module + "." + name
                    root = entry.get("o", module).split(".")[0].split(":")[0]
                    index.setdefault((root, entry["k"], name), []).append(("o" in entry, path.count("."), path))
        return {key: [path for _, _, path in sorted(paths)] for key, paths in index.items()}


def old_aliases(stack: Stack) -> dict[str, list[str]]:
    """"module:qualname" of a definition -> the other dotted paths it is reachable by."""
    aliases: dict[str, list[str]] = {}
    for module, found in stack.modules.items():
        if found.get("status") != "ok":
            continue
        for name, entry in found["attrs"].items():
            if entry.get("o") and entry["k"] in ("cls", "fn"):
                aliases.setdefault(entry["o"], []).append(module + "." + name)
    return aliases


def compare(old: Stack, new: Stack, provided: frozenset[str] = frozenset()) -> list[dict]:
    """The entries of ``old`` that ``new`` lost or changed, one dict each (no status yet).

    A removed module is one entry; a removed public module, or one that a compatfix shim
    provides (``provided``), also gets an entry for each public name it defined, so that the
    table says which of them a stand-in has."""
    entries: list[dict] = []
    aliases = old_aliases(old)

    def add(kind: str, name: str, module: str, change: str, before: str | None = None,
            after: str | None = None, entry: dict | None = None, **extra: object) -> None:
        """One entry; ``entry`` is the old attribute it is about (for a member or a
        signature: the class or function's), whose other public paths become ``aliases``."""
        item = {"kind": kind, "name": name, "library": old.libraries[name.split(".")[0]],
                "module": module, "change": change}
        if before is not None:
            item["old"] = before
        if after is not None:
            item["new"] = after
        if entry is not None:
            item["old_kind"] = entry["k"]
            if entry.get("o"):
                item["origin"] = entry["o"]
            if entry.get("t"):
                item["old_type"] = entry["t"]
            if entry.get("d"):
                item["deprecated"] = True
            if entry.get("r"):
                item["replaced_by"] = entry["r"]
            if name.rpartition(".")[2] in old.modules[module].get("all", ()):
                item["in_all"] = True  # the old module declared it its API
            attribute = name[len(module) + 1:].split(".")[0]
            suffix = name[len(module) + 1 + len(attribute):]
            reachable = [path + suffix for path in aliases.get(module + ":" + attribute, [])]
            if reachable:
                item["aliases"] = sorted(reachable, key=lambda path: (path.count("_"), len(path), path))[:6]
        item.update(extra)
        entries.append(item)

    removed_modules: set[str] = set()
    for module in sorted(old.modules):
        found = old.modules[module]
        root = module.split(".")[0]
        if found.get("status") != "ok" or root not in new.libraries or root not in old.libraries:
            continue
        now = new.modules.get(module)
        if now is None or now["status"] == "error" and (missing_module_of(now["error"]) or "\0") in [
                ".".join(module.split(".")[:n]) for n in range(1, module.count(".") + 2)]:
            removed_modules.add(module)
            add("module", module, module, "removed", **({"ext": True} if found.get("ext") else {}))
            if module in provided or not any(_private(part) for part in module.split(".")):
                declared = set(found.get("all", ()))
                for name, entry in sorted(found["attrs"].items()):
                    own = "o" not in entry or name in declared or module in provided
                    if own and not _private(name) and entry["k"] != "mod":
                        add("attribute", module + "." + name, module, "removed with its module", entry=entry)
            continue
        if now["status"] == "error":
            missing = missing_module_of(now["error"])
            blocked_by = missing or missing_name_of(now["error"])
            add("module", module, module, "fails to import: " + now["error"],
                **({"ext": True} if found.get("ext") else {}), **({"needs": missing} if missing else {}),
                **({"blocked_by": blocked_by} if blocked_by else {}))
            continue
        if now["status"] != "ok":
            continue
        for name, entry in sorted(found["attrs"].items()):
            path = module + "." + name
            current = now["attrs"].get(name)
            if current is None:
                if entry["k"] == "mod" and "o" not in entry and path in removed_modules | {
                        m for m in old.modules if m == path}:
                    continue  # the submodule's own entry says it
                add("attribute", path, module, "removed", entry=entry)
                continue
            if "o" in entry:
                continue  # compared where it is defined
            detail = new.detail(module, name)
            if detail is None:
                continue
            if entry["k"] == "fn" and entry.get("s") and detail.get("s"):
                problems = call_breaks(entry["s"], detail["s"])
                if problems:
                    add("signature", path, module, "; ".join(problems), entry["s"], detail["s"], entry=entry)
            if entry["k"] != "cls" or detail.get("k") != "cls":
                continue
            if entry.get("i") and detail.get("i"):
                problems = call_breaks(entry["i"], detail["i"])
                if problems:
                    add("signature", path + ".__init__", module, "; ".join(problems), entry["i"], detail["i"],
                        entry=entry)
            if entry.get("ss") and not detail.get("ss"):
                add("member", path + ".__setstate__", module, "removed", entry["ss"], entry=entry)
            if "m" not in entry or "m" not in detail:
                continue
            for member_name, member in sorted(entry["m"].items()):
                if member[0] == "^":
                    continue  # compared on the class that defines it
                now_member = new.member(detail, member_name)
                member_path = path + "." + member_name
                if now_member is None:
                    add("member", member_path, module, "removed", member[1], entry=entry)
                elif member[0] == "f" and member[1] and now_member[0] == "f" and now_member[1]:
                    problems = call_breaks(member[1], now_member[1])
                    if problems:
                        add("signature", member_path, module, "; ".join(problems), member[1], now_member[1],
                            entry=entry)
    return entries


# -- statuses: computed from compatfix's own data ----------------------------------------

def _dotted_key(key: str) -> str | None:
    """A renames/rewrites key as a dotted name, or None for a call pattern that names no one."""
    if key.startswith("*"):
        return None
    name = key.split("(")[0]
    if name.endswith(".*"):
        name = name[:-2]
    return name if name and all(part.isidentifier() for part in name.split(".")) else None


class Coverage:
    """What compatfix restores, from the registry and the inventory, by dotted name.

    ``claims(name)`` -> (shim, via, key) or None: ``restores`` (an after_import shim gives the
    name back to its target), ``provides`` (a provide shim's module, or a name that module
    really has once the shim has filled it), ``renames`` / ``rewrites`` (an after_import
    shim's record names it, or a module above it)."""

    def __init__(self) -> None:
        from compatfix import inventory, registry

        self.shims = {shim.name: shim for shim in registry.builtin_shims()}
        self.restored: dict[str, tuple[str, str]] = {}
        self.keys: dict[str, tuple[str, str, str]] = {}
        self.provided: dict[str, str] = {}
        for shim in self.shims.values():
            if shim.kind == registry.PROVIDE:
                for target in shim.targets:
                    self.provided.setdefault(target, shim.name)
                continue
            for target in shim.targets:
                for name in shim.restores:
                    self.restored.setdefault(target + "." + name, (shim.name, target + ":" + name))
            for via, mapping in (("renames", shim.renames), ("rewrites", shim.rewrites)):
                for key in mapping:
                    dotted = _dotted_key(key)
                    if dotted:
                        self.keys.setdefault(dotted, (shim.name, via, key))
        self._filled: dict[str, object] = {}
        # stand-ins that cannot be built here (their library is not installed): what they
        # provide is unknown on this stack, so the table is restatused where they can be
        self.unbuilt: set[str] = set()
        # names the inventory explains without a shim: dotted key -> its reason
        self.explained: dict[str, str] = {}
        for removal in inventory.REMOVALS:
            if removal.shim:
                continue
            why = removal.reason or ("compatfix's dependency " + removal.dependency if removal.dependency else "")
            for key in list(removal.renames) + list(removal.rewrites):
                dotted = _dotted_key(key)
                if dotted:
                    self.explained.setdefault(dotted, why)

    def filled(self, target: str) -> object:
        """The module a provide shim makes for ``target``, filled in a fresh module object."""
        if target not in self._filled:
            module = types.ModuleType(target)
            try:
                self.shims[self.provided[target]].apply(module)
            except ImportError:
                self.unbuilt.add(target)
            except Exception:  # a stand-in that fails to build provides nothing
                pass
            self._filled[target] = module
        return self._filled[target]

    def provides(self, target: str, name: str) -> bool:
        try:
            return hasattr(self.filled(target), name)
        except Exception:
            return False

    def claims(self, name: str, signature: bool = False, alias: bool = False) -> tuple[str, str, str] | None:
        """What covers ``name``. A changed ``signature`` only a call-pattern key covers: ``f(...)``
        for f, ``m.*(...)`` for the functions of m; restoring or providing a name leaves the
        call as it is. An ``alias`` (another path to the same old object) is covered only by a
        key that names it and changes the object itself (a member put back on a class): a
        name restored under one path leaves the others missing. Otherwise a key that names a
        module or an object covers what is below it, and a call pattern its callable alone."""
        if signature or alias:
            # a class's __init__ is called through the class, which is what a call key names
            parts = name.split(".")[:-1] if signature and name.endswith(".__init__") else name.split(".")
            for n in (len(parts), len(parts) - 1):
                claim = self.keys.get(".".join(parts[:n]))
                if claim is None:
                    continue
                call, star = "(" in claim[2], claim[2].split("(")[0].endswith(".*")
                if signature and call and (n == len(parts)) != star:
                    return claim
                if not signature and n == len(parts) and claim[1] == "rewrites" and not call:
                    return claim
            return None
        if name in self.restored:
            shim, key = self.restored[name]
            return shim, "restores", key
        parts = name.split(".")
        for n in range(len(parts), 0, -1):
            prefix = ".".join(parts[:n])
            if prefix in self.provided:
                rest = parts[n:]
                if not rest:
                    return self.provided[prefix], "provides", prefix
                if self.provides(prefix, rest[0]):
                    return self.provided[prefix], "provides", prefix + ":" + rest[0]
                return None  # the stand-in lacks it: a provided module's names are what it has
            if prefix in self.keys and (n == len(parts) or "(" not in self.keys[prefix][2]):
                return self.keys[prefix]
        return None

    def stand_in(self, name: str) -> tuple[str, str] | None:
        """(shim, module) when a provide shim provides a module above ``name``."""
        parts = name.split(".")
        for n in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:n])
            if prefix in self.provided:
                return self.provided[prefix], prefix
        return None

    def explanation(self, name: str) -> str | None:
        parts = name.split(".")
        for n in range(len(parts), 0, -1):
            if ".".join(parts[:n]) in self.explained:
                return self.explained[".".join(parts[:n])]
        return None


C_INTERNALS = ("torch._C", "torch._C_flatbuffer", "torchvision._C")
# the types of typing's constructs (Optional, Tuple, TypeVar('T'), ...): a module's own imports
TYPING_TYPES = frozenset({"_SpecialForm", "_GenericAlias", "_SpecialGenericAlias", "_VariadicGenericAlias",
                          "_UnionGenericAlias", "_CallableType", "_TupleType", "_LiteralSpecialForm",
                          "_TypedDictMeta", "TypeVar", "ParamSpec", "_ProtocolMeta", "NewType",
                          "_GenericAliasBase", "_Final"})
TEST_PARTS = ("testing", "_testing", "tests", "_internal")


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def status_of(entry: dict, coverage: Coverage) -> dict:
    """``status`` (shim / no-shim / not-applicable) with ``shim``+``via``+``key`` or
    ``reason``+``why`` (a rule's code), by the first rule that matches:

    shim: a registry shim restores, provides or names the entry (or one of its aliases, or
      the name whose absence stops a module's import: ``blocked_by``);
    not-applicable: the old name was the module's own import, not in its ``__all__``, of another
      library's object (``typing.Optional`` in a torch module; not a builtin such as
      ``numpy.float``) or of a module (``functools`` in ``torch.utils.hooks``; not below the
      library's top-level package, whose ``numpy.warnings`` code did use); or a module fails to
      import only because an optional dependency is not installed on the new stack;
    no-shim, with every fact that applies: a stand-in that compatfix provides for a module
    above it lacks it; the inventory's reason; a test helper; C-extension internals; moved
    (the same name is public elsewhere in the library: an alias could restore it); private; a
    changed signature, or a module that no longer imports; a deprecation the old docstring
    mentions (with the name it points to instead, "renamed"); a re-exported module; otherwise
    removed upstream with no shim yet.
    ``why`` is the first fact's code, ``reason`` all of them."""
    name = entry["name"]
    signature = entry["kind"] == "signature"
    candidates = [(name, False)] + [(alias, True) for alias in entry.get("aliases", ())] + (
        [(entry["blocked_by"], False)] if entry.get("blocked_by") else [])
    for candidate, alias in candidates:
        claim = coverage.claims(candidate, signature=signature, alias=alias)
        if claim:
            return {"status": "shim", "shim": claim[0], "via": claim[1], "key": claim[2]}
    module = entry["module"]
    origin = entry.get("origin", "")
    origin_root = origin.split(":")[0].split(".")[0]
    root = name.split(".")[0]
    if entry["kind"] == "attribute" and not entry.get("in_all"):
        if origin and origin_root not in (root, "builtins") and entry.get("old_kind") != "mod":
            return {"status": "not-applicable", "why": "foreign-import",
                    "reason": "the module's own import of %s, not part of its API" % origin.replace(":", ".")}
        if entry.get("old_type") == "_Feature":
            return {"status": "not-applicable", "why": "foreign-import",
                    "reason": "the module's `from __future__ import %s`, not part of its API" % name.rpartition(".")[2]}
        if entry.get("old_type") in TYPING_TYPES:
            return {"status": "not-applicable", "why": "foreign-import",
                    "reason": "the module's own import of a typing construct (typing.%s), not part of its API"
                    % name.rpartition(".")[2]}
        if entry.get("old_kind") == "mod" and origin and module != root:
            return {"status": "not-applicable", "why": "module-import",
                    "reason": "the module's own import of %s, not part of its API: import it directly" % origin}
    needs = entry.get("needs")
    if needs and needs.split(".")[0] != name.split(".")[0]:
        explained = coverage.explanation(needs)
        if explained and explained.startswith("compatfix's dependency"):
            return {"status": "not-applicable", "why": "dependency",
                    "reason": "needs %s, which %s brings back" % (needs, explained)}
        if explained is None:
            return {"status": "not-applicable", "why": "optional-dependency",
                    "reason": "needs %s, an optional dependency not installed on the new stack" % needs}
    facts: list[tuple[str, str]] = []
    stand_in = coverage.stand_in(name)
    if stand_in:
        facts.append(("stand-in-gap", "compatfix's stand-in for %s (shim `%s`) lacks it" % (stand_in[1], stand_in[0])))
    explained = coverage.explanation(name)
    if explained:
        facts.append(("inventory", "the inventory: " + explained))
    parts = name.split(".")
    module_parts = module.split(".")
    if any(part in TEST_PARTS or part.startswith(("test", "_test")) for part in parts[1:]):
        facts.append(("test-helper", "a test helper"))
    if entry.get("ext") or name.startswith(C_INTERNALS):
        facts.append(("c-extension", "C-extension internals"))
    leaf = parts[-1]
    if entry.get("moved_to"):
        facts.append(("moved", "moved: now %s (an alias would restore it)" % entry["moved_to"]))
    private_module = any(_private(part) for part in module_parts)
    if _private(leaf) and private_module:
        facts.append(("private", "a private name under a private module"))
    elif private_module:
        facts.append(("private", "under a private module"))
    elif any(_private(part) for part in parts):
        facts.append(("private", "a private name"))
    if entry["kind"] == "signature":
        facts.append(("signature", "the signature changed (%s); no behaviour shim yet" % entry["change"]))
    elif entry["change"].startswith("fails to import"):
        facts.append(("import-fails", "imports on the old stack, fails on the new one"))
    if entry.get("replaced_by"):
        facts.append(("renamed", "deprecated in favour of %s (the old docstring says so)" % entry["replaced_by"]))
    elif entry.get("deprecated"):
        facts.append(("deprecated", "the old docstring mentions a deprecation"))
    if entry.get("old_kind") == "mod" and origin:
        facts.append(("re-exported-module", "the module's import of %s: import it directly" % origin))
    if not facts:
        facts.append(("removed", "removed upstream; no shim yet"))
    return {"status": "no-shim", "why": facts[0][0], "reason": "; ".join(text for _, text in facts)}


def moved_index(stacks: list[Stack]) -> dict[tuple[str, str, str], list[str]]:
    """(library root, kind, name) -> its public paths, where every new stack has it."""
    indexes = [stack.definitions() for stack in stacks]
    common = set(indexes[0]).intersection(*indexes[1:]) if indexes else set()
    return {name: indexes[0][name] for name in common}


STATUS_KEYS = ("status", "shim", "via", "key", "reason", "why")


def restatus(entries: list[dict], coverage: Coverage | None = None) -> list[dict]:
    """Recompute every entry's status from compatfix's data as it is now."""
    coverage = coverage or Coverage()
    for entry in entries:
        for key in STATUS_KEYS:
            entry.pop(key, None)
        entry.update(status_of(entry, coverage))
    return entries


def diff_command(arguments: argparse.Namespace) -> int:
    from compatfix import registry

    provided = frozenset(target for shim in registry.builtin_shims() if shim.kind == registry.PROVIDE
                         for target in shim.targets)
    olds = [Stack(load_record(path)) for path in arguments.old]
    news = [Stack(load_record(path)) for path in arguments.new]
    merged: dict[tuple[str, str], dict] = {}
    for old in olds:
        for new in news:
            for entry in compare(old, new, provided):
                key = (entry["kind"], entry["name"])
                kept = merged.setdefault(key, dict(entry, old_stacks=[], new_stacks=[]))
                if old.label not in kept["old_stacks"]:
                    kept["old_stacks"].append(old.label)
                if new.label not in kept["new_stacks"]:
                    kept["new_stacks"].append(new.label)
    moved = moved_index(news)
    entries = [merged[key] for key in sorted(merged, key=lambda k: (k[1], k[0]))]
    for entry in entries:
        defined_by = entry.get("origin", entry["name"]).split(".")[0].split(":")[0]
        key = (defined_by, entry.get("old_kind"), entry["name"].split(".")[-1])
        if entry["kind"] == "attribute" and key in moved:
            entry["moved_to"] = moved[key][0]
    restatus(entries)
    table = {
        "schema": SCHEMA,
        "generated_by": "scripts/api-surface.py diff",
        "old": {stack.label: stack.versions() for stack in olds},
        "new": {stack.label: stack.versions() for stack in news},
        "entries": entries,
    }
    write_json(arguments.out, table, lines=True)
    if arguments.docs:
        with open(arguments.docs, "w", encoding="utf-8") as handle:
            handle.write(summary_markdown(table, os.path.relpath(arguments.out, REPOSITORY)))
    return 0


def restatus_command(arguments: argparse.Namespace) -> int:
    """Recompute the committed table's statuses (and docs/api-surface.md) in place. Run it
    where every library with a stand-in is installed (the corpus scan's stack): a stand-in
    that cannot be built provides nothing, and tests/inventory/test_surface.py then sees
    its entries as undecided on that stack."""
    path = os.path.join(REPOSITORY, arguments.table)  # an absolute path stays as it is
    table = load_record(path)
    restatus(table["entries"])
    write_json(path, table, lines=True)
    with open(os.path.join(REPOSITORY, arguments.docs), "w", encoding="utf-8") as handle:
        handle.write(summary_markdown(table, os.path.relpath(path, REPOSITORY)))
    return 0


# What issue 20 found real repositories failing on: the table must say something about each.
REPORTED_NAMES = (
    "torchvision.ops._new_empty_tensor",
    "torchvision.ops.misc._output_size",
    "torch._utils._accumulate",
    "torch.utils.data.sampler.Sampler.__init__",
    "torchvision.transforms.Scale",
    "torchvision.transforms.RandomSizedCrop",
    "scipy.misc.logsumexp",
    "numpy.warnings",
    "pkg_resources.parse_requirements",
    "pkg_resources.declare_namespace",
    "matplotlib.blocking_input",
    "torch.nn.parallel.distributed.DistributedDataParallel._sync_params",
)

STATUS_MEANINGS = (
    ("shim", "a compatfix shim restores it: an after_import shim's `restores`, a provide shim's "
     "module (and each name the filled stand-in really has), or a name its record's `renames`/`rewrites` "
     "cover; `shim`, `via` and `key` say which, and tests/inventory/test_surface.py checks each claim "
     "against the registry"),
    ("no-shim", "nothing restores it yet; `reason` gives every fact the rules find (a compatfix stand-in "
     "that lacks it, the inventory's own reason, a test helper, C-extension internals, moved elsewhere, "
     "private, a changed signature, a deprecation the old docstring mentions and what it names instead, "
     "a re-exported module) and "
     "`why` the first"),
    ("not-applicable", "not the library's API (the module's own import of another package's name, such "
     "as `typing.Optional`), or a module that fails only because an optional dependency is missing on the "
     "new stack (or needs a standard-library module that compatfix's dependencies bring back)"),
)


def describe_stack(label: str, stack: dict) -> str:
    return "`%s`: Python %s, %s" % (label, stack["python"], ", ".join(
        "%s %s" % item for item in sorted(stack["distributions"].items())))


def summary_markdown(table: dict, table_path: str) -> str:
    entries = table["entries"]
    libraries = sorted({entry["library"] for entry in entries})
    lines = [
        "# API-surface diff",
        "",
        "Generated by `scripts/api-surface.py diff` (and `restatus`); do not edit by hand. The full "
        "table is `%s`: one entry for every module, attribute, class member and signature that "
        "2020-22 code could use on the old stacks and that a new stack lost or changed so that an "
        "old call breaks." % table_path,
        "",
        "Old stacks (the union of their surfaces):",
        "",
        *("- " + describe_stack(label, stack) for label, stack in sorted(table["old"].items())),
        "",
        "New stacks (an entry is listed when at least one lacks it; `new_stacks` says which):",
        "",
        *("- " + describe_stack(label, stack) for label, stack in sorted(table["new"].items())),
        "",
        "## Counts",
        "",
        "| Library | Entries | Modules | Attributes | Members | Signatures | shim | no-shim | not-applicable |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for library in libraries + ["all"]:
        chosen = [e for e in entries if library == "all" or e["library"] == library]
        count = lambda key, value: sum(1 for e in chosen if e[key] == value)  # noqa: E731
        lines.append("| %s | %d | %d | %d | %d | %d | %d | %d | %d |" % (
            library, len(chosen), count("kind", "module"), count("kind", "attribute"), count("kind", "member"),
            count("kind", "signature"), count("status", "shim"), count("status", "no-shim"),
            count("status", "not-applicable")))
    public = [e for e in entries if e["status"] == "no-shim" and not any(
        _private(part) for part in e["name"].split("."))]
    lines += [
        "",
        "Of the no-shim entries, %d have no private component in their dotted name." % len(public),
        "",
        "## No-shim entries by first reason",
        "",
        "| Reason (`why`) | Entries |",
        "|---|---|",
    ]
    reasons: dict[str, int] = {}
    for entry in entries:
        if entry.get("why"):
            reasons[entry["status"] + ": " + entry["why"]] = reasons.get(entry["status"] + ": " + entry["why"], 0) + 1
    for reason, count_ in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        lines.append("| %s | %d |" % (reason, count_))
    by_name = {entry["name"]: entry for entry in entries}
    lines += ["", "## The names issue 20 reported", "",
              "The failures that real 2020-22 repositories stopped at, as the table has them:", "",
              "| Name | Kind | Change | Status |", "|---|---|---|---|"]
    for name in REPORTED_NAMES:
        entry = by_name.get(name)
        if entry is None:
            lines.append("| `%s` | | not in the table: present on the new stacks, or absent from both old ones | |" % name)
            continue
        status = ("shim `%s`" % entry["shim"]) if entry["status"] == "shim" else "%s: %s" % (
            entry["status"], entry["reason"])
        lines.append("| `%s` | %s | %s | %s |" % (name, entry["kind"], entry["change"].replace("|", "\\|"),
                                                 status.replace("|", "\\|")))
    lines += ["", "## Statuses", ""]
    lines += ["- `%s`: %s." % (status, meaning) for status, meaning in STATUS_MEANINGS]
    lines += [
        "",
        "## Regenerating",
        "",
        "The stacks are venvs under `.venvs/` (not CI's: nothing here runs in CI but the test). The old "
        "ones use pyenv's Python 3.8 and `requirements/surface-old.txt` (late 2021) and "
        "`requirements/surface-old2020.txt` (late 2020), each with its `-nodeps` file installed "
        "`--no-deps` after it; the new ones use `requirements/surface-new.txt` on Python 3.11, 3.12 "
        "and 3.13 (`scripts/share-torch.py` hard-links torch from a sibling venv where one has it). "
        "The record's schema is at the top of `scripts/api-surface.py`; the old records are committed "
        "(the corpus count reads them), the new ones (~2 MB each) are not.",
        "",
        "Each stack is recorded by its own interpreter, the new ones probing every name of the old "
        "records; then the diff, run where compatfix is importable, writes the table and this page:",
        "",
        "```",
        "python scripts/api-surface.py regenerate   # every step below, for each stack whose venv exists",
        "```",
        "",
        *("    " + line for line in regenerate_steps(dict(OLD_STACKS), NEW_STACKS)),
        "",
        "After a shim is added, `python scripts/api-surface.py restatus` recomputes the statuses from "
        "the committed table alone (no stack needed); tests/inventory/test_surface.py fails until it is run.",
        "",
    ]
    return "\n".join(lines)


# -- regenerate: every step, one command -------------------------------------------------

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SURFACE = "compatfix/inventory/surface"
TABLE = SURFACE + "/diff.json.gz"
DOCS = "docs/api-surface.md"
NEW_RECORDS = "build/api-surface"  # not committed: regenerated from the venvs, ~2 MB each
DIFF_PYTHON = ".venvs/modern/bin/python"  # any interpreter that imports compatfix's dependencies
# label -> interpreter; requirements/surface-old*.txt and requirements/surface-new.txt install them
OLD_STACKS = {"old-2021": ".venvs/surface-old/bin/python", "old-2020": ".venvs/surface-old2020/bin/python"}
NEW_STACKS = {"py311": ".venvs/surface-py311/bin/python", "py312": ".venvs/surface-py312/bin/python",
              "py313": ".venvs/surface-py313/bin/python"}


def record_path(label: str) -> str:
    folder = SURFACE if label in OLD_STACKS else NEW_RECORDS
    return "%s/record-%s.json.gz" % (folder, label)


def regenerate_steps(olds: dict[str, str | None], news: dict[str, str]) -> list[str]:
    """The commands that record each stack (an old one whose interpreter is None: its committed
    record is used as it is) and diff them, from the repository's root."""
    steps = ["%s scripts/api-surface.py record --label %s --out %s" % (python, label, record_path(label))
             for label, python in olds.items() if python]
    probes = " ".join("--probe " + record_path(label) for label in olds)
    steps += ["%s scripts/api-surface.py record --label %s %s --out %s" % (python, label, probes, record_path(label))
              for label, python in news.items()]
    steps.append("%s scripts/api-surface.py diff %s --new %s --out %s --docs %s" % (
        DIFF_PYTHON, " ".join(record_path(label) for label in olds),
        " ".join(record_path(label) for label in news), TABLE, DOCS))
    return steps


def regenerate_command(arguments: argparse.Namespace) -> int:
    """Record every stack whose venv exists (an old stack without one keeps its committed
    record), then diff; each step is printed before it runs."""
    root = REPOSITORY
    olds: dict[str, str | None] = {}
    for label, python in OLD_STACKS.items():
        if os.path.exists(os.path.join(root, python)):
            olds[label] = python
        elif os.path.exists(os.path.join(root, record_path(label))):
            olds[label] = None
    news = {label: python for label, python in NEW_STACKS.items() if os.path.exists(os.path.join(root, python))}
    if not olds or not news:
        print("needs an old record or venv and a new stack's venv: %s" % ", ".join(
            list(OLD_STACKS.values()) + list(NEW_STACKS.values())), file=sys.stderr)
        return 2
    for step in regenerate_steps(olds, news):
        print("+ " + step, file=sys.stderr)
        if subprocess.call(step, shell=True, cwd=root) != 0:
            return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "_walk":
        sys.exit(walk_worker(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    record_parser = commands.add_parser("record", help="record this interpreter's stack")
    record_parser.add_argument("--out", required=True)
    record_parser.add_argument("--label", required=True, help="the stack's name in the table")
    record_parser.add_argument("--library", action="append", help="an import root (default: all of LIBRARIES)")
    record_parser.add_argument("--probe", action="append", help="an old record whose names to look up")
    record_parser.add_argument("--timeout", type=float, default=120.0, help="seconds one module may take")
    diff_parser = commands.add_parser("diff", help="what the new records lost of the old ones")
    diff_parser.add_argument("old", nargs="+", help="old records (their union is compared)")
    diff_parser.add_argument("--new", nargs="+", required=True, help="new records")
    diff_parser.add_argument("--out", default=TABLE)
    diff_parser.add_argument("--docs", help="write the summary page here (docs/api-surface.md)")
    restatus_parser = commands.add_parser("restatus", help="recompute the table's statuses from compatfix's data")
    restatus_parser.add_argument("--table", default=TABLE)
    restatus_parser.add_argument("--docs", default=DOCS)
    commands.add_parser("regenerate", help="record every stack whose venv exists, then diff")
    parsed = parser.parse_args()
    if parsed.command == "record":
        sys.exit(record_command(parsed))
    # the statuses are the working tree's compatfix's, not an installed copy's
    sys.path.insert(0, REPOSITORY)
    sys.exit({"diff": diff_command, "restatus": restatus_command, "regenerate": regenerate_command}[parsed.command](parsed))
