"""Import sweep: the measure of breadth (issue 10, item 5).

Imports every submodule of each given package, once with compatfix off (COMPATFIX=0) and
once with it on, each in a child interpreter of the venv under test, and reports the
modules that fail, grouped by cause::

    .venvs/modern/bin/python scripts/import_sweep.py numpy scipy torchvision [--json out.json]
    pip install --no-deps --target /tmp/old timm==0.4.12 kornia==0.5.11
    .venvs/modern/bin/python scripts/import_sweep.py timm kornia --path /tmp/old

The counts in docs/removed-apis.md ("Import sweep", data in compatfix/inventory) come from
the runs above on the installed targets and, for the 2020-22 packages, from::

    pip install --no-deps --target /tmp/old timm==0.4.12 kornia==0.5.11 pretrainedmodels==0.7.4 \
        efficientnet_pytorch==0.7.1 imgaug==0.4.0 albumentations==0.5.2 \
        segmentation_models_pytorch==0.2.1 pycocotools lvis tqdm munch
    .venvs/modern/bin/python scripts/import_sweep.py timm kornia pretrainedmodels efficientnet_pytorch \
        imgaug albumentations segmentation_models_pytorch pycocotools lvis --path /tmp/old

Without package names it sweeps the installed start-up triggers of compatfix. Modules
are found on disk (``pkgutil.iter_modules`` over each package's path, recursively), so a
package whose ``__init__`` fails still has its submodules listed. ``__main__`` modules and
test packages are skipped: importing them runs programs, not library code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import textwrap
from collections import Counter

# The child: imports the modules named on stdin one after the other and prints, per
# module, "" (imported) or the failure's type and message.
CHILD = textwrap.dedent(
    r"""
    import importlib, json, pkgutil, sys, warnings
    warnings.simplefilter("ignore")
    SKIP = ("__main__", "tests", "test", "testing", "conftest", "_tests")

    def submodules(package):
        try:
            spec = importlib.util.find_spec(package)
        except Exception:
            return [package]
        names = [package]
        if spec is None:
            return []
        for location in spec.submodule_search_locations or ():
            for info in pkgutil.iter_modules([location], package + "."):
                if info.name.rsplit(".", 1)[-1] in SKIP:
                    continue
                names.extend(submodules(info.name) if info.ispkg else [info.name])
        return names

    import importlib.util
    results = {}
    for package in sys.argv[1:]:
        for name in submodules(package):
            try:
                importlib.import_module(name)
                results[name] = ""
            except BaseException as error:  # SystemExit and the like count as failures too
                message = str(error).strip().splitlines()[0] if str(error).strip() else ""
                results[name] = "%s: %s" % (type(error).__name__, message)
    print(json.dumps(results))
    """
)


def cause(failure: str) -> str:
    """A failure message reduced to its cause, so that equal causes group together."""
    missing = re.match(r"ModuleNotFoundError: No module named '([^']+)'", failure)
    if missing:
        return "missing module %s" % missing.group(1)
    name = re.match(r"ImportError: cannot import name '([^']+)' from '([^']+)'", failure)
    if name:
        return "missing name %s.%s" % (name.group(2), name.group(1))
    attribute = re.match(r"AttributeError: module '([^']+)' has no attribute '([^']+)'", failure)
    if attribute:
        return "missing attribute %s.%s" % attribute.groups()
    return re.sub(r"0x[0-9a-f]+|'[^']*/[^']*'", "…", failure)[:160]


def sweep(python: str, packages: list[str], compatfix: bool, timeout: float, path: str | None) -> dict[str, str]:
    env = dict(os.environ, COMPATFIX="1" if compatfix else "0")
    env.pop("PYTHONPATH", None)
    if path:
        env["PYTHONPATH"] = path
    completed = subprocess.run(
        [python, "-c", CHILD, *packages], env=env, capture_output=True, text=True, timeout=timeout
    )
    if completed.returncode != 0:
        raise SystemExit("sweep child failed (%s):\n%s" % (completed.returncode, completed.stderr[-2000:]))
    return json.loads(completed.stdout.strip().splitlines()[-1])


def installed_triggers(python: str) -> list[str]:
    code = (
        "import importlib.util; from _compatfix_bootstrap import TRIGGER_PACKAGES as T; "
        "print(' '.join(sorted(p for p in T if importlib.util.find_spec(p) is not None)))"
    )
    env = dict(os.environ, COMPATFIX="0")
    return subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="*", help="top-level packages (default: installed triggers)")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the venv to sweep")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per sweep")
    parser.add_argument("--json", help="write the per-module results here")
    parser.add_argument(
        "--path",
        help="a folder of old packages installed with `pip install --no-deps --target DIR`, put on "
        "the children's PYTHONPATH, so that the venv under test is not changed",
    )
    args = parser.parse_args(argv)
    packages = args.packages or installed_triggers(args.python)

    off = sweep(args.python, packages, compatfix=False, timeout=args.timeout, path=args.path)
    on = sweep(args.python, packages, compatfix=True, timeout=args.timeout, path=args.path)
    failing_off = {name: cause(msg) for name, msg in off.items() if msg}
    failing_on = {name: cause(msg) for name, msg in on.items() if msg}
    print("packages: %s" % " ".join(packages))
    print("modules: %d; failing with compatfix off: %d, on: %d; fixed: %d; broken by compatfix: %d" % (
        len(off), len(failing_off), len(failing_on),
        len(set(failing_off) - set(failing_on)), len(set(failing_on) - set(failing_off)),
    ))
    for label, failing in (("off", failing_off), ("on", failing_on)):
        print("\ncauses with compatfix %s:" % label)
        for reason, count in Counter(failing.values()).most_common():
            print("  %4d  %s" % (count, reason))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"packages": packages, "off": off, "on": on}, handle, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
