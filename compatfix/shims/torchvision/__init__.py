"""Shims for torchvision: modules that 2020-21 code imports and torchvision removed, the
private empty-tensor helpers that DETR-lineage code imports anyway, and the transforms
that torchvision 0.12 dropped after four years of deprecation; ``models.py`` for the
model modules' ``model_urls``."""

from __future__ import annotations

import functools
import importlib
import math

from compatfix.patching import Lazy, restore_names
from compatfix.registry import PROVIDE, Shim

# The removed public modules and the private modules that hold their code today.
RENAMED_TRANSFORMS_MODULES = {
    "torchvision.transforms.functional_tensor": "torchvision.transforms._functional_tensor",
    "torchvision.transforms.functional_pil": "torchvision.transforms._functional_pil",
}


def provide_transforms_module(module) -> None:
    new_home = importlib.import_module(RENAMED_TRANSFORMS_MODULES[module.__name__])
    # Private helpers too: old code imported _is_tensor_a_torch_image, _blend and the like.
    names = {name: value for name, value in vars(new_home).items() if not name.startswith("__")}
    restore_names(module, names, "torchvision.functional_tensor")


def provide_models_utils(module) -> None:
    from torch.hub import load_state_dict_from_url

    restore_names(module, {"load_state_dict_from_url": load_state_dict_from_url}, "torchvision.models_utils")


@functools.lru_cache(maxsize=None)
def _new_empty_tensor_op() -> type:
    """torchvision <= 0.4's ``ops.misc._NewEmptyTensorOp``, built on first use (the shim
    module never imports torch itself): ``x.new_empty(new_shape)``, whose gradient is an
    empty tensor of the input's shape. torchvision 0.5-0.8's C++ ``_new_empty_tensor_op``
    did the same, so ``_new_empty_tensor`` is this op's ``apply``."""
    import torch

    class _NewEmptyTensorOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, new_shape):
            ctx.shape = x.shape
            return x.new_empty(new_shape)

        @staticmethod
        def backward(ctx, grad):
            return _NewEmptyTensorOp.apply(grad, ctx.shape), None

    return _NewEmptyTensorOp


def _new_empty_tensor(x, shape):
    """torchvision 0.5-0.8: an uninitialised tensor of ``shape`` like ``x`` (dtype, device),
    differentiable; what the empty-batch paths of ``interpolate`` returned."""
    return _new_empty_tensor_op().apply(x, shape)


def _check_size_scale_factor(dim, size, scale_factor):
    """torchvision 0.5-0.6: exactly one of ``size`` and ``scale_factor``; a sequence of
    scale factors has one per spatial dimension."""
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)) and len(scale_factor) != dim:
        raise ValueError("scale_factor shape must match input shape. Input is {}D, scale_factor size is {}"
                         .format(dim, len(scale_factor)))


def _output_size(dim, input, size, scale_factor):
    """torchvision 0.5-0.6: the spatial output size of a 2-d ``interpolate``: ``size`` as
    given, or each of the input's last two sizes times the one ``scale_factor``, floored."""
    assert dim == 2
    _check_size_scale_factor(dim, size, scale_factor)
    if size is not None:
        return size
    assert scale_factor is not None and isinstance(scale_factor, (int, float))
    return [int(math.floor(input.size(axis + 2) * scale_factor)) for axis in range(dim)]


def restore_ops_new_empty_tensor(module) -> None:
    restore_names(module, {"_new_empty_tensor": _new_empty_tensor}, "torchvision.ops.new_empty_tensor")


# What torchvision.ops.misc had: _NewEmptyTensorOp up to 0.4, the rest in 0.5-0.6.
MISC_HELPERS = ("_NewEmptyTensorOp", "_new_empty_tensor", "_output_size", "_check_size_scale_factor")


def restore_misc_helpers(module) -> None:
    names = {
        "_NewEmptyTensorOp": Lazy(_new_empty_tensor_op),
        "_new_empty_tensor": _new_empty_tensor,
        "_output_size": _output_size,
        "_check_size_scale_factor": _check_size_scale_factor,
    }
    restore_names(module, names, "torchvision.ops.misc.empty_tensor_helpers")


# The deprecated names torchvision 0.12 removed, and the names that replaced them.
RENAMED_TRANSFORMS = {"Scale": "Resize", "RandomSizedCrop": "RandomResizedCrop"}


def restore_renamed_transforms(module) -> None:
    names = {old: getattr(module, new) for old, new in RENAMED_TRANSFORMS.items()}
    restore_names(module, names, "torchvision.transforms.scale")


def restore_functional_scale(module) -> None:
    restore_names(module, {"scale": module.resize}, "torchvision.transforms.functional.scale")


def restore_get_image_size(module) -> str | None:
    # torchvision 0.11 made the private _get_image_size(img) public as get_image_size(img),
    # the same [width, height] of a PIL image or a tensor.
    if not hasattr(module, "get_image_size"):
        return "this torchvision has no get_image_size to restore _get_image_size as"
    restore_names(module, {"_get_image_size": module.get_image_size}, "torchvision.transforms.functional.get_image_size")
    return None


SHIMS = (
    Shim(
        "torchvision.functional_tensor",
        targets=list(RENAMED_TRANSFORMS_MODULES),
        kind=PROVIDE,
        requires={"torchvision": ">=0.17"},
        apply=provide_transforms_module,
        broke="torchvision 0.17 (2024-01) renamed transforms.functional_tensor and "
        "functional_pil to _functional_tensor and _functional_pil (basicsr's "
        "rgb_to_grayscale import, and the Real-ESRGAN/GFPGAN lineage)",
        summary="provide torchvision.transforms.functional_tensor/functional_pil with the "
        "names of today's private modules",
        replacement="torchvision.transforms.functional (rgb_to_grayscale and the others are public there)",
        rewrites={name: "torchvision.transforms.functional (the private " + private + " may change)"
                  for name, private in RENAMED_TRANSFORMS_MODULES.items()},
    ),
    Shim(
        "torchvision.models_utils",
        targets=["torchvision.models.utils"],
        kind=PROVIDE,
        requires={"torchvision": ">=0.11"},
        apply=provide_models_utils,
        broke="torchvision 0.11 (2021-10) deleted torchvision.models.utils, whose "
        "load_state_dict_from_url backbone files imported",
        summary="provide torchvision.models.utils.load_state_dict_from_url (torch.hub's)",
        replacement="torch.hub.load_state_dict_from_url",
        renames={"torchvision.models.utils.load_state_dict_from_url": "torch.hub.load_state_dict_from_url"},
        rewrites={"torchvision.models.utils": "torch.hub (load_state_dict_from_url)"},
    ),
    Shim(
        "torchvision.ops.new_empty_tensor",
        targets=["torchvision.ops"],
        requires={"torchvision": ">=0.9"},
        apply=restore_ops_new_empty_tensor,
        restores=["_new_empty_tensor"],
        broke="torchvision 0.9 (2021-03) removed the private torchvision.ops._new_empty_tensor (pytorch/vision#3156); "
        "DETR's util/misc.py imports it whenever float(torchvision.__version__[:3]) < 0.7, which 0.10 and "
        "later read as 0.1 or 0.2",
        summary="restore torchvision.ops._new_empty_tensor(x, shape): x.new_empty(shape), with the old "
        "op's gradient",
        replacement="torch.nn.functional.interpolate and the layers themselves (empty batches work natively)",
        rewrites={"torchvision.ops._new_empty_tensor": "x.new_empty(shape), or no special case: "
                  "torch's layers accept empty batches"},
    ),
    Shim(
        "torchvision.ops.misc.empty_tensor_helpers",
        targets=["torchvision.ops.misc"],
        requires={"torchvision": ">=0.5"},
        apply=restore_misc_helpers,
        restores=MISC_HELPERS,
        broke="torchvision 0.5 (2020-01) removed ops.misc._NewEmptyTensorOp and 0.7 (2020-06, pytorch/vision#2252) "
        "_new_empty_tensor, _output_size and _check_size_scale_factor from ops.misc; the DETR and "
        "Deformable-DETR util/misc.py import them when their torchvision.__version__[:3] test misreads 0.1x/0.2x",
        summary="restore them as they were (x.new_empty(shape) with its gradient; the interpolate output size)",
        replacement="torch.nn.functional.interpolate (empty batches work natively)",
        rewrites={
            "torchvision.ops.misc._NewEmptyTensorOp": "x.new_empty(shape), or no special case",
            "torchvision.ops.misc._new_empty_tensor": "x.new_empty(shape), or no special case",
            "torchvision.ops.misc._output_size": "torch.nn.functional.interpolate, which computes it",
            "torchvision.ops.misc._check_size_scale_factor": "torch.nn.functional.interpolate, which checks it",
        },
    ),
    Shim(
        "torchvision.transforms.scale",
        # 3D-ResNets subclasses them as `from torchvision.transforms import transforms`;
        # transforms.Scale, where they were defined
        targets=["torchvision.transforms", "torchvision.transforms.transforms"],
        requires={"torchvision": ">=0.12"},
        apply=restore_renamed_transforms,
        restores=list(RENAMED_TRANSFORMS),
        broke="torchvision 0.12 (2022-03) removed transforms.Scale and RandomSizedCrop (deprecated since 0.2, "
        "2017, in favour of Resize and RandomResizedCrop)",
        summary="restore transforms.Scale as Resize and RandomSizedCrop as RandomResizedCrop",
        replacement="torchvision.transforms.Resize and RandomResizedCrop",
        renames={"%s.%s" % (module, old): "%s.%s" % (module, new) for old, new in RENAMED_TRANSFORMS.items()
                 for module in ("torchvision.transforms", "torchvision.transforms.transforms")},
    ),
    Shim(
        "torchvision.transforms.functional.scale",
        targets=["torchvision.transforms.functional"],
        requires={"torchvision": ">=0.12"},
        apply=restore_functional_scale,
        restores=["scale"],
        broke="torchvision 0.12 (2022-03) removed transforms.functional.scale (deprecated since 0.2 in favour of resize)",
        summary="restore transforms.functional.scale as resize",
        replacement="torchvision.transforms.functional.resize",
        renames={"torchvision.transforms.functional.scale": "torchvision.transforms.functional.resize"},
    ),
    Shim(
        "torchvision.transforms.functional.get_image_size",
        targets=["torchvision.transforms.functional"],
        requires={"torchvision": ">=0.11"},
        apply=restore_get_image_size,
        restores=["_get_image_size"],
        broke="torchvision 0.11 (2021-10) renamed the private transforms.functional._get_image_size to "
        "get_image_size, which transforms copied from torchvision 0.8-0.10 still call",
        summary="restore transforms.functional._get_image_size(img) as get_image_size: [width, height]",
        replacement="torchvision.transforms.functional.get_image_size (or get_dimensions, [channels, height, width])",
        renames={"torchvision.transforms.functional._get_image_size": "torchvision.transforms.functional.get_image_size"},
    ),
)
