"""The hook machinery: the three hook kinds, the failure policy, version gates,
default-off shims, thread safety and plugins, through a test plugin declared with the
``compatfix.shims`` entry point (tests/fixtures/plugin) so that the real start-up path
(compatfix.pth -> finder -> engine) is what runs.

``fakelib`` is a stand-in target: the machinery is generic, and each real shim has its
own test against the real library.
"""

from __future__ import annotations

import json
import os

from support import FIXTURES, clean_env, run_python

FIXTURES = FIXTURES
PLUGIN = os.path.join(FIXTURES, "plugin")


def run(code: str, compatfix: bool = True, **extra: str):
    env = clean_env(compatfix, PYTHONPATH=extra.pop("PYTHONPATH", PLUGIN), **extra)
    return run_python(code=code, env=env)


def test_after_import_hook_runs_once_when_target_is_imported():
    result = run(
        """
        import numpy, fakelib, importlib, compatfix
        import fakelib as again
        compatfix.activate()  # a second activation must not re-run shims
        print(fakelib.APPLY_COUNT)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1"]


def test_after_import_hook_runs_at_once_for_an_already_imported_target():
    # fakelib is imported before the engine exists (no built-in target imported yet);
    # loading the engine (import numpy) applies the shim then.
    result = run(
        """
        import fakelib
        before = getattr(fakelib, "APPLY_COUNT", 0)
        import numpy
        print(before, fakelib.APPLY_COUNT)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "1"]


def test_no_hook_runs_with_compatfix_off():
    result = run("import numpy, fakelib; print(hasattr(fakelib, 'APPLY_COUNT'))", compatfix=False)
    assert result.stdout.split() == ["False"]


def test_provide_serves_a_missing_module_and_never_shadows_a_real_one():
    code = """
        import numpy
        import fakelib.gone, fakelib.core
        print(fakelib.gone.X, hasattr(fakelib.core, "PROVIDED"), fakelib.core.REAL)
        """
    result = run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["42", "False", "True"]
    off = run(code, compatfix=False)
    assert "No module named 'fakelib.gone'" in off.stderr


def test_before_consumer_patches_the_target_before_the_consumer_runs():
    code = "import numpy, fakeconsumer; print('ok')"
    assert run(code).stdout.split() == ["ok"]
    off = run(code, COMPATFIX_DISABLE="test.before")
    assert "cannot import name 'ADDED_BEFORE'" in off.stderr


def test_a_failing_shim_warns_once_and_the_import_goes_on():
    result = run("import numpy, fakelib.core; import fakelib.core; print(fakelib.core.REAL)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True"]
    warnings = [line for line in result.stderr.splitlines() if "compatfix:" in line]
    assert len(warnings) == 1, result.stderr
    assert "'test.broken'" in warnings[0] and "RuntimeError: boom" in warnings[0]
    assert "COMPATFIX_DISABLE=test.broken" in warnings[0]


def test_strict_mode_turns_a_failing_shim_into_an_error():
    result = run("import numpy, fakelib.core", COMPATFIX_STRICT="1")
    assert result.returncode == 1
    assert "CompatfixError" in result.stderr and "test.broken" in result.stderr


def test_messages_appear_on_rank_zero_only():
    for variable in ("RANK", "LOCAL_RANK", "SLURM_PROCID"):
        quiet = run("import numpy, fakelib.core", **{variable: "1"})
        assert quiet.returncode == 0
        assert "compatfix:" not in quiet.stderr, variable
    loud = run("import numpy, fakelib.core", RANK="0")
    assert "compatfix:" in loud.stderr


def test_version_gate_skips_and_reports_why(tmp_path):
    report = tmp_path / "report.json"
    result = run("import numpy, fakelib; print(hasattr(fakelib, 'GATED'))", COMPATFIX_REPORT=str(report))
    assert result.stdout.split() == ["False"]
    skipped = json.loads(report.read_text())["processes"][0]["skipped"]
    assert {"shim": "test.gated", "module": "fakelib", "reason": "fakelib 1.5.0+cu121 is outside >=2"} in skipped


def test_default_off_shim_runs_only_when_enabled():
    code = "import numpy, fakelib; print(hasattr(fakelib, 'ENABLED'))"
    assert run(code).stdout.split() == ["False"]
    assert run(code, COMPATFIX_ENABLE="test.offdefault").stdout.split() == ["True"]
    # Disabling wins over enabling, and globs work.
    assert run(code, COMPATFIX_ENABLE="test.offdefault", COMPATFIX_DISABLE="test.*").stdout.split() == ["False"]


def test_a_broken_plugin_is_reported_and_the_others_still_load():
    result = run(
        "import numpy, fakelib; print(fakelib.APPLY_COUNT, numpy.float is float)",
        PYTHONPATH=os.pathsep.join([PLUGIN, os.path.join(FIXTURES, "badplugin")]),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "True"]
    assert "entry point 'bad'" in result.stderr and "ignored" in result.stderr


def test_eight_threads_importing_targets_at_once_never_deadlock():
    # Round 1 starts cold, so the engine loads while other threads import targets;
    # round 2 imports plugin targets (hooks of every kind) at once, the engine loaded.
    # (A plugin target imported while the engine is still loading in another thread
    # may miss its shim; docs/activation.md says so.)
    result = run(
        """
        import threading
        def import_at_once(names):
            barrier = threading.Barrier(len(names))
            done = []
            def importer(name):
                barrier.wait()
                __import__(name)
                done.append(name)
            threads = [threading.Thread(target=importer, args=(n,), daemon=True) for n in names]
            for t in threads: t.start()
            for t in threads: t.join(timeout=120)
            return len(done)
        # Only top-level names in round 1: numpy's and torch's own submodules cannot be
        # imported from several threads at once even without compatfix (they deadlock
        # or see partial modules through their circular imports).
        first = import_at_once(["numpy", "torch", "torch._six", "timm"] * 2)
        second = import_at_once(["fakelib", "fakelib.gone", "fakeconsumer", "fakelib.core"] * 2)
        import fakelib, numpy, torch._six
        print(first, second, fakelib.APPLY_COUNT, fakelib.gone.X, numpy.float is float,
              torch._six.inf == float("inf"))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["8", "8", "1", "42", "True", "True"]


def test_hooked_modules_keep_their_real_loader():
    result = run(
        """
        import numpy, fakelib, importlib.machinery as m
        print(type(fakelib.__loader__).__name__, type(fakelib.__spec__.loader).__name__,
              type(numpy.__loader__).__name__)
        """
    )
    assert result.stdout.split() == ["SourceFileLoader"] * 3, result.stderr


def test_under_the_runner_plugin_shims_apply_before_any_builtin_target_is_imported(tmp_path):
    script = tmp_path / "uses_plugin_target_only.py"
    script.write_text("import fakelib; print(fakelib.APPLY_COUNT)\n")
    result = run_python("-m", "compatfix", str(script), env=clean_env(PYTHONPATH=PLUGIN))
    assert result.stdout.split() == ["1"], result.stderr


def test_compatfix_that_cannot_load_its_shims_steps_aside():
    code = """
        import sys
        sys.modules["compatfix._shim_index"] = None  # the engine's index cannot be imported
        import numpy, torch
        print(hasattr(numpy, "float"), numpy.zeros(1).sum())
        """
    result = run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "0.0"]
    assert result.stderr.count("compatfix: could not load its shims") == 1, result.stderr
    strict = run(code, COMPATFIX_STRICT="1")
    assert strict.returncode == 1 and "_shim_index" in strict.stderr


def test_a_broken_shim_module_turns_off_only_its_own_shims():
    code = """
        import compatfix._shim_index as index
        modules, names = index.ON_FIRST_USE["numpy"]
        index.ON_FIRST_USE["numpy"] = (("compatfix.shims.no_such_module",) + modules, names)
        import numpy
        print(numpy.float is float)
        """
    result = run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True"]  # numpy's own shim module still applied
    assert result.stderr.count("shim module compatfix.shims.no_such_module could not be loaded") == 1, result.stderr
    strict = run(code, COMPATFIX_STRICT="1")
    assert strict.returncode == 1 and "no_such_module" in strict.stderr


def test_a_shim_that_only_restores_names_applies_at_the_first_use_of_one():
    result = run(
        """
        import numpy, fakenames
        print(vars(fakenames).get("FIRST_USE_APPLIED", 0))   # not at the import
        print(fakenames.SERVED)                              # the module's own name wins
        print(vars(fakenames).get("FIRST_USE_APPLIED", 0))   # and does not apply the shim
        print(fakenames.OLD, fakenames.FIRST_USE_APPLIED)    # the first use applies it
        print(fakenames.OLD, fakenames.FIRST_USE_APPLIED, fakenames.SERVED)
        print(fakenames.__getattr__.__module__)              # the module's own __getattr__ again
        try:
            fakenames.NEVER
        except AttributeError as exc:
            print("AttributeError", exc)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "0", "own", "0", "1 1", "1 1 own", "fakenames",
        "AttributeError module 'fakenames' has no attribute 'NEVER'",
    ]


def test_restoring_a_name_the_record_does_not_declare_fails_the_shim():
    result = run("import numpy, fakenames; print(hasattr(fakenames, 'DECLARED'), hasattr(fakenames, 'UNDECLARED'))")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]
    assert "shim 'test.undeclared' failed" in result.stderr
    assert "restores UNDECLARED, which its record's restores= does not name" in result.stderr


def test_threads_using_a_restored_name_at_once_apply_its_shim_once():
    result = run(
        """
        import threading, numpy, fakenames
        seen, barrier = [], threading.Barrier(8)
        def use():
            barrier.wait()
            seen.append(fakenames.OLD)
        threads = [threading.Thread(target=use) for _ in range(8)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print(seen == [1] * 8, fakenames.FIRST_USE_APPLIED)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "1"]


def _plugin_folder(root, *names):
    """A folder on the path holding one distribution per name, each declaring a
    compatfix.shims entry point named after it, with its mtime (and theirs) in the past."""
    import time

    root.mkdir(exist_ok=True)
    for name in names:
        info = root / ("%s_plugin-1.0.dist-info" % name)
        info.mkdir(exist_ok=True)
        (info / "entry_points.txt").write_text("[compatfix.shims]\n%s = %s_plugin:SHIMS\n" % (name, name))
        os.utime(info, (time.time() - 100, time.time() - 100))
    return root


def test_the_plugin_scan_is_cached_until_a_folder_on_the_path_changes(tmp_path, monkeypatch):
    import sys
    import time

    from compatfix import _plugins

    monkeypatch.setattr(_plugins, "_entry_point_cache", lambda: str(tmp_path / "cache.txt"))
    folder = _plugin_folder(tmp_path / "site", "first")
    os.utime(folder, (time.time() - 100, time.time() - 100))
    monkeypatch.setattr(sys, "path", [str(folder)])
    assert _plugins.plugin_entry_points() == [("first", "first_plugin:SHIMS")]
    assert (tmp_path / "cache.txt").exists()
    # Edited in place (the folder on the path does not change): the cached scan is used.
    (folder / "first_plugin-1.0.dist-info" / "entry_points.txt").write_text("[compatfix.shims]\nedited = x:Y\n")
    assert _plugins.plugin_entry_points() == [("first", "first_plugin:SHIMS")]
    # compatfix list scans without the cache, and refreshes it.
    assert _plugins.plugin_entry_points(use_cache=False) == [("edited", "x:Y")]
    assert _plugins.plugin_entry_points() == [("edited", "x:Y")]
    # A distribution installed: its folder changes, the path is scanned again.
    _plugin_folder(folder, "second")
    os.utime(folder, (time.time() - 50, time.time() - 50))
    assert _plugins.plugin_entry_points() == [("edited", "x:Y"), ("second", "second_plugin:SHIMS")]


def test_a_folder_changed_just_now_or_an_unwritable_cache_means_a_scan_each_time(tmp_path, monkeypatch):
    import sys

    from compatfix import _plugins

    folder = _plugin_folder(tmp_path / "site", "first")  # the folder itself changed just now
    monkeypatch.setattr(sys, "path", [str(folder)])
    monkeypatch.setattr(_plugins, "_entry_point_cache", lambda: str(tmp_path / "cache.txt"))
    assert _plugins.plugin_entry_points() == [("first", "first_plugin:SHIMS")]
    assert not (tmp_path / "cache.txt").exists()  # a coarse clock could hide the next change
    monkeypatch.setattr(_plugins, "_entry_point_cache", lambda: str(tmp_path / "no-such-folder" / "cache.txt"))
    assert _plugins.plugin_entry_points() == [("first", "first_plugin:SHIMS")]
