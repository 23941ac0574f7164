"""Shims for pytorch-lightning: the 1.x API that 2020-22 code uses and Lightning removed
between 1.2 and 2.0, restored where today's Lightning has the same thing under another
name or place, and Lightning 1.x on today's Python.

The files mirror the modules they fix: ``utilities/`` (its moved submodules, and 1.x's
``LightningEnum`` formatting on Python >= 3.11), ``trainer.py`` and ``core/datamodule.py``
(``add_argparse_args`` / ``from_argparse_args``, over ``_argparse.py``), ``callbacks/``
(``ModelCheckpoint``'s 1.x keywords, ``callbacks.base``), ``metrics.py`` and
``profiler.py`` and ``cluster_environments.py`` (modules 1.x had and today's Lightning or
torchmetrics serve under another name), ``loggers.py`` (``LoggerCollection``), and the
Trainer's removed keywords and epoch-end hooks (``trainer.py`` over ``_trainer_keywords.py``
and ``_callbacks.py``).

A moved module is two records, as for ``sklearn.externals.joblib``: a ``provide`` shim
makes ``import pytorch_lightning.profiler`` work, and an ``after_import`` shim on the
parent restores the attribute (``pl.profiler.SimpleProfiler`` without that import), made
at its first use. The helpers below are what both kinds of record call.
"""

from __future__ import annotations

from compatfix.patching import Lazy, restore_names
from compatfix.registry import AFTER_IMPORT, Shim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Mapping


def restore_submodules(parent, children: Mapping[str, str], shim: str) -> None:
    """Give ``parent`` its removed submodules ``children`` (name -> the module's full name)
    as attributes, each imported at its first use: that import is where the module's
    ``provide`` shim makes it."""
    def importer(full_name: str) -> Lazy:
        import importlib

        return Lazy(lambda: importlib.import_module(full_name))

    restore_names(parent, {name: importer(full_name) for name, full_name in children.items()}, shim)


def fill_module(module, names: Callable[[], Mapping[str, object]], shim: str) -> None:
    """Fill a provided module with ``names()``: the old module's names, taken from where
    they live today (imported here, when the old module is imported, not before)."""
    restore_names(module, dict(names()), shim)


def restore_moved_modules(module) -> None:
    restore_submodules(module, {"metrics": "pytorch_lightning.metrics", "profiler": "pytorch_lightning.profiler",
                                "cluster_environments": "pytorch_lightning.cluster_environments"},
                       "pytorch_lightning.moved_modules")


SHIMS = (
    Shim(
        "pytorch_lightning.moved_modules",
        targets=["pytorch_lightning"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=1.5"},
        apply=restore_moved_modules,
        restores=["metrics", "profiler", "cluster_environments"],
        broke="pytorch-lightning 1.5 (2021-11) removed pytorch_lightning.metrics (torchmetrics since 1.3) and 2.0 "
        "(2023-03) removed pytorch_lightning.profiler (pytorch_lightning.profilers since 1.7); 1.2 had moved "
        "pytorch_lightning.cluster_environments to plugins.environments",
        summary="restore pl.metrics, pl.profiler and pl.cluster_environments as the modules that their provide "
        "shims make, imported at their first use",
        replacement="torchmetrics, pytorch_lightning.profilers",
        renames={"pytorch_lightning.profiler": "pytorch_lightning.profilers",
                 "pytorch_lightning.cluster_environments": "pytorch_lightning.plugins.environments"},
        rewrites={"pytorch_lightning.metrics": "torchmetrics (Metric, MetricCollection; its metrics take task= "
                  "today)"},
    ),
)
