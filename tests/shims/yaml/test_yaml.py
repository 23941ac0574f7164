"""PyYAML 6 removals, against the real PyYAML (6.0) of the stacks."""

from __future__ import annotations

import textwrap

import pytest

from support import run_python

PIL_AND_YAML_STACKS = ("modern", "paper", "timm1")

# --- PyYAML 6 -------------------------------------------------------------------------------


@pytest.mark.stack(*PIL_AND_YAML_STACKS)
def test_yaml_load_without_loader_fails_without_compatfix():
    result = run_python(code="import yaml; yaml.load('a: 1')", compatfix=False)
    assert "TypeError: load() missing 1 required positional argument: 'Loader'" in result.stderr
    result = run_python(code="import yaml; list(yaml.load_all('a: 1'))", compatfix=False)
    assert "TypeError: load_all() missing 1 required positional argument: 'Loader'" in result.stderr


@pytest.mark.stack(*PIL_AND_YAML_STACKS)
def test_yaml_load_without_loader_uses_the_safe_default_and_says_so_once(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("size: !!python/tuple [224, 224]\nlr: 0.1\n")
    code = textwrap.dedent(
        """
        import sys, yaml
        with open(sys.argv[1]) as f:
            print(yaml.load(f))
        print(yaml.load("a: [1, 2]"), list(yaml.load_all("a: 1\\n---\\nb: !!python/tuple [2]\\n")))
        """
    )
    result = run_python("-c", code, str(config))
    assert result.stdout.splitlines() == [
        "{'size': (224, 224), 'lr': 0.1}",  # a tuple, as PyYAML 5's FullLoader (SafeLoader refuses it)
        "{'a': [1, 2]} [{'a': 1}, {'b': (2,)}]",
    ], result.stderr
    assert result.stderr.count("yaml.load() was called without Loader") == 1, result.stderr
    assert result.stderr.count("yaml.load_all() was called without Loader") == 1, result.stderr


@pytest.mark.stack(*PIL_AND_YAML_STACKS)
def test_yaml_default_loader_never_runs_code(tmp_path):
    marker = tmp_path / "pwned"
    payloads = [
        "!!python/object/apply:os.system ['touch %s']" % marker,
        "!!python/object/new:os.system ['touch %s']" % marker,
        "!!python/object/apply:subprocess.check_call [['touch', '%s']]" % marker,
    ]
    result = run_python(
        code="""
        import yaml
        for payload in %r:
            for load in (yaml.load, lambda s: list(yaml.load_all(s))):
                try:
                    load(payload)
                except yaml.constructor.ConstructorError as exc:
                    assert "could not determine a constructor" in str(exc), exc
                else:
                    raise AssertionError("loaded " + payload)
        print("refused")
        """ % (payloads,)
    )
    assert result.stdout.split() == ["refused"], result.stderr
    assert not marker.exists()


@pytest.mark.stack(*PIL_AND_YAML_STACKS)
def test_yaml_explicit_loader_is_untouched():
    result = run_python(
        code="""
        import compatfix, yaml
        try:
            yaml.load("a: !!python/tuple [1]", Loader=yaml.SafeLoader)
        except yaml.constructor.ConstructorError:
            print("safe loader still refuses tuples")
        print(yaml.load("a: 1", yaml.BaseLoader), compatfix.get_original(yaml, "load").__module__)
        """
    )
    assert result.stdout.splitlines() == ["safe loader still refuses tuples", "{'a': '1'} yaml"], result.stderr
    assert "without Loader" not in result.stderr


@pytest.mark.stack(*PIL_AND_YAML_STACKS)
def test_yaml_default_refuses_references_to_functions():
    # FullLoader (PyYAML 5's default, and this shim's first version) builds
    # !!python/name references to any importable function; safe_load refuses them.
    result = run_python(
        code="""
        import yaml
        for document in ("run: !!python/name:os.system", "run: !!python/name:builtins.eval"):
            for load in (yaml.load, lambda s: list(yaml.load_all(s))):
                try:
                    loaded = load(document)
                except yaml.constructor.ConstructorError as exc:
                    print("refused", "python/name" in str(exc))
                else:
                    print("loaded", loaded)
        """
    )
    assert result.stdout.splitlines() == ["refused True"] * 4, result.stdout + result.stderr


@pytest.mark.stack(*PIL_AND_YAML_STACKS)
def test_yaml_default_keeps_the_plain_python_tags_that_yaml_dump_writes():
    # What yaml.dump (the default Dumper) writes for plain Python values must load back.
    result = run_python(
        code="""
        import yaml
        value = {"size": (224, 224), "nested": [(1, 2.5, None)], "flag": True, "raw": bytes([0, 1]),
                 "number": 1 + 2j, "text": "t"}
        document = yaml.dump(value)
        assert "!!python/tuple" in document and "!!binary" in document and "!!python/complex" in document
        print(yaml.load(document) == value)
        print(yaml.load("a: !!python/unicode 'x'\\nb: !!python/long 3\\nc: !!python/str y\\n"))
        """
    )
    assert result.stdout.splitlines() == ["True", "{'a': 'x', 'b': 3, 'c': 'y'}"], result.stderr


@pytest.mark.stack(*PIL_AND_YAML_STACKS)
def test_yaml_load_still_pickles_by_reference():
    result = run_python(
        code="""
        import pickle, yaml
        print(pickle.loads(pickle.dumps(yaml.load)) is yaml.load, yaml.load.__qualname__, yaml.load.__module__)
        print(pickle.loads(pickle.dumps(yaml.load_all)) is yaml.load_all)
        """
    )
    assert result.stdout.splitlines() == ["True load yaml", "True"], result.stderr


def test_yaml_shim_survives_a_reload():
    result = run_python(code="""
        import importlib, yaml
        importlib.reload(yaml)
        print(yaml.load("a: [1, 2]") == {"a": [1, 2]})
        importlib.reload(yaml)
        print(yaml.load("a: 1") == {"a": 1})
        """)
    assert result.stdout.split() == ["True", "True"], result.stderr
    off = run_python(code="import importlib, yaml; importlib.reload(yaml); yaml.load('a: 1')",
                     compatfix=False)
    assert "missing 1 required positional argument: 'Loader'" in off.stderr
