"""Shims for ``pytorch_lightning.profiler``, which 1.7 renamed ``pytorch_lightning.profilers``
(1.7-1.9 kept the old module as deprecated subclasses) and 2.0 removed."""

from __future__ import annotations

from compatfix.registry import PROVIDE, Shim
from compatfix.shims.pytorch_lightning import fill_module

SHIM_NAME = "pytorch_lightning.profiler"


def _names() -> dict[str, object]:
    from pytorch_lightning import profilers

    names: dict[str, object] = {name: getattr(profilers, name) for name in profilers.__all__}
    names["BaseProfiler"] = profilers.Profiler  # 1.7 renamed the base class (start/stop/summary)
    return names


def provide_profiler(module) -> None:
    fill_module(module, _names, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["pytorch_lightning.profiler"],
        kind=PROVIDE,
        requires={"pytorch_lightning": ">=2.0"},
        apply=provide_profiler,
        broke="pytorch-lightning 2.0 (2023-03) removed pytorch_lightning.profiler (renamed "
        "pytorch_lightning.profilers in 1.7)",
        summary="provide pytorch_lightning.profiler with pytorch_lightning.profilers' classes (SimpleProfiler, "
        "AdvancedProfiler, PyTorchProfiler, PassThroughProfiler, ...) and BaseProfiler as Profiler",
        replacement="pytorch_lightning.profilers",
        renames={"pytorch_lightning.profiler": "pytorch_lightning.profilers",
                 "pytorch_lightning.profiler.BaseProfiler": "pytorch_lightning.profilers.Profiler"},
    ),
)
