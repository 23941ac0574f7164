"""Hard-link torch, torchvision and their dependencies into a new stack venv from a sibling.

    <venv>/bin/python scripts/share-torch.py VENVS_DIR REQUIREMENT_FILE...

Run by the new venv's own interpreter, before pip installs the stack's requirements
(scripts/setup-stacks.sh does this). A CUDA build of torch with its nvidia libraries is
about 5.5 GB per venv, and the stacks pin the same torch: five copies did not fit on a CI
machine's disk. This finds a sibling venv under VENVS_DIR that has the torch (and
torchvision) the requirement files pin, and hard-links each distribution of their
dependency closure into this venv, file by file from its RECORD, so pip then finds them
installed and skips them. A hard link costs no space, and pip's uninstall only unlinks.

A distribution is shared only if it is not installed here already, the stack's files do
not name it themselves (their pins stay pip's to resolve), and its wheel fits this
interpreter: the same Python version, or a pure `py3-none` wheel (the nvidia libraries,
which are most of the size, are; torch and triton are built per Python version).
Scripts under bin/ are copied with their `#!` line pointed at this venv's python.
Nothing is shared when no sibling matches, or the venvs are on different file systems;
pip then installs everything as usual. Prints one line saying what it shared.
"""

from __future__ import annotations

import csv
import os
import shutil
import sys
import sysconfig
from email.parser import HeaderParser
from pathlib import Path

from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.utils import canonicalize_name

SHARED_ROOTS = ("torch", "torchvision")


def pinned_versions(requirement_files: list[str]) -> tuple[dict[str, str], set[str]]:
    """The `==` pins of SHARED_ROOTS, and every name the files mention."""
    pins: dict[str, str] = {}
    named: set[str] = set()
    for path in requirement_files:
        for line in Path(path).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if not line or line.startswith("-"):
                continue
            req = Requirement(line)
            name = canonicalize_name(req.name)
            named.add(name)
            specs = list(req.specifier)
            if name in SHARED_ROOTS and len(specs) == 1 and specs[0].operator == "==":
                pins[name] = specs[0].version
    return pins, named


def metadata(info: Path):
    """The headers of a .dist-info folder's METADATA (Name, Version, Requires-Dist, ...)."""
    return HeaderParser().parsestr((info / "METADATA").read_text(errors="replace"), headersonly=True)


def installed(site: Path) -> dict[str, Path]:
    """Canonical distribution name -> its .dist-info folder in `site`."""
    return {canonicalize_name(metadata(info)["Name"]): info
            for info in site.glob("*.dist-info") if (info / "METADATA").is_file()}


def closure(donor: dict[str, Path], roots: list[str]) -> list[str]:
    """The donor's distributions that `roots` need on this interpreter (markers evaluated here)."""
    wanted: dict[str, set[str]] = {}  # name -> extras asked for
    todo = [(root, frozenset()) for root in roots]
    while todo:
        name, extras = todo.pop()
        seen = wanted.get(name)
        if seen is not None and extras <= seen:
            continue
        wanted[name] = (seen or set()) | set(extras)
        info = donor.get(name)
        if info is None:
            continue
        for spec in metadata(info).get_all("Requires-Dist") or []:
            req = Requirement(spec)
            envs = [{"extra": e} for e in sorted(wanted[name])] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((canonicalize_name(req.name), frozenset(req.extras)))
    return [name for name in wanted if name in donor]


def fits_here(info: Path, same_python: bool) -> bool:
    if same_python:
        return True
    tags = [line.split(":", 1)[1].strip() for line in (info / "WHEEL").read_text().splitlines()
            if line.startswith("Tag:")]
    return bool(tags) and all(tag.split("-")[1] == "none" for tag in tags)


def link_distribution(info: Path, donor_site: Path, site: Path, same_python: bool) -> int:
    """Hard-link one distribution's files; returns the bytes it would have cost."""
    size = 0
    with open(info / "RECORD", newline="") as record:
        for row in csv.reader(record):
            if not row or not row[0]:
                continue
            rel = row[0]
            source = os.path.normpath(donor_site / rel)
            if not os.path.isfile(source):
                continue
            if "__pycache__" in rel and not same_python:
                continue
            target = os.path.normpath(site / rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.exists(target):
                continue
            if not source.startswith(str(donor_site) + os.sep):
                copy_script(source, target)
                continue
            os.link(source, target)
            size += os.path.getsize(source)
    return size


def copy_script(source: str, target: str) -> None:
    """A console script outside site-packages: copied, its #! line aimed at this venv."""
    data = Path(source).read_bytes()
    first, sep, rest = data.partition(b"\n")
    if first.startswith(b"#!") and b"python" in first:
        data = b"#!" + sys.executable.encode() + sep + rest
    Path(target).write_bytes(data)
    shutil.copymode(source, target)


def main(venvs_dir: str, requirement_files: list[str]) -> int:
    pins, named = pinned_versions(requirement_files)
    if "torch" not in pins:
        return 0
    site = Path(sysconfig.get_paths()["purelib"])
    here = installed(site)
    this_venv = Path(sys.prefix).resolve()
    py_tag = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for donor_venv in sorted(Path(venvs_dir).iterdir()):
        if donor_venv.resolve() == this_venv:
            continue
        for donor_site in sorted(donor_venv.glob("lib/python3.*/site-packages")):
            donor = installed(donor_site)
            if any(name not in donor or metadata(donor[name])["Version"] != version for name, version in pins.items()):
                continue
            same_python = donor_site.parent.name == py_tag
            shared = [name for name in closure(donor, sorted(pins))
                      if name not in here and (name in pins or name not in named)
                      and fits_here(donor[name], same_python)]
            if not shared:
                return 0
            probe = site / ".share-torch-probe"
            probe.unlink(missing_ok=True)  # left by a run that was killed here
            try:  # another file system, or no hard links: pip installs them instead
                os.link(donor[shared[0]] / "METADATA", probe)
            except OSError as exc:
                print(f"[share-torch] not shared from {donor_venv.name}: {exc}", file=sys.stderr)
                return 0
            probe.unlink()
            size = sum(link_distribution(donor[name], donor_site, site, same_python)
                       for name in shared)
            print(f"[share-torch] hard-linked {len(shared)} distributions ({size / 2**30:.1f} GiB) "
                  f"from {donor_venv.name}: {' '.join(sorted(shared))}", file=sys.stderr)
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
