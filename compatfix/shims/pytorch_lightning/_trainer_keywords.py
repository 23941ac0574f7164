"""The ``Trainer`` keywords of Lightning 1.x that 2.x removed, each turned into what 2.x
says for it, by ``pytorch_lightning.trainer.removed_keywords``.

Read from 1.5's ``trainer.py`` and its connectors (1.0-1.4 where they differ), and 2.x's
changelog for what replaced each one. A keyword counts as given only when its value is not
1.x's default (``from_argparse_args`` passes every default), and a 2.x keyword the call
gives is never overridden. What 1.x did that 2.x has as a callback is that callback, built
as 1.x built it; a keyword that only tuned logging or memory is dropped with one warning;
one whose 1.x maths 2.x cannot do (DataParallel over several devices, apex O2, ddp2,
horovod, fairscale) raises, naming what to use instead.
"""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path
from typing import Any, List, Optional, Union

# name -> (1.x annotation, 1.x default: the value that means "not given")
OLD_KEYWORDS: dict[str, tuple[Any, Any]] = {
    "gpus": (Optional[Union[List[int], str, int]], None),
    "tpu_cores": (Optional[Union[List[int], str, int]], None),
    "num_processes": (Optional[int], 1),
    "auto_select_gpus": (bool, False),
    "distributed_backend": (Optional[str], None),
    "progress_bar_refresh_rate": (Optional[int], None),
    "process_position": (int, 0),
    "checkpoint_callback": (Optional[bool], None),
    "weights_summary": (Optional[str], "top"),
    "resume_from_checkpoint": (Optional[Union[Path, str]], None),
    "reload_dataloaders_every_epoch": (bool, False),
    "replace_sampler_ddp": (bool, True),
    "terminate_on_nan": (Optional[bool], None),
    "track_grad_norm": (Union[int, float, str], -1),
    "stochastic_weight_avg": (bool, False),
    "amp_backend": (Optional[str], "native"),
    "amp_level": (Optional[str], None),
    "flush_logs_every_n_steps": (Optional[int], None),
    "move_metrics_to_cpu": (bool, False),
    "log_gpu_memory": (Optional[str], None),
    "prepare_data_per_node": (Optional[bool], None),
}
# 1.0-1.4's defaults where 1.5 made them None: passing them asked for nothing either.
EARLIER_DEFAULTS = {"prepare_data_per_node": True, "flush_logs_every_n_steps": 100, "amp_level": "O2",
                    "checkpoint_callback": True, "terminate_on_nan": False}
# Keywords that only tuned logging, memory or where data was prepared: no 2.x meaning, and
# dropping them changes no result. Each with what 2.x offers instead.
DROPPED = {
    "flush_logs_every_n_steps": "the logger's own flush_logs_every_n_steps (CSVLogger) or flush_secs",
    "move_metrics_to_cpu": "nothing: 2.x keeps logged metrics where they are computed",
    "log_gpu_memory": "the DeviceStatsMonitor callback",
    "prepare_data_per_node": "the prepare_data_per_node attribute of the LightningModule or DataModule",
}
# 1.x's distributed-type names (distributed_backend=, or accelerator= before 1.5) that 2.x
# has no strategy for, and why their maths cannot be had today.
NO_STRATEGY = {
    "ddp2": "ddp2 (DataParallel in a node, DDP across nodes) was removed in Lightning 1.8",
    "horovod": "horovod was removed in Lightning 2.0",
    "ddp_sharded": "fairscale's sharded DDP was removed in Lightning 2.0 (strategy='fsdp' is its successor)",
    "ddp_sharded_spawn": "fairscale's sharded DDP was removed in Lightning 2.0 (strategy='fsdp' is its successor)",
    "ddp_fully_sharded": "fairscale's FSDP was removed in Lightning 2.0 (strategy='fsdp' is torch's)",
}
SHIM = "pytorch_lightning.trainer.removed_keywords"
_warned: set[str] = set()


def warn_once(keyword: str, message: str) -> None:
    if keyword not in _warned:
        _warned.add(keyword)
        warnings.warn("compatfix (%s): Trainer(%s=...) %s" % (SHIM, keyword, message), UserWarning, stacklevel=4)


def old_parameters() -> list[inspect.Parameter]:
    """The removed keywords as parameters, with 1.x's annotations and defaults (for the
    argparse helpers: 1.x's ``Trainer.add_argparse_args`` offered them)."""
    return [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
            for name, (annotation, default) in OLD_KEYWORDS.items()]


def is_strategy_name(accelerator: Any) -> bool:
    """Whether ``accelerator=`` is one of 1.x's distributed types ("ddp", "dp", ...), which
    1.0-1.4 took there; 2.x's accelerator names and objects are not."""
    if not isinstance(accelerator, str):
        return False
    from pytorch_lightning.strategies import StrategyRegistry

    return accelerator in ("dp", "ddp_cpu", "tpu_spawn") or accelerator in NO_STRATEGY or (
        accelerator in StrategyRegistry.available_strategies() and accelerator not in ("single_device", "single_tpu"))


def parse_device_ids(value: Any) -> Any:
    """1.x's ``device_parser._normalize_parse_gpu_string_input``: "-1" is all, "0,1" a list
    of ids, "2" a count; ints and lists stay as they are."""
    if not isinstance(value, str):
        return value
    value = value.strip()
    if value == "-1":
        return -1
    if "," in value:
        return [int(x.strip()) for x in value.split(",") if x.strip()]
    return int(value)


class Keywords(dict):
    """A Trainer call's keywords, knowing today's defaults: a 2.x keyword left at its default
    (``from_argparse_args`` passes them all) is not a choice the call made."""

    def __init__(self, kwargs: dict[str, Any], defaults: dict[str, Any]) -> None:
        super().__init__(kwargs)
        self.defaults = defaults

    def given(self, name: str) -> bool:
        return name in self and not (name in self.defaults and self[name] is self.defaults[name] or (
            isinstance(self[name], (str, int, float, bool, type(None))) and self[name] == self.defaults.get(name)))

    def choose(self, name: str, value: Any) -> None:
        """Set a 2.x keyword to what an old one asked for, unless the call chose it itself."""
        if not self.given(name):
            self[name] = value


def _misconfigured(message: str) -> Exception:
    from pytorch_lightning.utilities.exceptions import MisconfigurationException

    return MisconfigurationException("compatfix (%s): %s" % (SHIM, message))


def _callbacks(kwargs: Keywords) -> list[Any]:
    callbacks = kwargs.get("callbacks")
    if callbacks is None:
        return []
    return list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]


def _device_count(devices: Any) -> int:
    if isinstance(devices, (list, tuple)):
        return len(devices)
    return devices if isinstance(devices, int) and devices >= 0 else 2  # -1: all, counted as several


def _devices_and_strategy(old: dict[str, Any], kwargs: Keywords) -> None:
    accelerator = kwargs.get("accelerator")
    backend = old.get("distributed_backend")
    if is_strategy_name(accelerator):  # before 1.5, Trainer(accelerator="ddp") named the distributed type
        backend = backend or accelerator
        kwargs.pop("accelerator")
    device, devices = None, None
    gpus = parse_device_ids(old.get("gpus"))
    tpu_cores = parse_device_ids(old.get("tpu_cores"))
    if gpus not in (None, 0, []):
        device, devices = "gpu", gpus
        if old.get("auto_select_gpus") and isinstance(gpus, int) and gpus > 0:
            from lightning_fabric.accelerators.cuda import find_usable_cuda_devices

            devices = find_usable_cuda_devices(gpus)  # 1.x's pick_multiple_gpus, moved
    elif tpu_cores is not None:
        device, devices = "tpu", tpu_cores
    elif old.get("num_processes") not in (None, 1):
        device, devices = "cpu", old["num_processes"]
    elif backend is not None or "gpus" in old:  # 1.x ran on the CPU unless told otherwise
        device = "cpu"
    strategy = None
    if backend == "ddp_cpu":  # 1.x: DDP spawned over num_processes CPU processes
        device, strategy = "cpu", "ddp_spawn"
    elif backend == "dp":
        if _device_count(devices) > 1:
            raise _misconfigured(
                "strategy 'dp' (DataParallel) over several devices was removed in Lightning 2.0 and has no "
                "equivalent: strategy='ddp' splits nothing, each process takes a whole batch, so divide the "
                "batch size by the device count and move training_step_end's reduction into training_step")
        # DataParallel over one device is that device: what 1.x computed
    elif backend in NO_STRATEGY:
        raise _misconfigured("strategy %r has no Lightning 2.x counterpart: %s" % (backend, NO_STRATEGY[backend]))
    elif backend == "tpu_spawn":
        strategy = "xla"  # 1.x's TPUSpawnPlugin is 2.x's XLAStrategy
    elif backend is not None:
        strategy = backend
    if device is not None:
        kwargs.choose("accelerator", device)
    if devices is not None:
        kwargs.choose("devices", devices)
    several = kwargs.get("devices") not in (None, "auto") and _device_count(kwargs["devices"]) > 1
    if strategy is None and backend is None and device in ("gpu", "cpu") and several:
        strategy = "ddp_spawn"  # 1.5's choice for several GPUs or processes without a backend
    if strategy is not None:
        kwargs.choose("strategy", strategy)


def _progress_bar(old: dict[str, Any], kwargs: Keywords) -> None:
    from pytorch_lightning.callbacks import ProgressBar, TQDMProgressBar

    rate = old.get("progress_bar_refresh_rate")
    if rate == 0:
        kwargs.choose("enable_progress_bar", False)
        return
    callbacks = _callbacks(kwargs)
    if kwargs.get("enable_progress_bar") is False or any(isinstance(c, ProgressBar) for c in callbacks):
        return  # 1.x: a progress bar among the callbacks is the one used
    bar = TQDMProgressBar(refresh_rate=1 if rate is None else rate, process_position=old.get("process_position", 0))
    kwargs["callbacks"] = callbacks + [bar]


def _model_summary(old: dict[str, Any], kwargs: Keywords) -> None:
    summary = old["weights_summary"]
    if summary is None:
        kwargs.choose("enable_model_summary", False)
    elif summary == "full" and kwargs.get("enable_model_summary") is not False:
        from pytorch_lightning.callbacks import ModelSummary

        callbacks = _callbacks(kwargs)
        if not any(isinstance(c, ModelSummary) for c in callbacks):
            kwargs["callbacks"] = callbacks + [ModelSummary(max_depth=-1)]  # 1.5's mode "full"
    elif summary != "top":
        raise _misconfigured("weights_summary can be None, 'top' or 'full', not %r" % (summary,))


def _precision(old: dict[str, Any], kwargs: Keywords) -> None:
    backend = old.get("amp_backend", "native")
    level = old.get("amp_level")
    half = str(kwargs.get("precision")) in ("16", "16-mixed")
    if backend == "apex" and half:
        if level != "O1":  # 1.x's default apex level was O2: fp16 weights, fp32 master copies
            raise _misconfigured(
                "amp_backend='apex' at level %s was removed in Lightning 2.0; native AMP (precision='16-mixed') "
                "matches apex O1 only" % (level or "O2"))
        kwargs["precision"] = "16-mixed"
        warn_once("amp_backend", "'apex' at O1 is run as native AMP (precision='16-mixed'), its 2.x successor")
    elif backend not in ("native", "apex"):
        raise _misconfigured("amp_backend can be 'native' or 'apex', not %r" % (backend,))
    elif backend == "apex" or level is not None:
        warn_once("amp_backend", "is ignored: it applies to precision=16 only, with native AMP in 2.x")


_NO_DEFAULT = object()


def _is_default(value: Any, default: Any) -> bool:
    """Whether ``value`` is ``default``: a bool only equals a bool, a number a number (the
    command line gives ``track_grad_norm=-1.0`` for 1.x's ``-1``)."""
    if value is default:
        return True
    if isinstance(value, bool) or isinstance(default, bool):
        return isinstance(value, bool) and isinstance(default, bool) and value == default
    if isinstance(value, (int, float)) and isinstance(default, (int, float)):
        return value == default
    return isinstance(value, str) and isinstance(default, str) and value == default


def translate(given: dict[str, Any], defaults: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Trainer call's keywords with the 1.x ones replaced by their 2.x meaning
    (``defaults``: today's), and what the Trainer keeps for later (``resume_from_checkpoint``)."""
    kwargs = Keywords(given, defaults)
    old = {name: kwargs.pop(name) for name in OLD_KEYWORDS if name in kwargs}
    old = {name: value for name, value in old.items()
           if not _is_default(value, OLD_KEYWORDS[name][1]) and not _is_default(value, EARLIER_DEFAULTS.get(name, _NO_DEFAULT))}
    if is_strategy_name(kwargs.get("accelerator")):
        old.setdefault("distributed_backend", None)
    if any(name in old for name in ("gpus", "tpu_cores", "num_processes", "distributed_backend")):
        _devices_and_strategy(old, kwargs)
    if "progress_bar_refresh_rate" in old or "process_position" in old:
        _progress_bar(old, kwargs)
    checkpoint = old.get("checkpoint_callback")
    if isinstance(checkpoint, bool):
        kwargs.choose("enable_checkpointing", checkpoint)
    elif checkpoint is not None:  # 1.0-1.2: a ModelCheckpoint instance
        kwargs["callbacks"] = _callbacks(kwargs) + [checkpoint]
        kwargs.choose("enable_checkpointing", True)
    if "weights_summary" in old:
        _model_summary(old, kwargs)
    if old.get("reload_dataloaders_every_epoch"):
        kwargs.choose("reload_dataloaders_every_n_epochs", 1)  # its 1.4 replacement
    if "replace_sampler_ddp" in old:
        kwargs.choose("use_distributed_sampler", old["replace_sampler_ddp"])  # renamed in 2.0
    added = []
    if old.get("terminate_on_nan"):
        from compatfix.shims.pytorch_lightning._callbacks import terminate_on_nan

        added.append(terminate_on_nan())
    if "track_grad_norm" in old:
        from compatfix.shims.pytorch_lightning._callbacks import track_grad_norm

        added.append(track_grad_norm(old["track_grad_norm"]))
    if old.get("stochastic_weight_avg"):
        from pytorch_lightning.callbacks import StochasticWeightAveraging

        from compatfix.shims.pytorch_lightning._callbacks import swa_at_optimizer_lrs

        if not any(isinstance(c, StochasticWeightAveraging) for c in _callbacks(kwargs)):
            kwargs["callbacks"] = [swa_at_optimizer_lrs()] + _callbacks(kwargs)  # 1.5 put it first
    if added:
        kwargs["callbacks"] = _callbacks(kwargs) + added
    if "amp_backend" in old or "amp_level" in old:
        _precision(old, kwargs)
    for name, instead in DROPPED.items():
        if name in old:
            warn_once(name, "has no Lightning 2.x meaning and is ignored (it tuned no result); use %s" % instead)
    return dict(kwargs), {"resume_from_checkpoint": old.get("resume_from_checkpoint")}
