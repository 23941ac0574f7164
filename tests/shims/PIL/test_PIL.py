"""Pillow 10 removals (compatfix.shims.PIL), against the real Pillow (13) of the stacks.

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


