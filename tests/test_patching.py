"""Originals are kept, applying twice is harmless, working names are never replaced."""

from __future__ import annotations

from support import clean_env, run_python


def test_get_original_and_is_patched_after_a_restore():
    result = run_python(
        code="""
        import numpy as np, compatfix
        np.float  # numpy's shims apply at the first use of a name they restore
        from compatfix.shims import numpy as shims
        try:
            compatfix.get_original(np, "float")
        except AttributeError as exc:
            print("no-original")
        print(compatfix.is_patched(np, "float"), compatfix.is_patched(np, "float64"))
        print(compatfix.get_original(np, "float64") is np.float64)
        before = dict(vars(np))
        shims.restore_builtin_aliases(np)   # applying again changes nothing
        shims.restore_numpy2_aliases(np)
        print(dict(vars(np)) == before)
        """
    )
    assert result.stdout.split() == ["no-original", "True", "False", "True", "True"], result.stderr


def test_report_mode_keeps_the_modules_own_getattr_as_the_original(tmp_path):
    result = run_python(
        code="""
        import numpy as np, compatfix
        np.float  # the first use applies numpy's shims: report mode serves them from a __getattr__
        original = compatfix.get_original(np, "__getattr__")
        print(original.__module__, np.float is float)
        try:
            np.no_such_name
        except AttributeError as exc:
            print("still-raises")
        """,
        env=clean_env(COMPATFIX_REPORT=str(tmp_path / "r.json")),
    )
    assert result.stdout.split() == ["numpy", "True", "still-raises"], result.stderr


def test_a_name_that_exists_is_never_overwritten(tmp_path):
    # A stand-in numpy 1.26 that still has np.float (as numpy <= 1.23 had): compatfix
    # must leave it alone. Real numpy 1.26 and 2.x are tested in tests/shims/numpy/test_aliases.py.
    package = tmp_path / "numpy"
    package.mkdir()
    (package / "__init__.py").write_text("__version__ = '1.26.4'\nclass float: pass\n")
    result = run_python(
        code="import numpy as np; print(np.float is float, np.float.__module__, np.int is int)",
        env=clean_env(PYTHONPATH=str(tmp_path)),
    )
    assert result.stdout.split() == ["False", "numpy", "True"], result.stderr


def test_patching_is_the_only_module_that_marks_or_reads_replacements():
    # One wrapping primitive: a shim module that set or read the replacement mark itself
    # would be a second "wrap once" with its own idea of what is already wrapped.
    import os

    import compatfix
    from compatfix import patching

    root = os.path.dirname(compatfix.__file__)
    offenders = []
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".py") and path != patching.__file__:
                with open(path, encoding="utf-8") as handle:
                    text = handle.read()
                if patching._MARK in text or "patching._MARK" in text or "_saved[" in text:
                    offenders.append(os.path.relpath(path, root))
    assert not offenders, offenders


def test_a_lazy_restored_value_is_made_at_its_first_use_then_is_a_plain_attribute():
    result = run_python(code="""
        import types
        from compatfix import patching
        module = types.ModuleType("demo_target")
        made = []
        restored = patching.restore_names(
            module, {"old_name": patching.Lazy(lambda: made.append(1) or 42)}, "demo.lazy")
        print(restored, made, "old_name" in vars(module))
        print(module.old_name, made, vars(module).get("old_name"))
        print(patching.restore_names(module, {"old_name": patching.Lazy(lambda: 0)}, "demo.lazy"))
        try:
            module.other
        except AttributeError as exc:
            print("AttributeError", exc)
        """)
    assert result.stdout.splitlines() == [
        "['old_name'] [] False",
        "42 [1] 42",
        "[]",
        "AttributeError module 'demo_target' has no attribute 'other'",
    ], result.stderr


def test_get_original_sees_behind_the_engine_s_first_use_getattr():
    # Before a restored name is used, the engine's first-use __getattr__ stands in front of
    # numpy's own: that one is the original, and the module counts as changed.
    result = run_python(
        code="""
        import numpy as np, compatfix, fractions
        original = compatfix.get_original(np, "__getattr__")
        print(compatfix.is_patched(np, "__getattr__"), original.__module__, original is not np.__getattr__)
        try:
            compatfix.get_original(fractions, "__getattr__")   # fractions has none of its own
        except AttributeError:
            print("none-before")
        """
    )
    assert result.stdout.split() == ["True", "numpy", "True", "none-before"], result.stderr
