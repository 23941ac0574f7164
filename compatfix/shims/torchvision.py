"""Shims for torchvision: modules that 2020-21 code imports and torchvision removed."""

from __future__ import annotations

import importlib

from compatfix.patching import restore_names
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
)
