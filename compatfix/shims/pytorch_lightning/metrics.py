"""Shims for ``pytorch_lightning.metrics``, which 1.5 removed: from 1.3 on it re-exported
torchmetrics (``Metric``, ``MetricCollection``), the package Lightning's metrics had moved
to; 1.0-1.2's own ``Metric`` is the one torchmetrics continued."""

from __future__ import annotations

from compatfix.registry import PROVIDE, Shim
from compatfix.shims.pytorch_lightning import fill_module

SHIM_NAME = "pytorch_lightning.metrics"


def _names() -> dict[str, object]:
    import torchmetrics

    # Not its Accuracy, F1, ...: torchmetrics >= 0.11 renamed some and makes them take task=.
    return {"Metric": torchmetrics.Metric, "MetricCollection": torchmetrics.MetricCollection}


def provide_metrics(module) -> None:
    fill_module(module, _names, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["pytorch_lightning.metrics"],
        kind=PROVIDE,
        requires={"pytorch_lightning": ">=1.5", "torchmetrics": ">=0.3"},
        apply=provide_metrics,
        broke="pytorch-lightning 1.5 (2021-11) removed pytorch_lightning.metrics (deprecated in 1.3 for "
        "torchmetrics): class MyMetric(pl.metrics.Metric) fails at import",
        summary="provide pytorch_lightning.metrics with torchmetrics' Metric and MetricCollection, as 1.3-1.4 "
        "re-exported them",
        replacement="torchmetrics.Metric, torchmetrics.MetricCollection",
        renames={"pytorch_lightning.metrics.Metric": "torchmetrics.Metric",
                 "pytorch_lightning.metrics.MetricCollection": "torchmetrics.MetricCollection"},
        rewrites={"pytorch_lightning.metrics": "torchmetrics (Metric, MetricCollection; its metrics take task= "
                  "today)"},
    ),
)
