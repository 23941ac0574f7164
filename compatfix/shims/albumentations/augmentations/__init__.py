"""Shims for ``albumentations.augmentations``; ``transforms.py`` provides the module path
of albumentations 0.5-2.0.6."""
