"""RandomAffine / RandomRotation / functional.affine / functional.rotate with torchvision
0.8's resample= and fillcolor=, against the real torchvision 0.29 of the stacks. The
expected results are today's calls with the new keywords (interpolation=, fill=), which
torchvision 0.9-0.12 mapped the old ones to: PIL's filter number 2 is BILINEAR."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern", "paper", "timm1")

CALLS = [
    "T.RandomAffine(10, resample=Image.BILINEAR)",
    "T.RandomAffine(10, fillcolor=5)",
    "T.RandomRotation(10, resample=Image.BILINEAR)",
    "F.affine(x, 30.0, [0, 0], 1.0, [0.0, 0.0], resample=2)",
    "F.affine(x, 30.0, [0, 0], 1.0, [0.0, 0.0], fillcolor=[7.0])",
    "F.rotate(x, 30.0, resample=2)",
]
PROBE = """
import torch
from PIL import Image
import torchvision.transforms as T
import torchvision.transforms.functional as F
x = torch.arange(16.0).reshape(1, 4, 4)
for call in %r:
    try:
        eval(call)
    except TypeError:
        print("refused")
    else:
        print("accepted")
""" % (CALLS,)


@pytest.mark.parametrize("env", [clean_env(False),
                                 clean_env(COMPATFIX_DISABLE="torchvision.transforms.resample_fillcolor")],
                         ids=["compatfix-off", "this-shim-disabled"])
def test_the_old_keywords_are_refused_without_the_shim(env):
    result = run_python(code=PROBE, env=env)
    assert result.stdout.split() == ["refused"] * len(CALLS), result.stderr[-2000:]


def test_the_old_keywords_mean_interpolation_and_fill():
    result = run_python(code="""
        import torch
        from PIL import Image
        import torchvision.transforms as T
        import torchvision.transforms.functional as F
        from torchvision.transforms import InterpolationMode
        affine = T.RandomAffine(10, resample=Image.BILINEAR, fillcolor=5)
        print(affine.interpolation is InterpolationMode.BILINEAR, affine.fill == 5)
        print(T.RandomRotation(10, resample=Image.BICUBIC).interpolation is InterpolationMode.BICUBIC)
        x = torch.arange(16.0).reshape(1, 4, 4)
        old = F.affine(x, 30.0, [0, 0], 1.0, [0.0, 0.0], resample=2, fillcolor=[7.0])
        new = F.affine(x, 30.0, [0, 0], 1.0, [0.0, 0.0], interpolation=InterpolationMode.BILINEAR, fill=[7.0])
        print(torch.equal(old, new), torch.equal(F.rotate(x, 30.0, resample=2),
                                                 F.rotate(x, 30.0, interpolation=InterpolationMode.BILINEAR)))
        # a call with today's keywords is today's call
        print(T.RandomAffine(10).interpolation is InterpolationMode.NEAREST)
        """)
    assert result.stdout.split() == ["True", "True", "True", "True", "True", "True"], result.stderr[-2000:]
