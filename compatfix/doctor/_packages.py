"""Locating and reading installed packages without importing them."""

from __future__ import annotations

import os
from importlib import machinery
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib import metadata

from compatfix.openmmlab.versions import constants, parse


# --- helpers: locate and read packages without importing them --------------------------


def _package_dir(package: str, path: list[str] | None = None) -> str | None:
    """The directory ``import package`` would load, searching ``path`` (default sys.path).

    ``machinery.PathFinder`` rather than ``importlib.util.find_spec``: find_spec asks every
    finder on ``sys.meta_path``, compatfix's own included, which answers for packages it
    stands in for (apex) although nothing is installed.
    """
    spec = machinery.PathFinder.find_spec(package, path)
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def _source_version(package_dir: str) -> str | None:
    """``__version__`` as written in ``<package>/version.py``, where mmcv keeps it."""
    version = constants(parse(os.path.join(package_dir, "version.py"))).get("__version__")
    return version if isinstance(version, str) else None


def _distribution(name: str, package_dir: str) -> metadata.Distribution | None:
    """The distribution ``name`` installed next to ``package_dir``, not the first on sys.path."""
    # Imported here: importlib.metadata (email, zipfile, ...) would triple this module's
    # import time.
    from importlib import metadata

    for dist in metadata.distributions(name=name, path=[os.path.dirname(package_dir)]):
        return dist
    return None


