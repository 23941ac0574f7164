"""Shims for ``pytorch_lightning.utilities.cloud_io``, which 2.0 removed: its ``load``,
``get_filesystem`` and ``atomic_save`` moved to ``lightning_fabric.utilities.cloud_io`` in
1.8 (``load`` and ``atomic_save`` as private ``_load`` and ``_atomic_save``)."""

from __future__ import annotations

from compatfix.registry import PROVIDE, Shim
from compatfix.shims.pytorch_lightning import fill_module

SHIM_NAME = "pytorch_lightning.utilities.cloud_io"


def _names() -> dict[str, object]:
    from lightning_fabric.utilities import cloud_io

    def load(path_or_url, map_location=None):
        """1.x's ``cloud_io.load``: ``torch.load`` of a path, URL (fsspec, http) or file
        object. torch's own ``weights_only`` default applies, with compatfix's checkpoint
        policy (docs/checkpoints.md)."""
        return cloud_io._load(path_or_url, map_location=map_location)

    def atomic_save(checkpoint, filepath):
        """1.x's ``cloud_io.atomic_save``: ``torch.save`` into memory, then one write."""
        return cloud_io._atomic_save(checkpoint, filepath)

    return {"load": load, "atomic_save": atomic_save, "get_filesystem": cloud_io.get_filesystem}


def provide_cloud_io(module) -> None:
    fill_module(module, _names, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["pytorch_lightning.utilities.cloud_io"],
        kind=PROVIDE,
        requires={"pytorch_lightning": ">=2.0", "lightning_fabric": ">=1.9"},
        apply=provide_cloud_io,
        broke="pytorch-lightning 2.0 (2023-03) removed pytorch_lightning.utilities.cloud_io (load, "
        "get_filesystem, atomic_save: lightning_fabric's since 1.8)",
        summary="provide it with load(path_or_url, map_location=None), get_filesystem and atomic_save over "
        "lightning_fabric.utilities.cloud_io",
        replacement="torch.load (through fsspec.open for a URL); lightning_fabric.utilities.cloud_io.get_filesystem",
        renames={"pytorch_lightning.utilities.cloud_io.get_filesystem":
                 "lightning_fabric.utilities.cloud_io.get_filesystem"},
        rewrites={"pytorch_lightning.utilities.cloud_io": "torch.load / fsspec; lightning_fabric.utilities.cloud_io",
                  "pytorch_lightning.utilities.cloud_io.load": "torch.load(path, map_location=...)"},
    ),
)
