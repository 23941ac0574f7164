"""The private empty-tensor helpers and the renamed transforms, against the real
torchvision 0.29 of the stacks.

DETR's util/misc.py imports ``_new_empty_tensor`` and ``_output_size`` when
``float(torchvision.__version__[:3]) < 0.7``, and Deformable DETR's ``_NewEmptyTensorOp``
when it is < 0.5: "0.29"[:3] is "0.2", so both take their oldest branch on today's
torchvision. Expected values are computed here from the old definitions (torchvision
0.4-0.6's ops/misc.py, 0.11's transforms), not through the shim."""

from __future__ import annotations

import pytest

from support import clean_env, import_outcomes, run_python

pytestmark = pytest.mark.stack("modern", "paper", "timm1")

IMPORTS = [
    "from torchvision.ops import _new_empty_tensor",
    "from torchvision.ops.misc import _new_empty_tensor",
    "from torchvision.ops.misc import _output_size",
    "from torchvision.ops.misc import _NewEmptyTensorOp",
    "from torchvision.transforms import Scale",
    "from torchvision.transforms import RandomSizedCrop",
    "from torchvision.transforms.transforms import Scale",
    "from torchvision.transforms.functional import scale",
]


SHIMS = ["torchvision.ops.new_empty_tensor", "torchvision.ops.misc.empty_tensor_helpers",
         "torchvision.transforms.scale", "torchvision.transforms.functional.scale"]


@pytest.mark.parametrize("env", [clean_env(False), clean_env(COMPATFIX_DISABLE=",".join(SHIMS))],
                         ids=["compatfix-off", "these-shims-disabled"])
def test_the_old_names_are_missing_without_the_shims(env):
    assert import_outcomes(IMPORTS, env) == ["missing"] * len(IMPORTS)


def test_detr_interpolate_on_an_empty_batch():
    result = run_python(
        code="""
        import math, torch, torchvision
        assert float(torchvision.__version__[:3]) < 0.5  # DETR/Deformable DETR take their oldest branch
        from torchvision.ops import _new_empty_tensor
        from torchvision.ops.misc import _output_size, _NewEmptyTensorOp, _new_empty_tensor as misc_empty

        def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
            # DETR's util/misc.py interpolate, its torchvision < 0.7 branch
            if input.numel() > 0:
                return torch.nn.functional.interpolate(input, size, scale_factor, mode, align_corners)
            output_shape = _output_size(2, input, size, scale_factor)
            output_shape = list(input.shape[:-2]) + list(output_shape)
            return _new_empty_tensor(input, output_shape)

        x = torch.zeros(0, 3, 5, 7, dtype=torch.float64, requires_grad=True)
        y = interpolate(x, scale_factor=1.5)
        assert list(y.shape) == [0, 3, math.floor(5 * 1.5), math.floor(7 * 1.5)], y.shape
        assert y.dtype == torch.float64 and y.requires_grad
        y.sum().backward()
        assert x.grad is not None and x.grad.shape == x.shape
        assert _output_size(2, x, [9, 4], None) == [9, 4]
        for size, factor in ((None, None), ([2, 2], 2.0)):
            try:
                _output_size(2, x, size, factor)
            except ValueError:
                pass
            else:
                raise AssertionError((size, factor))
        # the op and both helper names: x.new_empty(shape), differentiable
        z = torch.zeros(0, 2, dtype=torch.float16)
        for made in (_NewEmptyTensorOp.apply(z, [0, 4, 1]), misc_empty(z, [0, 4, 1])):
            assert list(made.shape) == [0, 4, 1] and made.dtype == torch.float16
        # non-empty input goes to torch, unchanged
        ones = torch.ones(1, 1, 2, 2)
        assert interpolate(ones, size=[4, 4]).shape == (1, 1, 4, 4)
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr


def test_scale_and_random_sized_crop_are_resize_and_random_resized_crop():
    result = run_python(
        code="""
        import warnings
        from PIL import Image
        import torchvision.transforms as T
        import torchvision.transforms.functional as F
        from torchvision.transforms import transforms  # where they were defined (3D-ResNets subclasses them)
        assert T.Scale is T.Resize and T.RandomSizedCrop is T.RandomResizedCrop and F.scale is F.resize
        assert transforms.Scale is T.Resize and transforms.RandomSizedCrop is T.RandomResizedCrop
        image = Image.new("RGB", (8, 6))  # width 8, height 6
        # torchvision 0.11: Scale(size) matches the smaller edge to size, keeping the aspect
        # ratio: height 6 -> 4, width int(4 * 8 / 6) = 5
        print(T.Scale(4)(image).size, F.scale(image, 4).size, T.Scale((3, 2))(image).size)
        print(T.RandomSizedCrop(5)(image).size)
        print(T.Compose([T.Scale(4, Image.BICUBIC), T.CenterCrop(4)])(image).size)
        """
    )
    assert result.stdout.splitlines() == ["(5, 4) (5, 4) (2, 3)", "(5, 5)", "(4, 4)"], result.stderr
