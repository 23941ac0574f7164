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
        self._known: dict[int, tuple[str, str, str]] = {}

    def of(self, source: Source) -> tuple[str, str, str]:
        key = id(source.shim if source.shim is not None else source.removal)
        if key not in self._known:
            if source.shim is not None:
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
    result = scan(args.paths)
    sys.stdout.write(render(result, args))
    if args.exit_zero:
        return 0
    return 1 if result.needs_action() else 0
