"""What 2020-22 code used of ``pkg_resources`` (setuptools 82 deleted it; a venv without
setuptools never had it), rebuilt on ``importlib.metadata`` and ``packaging``:
version look-ups and checks, requirements files (YOLO's ``check_requirements``), entry
points, package resources, namespace packages (pytorch-lightning 1.0's ``__init__``)
and ``pkg_resources.packaging`` (OpenAI CLIP's version test)."""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import os
import re
import sys
from typing import IO, Any, Iterable, Iterator

import packaging
import packaging.version
from packaging.requirements import Requirement as _PackagingRequirement
from packaging.utils import canonicalize_name
from packaging.version import parse as parse_version

__all__ = [
    "DistributionNotFound", "VersionConflict", "Requirement", "Distribution", "EntryPoint",
    "WorkingSet", "working_set", "parse_version", "get_distribution", "require",
    "iter_entry_points", "resource_filename", "resource_string", "resource_exists",
    "resource_stream", "resource_listdir", "resource_isdir", "parse_requirements", "yield_lines",
    "declare_namespace", "get_entry_map", "get_entry_info", "load_entry_point", "safe_name", "packaging",
]


class ResolutionError(Exception):
    """Base of the errors ``require`` and ``get_distribution`` raise."""


class DistributionNotFound(ResolutionError):
    """No installed distribution satisfies the requirement."""


class VersionConflict(ResolutionError):
    """The installed distribution's version does not satisfy the requirement."""


class Requirement(_PackagingRequirement):
    """``pkg_resources.Requirement``: a PEP 508 requirement with the old attribute names."""

    @classmethod
    def parse(cls, text: str) -> "Requirement":
        return cls(text)

    @property
    def project_name(self) -> str:
        return self.name

    @property
    def key(self) -> str:
        return self.name.lower()

    @property
    def specs(self) -> list[tuple[str, str]]:
        """The version clauses as ``(operator, version)`` pairs."""
        return [(clause.operator, clause.version) for clause in self.specifier]

    def __contains__(self, item: Any) -> bool:
        version = item.version if isinstance(item, Distribution) else item
        return self.specifier.contains(str(version), prereleases=True)


def yield_lines(strs: str | Iterable[Any]) -> Iterator[str]:
    """The non-blank lines of ``strs`` (a string, or a nested iterable of strings, such as
    an open file) that are not ``#`` comments, stripped."""
    if isinstance(strs, str):
        for line in strs.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                yield line
    else:
        for item in strs:
            yield from yield_lines(item)


def parse_requirements(strs: str | Iterable[Any]) -> Iterator[Requirement]:
    """A ``Requirement`` for each requirement line of ``strs`` (``yield_lines``' input):
    a comment after `` #`` is dropped (a ``#`` without the space may be part of a URL), and
    a line ending in a backslash continues on the next. Raises for a line that is not a
    PEP 508 requirement (pip options such as ``-r`` included), as pkg_resources did."""
    lines = yield_lines(strs)
    for line in lines:
        if " #" in line:
            line = line[:line.find(" #")]
        if line.endswith("\\"):
            line = line[:-2].strip()
            try:
                line += next(lines)
            except StopIteration:
                return
        yield Requirement(line)


def safe_name(name: str) -> str:
    """A distribution name with each run of characters other than letters, digits and
    ``.`` replaced by ``-``."""
    return re.sub("[^A-Za-z0-9.]+", "-", name)


class Distribution:
    """An installed distribution, with the attributes old code read."""

    def __init__(self, found: metadata.Distribution) -> None:
        self._found = found
        self.project_name: str = found.metadata["Name"]
        self.key: str = self.project_name.lower()
        self.version: str = found.version
        self.location: str = str(found.locate_file(""))

    @property
    def parsed_version(self):
        return parse_version(self.version)

    def get_entry_map(self, group: str | None = None) -> dict:
        """This distribution's entry points: ``{group: {name: EntryPoint}}``, or one group's."""
        entry_map: dict[str, dict[str, EntryPoint]] = {}
        for found in self._found.entry_points:
            entry_map.setdefault(found.group, {})[found.name] = EntryPoint(found, self)
        return entry_map if group is None else entry_map.get(group, {})

    def get_entry_info(self, group: str, name: str) -> EntryPoint | None:
        return self.get_entry_map(group).get(name)

    def load_entry_point(self, group: str, name: str) -> Any:
        entry_point = self.get_entry_info(group, name)
        if entry_point is None:
            raise ImportError("Entry point %r not found" % ((group, name),))
        return entry_point.load()

    def requires(self, extras: Iterable[str] = ()) -> list[Requirement]:
        """The requirements of this distribution whose markers hold (with ``extras``)."""
        result = []
        for text in self._found.requires or ():
            requirement = Requirement(text)
            if requirement.marker is None or any(
                requirement.marker.evaluate({"extra": extra}) for extra in (*extras, "")
            ):
                result.append(requirement)
        return result

    def __repr__(self) -> str:
        return "%s %s" % (self.project_name, self.version)


class EntryPoint:
    """An entry point with the old attribute names (``module_name``, ``attrs``)."""

    def __init__(self, found: metadata.EntryPoint, dist: Distribution | None) -> None:
        self._found = found
        self.name: str = found.name
        self.module_name: str = found.module
        self.attrs: tuple[str, ...] = tuple(found.attr.split(".")) if found.attr else ()
        self.dist = dist

    def load(self, require: bool = True, *args: Any, **kwargs: Any) -> Any:
        return self._found.load()

    def resolve(self) -> Any:
        return self._found.load()

    def __repr__(self) -> str:
        return "%s = %s" % (self.name, self._found.value)


def _find(name: str) -> Distribution | None:
    try:
        return Distribution(metadata.distribution(name))
    except metadata.PackageNotFoundError:
        return None


def _as_requirement(requirement: str | Requirement) -> Requirement:
    return requirement if isinstance(requirement, Requirement) else Requirement(str(requirement))


def get_distribution(dist: str | Requirement | Distribution) -> Distribution:
    """The installed distribution named by ``dist``; raises DistributionNotFound, or
    VersionConflict when a requirement's versions exclude it."""
    if isinstance(dist, Distribution):
        return dist
    requirement = _as_requirement(dist)
    found = _find(requirement.name)
    if found is None:
        raise DistributionNotFound(requirement)
    if found.version not in requirement:
        raise VersionConflict(found, requirement)
    return found


def require(*requirements: str | Iterable[str]) -> list[Distribution]:
    """The distributions ``requirements`` need, their dependencies included; raises like
    ``get_distribution`` when one is missing or of the wrong version."""
    pending: list[Requirement] = []
    for item in requirements:
        texts = [item] if isinstance(item, (str, Requirement)) else list(item)
        pending.extend(_as_requirement(text) for text in texts)
    resolved: dict[str, Distribution] = {}
    while pending:
        requirement = pending.pop(0)
        key = canonicalize_name(requirement.name)
        if key in resolved:
            if resolved[key].version not in requirement:
                raise VersionConflict(resolved[key], requirement)
            continue
        found = get_distribution(requirement)
        resolved[key] = found
        pending.extend(found.requires(requirement.extras))
    return list(resolved.values())


class WorkingSet:
    """The installed distributions, as ``pkg_resources.working_set`` listed them."""

    def __iter__(self) -> Iterator[Distribution]:
        seen = set()
        for found in metadata.distributions():
            name = found.metadata["Name"]
            if name and canonicalize_name(name) not in seen:
                seen.add(canonicalize_name(name))
                yield Distribution(found)

    @property
    def by_key(self) -> dict[str, Distribution]:
        return {dist.key: dist for dist in self}

    def find(self, requirement: str | Requirement) -> Distribution | None:
        requirement = _as_requirement(requirement)
        found = _find(requirement.name)
        if found is not None and found.version not in requirement:
            raise VersionConflict(found, requirement)
        return found

    def require(self, *requirements: str | Iterable[str]) -> list[Distribution]:
        return require(*requirements)

    def iter_entry_points(self, group: str, name: str | None = None) -> Iterator[EntryPoint]:
        return iter_entry_points(group, name)


working_set = WorkingSet()


def iter_entry_points(group: str, name: str | None = None) -> Iterator[EntryPoint]:
    """The entry points of ``group`` (only those called ``name``, if given)."""
    for found in metadata.entry_points(group=group):
        if name is None or found.name == name:
            dist = getattr(found, "dist", None)
            yield EntryPoint(found, Distribution(dist) if dist is not None else None)


def get_entry_map(dist: Any, group: str | None = None) -> dict:
    """The entry points of the distribution ``dist`` names (``get_distribution``'s argument)."""
    return get_distribution(dist).get_entry_map(group)


def get_entry_info(dist: Any, group: str, name: str) -> EntryPoint | None:
    return get_distribution(dist).get_entry_info(group, name)


def load_entry_point(dist: Any, group: str, name: str) -> Any:
    """What the entry point ``name`` of ``group`` in ``dist`` refers to (the call in
    console scripts that old setuptools generated); ImportError when there is none."""
    return get_distribution(dist).load_entry_point(group, name)


# namespace package -> the namespace packages declared inside it ("None": top level)
_namespace_packages: dict[str | None, list[str]] = {}


def declare_namespace(packageName: str) -> None:  # noqa: N803 - pkg_resources' own name
    """Make the package ``packageName`` span every folder of that name on its parent's
    path (``sys.path`` for a top-level one) that holds an ``__init__.py``: each is added to
    the package's ``__path__``, in path order, so its submodules import from any of them.
    The parent package is declared first, as pkg_resources did. Packages called this
    from their ``__init__`` (``__import__('pkg_resources').declare_namespace(__name__)``)."""
    if packageName in _namespace_packages:
        return
    parent, _, last = packageName.rpartition(".")
    search: Iterable[str] = sys.path
    if parent:
        declare_namespace(parent)
        importlib.import_module(parent)
        try:
            search = sys.modules[parent].__path__
        except AttributeError:
            raise TypeError("Not a package:", parent) from None
    _namespace_packages.setdefault(parent or None, []).append(packageName)
    _namespace_packages.setdefault(packageName, [])
    module = sys.modules.get(packageName) or importlib.import_module(packageName)
    package_path = getattr(module, "__path__", None)
    if package_path is None:
        raise TypeError("Not a package:", packageName)
    for entry in list(search):
        folder = os.path.join(entry or os.curdir, last)
        if os.path.isfile(os.path.join(folder, "__init__.py")) and not any(
            os.path.realpath(folder) == os.path.realpath(known) for known in package_path
        ):
            package_path.append(folder)


def _package_directory(package_or_requirement: Any) -> str:
    if isinstance(package_or_requirement, Requirement):
        return get_distribution(package_or_requirement).location
    module = importlib.import_module(package_or_requirement)
    return os.path.dirname(module.__file__)


def resource_filename(package_or_requirement: Any, resource_name: str) -> str:
    """The file-system path of ``resource_name`` (a '/'-separated path) in a package."""
    return os.path.join(_package_directory(package_or_requirement), *resource_name.split("/"))


def resource_exists(package_or_requirement: Any, resource_name: str) -> bool:
    return os.path.exists(resource_filename(package_or_requirement, resource_name))


def resource_string(package_or_requirement: Any, resource_name: str) -> bytes:
    with open(resource_filename(package_or_requirement, resource_name), "rb") as handle:
        return handle.read()


def resource_stream(package_or_requirement: Any, resource_name: str) -> IO[bytes]:
    """The resource opened for reading in binary mode."""
    return open(resource_filename(package_or_requirement, resource_name), "rb")


def resource_isdir(package_or_requirement: Any, resource_name: str) -> bool:
    return os.path.isdir(resource_filename(package_or_requirement, resource_name))


def resource_listdir(package_or_requirement: Any, resource_name: str) -> list[str]:
    """The names in the resource folder ``resource_name`` ('' for the package's own)."""
    return os.listdir(resource_filename(package_or_requirement, resource_name))
