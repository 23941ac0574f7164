"""The plugin scan and its cache: which installed distributions declare shims in the
``compatfix.shims`` entry-point group.

A bottom floor of the core: the engine asks it at a target's first import, the registry
when it loads plugin shims (``registry.plugin_shims``), and ``compatfix list`` for a fresh
scan. It imports no other compatfix module at its top (``_files`` only to write the cache).
"""

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Iterator

# Annotations are quoted instead of ``from __future__ import annotations``: this module
# loads with a target's first import (numpy never loads __future__ itself).

ENTRY_POINT_GROUP = "compatfix.shims"  # where installed packages declare plugin shims


def plugin_entry_points(use_cache: bool = True) -> "list[tuple[str, str]]":
    """The ``compatfix.shims`` entry points of the distributions on ``sys.path``, through
    a cache of the last scan.

    A scan (``declared_entry_points``) lists every folder on the path and looks into
    every distribution: in a venv of 80 distributions, about 1.5M instructions and 2 ms of
    system calls, in every process that imports a target. So its result is kept in
    compatfix's own ``__pycache__`` folder with the path's folders and their modification
    times, and used while none of them changed: installing, upgrading or removing a
    distribution creates or removes its metadata folder, which changes the folder it is
    in. An ``entry_points.txt`` edited in place by hand is not seen until then:
    ``compatfix list`` scans without the cache (``use_cache=False``) and refreshes it. The
    cache holds only what
    the ``entry_points.txt`` files say, where only those who may change compatfix's own
    code can write; a folder changed in the last two seconds is not cached, as a file
    system with coarse timestamps could change it again within the same time stamp.
    """
    key, settled = _path_key()
    cache = _entry_point_cache()
    try:
        text = _read_bytes(cache).decode("utf-8") if use_cache else ""
    except (OSError, UnicodeDecodeError):
        text = ""
    cached_key, separator, body = text.partition("\n\n")
    if separator and cached_key == key:
        return [(name, value) for name, _, value in (line.partition("\t") for line in body.splitlines())]
    found = list(declared_entry_points(ENTRY_POINT_GROUP))
    if settled:
        _write_entry_point_cache(cache, key, found)
    return found


_CACHE_FORMAT = "compatfix entry points 1"


def _entry_point_cache() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__",
                        "entry-points.%s.txt" % sys.implementation.cache_tag)


def _path_key() -> "tuple[str, bool]":
    """The folders on ``sys.path`` (absolute) with their modification times, one per line,
    and whether none of them changed in the last two seconds."""
    import time

    lines = [_CACHE_FORMAT, ENTRY_POINT_GROUP]
    recent = time.time_ns() - 2_000_000_000
    settled = True
    for entry in sys.path:
        folder = entry if os.path.isabs(entry) else os.path.abspath(entry or os.curdir)
        try:
            modified = os.stat(folder).st_mtime_ns
        except OSError:
            modified = -1
        settled = settled and modified < recent
        lines.append("%d %s" % (modified, folder))
    return "\n".join(lines), settled


def _write_entry_point_cache(cache: str, key: str, found: "list[tuple[str, str]]") -> None:
    text = key + "\n\n" + "".join("%s\t%s\n" % item for item in found)
    from compatfix import _files

    try:
        # Whole or not at all, for processes reading it now; never through a planted link.
        _files.replace_with(cache, text.encode("utf-8"), mode=0o644)
    except OSError:  # a read-only install (no __pycache__, or not ours to write): scan each time
        pass


def _read_bytes(file: str) -> bytes:
    """The file's bytes, without the text and buffer layers of ``open``."""
    descriptor = os.open(file, os.O_RDONLY)
    try:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(descriptor)


def declared_entry_points(group: str, path: "Iterable[str] | None" = None) -> "Iterator[tuple[str, str]]":
    """``(name, "module:attr")`` for each entry point of ``group`` declared by the
    distributions on ``path`` (default ``sys.path``), the first of each name winning, as
    with ``importlib.metadata``.

    The ``entry_points.txt`` files are read directly: ``importlib.metadata`` would add
    ~40 ms and ~80 modules to the first target import, where the engine loads and asks
    for them (``plugin_entry_points``, which caches the result). It does as little
    as it can: a folder without distributions (the standard library's) is passed over
    after one search of its listing, and a file is decoded only when it names the group.
    """
    seen: set[str] = set()
    header = ("[%s]" % group).encode()
    for entry in sys.path if path is None else path:
        folder = entry or os.curdir
        try:
            names = os.listdir(folder)
        except OSError:  # not a folder (a zip, a missing entry)
            continue
        listing = "/".join(names)
        if ".dist-info" not in listing and ".egg-info" not in listing:
            continue
        names.sort()
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            # the normalised project name (PEP 503), without a regular expression: this
            # runs on the first target import, before anything has compiled one
            distribution = name.rpartition(".")[0].partition("-")[0].lower().replace("_", "-").replace(".", "-")
            while "--" in distribution:
                distribution = distribution.replace("--", "-")
            if distribution in seen:
                continue
            seen.add(distribution)
            # Most distributions declare no entry points: os.access answers without the
            # OSError a failed open would raise, once per distribution on the path.
            file = folder + os.sep + name + os.sep + "entry_points.txt"
            if not os.access(file, os.R_OK):
                continue
            try:
                with open(file, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            if header in data:
                yield from _section_items(data.decode("utf-8", "replace"), group)


def _section_items(text: str, section: str) -> "Iterator[tuple[str, str]]":
    inside = False
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            inside = line == "[%s]" % section
            continue
        if inside and "=" in line:
            name, _, value = line.partition("=")
            yield name.strip(), value.split("[")[0].strip()  # drop any [extras]
