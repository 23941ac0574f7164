"""Pillow 10 and PyYAML 6 removals, against the real Pillow (13) and PyYAML (6.0) of the
stacks.

The expected text sizes are what Pillow 9.5.0 returned for the same font and text
(measured once with Pillow 9.5.0 in a scratch virtualenv): the rebuilt methods must keep
the old meaning, not just return some size.
"""

from __future__ import annotations

import textwrap

import pytest

from support import run_python

PIL_AND_YAML_STACKS = ("modern", "paper", "timm1")

# DejaVuSans from matplotlib's data (modern and paper stacks).
FIND_DEJAVU = """
import importlib.util, os
_mpl = importlib.util.find_spec("matplotlib").submodule_search_locations[0]
TTF = os.path.join(_mpl, "mpl-data", "fonts", "ttf", "DejaVuSans.ttf")
"""


@pytest.mark.stack(*PIL_AND_YAML_STACKS)
@pytest.mark.parametrize(
    "code, error",
    [
        ("from PIL import Image; Image.ANTIALIAS", "AttributeError: module 'PIL.Image' has no attribute 'ANTIALIAS'"),
        ("from PIL import Image; Image.LINEAR", "AttributeError: module 'PIL.Image' has no attribute 'LINEAR'"),
        ("from PIL import Image; Image.CUBIC", "AttributeError: module 'PIL.Image' has no attribute 'CUBIC'"),
        (
            "from PIL import Image, ImageDraw; ImageDraw.Draw(Image.new('L', (9, 9))).textsize('a')",
            "AttributeError: 'ImageDraw' object has no attribute 'textsize'",
        ),
        (
            "from PIL import ImageFont; ImageFont.load_default(size=12).getsize('a')",
            "AttributeError: 'FreeTypeFont' object has no attribute 'getsize'",
        ),
        (
            "from PIL import ImageFont; ImageFont.load_default_imagefont().getsize('a')",
            "AttributeError: 'ImageFont' object has no attribute 'getsize'",
        ),
    ],
)
def test_pillow_10_removals_fail_without_compatfix(code, error):
    assert error in run_python(code=code, compatfix=False).stderr


@pytest.mark.stack(*PIL_AND_YAML_STACKS)
def test_resampling_constants_are_the_filters_they_named():
    result = run_python(
        code="""
        from PIL import Image
        assert Image.ANTIALIAS is Image.Resampling.LANCZOS
        assert Image.LINEAR is Image.Resampling.BILINEAR and Image.CUBIC is Image.Resampling.BICUBIC
        image = Image.linear_gradient("L").resize((32, 32))
        same = image.resize((7, 5), Image.ANTIALIAS).tobytes() == image.resize((7, 5), Image.LANCZOS).tobytes()
        image.thumbnail((8, 8), Image.ANTIALIAS)
        print(same, image.size)
        """
    )
    assert result.stdout.split() == ["True", "(8,", "8)"], result.stderr


def test_freetype_sizes_are_what_pillow_9_returned():
    result = run_python(
        code=FIND_DEJAVU
        + """
from PIL import Image, ImageDraw, ImageFont
font = ImageFont.truetype(TTF, 20)
draw = ImageDraw.Draw(Image.new("RGB", (200, 100)))
for text in ["Hello world", "gjpqy", "\\u0164y"]:
    print(font.getsize(text), font.getsize(text, stroke_width=2), font.getoffset(text),
          draw.textsize(text, font=font), draw.textsize(text, font=font, stroke_width=1))
print(draw.textsize("line one\\nline two g", font=font))
print(draw.multiline_textsize("ab\\ncdefg", font=font, spacing=6), font.getsize_multiline("ab\\ncdefg"))
print(ImageFont.TransposedFont(font, Image.Transpose.ROTATE_90).getsize("Hello"))
"""
    )
    assert result.stdout.splitlines() == [
        # Pillow 9.5.0's answers for DejaVuSans 20px:
        "(112, 19) (116, 23) (0, 4) (112, 19) (114, 21)",
        "(56, 23) (60, 27) (0, 4) (56, 23) (58, 25)",
        "(22, 23) (26, 27) (-1, 0) (22, 23) (24, 25)",
        "(98, 42)",
        "(56, 44) (56, 42)",
        "(19, 51)",
    ], result.stderr


@pytest.mark.stack(*PIL_AND_YAML_STACKS)
def test_bitmap_font_sizes_are_what_pillow_9_returned():
    result = run_python(
        code="""
        from PIL import Image, ImageDraw, ImageFont
        font = ImageFont.load_default_imagefont()  # Pillow 9's load_default(): courB08
        draw = ImageDraw.Draw(Image.new("L", (10, 10)))
        print(font.getsize("Hello world"), draw.textsize("Hello world", font=font),
              draw.textsize("ab\\ncdefg", font=font))
        """
    )
    assert result.stdout.strip() == "(66, 11) (66, 11) (30, 26)", result.stderr


@pytest.mark.stack(*PIL_AND_YAML_STACKS)
def test_restored_methods_keep_pillows_own_and_remember_they_were_missing():
    result = run_python(
        code="""
        import compatfix
        from PIL import ImageDraw, ImageFont
        assert compatfix.is_patched(ImageFont.FreeTypeFont, "getsize")
        try:
            compatfix.get_original(ImageDraw.ImageDraw, "textsize")
        except AttributeError:
            pass
        else:
            raise AssertionError("textsize had no original")
        assert not compatfix.is_patched(ImageFont.FreeTypeFont, "getbbox")
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr


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
