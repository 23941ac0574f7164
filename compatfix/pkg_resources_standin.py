"""What 2020-22 code used of ``pkg_resources`` (setuptools 82 deleted it; a venv without
setuptools never had it), rebuilt on ``importlib.metadata`` and ``packaging``:
version look-ups and checks, entry points and package resource paths."""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import os
from typing import Any, Iterable, Iterator

from packaging.requirements import Requirement as _PackagingRequirement
from packaging.utils import canonicalize_name
from packaging.version import parse as parse_version

__all__ = [
    "DistributionNotFound", "VersionConflict", "Requirement", "Distribution", "EntryPoint",
    "WorkingSet", "working_set", "parse_version", "get_distribution", "require",
    "iter_entry_points", "resource_filename", "resource_string", "resource_exists",
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

    def __contains__(self, item: Any) -> bool:
        version = item.version if isinstance(item, Distribution) else item
        return self.specifier.contains(str(version), prereleases=True)


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
