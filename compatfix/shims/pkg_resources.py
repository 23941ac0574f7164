"""Shim for ``pkg_resources``: provided where setuptools no longer has it (setuptools 82)
or is not installed at all (a Python 3.12 venv has no setuptools). A real pkg_resources
that can be found is always used instead."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import PROVIDE, Shim


def provide_pkg_resources(module) -> None:
    from compatfix import pkg_resources_standin

    names = {name: getattr(pkg_resources_standin, name) for name in pkg_resources_standin.__all__}
    names["ResolutionError"] = pkg_resources_standin.ResolutionError
    restore_names(module, names, "pkg_resources")


SHIMS = (
    Shim(
        "pkg_resources",
        targets=["pkg_resources"],
        kind=PROVIDE,
        apply=provide_pkg_resources,
        broke="setuptools 82 (2025) removed pkg_resources (torch 2.14 needs setuptools >= 77), and a "
        "venv without setuptools has none: `import pkg_resources` fails in version checks and plugin loaders",
        summary="provide get_distribution, require, parse_version, parse_requirements, declare_namespace, "
        "iter_entry_points, load_entry_point, resource_filename/stream/listdir, working_set, packaging, "
        "DistributionNotFound, VersionConflict on importlib.metadata and packaging",
        replacement="importlib.metadata (version, distribution, entry_points), packaging.version.parse and "
        "importlib.resources.files",
        rewrites={
            "pkg_resources": "importlib.metadata, importlib.resources and packaging",
            "pkg_resources.get_distribution": "importlib.metadata.distribution(name) / version(name)",
            "pkg_resources.parse_version": "packaging.version.parse",
            "pkg_resources.iter_entry_points": "importlib.metadata.entry_points(group=...)",
            "pkg_resources.resource_filename": "importlib.resources.files(package) / name",
            "pkg_resources.DistributionNotFound": "importlib.metadata.PackageNotFoundError",
            "pkg_resources.parse_requirements": "packaging.requirements.Requirement(line) for each requirement line",
            "pkg_resources.declare_namespace": "a PEP 420 namespace package (no __init__.py) or pkgutil.extend_path",
            "pkg_resources.load_entry_point": "importlib.metadata.entry_points(group=..., name=...)[0].load()",
            "pkg_resources.packaging": "import packaging.version",
        },
    ),
)
