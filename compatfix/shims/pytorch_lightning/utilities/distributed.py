"""Shims for ``pytorch_lightning.utilities.distributed``, which 2.0 removed; its rank-zero
helpers had moved to ``pytorch_lightning.utilities.rank_zero`` in 1.6 (1.6-1.7 re-exported
them here, 1.8 stopped)."""

from __future__ import annotations

from compatfix.registry import PROVIDE, Shim
from compatfix.shims.pytorch_lightning import fill_module

SHIM_NAME = "pytorch_lightning.utilities.distributed"
# The names 1.5 defined here that are today's functions under utilities.rank_zero.
RANK_ZERO = ("rank_zero_only", "rank_zero_info", "rank_zero_warn", "rank_zero_debug", "rank_zero_deprecation")


def _names() -> dict[str, object]:
    from pytorch_lightning.utilities import rank_zero

    return {name: getattr(rank_zero, name) for name in RANK_ZERO}


def provide_distributed(module) -> None:
    fill_module(module, _names, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["pytorch_lightning.utilities.distributed"],
        kind=PROVIDE,
        requires={"pytorch_lightning": ">=2.0"},
        apply=provide_distributed,
        broke="pytorch-lightning 2.0 (2023-03) removed pytorch_lightning.utilities.distributed; rank_zero_only "
        "and rank_zero_info had moved to utilities.rank_zero in 1.6",
        summary="provide it with utilities.rank_zero's rank_zero_only, rank_zero_info, rank_zero_warn, "
        "rank_zero_debug and rank_zero_deprecation (the distributed helpers are lightning_fabric's private ones "
        "today, not restored)",
        replacement="pytorch_lightning.utilities.rank_zero",
        renames={"pytorch_lightning.utilities.distributed.%s" % name: "pytorch_lightning.utilities.rank_zero.%s" % name
                 for name in RANK_ZERO},
        rewrites={"pytorch_lightning.utilities.distributed": "pytorch_lightning.utilities.rank_zero for the "
                  "rank_zero_* helpers"},
    ),
)
