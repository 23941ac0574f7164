"""Shims for Pillow: the resampling constants and text-size methods that Pillow 10 removed.

The constants were aliases of filters Pillow still has. The text-size methods are
rebuilt on ``getbbox`` with their old meaning, which is not the bounding box's height:
``FreeTypeFont.getsize`` measured the height from the ascender line (the box's bottom
edge), so label boxes sized with it come out as they did on Pillow 9.
"""

from __future__ import annotations

from typing import Any

from compatfix.patching import replace_attribute, restore_names, wrap
from compatfix.registry import Shim


def restore_resampling_constants(image_module) -> None:
    resampling = image_module.Resampling
    names = {
        "ANTIALIAS": resampling.LANCZOS,
        "LINEAR": resampling.BILINEAR,
        "CUBIC": resampling.BICUBIC,
    }
    restore_names(image_module, names, "PIL.Image.resampling_constants")


def _add_missing_methods(cls: type, methods: dict[str, Any], shim: str) -> None:
    for name, method in methods.items():
        if not hasattr(cls, name):  # never replace a method this Pillow still has
            replace_attribute(cls, name, method, shim)


def _is_multiline(text: Any) -> bool:
    return ("\n" if isinstance(text, str) else b"\n") in text


def _split_lines(text: Any) -> list:
    return text.split("\n" if isinstance(text, str) else b"\n")


def freetype_getsize(self, text, direction=None, features=None, language=None, stroke_width=0):
    """Removed in Pillow 10: the size of ``text`` as Pillow 9 measured it: the ink's
    width with the stroke on both sides, and its height measured from the ascender line
    (the bounding box's bottom edge, widened by the stroke)."""
    left, _, right, bottom = self.getbbox(
        text, direction=direction, features=features, language=language, stroke_width=stroke_width
    )
    return right - left, bottom + stroke_width


def freetype_getsize_multiline(
    self, text, direction=None, spacing=4, features=None, language=None, stroke_width=0
):
    """Removed in Pillow 10: the size of multiline ``text``, each line ``getsize("A")``
    high plus ``spacing``."""
    line_spacing = self.getsize("A", stroke_width=stroke_width)[1] + spacing
    lines = _split_lines(text)
    width = max(self.getsize(line, direction, features, language, stroke_width)[0] for line in lines)
    return width, len(lines) * line_spacing - spacing


def freetype_getoffset(self, text):
    """Removed in Pillow 10: where the ink of ``text`` starts relative to the origin."""
    left, top, _, _ = self.getbbox(text)
    return left, top


def bitmap_getsize(self, text, *args, **kwargs):
    """Removed in Pillow 10: the width and height of ``text`` in this bitmap font."""
    _, _, right, bottom = self.getbbox(text)
    return right, bottom


def transposed_getsize(self, text, *args, **kwargs):
    """Removed in Pillow 10: the wrapped font's size, swapped for 90 and 270 degrees."""
    from PIL import Image

    width, height = self.font.getsize(text)
    if self.orientation in (Image.Transpose.ROTATE_90, Image.Transpose.ROTATE_270):
        return height, width
    return width, height


def textsize(self, text, font=None, spacing=4, direction=None, features=None, language=None, stroke_width=0):
    """Removed in Pillow 10: the size of ``text`` as ``font.getsize`` measured it
    (multiline text: see ``multiline_textsize``)."""
    if _is_multiline(text):
        return self.multiline_textsize(text, font, spacing, direction, features, language, stroke_width)
    if font is None:
        font = self.getfont()
    return font.getsize(text, direction, features, language, stroke_width)


def multiline_textsize(
    self, text, font=None, spacing=4, direction=None, features=None, language=None, stroke_width=0
):
    """Removed in Pillow 10: the widest line's width, and ``textsize("A")`` height plus
    ``spacing`` per line (less the last line's spacing)."""
    line_spacing = self.textsize("A", font=font, stroke_width=stroke_width)[1] + spacing
    lines = _split_lines(text)
    width = max(
        self.textsize(line, font, spacing, direction, features, language, stroke_width)[0] for line in lines
    )
    return width, len(lines) * line_spacing - spacing


def restore_font_getsize(font_module) -> None:
    shim = "PIL.ImageFont.getsize"
    _add_missing_methods(
        font_module.FreeTypeFont,
        {"getsize": freetype_getsize, "getsize_multiline": freetype_getsize_multiline, "getoffset": freetype_getoffset},
        shim,
    )
    _add_missing_methods(font_module.ImageFont, {"getsize": bitmap_getsize}, shim)
    _add_missing_methods(font_module.TransposedFont, {"getsize": transposed_getsize}, shim)


def restore_draw_textsize(draw_module) -> None:
    _add_missing_methods(
        draw_module.ImageDraw,
        {"textsize": textsize, "multiline_textsize": multiline_textsize},
        "PIL.ImageDraw.textsize",
    )


def _posterize_keeping_zero_bits(original):
    def posterize(image, bits):
        try:
            return original(image, bits)
        except ValueError:
            if bits != 0 or image.mode not in ("L", "RGB"):
                raise
            # Pillow < 13 computed the mask ~(2 ** (8 - 0) - 1): every value maps to 0.
            return image.point([0] * 256 * len(image.getbands()))

    return posterize


def accept_posterize_zero_bits(ops_module) -> None:
    wrap(ops_module, "posterize", _posterize_keeping_zero_bits, "PIL.ImageOps.posterize_zero_bits")


SHIMS = (
    Shim(
        "PIL.Image.resampling_constants",
        targets=["PIL.Image"],
        requires={"PIL": ">=10"},
        apply=restore_resampling_constants,
        restores=["ANTIALIAS", "LINEAR", "CUBIC"],
        broke="Pillow 10.0 (2023-07) removed Image.ANTIALIAS, Image.LINEAR and Image.CUBIC "
        "(deprecated in 9.1)",
        summary="restore Image.ANTIALIAS/LINEAR/CUBIC as Resampling.LANCZOS/BILINEAR/BICUBIC",
        replacement="Image.Resampling.LANCZOS, BILINEAR, BICUBIC (Image.LANCZOS ... also work)",
        renames={"PIL.Image.ANTIALIAS": "PIL.Image.LANCZOS", "PIL.Image.LINEAR": "PIL.Image.BILINEAR",
                 "PIL.Image.CUBIC": "PIL.Image.BICUBIC"},
    ),
    Shim(
        "PIL.ImageFont.getsize",
        targets=["PIL.ImageFont"],
        requires={"PIL": ">=10"},
        apply=restore_font_getsize,
        broke="Pillow 10.0 (2023-07) removed FreeTypeFont.getsize/getsize_multiline/getoffset, "
        "ImageFont.getsize and TransposedFont.getsize (deprecated in 9.2)",
        summary="restore the fonts' getsize (and FreeTypeFont.getsize_multiline/getoffset) "
        "from getbbox, with Pillow 9's meaning (height measured from the ascender line)",
        replacement="font.getbbox(text) (right - left, bottom - top) or font.getlength(text) for the width; "
        "Pillow 9's height was measured from the ascender line, getbbox's from the text's top",
    ),
    Shim(
        "PIL.ImageDraw.textsize",
        targets=["PIL.ImageDraw"],
        requires={"PIL": ">=10"},
        apply=restore_draw_textsize,
        broke="Pillow 10.0 (2023-07) removed ImageDraw.textsize and multiline_textsize "
        "(deprecated in 9.2)",
        summary="restore ImageDraw.textsize/multiline_textsize from the font's getsize",
        replacement="draw.textbbox((0, 0), text, font=font) and its width and height",
        rewrites={"*.textsize()": "draw.textbbox((0, 0), text, font=font): (right - left, bottom - top)",
                  "*.multiline_textsize()": "draw.multiline_textbbox((0, 0), text, font=font)"},
    ),
    Shim(
        "PIL.ImageOps.posterize_zero_bits",
        targets=["PIL.ImageOps"],
        requires={"PIL": ">=13"},
        apply=accept_posterize_zero_bits,
        broke="Pillow 13.0 made ImageOps.posterize refuse bits outside 1-8 ('bits must be "
        "between or equal to 1 and 8'); timm 0.3-0.4's RandAugment posterizes with 0 bits at high "
        "magnitudes (PVT, DeiT-era training)",
        summary="ImageOps.posterize(image, 0) on L and RGB images returns the all-black image "
        "Pillow 12 returned; every other call is Pillow's own",
        replacement="an all-black image of the same mode (Image.new(image.mode, image.size)) where bits is 0",
    ),
)
