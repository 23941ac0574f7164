"""``compatfix scan PATH...``: a static check of a repository, without importing or running
it. It finds the uses of every name that compatfix's shims restore or redirect and of every
removed API in the inventory, and the requirement pins that today's stack does not
satisfy; for each it says, for the versions installed here, whether a shim fixes it at run
time, needs an opt-in, or is not fixed, and what replaces it.

The names come from the registry's and the inventory's records (``_index``), so the scan
and the runtime cannot drift apart. docs/scan.md is the user documentation.
"""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Iterator

from compatfix.scan import _status
from compatfix.scan._index import Index, Source, build_index
from compatfix.scan._python import scan_source
from compatfix.scan._requirements import Requirement, normalise, read_requirements

__all__ = ["Finding", "ScanResult", "scan", "main", "compare_with_report"]

# Folders that are never the repository's own code: version control, virtual
# environments, caches, build output, vendored JavaScript.
SKIPPED_FOLDERS = frozenset({
    ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", ".venvs", "node_modules", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "build", "dist", "site-packages",
    ".ipynb_checkpoints",
})
# Distribution names whose import name is not the normalised distribution name, and that
# may not be installed here (for installed ones the metadata says).
DISTRIBUTION_PACKAGES = {
    "mmcv-full": "mmcv", "pytorch": "torch", "scikit-learn": "sklearn", "scikit-image": "skimage",
    "pillow": "PIL", "pyyaml": "yaml", "mmsegmentation": "mmseg", "mmdetection": "mmdet",
    "opencv-python": "cv2", "opencv-python-headless": "cv2",
}


@dataclass
class Finding:
    """One finding. ``shim`` is the shim that fixes it (or would), ``rule`` the stable
    id of what it matched (a shim's name, or an inventory entry's)."""

    file: str
    line: int
    column: int
    kind: str  # import, reference, call, requirement, syntax
    name: str  # what the code (or requirement) says, resolved
    rule: str
    status: str
    why: str
    broke: str
    replacement: str
    mechanical: bool
    shim: str | None = None

    @property
    def needs_action(self) -> bool:
        return self.status in _status.NEEDS_ACTION


@dataclass
class ScanResult:
    root: str
    files: int
    findings: list[Finding]

    def needs_action(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.needs_action]

    def to_json(self) -> dict[str, Any]:
        from compatfix import __version__

        counts = {status: 0 for status in _status.STATUSES}
        for finding in self.findings:
            counts[finding.status] += 1
        return {
            "compatfix_version": __version__,
            "root": self.root,
            "files_scanned": self.files,
            "summary": {"findings": len(self.findings), "needs_action": len(self.needs_action()),
                        "by_status": counts},
            # The shims expected to apply at run time, as a run report lists them.
            "shims": sorted({f.shim for f in self.findings if f.shim and f.status == _status.FIXED}),
            "findings": [dict(asdict(finding), needs_action=finding.needs_action) for finding in self.findings],
        }


def _walk(path: str) -> Iterator[tuple[str, bool]]:
    """The files under ``path`` (or ``path`` itself), and whether each is in a folder named
    ``requirements``; skipped folders and virtual environments are not entered."""
    if os.path.isfile(path):
        yield path, False
        return
    for folder, folders, files in os.walk(path):
        folders[:] = sorted(
            name for name in folders
            if name not in SKIPPED_FOLDERS and not name.endswith(".egg-info")
            and not os.path.exists(os.path.join(folder, name, "pyvenv.cfg"))
        )
        in_requirements = os.path.basename(folder).lower() == "requirements"
        for name in sorted(files):
            yield os.path.join(folder, name), in_requirements


class _Statuses:
    """``(status, why, broke)`` of each source, decided once per scan: it depends on the
    environment, not on where the name is used (deciding reads package metadata)."""

    def __init__(self, settings: Any, lookup: Any) -> None:
        self.settings, self.lookup = settings, lookup
        self._known: dict[tuple[int, str | None], tuple[str, str, str]] = {}

    def of(self, source: Source) -> tuple[str, str, str]:
        key = (id(source.shim if source.shim is not None else source.removal),
               source.returned[1] if source.returned else None)
        if key not in self._known:
            changed = _status.returned_status(*source.returned) if source.returned else None
            if changed is not None:
                removal = source.returned[0]  # type: ignore[index]
                broke = "%s %s (%s) removed %s; %s %s brought them back with another meaning" % (
                    removal.library, removal.removed_in, removal.date, removal.names, removal.library,
                    removal.returned_in)
                status, why = changed
            elif source.shim is not None:
                status, why = _status.shim_status(source.shim, self.settings, self.lookup)
                broke = source.shim.broke
            else:
                assert source.removal is not None
                status, why = _status.removal_status(source.removal)
                broke = "%s %s (%s) removed %s" % (source.removal.library, source.removal.removed_in,
                                                    source.removal.date, source.removal.names)
            self._known[key] = (status, why, broke)
        return self._known[key]


def _source_finding(shown: str, line: int, column: int, kind: str, name: str, source: Source,
                    statuses: _Statuses) -> Finding:
    status, why, broke = statuses.of(source)
    return Finding(shown, line, column, kind, name, source.id, status, why, broke, source.replacement,
                   source.mechanical, source.shim.name if source.shim is not None else None)


class _RequirementChecker:
    """Findings for the requirements that name a package compatfix knows: a pin the
    installed version is outside of, or a package a shim provides (apex, whose PyPI
    namesake is another project)."""

    def __init__(self, shims: list[Any], settings: Any, lookup: Any) -> None:
        self.shims, self.settings, self.lookup = shims, settings, lookup
        self.known: set[str] = set()
        for shim in shims:
            self.known.update(name.partition(".")[0] for name in (*shim.targets, *shim.consumers))
            self.known.update(shim.requires)
        self._installed_packages: dict[str, list[str]] | None = None
        from compatfix.inventory import REMOVALS

        self.libraries = {self.package_of(r.library): r.library for r in REMOVALS if r.library != "python"}
        self.known.update(self.libraries)

    def package_of(self, distribution: str) -> str:
        key = normalise(distribution)
        if key in DISTRIBUTION_PACKAGES:
            return DISTRIBUTION_PACKAGES[key]
        packages = self._installed_packages_map().get(key) or []
        same = key.replace("-", "_")
        return same if same in packages or not packages else packages[0]

    def _installed_packages_map(self) -> dict[str, list[str]]:
        if self._installed_packages is None:
            from importlib import metadata

            by_distribution: dict[str, list[str]] = {}
            for package, distributions in metadata.packages_distributions().items():
                for distribution in distributions:
                    by_distribution.setdefault(normalise(distribution), []).append(package)
            self._installed_packages = by_distribution
        assert self._installed_packages is not None
        return self._installed_packages

    def findings(self, requirement: Requirement) -> list[Finding]:
        from compatfix._versions import in_range, installed_version
        from compatfix.registry import PROVIDE

        if normalise(requirement.name) == "python":
            return self._python(requirement)
        package = self.package_of(requirement.name)
        if package not in self.known:
            return []
        out = []
        provider = next((s for s in self.shims if s.kind == PROVIDE and package in s.targets), None)
        if provider is not None and provider.replaces_found is not None:
            status, why = _status.shim_status(provider, self.settings, self.lookup)
            out.append(Finding(
                requirement.file, requirement.line, 1, "requirement", requirement.text, provider.name,
                _status.CONFLICT, "%s; do not install %r from PyPI: %s" % (why, requirement.name, provider.broke),
                provider.broke, provider.replacement or provider.summary, False, provider.name))
            return out
        if not requirement.spec:
            return []
        have = installed_version(package)
        try:
            inside = have is not None and in_range(have, requirement.spec)
        except ValueError:
            return []
        if inside:
            return []
        fixing = sorted(s.name for s in self.shims if package in s.requires
                        and any(target.partition(".")[0] == package for target in s.targets)
                        and _status.shim_status(s, self.settings, self.lookup)[0] == _status.FIXED)
        if have is None:
            why = "%s is not installed here" % package
        else:
            why = "%s %s is installed here, outside %s%s" % (
                package, have, requirement.spec,
                "; at run time compatfix's shims for it that apply here: " + ", ".join(fixing) if fixing else "")
        library = self.libraries.get(package)
        removed = []
        if library and have is not None:
            from compatfix.inventory import REMOVALS

            removed = [r.names for r in REMOVALS if r.library == library and _status.removed_here(r)[0]
                       and _after_pin(r.removed_in, requirement.spec)]
        broke = ("removed since: " + "; ".join(removed)) if removed else "the pin predates the installed release"
        out.append(Finding(
            requirement.file, requirement.line, 1, "requirement", requirement.text, "requirement:" + package,
            _status.CONFLICT if have is not None else _status.UNKNOWN, why, broke,
            "relax the pin to the installed release and let compatfix bridge the old API", False, None))
        return out


    def _python(self, requirement: Requirement) -> list[Finding]:
        """A declared Python range (``python_requires``, ``requires-python``, conda's
        ``python=3.7``) that the running interpreter is outside of."""
        from compatfix._versions import in_range
        from compatfix.inventory import REMOVALS

        running = "%d.%d.%d" % sys.version_info[:3]
        try:
            if not requirement.spec or in_range(running, requirement.spec):
                return []
        except ValueError:
            return []
        removed = [r.names for r in REMOVALS if r.library == "python" and _status.removed_here(r)[0]
                   and _after_pin(r.removed_in, requirement.spec)]
        return [Finding(
            requirement.file, requirement.line, 1, "requirement", requirement.text, "requirement:python",
            _status.CONFLICT, "Python %s is running here, outside %s" % (running, requirement.spec),
            ("Python removed since: " + "; ".join(removed)) if removed else "the range predates this Python",
            "run it on a Python inside the range, or widen the range and let compatfix bridge the removals "
            "(compatfix scan lists the ones the code uses)", False, None)]


def _after_pin(removed_in: str, spec: str) -> bool:
    """Whether a removal came after every release ``spec`` allows (it has an upper bound:
    ``<X``, ``<=X`` or ``==X``); True where the pin has none."""
    from compatfix._versions import release_tuple

    try:
        removed = release_tuple(removed_in)
    except ValueError:
        return True
    for clause in spec.split(","):
        for operator in ("<=", "==", "<"):
            if clause.startswith(operator):
                bound = release_tuple(clause[len(operator):].rstrip(".*"))
                if removed < bound or (removed == bound and operator != "<"):
                    return False
                break
    return True


def scan(paths: Iterable[str], settings: Any = None) -> ScanResult:
    """Scan files and folders; paths in the findings are relative to the first folder."""
    from compatfix._settings import DEVICES, Settings
    from compatfix.registry import all_shims

    paths = list(paths)
    settings = settings or Settings.from_environ()
    shims, _problems = all_shims(DEVICES)
    by_name = {shim.name: shim for shim in shims}
    index: Index = build_index(shims)
    checker = _RequirementChecker(shims, settings, by_name.get)
    statuses = _Statuses(settings, by_name.get)
    first = paths[0] if paths else os.curdir
    root = os.path.abspath(first if os.path.isdir(first) else os.path.dirname(first) or os.curdir)
    findings: list[Finding] = []
    files = 0
    for path in paths:
        for file, in_requirements in _walk(path):
            shown = os.path.relpath(os.path.abspath(file), root).replace(os.sep, "/")
            if file.endswith(".py"):
                files += 1
                findings += _scan_python(file, shown, index, statuses)
            for requirement in read_requirements(file, shown, in_requirements):
                findings += checker.findings(requirement)
    findings.sort(key=lambda f: (f.file, f.line, f.column, f.rule))
    return ScanResult(root, files, findings)


def _scan_python(file: str, shown: str, index: Index, statuses: _Statuses) -> list[Finding]:
    try:
        with open(file, "rb") as handle:
            data = handle.read()
        text = data.decode("utf-8")
        uses = scan_source(text, file, index)
    except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None) or 1
        return [Finding(shown, line, 1, "syntax", "", "syntax-error", _status.UNPARSED,
                        "not Python 3: %s" % (getattr(exc, "msg", None) or exc), "",
                        "port the file to Python 3 (print(), except E as e, ...), or leave it out of the run",
                        False)]
    except OSError as exc:
        return [Finding(shown, 1, 1, "syntax", "", "unreadable", _status.UNPARSED, str(exc), "", "", False)]
    findings = []
    for use in uses:
        for source in use.pattern.sources:
            findings.append(_source_finding(shown, use.line, use.column, use.kind, use.name, source, statuses))
    return findings


def compare_with_report(scan_json: dict[str, Any], report: dict[str, Any], root: str | None = None) -> dict[str, Any]:
    """Precision and recall of a scan (``ScanResult.to_json()``) against a run's report
    (``--report`` JSON), by shim and by ``file:line`` of a restored name's use.

    Shims: predicted are the scan's ``shims`` (status fixed), actual those the report lists
    as applied or with a recorded use, counting only shims the scan can see (with names in
    its index: the others are listed as ``not_visible``). Uses: the scan's findings of the
    shims that recorded uses in the report, against those uses (files made relative to
    ``root``, by default the scan's root).
    """
    from compatfix.registry import all_shims

    root = os.path.abspath(root or scan_json.get("root") or os.curdir)
    visible = {source.shim.name for pattern in build_index(all_shims()[0]).patterns.values()
               for source in pattern.sources if source.shim is not None}
    actual: set[str] = set()
    uses: set[tuple[str, int, str]] = set()
    for process in report.get("processes", []):
        actual.update(entry["shim"] for entry in process.get("applied", []))
        for use in process.get("deprecated_uses", []):
            actual.add(use["shim"])
            path = use["file"]
            if os.path.isabs(path):
                path = os.path.relpath(path, root)
            uses.add((path.replace(os.sep, "/"), int(use["line"]), use["shim"]))
    predicted = set(scan_json.get("shims", []))
    recorded = {shim for _, _, shim in uses}
    predicted_uses = {(f["file"], f["line"], f["shim"]) for f in scan_json.get("findings", [])
                      if f.get("shim") in recorded}
    return {"shims": _scores(predicted, actual & visible), "uses": _scores(predicted_uses, uses),
            "not_visible": sorted(actual - visible)}


def _scores(predicted: set, actual: set) -> dict[str, Any]:
    hits = predicted & actual
    return {
        "precision": len(hits) / len(predicted) if predicted else None,
        "recall": len(hits) / len(actual) if actual else None,
        "true_positive": sorted(hits),
        "false_positive": sorted(predicted - actual),
        "false_negative": sorted(actual - predicted),
    }


def main(argv: list[str]) -> int:
    """``compatfix scan``; exit status as ruff's: 0 nothing needs action, 1 findings that
    do, 2 a usage error."""
    from compatfix.scan._output import parse_arguments, render

    args = parse_arguments(argv)
    if isinstance(args, int):  # --help (0) or a usage error (2), already printed
        return args
    missing = [path for path in args.paths if not os.path.exists(path)]
    if missing:
        print("compatfix scan: no such file or folder: %s" % ", ".join(missing), file=sys.stderr)
        return 2
    if args.diff or args.write:
        return _port(args)
    result = scan(args.paths)
    sys.stdout.write(render(result, args))
    if args.exit_zero:
        return 0
    return 1 if result.needs_action() else 0


# The statuses whose mechanical uses --diff rewrites: broken here, or back with another
# meaning. A name that still works here is left alone: its replacement may be a name the
# installed release does not have yet (timm.layers before timm 0.9).
REWRITTEN_STATUSES = frozenset({_status.FIXED, _status.OPT_IN, _status.NOT_FIXED, _status.CHANGED})
LIBCST_MISSING = ("compatfix scan: --diff and --write need libcst: pip install 'compatfix[scan]' "
                  "(or pip install 'libcst>=1')")


def _port(args: Any) -> int:
    """``--diff`` and ``--write``: rewrite the mechanical findings; list the others."""
    try:
        from compatfix.scan import _rewrite
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.partition(".")[0] != "libcst":
            raise
        print(LIBCST_MISSING, file=sys.stderr)
        return 2
    from compatfix._settings import DEVICES
    from compatfix.registry import all_shims

    result = scan(args.paths)
    index = build_index(all_shims(DEVICES)[0])
    every_rename = _rewrite.mechanical_renames(index)
    code = [f for f in result.findings if f.kind in ("import", "reference", "call")]

    def rewritable(finding: Finding) -> bool:
        pattern = index.lookup_name(finding.name)
        return finding.mechanical and pattern is not None and pattern.name in every_rename

    renamed_here = {index.lookup_name(f.name).name for f in code  # type: ignore[union-attr]
                    if rewritable(f) and f.status in REWRITTEN_STATUSES}
    renames = {key: new for key, new in every_rename.items() if key in renamed_here}
    rewrites = []
    remaining: dict[str, set[str]] = {}  # file -> the names still used after the rewrite
    declined: dict[tuple[str, int, str], str] = {}  # (file, line, name) -> why the rewrite left it
    for shown in sorted({f.file for f in code if rewritable(f)}):
        path = os.path.join(result.root, shown)
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            rewrite = _rewrite.rewrite_source(data, shown, index, renames)
        except _rewrite.cst.ParserSyntaxError as exc:  # Python that libcst does not parse
            print("compatfix scan: %s: not rewritten: %s" % (shown, str(exc).splitlines()[0]), file=sys.stderr)
            continue
        if rewrite.changed:
            compile(rewrite.new, path, "exec")  # a rewrite that does not compile is a bug: never write it
            rewrites.append(rewrite)
        remaining[shown] = {use.name for use in scan_source(rewrite.new.decode("utf-8"), path, index)}
        declined.update(((shown, line, name), why) for line, name, why in rewrite.skipped)
    left = []
    for finding in code:
        if finding.file in remaining and finding.name not in remaining[finding.file]:
            continue  # gone with the rewrite (an import of a removed module that is no longer needed)
        if rewritable(finding):
            if finding.status == _status.UNKNOWN:
                left.append((finding, "left as it is: %s, so the scan cannot tell that its replacement exists"
                             % finding.why))
            elif finding.status not in REWRITTEN_STATUSES:
                left.append((finding, "not broken with the versions installed here (%s): left as it is" % finding.why))
            elif finding.file in remaining:
                why = declined.get((finding.file, finding.line, finding.name),
                                   "the name does not mean the import's here (a local of the same name, "
                                   "a one-line block)")
                left.append((finding, "not rewritten: %s; rename to %s by hand" % (why, finding.replacement)))
        elif finding.replacement:
            left.append((finding, "instead: %s" % finding.replacement))
    out = sys.stderr if args.diff else sys.stdout
    if left:
        print("compatfix scan: not rewritten (the replacement changes the code, or is not needed here):", file=out)
        for finding, why in left:
            print("  %s:%d:%d  %s  %s" % (finding.file, finding.line, finding.column, finding.name, why), file=out)
    changes = sum(len(rewrite.changes) for rewrite in rewrites)
    if args.diff:
        sys.stdout.write(_rewrite.unified_diff(rewrites))
        print("compatfix scan: %d change%s in %d file%s; apply with `patch -p1` (or `git apply`) in %s" % (
            changes, "" if changes == 1 else "s", len(rewrites), "" if len(rewrites) == 1 else "s", result.root),
            file=sys.stderr)
        if args.exit_zero:
            return 0
        return 1 if rewrites or result.needs_action() else 0
    for rewrite in rewrites:
        _rewrite.write_atomically(os.path.join(result.root, rewrite.path), rewrite.new)
        for change in rewrite.changes:
            print("%s:%d: %s -> %s" % (rewrite.path, change.line, " ".join(change.old.split()), change.new))
    print("compatfix scan: rewrote %d file%s (%d change%s)" % (
        len(rewrites), "" if len(rewrites) == 1 else "s", changes, "" if changes == 1 else "s"))
    if args.exit_zero:
        return 0
    return 1 if scan(args.paths).needs_action() else 0
