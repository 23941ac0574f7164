"""The registry's static index and layout rules: the first import of a target loads only
its own shim modules; every shim is found from the module it fixes; `compatfix list` and
the engine decide alike; outcomes say applied / nothing to do / failed."""

from __future__ import annotations

import json
import os
import sys

import pytest

from support import FIXTURES, TESTS, clean_env, run_python

import compatfix
from compatfix import _shim_index, registry
from compatfix._settings import DEVICES

PLUGIN = os.path.join(FIXTURES, "plugin")


def test_the_index_is_generated_from_the_records():
    assert open(os.path.join(os.path.dirname(compatfix.__file__), "_shim_index.py")).read() == registry.index_source()


def test_every_shim_module_on_disk_is_discovered_and_declares_records():
    shim_files = []
    for package in [registry.BUILTIN_PACKAGE, *registry.DEVICE_PACKAGES.values()]:
        folder = os.path.join(os.path.dirname(compatfix.__file__), *package.split(".")[1:])
        for root, _, files in os.walk(folder):
            shim_files += [os.path.join(root, f) for f in files if f.endswith(".py") and f != "__init__.py"]
    discovered = set(registry.builtin_modules(DEVICES))
    for path in shim_files:
        relative = os.path.relpath(path, os.path.dirname(os.path.dirname(compatfix.__file__)))
        assert relative[:-3].replace(os.sep, ".") in discovered, path
    # a file module that is not a private helper (``_device.py``) declares shims
    leaves = [name for name in discovered if not os.path.isdir(registry._package_folder(name))]
    assert all(registry.shims_of(name) for name in leaves if not name.rpartition(".")[2].startswith("_")
               or name.endswith(("._six", "._ext"))), leaves


def _module_path(shim) -> str:
    path = shim.source.rpartition(":")[0]
    root = os.path.dirname(os.path.dirname(compatfix.__file__))
    dotted = os.path.relpath(path, root)[:-3].replace(os.sep, ".")
    return dotted[: -len(".__init__")] if dotted.endswith(".__init__") else dotted


def test_a_shim_lives_in_the_module_that_mirrors_what_it_fixes_and_is_named_after_it():
    problems = []
    for shim in registry.builtin_shims(DEVICES):
        module = _module_path(shim)
        prefix = registry.DEVICE_PACKAGES.get(shim.device, registry.BUILTIN_PACKAGE) + "."
        mirrored = module[len(prefix):] if module.startswith(prefix) else None
        name = shim.name[len(shim.device) + 1:] if shim.device else shim.name
        watched = tuple(dict.fromkeys(shim.watched_modules() + shim.targets))
        # the file: its dotted path below compatfix.shims (or compatfix.<device>) is a target's
        # path or one of its parent packages, or a submodule of a target whose attribute the
        # shim changes, named so (torch.serialization.* patches torch.load on torch)
        if mirrored is None or not any(
            t == mirrored or t.startswith(mirrored + ".")
            or (mirrored.startswith(t + ".") and name.startswith(mirrored + "."))
            for t in watched
        ):
            problems.append("%s is defined in %s, which does not mirror %s" % (shim.name, module, watched))
        # the name: the fixed module's path (or an attribute of it) plus a slug
        stem = name.rpartition(".")[0]
        if not any(name == t or name.startswith(t + ".") or t.startswith(stem + ".") or t == stem for t in watched):
            problems.append("%s is not named after %s" % (shim.name, watched))
    assert not problems, "\n".join(problems)


def test_every_shim_name_has_a_test():
    tests_text = ""
    for root, _, files in os.walk(TESTS):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(root, name), encoding="utf-8") as handle:
                    tests_text += handle.read()
    untested = sorted(name for name in _shim_index.NAMES if name not in tests_text)
    assert not untested, "shims no test names: %s" % untested


def test_import_numpy_loads_no_other_library_s_shims():
    # numpy's shims, like collections' and inspect's, only restore names: they load at the
    # first use of one of those names, and then only numpy's own.
    result = run_python(code="""
        import sys, json
        import numpy
        loaded = lambda: sorted(m for m in sys.modules if m.startswith("compatfix"))
        print(json.dumps(loaded()))
        numpy.float
        print(json.dumps(loaded()))
        """)
    at_import, at_first_use = (json.loads(line) for line in result.stdout.splitlines())
    # (the registry too, when the engine's cache of the plugin scan does not match this path,
    # and _files, which writes the cache again: another test's install or scan can change it)
    assert set(at_import) - {"compatfix.registry", "compatfix._files"} == {
        "compatfix", "compatfix._engine", "compatfix._finder", "compatfix._first_use", "compatfix._plugins",
        "compatfix._settings", "compatfix._shim_index"}
    shim_modules = [name for name in at_first_use if name.startswith("compatfix.shims.")]
    assert shim_modules == ["compatfix.shims.numpy"], at_first_use


@pytest.mark.parametrize("target", ["numpy", "torch"])
def test_a_target_s_shims_import_none_of_the_target_s_lazy_submodules(target):
    # Checking a name by behaviour must not pull in what the target loads on first use
    # (numpy.char, numpy.rec; torch's tensor printing): the import would pay for it.
    code = "import sys, json, %s; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == %r)))"
    on, off = (json.loads(run_python(code=code % (target, target), compatfix=flag).stdout) for flag in (True, False))
    assert sorted(set(on) - set(off)) == []


def test_list_and_the_engine_decide_alike_and_list_shows_where_each_is_defined(tmp_path):
    report = tmp_path / "report.json"
    code = """
        import numpy, torch, torch.distributed, argparse, PIL.Image, yaml
        numpy.float  # numpy's shims are decided at the first use of a name they restore
        """
    env = clean_env(COMPATFIX_REPORT=str(report), COMPATFIX_DISABLE="numpy.numpy2_aliases")
    assert run_python(code=code, env=env).returncode == 0
    record = json.loads(report.read_text())
    listed = run_python("-m", "compatfix.cli", "list", "--json", env=env)
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    ran = {entry["shim"] for process in record["processes"] for entry in process["applied"] + process["nothing_to_do"]}
    skipped = {entry["shim"] for process in record["processes"] for entry in process["skipped"]}
    assert ran and skipped
    for name in ran:
        assert rows[name]["applies"], name
    for name in skipped - ran:
        assert not rows[name]["applies"], name
    assert "numpy.numpy2_aliases" in skipped
    for row in rows.values():
        path, _, line = row["source"].rpartition(":")
        assert path.startswith("compatfix/") and line.isdigit(), row["source"]
        with open(os.path.join(os.path.dirname(os.path.dirname(compatfix.__file__)), path)) as handle:
            assert "Shim(" in handle.read().splitlines()[int(line) - 1], row


def test_report_lists_what_an_applied_shim_changed(tmp_path):
    report = tmp_path / "report.json"
    result = run_python(code="import numpy; numpy.float", env=clean_env(COMPATFIX_REPORT=str(report)))
    assert result.returncode == 0, result.stderr
    processes = json.loads(report.read_text())["processes"]
    applied = {e["shim"]: e for p in processes for e in p["applied"]}
    assert "restored numpy.float" in applied["numpy.builtin_aliases"]["changed"]


def test_a_shim_whose_target_already_works_reports_nothing_to_do(tmp_path):
    report = tmp_path / "report.json"
    env = clean_env(COMPATFIX_REPORT=str(report), PYTHONPATH=PLUGIN)
    result = run_python(code="""
        import numpy, fakelib
        import compatfix.patching as patching, compatfix._engine as engine
        from compatfix.registry import Shim
        shim = Shim("test.nothing", targets=["fakelib"], apply=lambda m: patching.restore_names(m, {"APPLY_COUNT": 0}, "test.nothing"),
                    broke="b", summary="s", origin="test")
        engine.active()._apply(shim, fakelib)
        """, env=env)
    assert result.returncode == 0, result.stderr
    processes = json.loads(report.read_text())["processes"]
    nothing = {e["shim"]: e for p in processes for e in p["nothing_to_do"]}
    assert "already has" in nothing["test.nothing"]["reason"]


def test_a_plugin_importing_a_target_at_its_top_gets_the_program_s_module(tmp_path):
    plugin = tmp_path / "reentrant"
    (plugin / "reentrant_plugin-1.0.dist-info").mkdir(parents=True)
    (plugin / "reentrant_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[compatfix.shims]\nreentrant = reentrant_plugin:SHIMS\n")
    (plugin / "reentrant_plugin.py").write_text(
        "import numpy\n"
        "from compatfix.registry import Shim\n"
        "from compatfix import patching\n"
        "SEEN = numpy\n"
        "def mark(module):\n"
        "    patching.restore_names(module, {'REENTRANT_MARK': id(module)}, 'test.reentrant')\n"
        "SHIMS = [Shim('test.reentrant', targets=['numpy'], apply=mark, broke='b', summary='s')]\n")
    result = run_python(code="""
        import sys, numpy, reentrant_plugin
        print(reentrant_plugin.SEEN is numpy, sys.modules["numpy"] is numpy,
              getattr(numpy, "REENTRANT_MARK", None) == id(numpy), numpy.float is float)
        """, env=clean_env(PYTHONPATH=str(plugin)))
    assert result.stdout.split() == ["True"] * 4, result.stderr


def test_nccl_fallback_yields_to_cpu_mode_in_its_record():
    from compatfix import _decision
    from compatfix._settings import Settings

    shims = {shim.name: shim for shim in registry.builtin_shims(DEVICES)}
    fallback = shims["torch.distributed.nccl_fallback"]
    assert fallback.yields_to and all(name in shims for name in fallback.yields_to)
    cpu = Settings.from_environ({"COMPATFIX_DEVICE": "cpu"})
    applies, why = _decision.decide(fallback, cpu, shims.get)
    assert not applies and fallback.yields_to[0] in why
    assert _decision.decide(fallback, Settings.from_environ({}), shims.get)[0]


# Suites that follow no single module: whole programs end to end, and the attack battery of
# issue 13 (checkpoint loading, the report file, start-up) that reads best in one place.
CROSS_CUTTING_TEST_FOLDERS = {"e2e", "security"}


def test_test_folders_mirror_the_code():
    """tests/<path>/ holds the tests of compatfix/<path> (a package, or a module file)."""
    package_root = os.path.dirname(compatfix.__file__)
    strays = []
    for root, folders, files in os.walk(TESTS):
        folders[:] = [f for f in folders if f not in ("fixtures", "__pycache__")]
        relative = os.path.relpath(root, TESTS)
        if relative == "." or relative.split(os.sep)[0] in CROSS_CUTTING_TEST_FOLDERS:
            continue
        code = os.path.join(package_root, relative)
        if not (os.path.isdir(code) or os.path.isfile(code + ".py")):
            strays.append(relative)
    assert not strays, "test folders that mirror no compatfix module: %s" % strays
