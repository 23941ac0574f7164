"""Shims for ``albumentations.augmentations.transforms``: the module albumentations 2.0.7
removed, from which 2020-22 code imported its transforms (0.5 defined every transform
there; 1.x the pixel-level ones: Normalize, HueSaturationValue, RandomBrightness, ...)."""

from __future__ import annotations

from compatfix.patching import has_working_name, provided_submodule, restore_names
from compatfix.registry import AFTER_IMPORT, PROVIDE, Shim
from compatfix.shims.albumentations import OLD_NAMES

MODULE = "albumentations.augmentations.transforms"


def provide_transforms(module) -> None:
    import albumentations

    # Today's transforms of those names, and those compatfix restores (JpegCompression, Flip,
    # ...); a name albumentations no longer has in any form (Cutout) stays missing.
    names = {name: getattr(albumentations, name) for name in OLD_NAMES if has_working_name(albumentations, name)}
    restore_names(module, names, "albumentations.augmentations.transforms")


def restore_transforms_attribute(augmentations) -> None:
    restore_names(augmentations, {"transforms": provided_submodule(MODULE)},
                  "albumentations.augmentations.transforms.attribute")


BROKE = ("albumentations 2.0.7 (2025-05) removed the module albumentations.augmentations.transforms "
         "(its transforms moved to albumentations.augmentations.pixel and others)")

SHIMS = (
    Shim(
        "albumentations.augmentations.transforms",
        targets=[MODULE],
        kind=PROVIDE,
        requires={"albumentations": ">=2.0.7"},
        apply=provide_transforms,
        broke=BROKE,
        summary="provide the module with albumentations' transforms of the names 0.5.2 and 1.3.1 exported "
        "from it",
        replacement="import the transforms from albumentations (import albumentations as A; A.Normalize)",
        renames={MODULE: "albumentations"},
    ),
    Shim(
        "albumentations.augmentations.transforms.attribute",
        targets=["albumentations.augmentations"],
        kind=AFTER_IMPORT,
        requires={"albumentations": ">=2.0.7"},
        apply=restore_transforms_attribute,
        restores=["transforms"],
        broke=BROKE,
        summary="restore albumentations.augmentations.transforms as an attribute (the provided module)",
        replacement="albumentations",
        renames={"albumentations.augmentations.transforms": "albumentations"},
    ),
)
