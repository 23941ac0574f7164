"""Activation is free: what start-up imports, and how each way in behaves."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support import clean_env, run_python

HEAVY = ["wrapt", "importlib.metadata", "packaging", "numpy", "torch", "typing", "threading",
         "compatfix._engine", "compatfix.registry", "logging"]
PROBE = "import sys, json; print(json.dumps({'heavy': [m for m in %r if m in sys.modules], " \
        "'active': any(getattr(type(f), 'is_compatfix_finder', False) for f in sys.meta_path)}))" % (HEAVY,)


def probe(*flags, **env):
    # json is imported by the probe itself after start-up, so it is not in HEAVY.
    result = run_python(*flags, code=PROBE, env=clean_env(**env))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_pth_activates_and_imports_nothing_heavy():
    assert probe() == {"heavy": [], "active": True}


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_compatfix_0_turns_activation_off(value):
    assert probe(COMPATFIX=value) == {"heavy": [], "active": False}


def test_isolated_mode_and_no_site_mean_no_activation():
    assert probe("-I")["active"] is False
    assert probe("-S")["active"] is False


def test_trigger_packages_match_the_registry():
    from _compatfix_bootstrap import CPU_MODE_TRIGGER_PACKAGES, TRIGGER_PACKAGES
    from compatfix._settings import DEVICES
    from compatfix.registry import builtin_shims

    def declared(shims) -> set[str]:
        # Standard-library targets are not triggers: nearly every process imports them, and the
        # engine would load everywhere. Their shims apply when a third-party target loads it.
        return {name.partition(".")[0] for shim in shims for name in shim.watched_modules()} - set(
            sys.stdlib_module_names)

    shims = builtin_shims(DEVICES)
    assert TRIGGER_PACKAGES | CPU_MODE_TRIGGER_PACKAGES == declared(shims)
    # CPU mode's own triggers are the packages that only its shims target.
    assert CPU_MODE_TRIGGER_PACKAGES == declared(shim for shim in shims if shim.device == "cpu") - declared(
        shim for shim in shims if shim.device is None)


def test_the_installed_distribution_ships_pth_and_start_files():
    from importlib import metadata

    files = {str(f) for f in metadata.distribution("compatfix").files}
    assert {"compatfix.pth", "compatfix.start", "_compatfix_bootstrap.py"} <= files
    site_packages = os.path.dirname(os.path.dirname(__import__("compatfix").__file__))
    with open(os.path.join(site_packages, "compatfix.pth")) as handle:
        lines = [line for line in handle.read().splitlines() if line.strip()]
    # One line that imports the bootstrap and calls it, guarded (tests/security/test_security_startup.py).
    assert len(lines) == 1 and lines[0].startswith("import sys; ")
    assert "import _compatfix_bootstrap\\n _compatfix_bootstrap.bootstrap()" in lines[0]
    with open(os.path.join(site_packages, "compatfix.start")) as handle:
        entry = handle.read().strip()
    assert entry == "_compatfix_bootstrap:bootstrap"


def test_the_start_file_names_a_working_zero_argument_bootstrap():
    # What Python >= 3.15 does with a .start file (PEP 829), done by hand under -S so
    # that the .pth does not run first.
    site_packages = os.path.dirname(os.path.dirname(__import__("compatfix").__file__))
    with open(os.path.join(site_packages, "compatfix.start")) as handle:
        module_name, _, function = handle.read().strip().partition(":")
    result = run_python(
        "-S",
        code="""
        import sys
        sys.path.append(%r)
        import importlib
        getattr(importlib.import_module(%r), %r)()
        import numpy as np
        print(np.float is float)
        """ % (site_packages, module_name, function),
    )
    assert result.stdout.split() == ["True"], result.stderr


def test_sitecustomize_folder_activates_and_chain_loads_the_next_one(tmp_path):
    # The base interpreter of this venv does not have compatfix installed (no .pth).
    base = getattr(sys, "_base_executable", sys.executable)
    check = run_python(code="import importlib.util as u; print(u.find_spec('compatfix') is None)",
                       python=base, cwd=str(tmp_path))
    assert check.stdout.split() == ["True"], "the base interpreter must lack compatfix"
    user_site = tmp_path / "user"
    user_site.mkdir()
    (user_site / "sitecustomize.py").write_text("import builtins; builtins.USER_SITECUSTOMIZE_RAN = True\n")
    folder = subprocess.run(
        [sys.executable, "-m", "compatfix.cli", "sitecustomize-path"], capture_output=True, text=True
    ).stdout.strip()
    # A PYTHONPATH-only deployment: compatfix sits in a folder on PYTHONPATH.
    package_root = os.path.dirname(os.path.dirname(folder))
    code = """
        import builtins, sys, _compatfix_bootstrap as b
        print(b.activated_by, getattr(builtins, "USER_SITECUSTOMIZE_RAN", False))
        """
    env = clean_env(PYTHONPATH=os.pathsep.join([folder, package_root, str(user_site)]))
    result = run_python(code=code, env=env, python=base, cwd=str(tmp_path))
    assert result.stdout.split() == ["sitecustomize", "True"], result.stderr
    # Only the folder itself on the path: compatfix finds its own package root.
    env = clean_env(PYTHONPATH=folder)
    result = run_python(code=code, env=env, python=base, cwd=str(tmp_path))
    assert result.stdout.split() == ["sitecustomize", "False"], result.stderr
    off = run_python(code="import sys; print('_compatfix_bootstrap' in sys.modules)",
                     env=clean_env(False, PYTHONPATH=folder), python=base, cwd=str(tmp_path))
    assert off.stdout.split() == ["False"], off.stderr
