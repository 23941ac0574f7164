"""Pillow 10 removals (compatfix.shims.PIL), against the real Pillow (13) of the stacks.

The expected text sizes are what Pillow 9.5.0 returned for the same font and text
(measured once with Pillow 9.5.0 in a scratch virtualenv): the rebuilt methods must keep
the old meaning, not just return some size.
"""

from __future__ import annotations

import json
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




# --- Pillow 13: posterize with 0 bits -------------------------------------------------------

POSTERIZE_ZERO = """
import json
import numpy as np
from PIL import Image, ImageOps
rng = np.random.default_rng(0)
out = {}
for mode, shape in (("L", (6, 5)), ("RGB", (6, 5, 3))):
    pixels = rng.integers(1, 256, size=shape, dtype=np.uint8)
    image = Image.fromarray(pixels, mode)
    try:
        zero = np.asarray(ImageOps.posterize(image, 0))
        out[mode] = [zero.shape == pixels.shape, int(zero.max()), zero.dtype.name]
    except ValueError as exc:
        out[mode] = str(exc)
    # 4 bits: Pillow's own result, checked against the mask by hand
    four = np.asarray(ImageOps.posterize(image, 4))
    out[mode + " 4 bits"] = bool((four == (pixels & 0xF0)).all())
try:
    ImageOps.posterize(Image.new("L", (2, 2)), 9)
    out["9 bits"] = "accepted"
except ValueError as exc:
    out["9 bits"] = str(exc)
if WITH_TIMM:  # timm 0.3.2's RandAugment op, as PVT calls it (timm needs compatfix for torch._six)
    import timm.data.auto_augment as auto_augment
    out["timm"] = int(np.asarray(auto_augment.posterize(Image.new("RGB", (3, 3), (200, 90, 17)), 0)).max())
print(json.dumps(out))
"""


def test_posterize_with_zero_bits_fails_without_compatfix_and_is_black_with_it():
    refused = "bits must be between or equal to 1 and 8"
    off = run_python(code="WITH_TIMM = False\n" + POSTERIZE_ZERO, compatfix=False)
    off_result = json.loads(off.stdout)
    assert off_result["L"] == refused and off_result["RGB"] == refused, off.stderr
    on = run_python(code="WITH_TIMM = True\n" + POSTERIZE_ZERO)
    assert json.loads(on.stdout) == {
        # Pillow 12's mask for 0 bits is ~(2**8 - 1): every value becomes 0
        "L": [True, 0, "uint8"], "L 4 bits": True,
        "RGB": [True, 0, "uint8"], "RGB 4 bits": True,
        "9 bits": refused,  # still refused: Pillow 12 failed there too
        "timm": 0,
    }, on.stderr
