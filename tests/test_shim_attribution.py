"""Each shim, and no other, makes the difference: with compatfix on but only that shim
disabled (``COMPATFIX_DISABLE=<name>``) the old idiom fails as it does without compatfix;
with everything on it works. The expected values come from the library itself, not from
the shim. (Shims with heavier fixtures get the same check in their own test files.)"""

from __future__ import annotations

import pytest

from support import clean_env, run_python

CASES = {
    "PIL.Image.resampling_constants": (
        "from PIL import Image\nprint(Image.ANTIALIAS == Image.Resampling.LANCZOS)",
        "has no attribute 'ANTIALIAS'", {}),
    "PIL.ImageFont.getsize": (
        "from PIL import ImageFont\nfont = ImageFont.load_default()\n"
        "left, top, right, bottom = font.getbbox('ab')\nprint(font.getsize('ab')[0] == right)",
        "has no attribute 'getsize'", {}),
    "PIL.ImageDraw.textsize": (
        "from PIL import Image, ImageDraw, ImageFont\ndraw = ImageDraw.Draw(Image.new('RGB', (40, 20)))\n"
        "print(draw.textsize('ab')[0] == draw.textbbox((0, 0), 'ab')[2])",
        "has no attribute 'textsize'", {}),
    "PIL.ImageOps.posterize_zero_bits": (
        "from PIL import Image, ImageOps\nprint(ImageOps.posterize(Image.new('L', (2, 2), 200), 0).getextrema() == (0, 0))",
        "bits must be between or equal to 1 and 8", {}),
    "argparse.local_rank_spelling": (
        "import torch, argparse\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--local_rank', type=int, required=True)\n"
        "print(parser.parse_args(['--local-rank=1']).local_rank == 1)",
        "--local_rank", {}),
    "argparse.local_rank_from_env": (
        "import torch, argparse\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--local_rank', type=int, required=True)\n"
        "print(parser.parse_args([]).local_rank == 1)",
        "the following arguments are required: --local_rank", {"LOCAL_RANK": "1"}),
    "collections.abc_aliases": (
        "import numpy, collections, collections.abc\nprint(collections.Mapping is collections.abc.Mapping)",
        "has no attribute 'Mapping'", {}),
    "torch.fft_functions": (
        "import torch\nx = torch.arange(4.0)\n"
        "print(torch.allclose(torch.rfft(x, 1)[..., 0], torch.fft.rfft(x).real))",
        "has no attribute 'rfft'", {}),
    "scipy.integrate.renamed": (
        "from scipy import integrate\nprint(integrate.trapz([1.0, 2.0, 3.0]) == integrate.trapezoid([1.0, 2.0, 3.0]))",
        "has no attribute 'trapz'", {}),
    # The yaml shim's behaviour: without it, PyYAML >= 6 wants a Loader.
    "yaml.default_loader": (
        "import yaml\nprint(yaml.load('a: [1, 2]') == {'a': [1, 2]})",
        "missing 1 required positional argument: 'Loader'", {}),
    "torchvision.models_utils": (
        "from torchvision.models.utils import load_state_dict_from_url\n"
        "import torch.hub\nprint(load_state_dict_from_url is torch.hub.load_state_dict_from_url)",
        "No module named 'torchvision.models.utils'", {}),
}


@pytest.mark.parametrize("shim", sorted(CASES))
def test_the_shim_alone_makes_the_difference(shim):
    code, failure, extra = CASES[shim]
    alone_off = run_python(code=code, env=clean_env(COMPATFIX_DISABLE=shim, **extra))
    assert alone_off.returncode != 0 and failure in alone_off.stderr, alone_off.stderr[-2000:]
    on = run_python(code=code, env=clean_env(**extra))
    assert on.returncode == 0 and on.stdout.split() == ["True"], on.stderr[-2000:]
