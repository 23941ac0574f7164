"""Check the transformers shims' version gates against the 4.x releases themselves.

    .venvs/corpus-tf4/bin/python scripts/transformers-gates.py [--versions 4.22.2 4.25.1 ...]

Each release's wheel is downloaded (pip download --no-deps, into build/transformers-gates/) and
unpacked; a child process of this interpreter (a stack with today's torch and transformers'
dependencies: requirements/corpus-tf4.txt) puts it first on sys.path, skips its dependency-version
check, and looks up every name each transformers shim restores or provides, once with compatfix
off and once on. For each shim it prints the first release that lacks one of its names with
compatfix off (the gate should not be above it) and, for each release its gate admits, the names
still missing with compatfix on (there should be none). Names of models newer than a release
(an archive map of ALIGN before 4.24) are missing there by nature; so is a module that the
release's code cannot import on today's packages (testing_utils of 4.3x with today's pytest).
Not a test: it needs the package registry and takes a few minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "transformers-gates"
# a release at each gate and one before it
VERSIONS = ("4.21.3", "4.22.2", "4.25.1", "4.27.4", "4.31.0", "4.35.2", "4.36.2", "4.39.0", "4.40.2", "4.50.0",
            "4.51.0", "4.52.1", "4.53.0", "4.56.0", "4.57.6")

SHIM_NAMES = r'''
import json
from compatfix import registry
rows = []
for shim in registry.builtin_shims():
    if shim.requires.get("transformers") is None:
        continue
    names = []
    for target in shim.targets:
        if shim.kind == "provide":
            names.append(target)
        names += [target + "." + name for name in sorted(shim.restores)]
    rows.append({"shim": shim.name, "requires": shim.requires["transformers"], "names": names})
print(json.dumps(rows))
'''

PROBE = r'''
import importlib, json, sys, types, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, sys.argv[1])
stub = types.ModuleType("transformers.dependency_versions_check")
stub.dep_version_check = lambda *args, **kwargs: None  # the release's pins are not today's packages
sys.modules["transformers.dependency_versions_check"] = stub
rows = json.loads(sys.stdin.read())
def present(name):
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except BaseException:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
            return True
        except BaseException:
            return False
    return False
import transformers
assert transformers.__file__.startswith(sys.argv[1]), transformers.__file__
print(json.dumps({"version": transformers.__version__,
                  "present": {row["shim"]: [n for n in row["names"] if present(n)] for row in rows}}))
'''


def unpacked(version: str) -> Path:
    folder = WORK / version
    if not (folder / "transformers").is_dir():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "transformers==" + version,
                        "-d", str(WORK)], check=True)
        with zipfile.ZipFile(WORK / ("transformers-%s-py3-none-any.whl" % version)) as wheel:
            wheel.extractall(folder)
    return folder


def probe(folder: Path, rows: list[dict], compatfix: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPATFIX")}
    if not compatfix:
        env["COMPATFIX"] = "0"
    out = subprocess.run([sys.executable, "-c", PROBE, str(folder)], input=json.dumps(rows), env=env,
                         capture_output=True, text=True, cwd=WORK, timeout=1800)
    if out.returncode:
        raise SystemExit("%s: the probe failed:\n%s" % (folder.name, out.stderr[-2000:]))
    return json.loads(out.stdout)["present"]


def main() -> None:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", nargs="*", default=VERSIONS)
    args = parser.parse_args()
    rows = json.loads(subprocess.run([sys.executable, "-c", SHIM_NAMES], capture_output=True, text=True,
                                     check=True, env=dict(os.environ, COMPATFIX="0")).stdout)
    versions = sorted(args.versions, key=Version)
    off, on = {}, {}
    for version in versions:
        folder = unpacked(version)
        off[version], on[version] = probe(folder, rows, False), probe(folder, rows, True)
        print("probed transformers %s" % version, file=sys.stderr)
    problems = 0
    for row in rows:
        shim, gate = row["shim"], SpecifierSet(row["requires"])
        lacking = [v for v in versions if set(row["names"]) - set(off[v][shim])]
        first = lacking[0] if lacking else None
        print("%-70s %-14s first release lacking a name: %s" % (shim, row["requires"], first or "-"))
        for version in versions:
            if Version(version) in gate:
                missing = sorted(set(row["names"]) - set(on[version][shim]))
                if missing:
                    problems += 1
                    print("    %s: still missing with compatfix on: %s" % (version, ", ".join(missing[:5])))
    print("%d release/shim pairs with names missing under compatfix" % problems)


if __name__ == "__main__":
    main()
