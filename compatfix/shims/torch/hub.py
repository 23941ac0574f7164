"""Shims for ``torch.hub``: the private name its download helper had before torch 1.3
made it public, which 2019-21 model-zoo code still calls."""

from __future__ import annotations

from compatfix.patching import restore_names
from compatfix.registry import Shim


def restore_download_url_to_file(module) -> None:
    restore_names(module, {"_download_url_to_file": module.download_url_to_file}, "torch.hub.download_url_to_file")


SHIMS = (
    Shim(
        "torch.hub.download_url_to_file",
        targets=["torch.hub"],
        requires={"torch": ">=1.11"},
        apply=restore_download_url_to_file,
        restores=["_download_url_to_file"],
        broke="torch 1.3 made torch.hub._download_url_to_file public as download_url_to_file and kept the old "
        "name through 1.10; torch 1.11 (2022-03) removed it (maskrcnn-benchmark's model_zoo imports it)",
        summary="restore torch.hub._download_url_to_file(url, dst, hash_prefix, progress) as download_url_to_file",
        replacement="torch.hub.download_url_to_file",
        renames={"torch.hub._download_url_to_file": "torch.hub.download_url_to_file"},
    ),
)
