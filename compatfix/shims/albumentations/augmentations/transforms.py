"""Shims for ``albumentations.augmentations.transforms``: the module albumentations 2.0.7
removed, from which 2020-22 code imported its transforms (0.5 defined every transform
there; 1.x the pixel-level ones: Normalize, HueSaturationValue, RandomBrightness, ...).
Before 2.0.7 the module is albumentations' own, and lacks the transforms compatfix
restores (JpegCompression, Flip, ...); they are added to it, where their pickles name them."""

from __future__ import annotations

from typing import Any

from compatfix.patching import Lazy, has_working_name, provided_submodule, restore_names
from compatfix.registry import AFTER_IMPORT, PROVIDE, Shim
from compatfix.shims.albumentations import OLD_MODULE, OLD_NAMES, REMOVED_TRANSFORMS

MODULE = OLD_MODULE
# The transforms compatfix restores on albumentations that 1.x defined in this module.
RESTORED_HERE = (*REMOVED_TRANSFORMS, "Flip")


def provide_transforms(module) -> None:
    import albumentations

    # Today's transforms of those names, and those compatfix restores (JpegCompression, Flip,
    # ...); a name albumentations no longer has in any form (Cutout) stays missing.
    names = {name: getattr(albumentations, name) for name in OLD_NAMES if has_working_name(albumentations, name)}
    restore_names(module, names, "albumentations.augmentations.transforms")


def _from_albumentations(name: str) -> Lazy:
    def load() -> Any:
        import albumentations

        # albumentations itself is still importing when this module's shims run: its
        # restored names are read at their first use here, and stay missing where their
        # shim is off
        if not has_working_name(albumentations, name):
            raise AttributeError("module %r has no attribute %r" % (MODULE, name))
        return getattr(albumentations, name)

    return Lazy(load)


def add_restored_transforms(module) -> None:
    restore_names(module, {name: _from_albumentations(name) for name in RESTORED_HERE},
                  "albumentations.augmentations.transforms.restored_transforms")


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
        "albumentations.augmentations.transforms.restored_transforms",
        targets=[MODULE],
        kind=AFTER_IMPORT,
        requires={"albumentations": ">=1.4,<2.0.7"},
        apply=add_restored_transforms,
        restores=list(RESTORED_HERE),
        broke="albumentations 1.4 and 1.4.24 removed JpegCompression, RandomBrightness, RandomContrast and "
        "Flip from this module, which 1.x code imported them from, and where compatfix's restored "
        "classes say they live (their pickles look them up here)",
        summary="serve the transforms compatfix restores on albumentations from this module too",
        replacement="import the transforms from albumentations",
        rewrites={"%s.%s" % (MODULE, name): "albumentations' replacement for %s (see the shim that restores "
                  "albumentations.%s)" % (name, name) for name in RESTORED_HERE},
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
