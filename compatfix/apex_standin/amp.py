"""``apex.amp`` on torch's own mixed precision.

apex's contract, kept here: ``amp.initialize`` takes the model(s) and optimizer(s) (one
or lists) and an ``opt_level``; ``amp.scale_loss`` yields ``loss.float() * loss_scale``
and, on exit, unscales the gradients of the optimizers' (master) parameters, so that
clipping ``amp.master_params(optimizer)`` sees true gradients, and checks them for
inf/NaN. Dynamic loss scaling starts at 2**16 (capped by ``max_loss_scale``), halves
and skips the next ``optimizer.step()`` on overflow, and doubles after 2000 clean steps.
``amp.state_dict()`` is apex's ``{'loss_scaler0': {'loss_scale': ..., 'unskipped': ...}}``.

How precision is obtained instead of apex's function patching:

- O1 on CUDA models: torch autocast (float16) is switched on for the thread that called
  ``initialize``, as apex's patched torch functions were active for the whole process
  after it; ``optimizer.step()`` runs with casts off, and the cast cache is dropped after
  each ``scale_loss`` and step (apex drops its own cache at the same points).
- On the CPU the mixed-precision type is float32, the rule CPU mode uses for
  ``torch.cuda.amp`` (docs/cpu-mode.md): O1 casts nothing, and O2/O3 keep the model in
  float32 unless ``cast_model_type`` is given explicitly. Loss scaling still runs as
  apex defines it, so the loss-scale state of a checkpoint means the same everywhere.
- O2/O3: the model is cast (O2 keeps batch norms in float32), its forward casts inputs
  to that type and outputs to float32, and O2 keeps float32 master weights in the
  optimizer (the optimizer's parameters become the masters; each step copies them back
  into the model), as apex does.

Per-step work is one pass over the parameters, one fused unscale-and-check kernel per
device and dtype (``torch._amp_foreach_non_finite_check_and_unscale_``, the kernel
``torch.amp.GradScaler`` uses) and one device-to-host read of the overflow flag.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import types
from collections import OrderedDict
from typing import Any, Callable, Iterator

import torch

__all__ = [
    "initialize", "scale_loss", "master_params", "state_dict", "load_state_dict",
    "disable_casts", "half_function", "float_function", "promote_function",
    "register_half_function", "register_float_function", "register_promote_function",
    "LossScaler", "_amp_state",
]

_HALF = (torch.float16, torch.bfloat16)


class AmpState:
    """Process-wide amp state, as apex keeps it (``amp._amp_state``): scripts read
    ``amp._amp_state.loss_scalers[0].loss_scale()`` to log the scale.
    ``opt_properties`` exists only once ``initialize`` has run."""

    def __init__(self) -> None:
        self.hard_override = False
        self.allow_incoming_model_not_fp32 = False
        self.verbosity = 1
        self.loss_scalers: list[LossScaler] = []
        self.cast_device: str | None = None  # "cuda" while O1 autocast is on


_amp_state = AmpState()


def maybe_print(msg: str, rank0: bool = False) -> None:
    if _amp_state.verbosity <= 0:
        return
    if rank0 and torch.distributed.is_available() and torch.distributed.is_initialized():
        if torch.distributed.get_world_size() > 1 and torch.distributed.get_rank() != 0:
            return
    print(msg)


def warn_or_err(msg: str) -> None:
    if _amp_state.hard_override:
        print("Warning:  " + msg)
    else:
        raise RuntimeError(msg)


# --- options ----------------------------------------------------------------------------


class Properties:
    """apex's option set; assignments are checked for consistency with the opt level."""

    def __init__(self) -> None:
        self.__dict__["options"] = {
            "enabled": False,
            "opt_level": None,
            "cast_model_type": None,
            "patch_torch_functions": False,
            "keep_batchnorm_fp32": None,
            "master_weights": None,
            "loss_scale": 1.0,
        }

    def __getattr__(self, name: str) -> Any:
        options = self.__dict__["options"]
        if name in options:
            return options[name]
        raise AttributeError("'{}' object has no attribute '{}'".format(type(self).__name__, name))

    def __setattr__(self, name: str, value: Any) -> None:
        options = self.__dict__["options"]
        if name not in options:
            self.__dict__[name] = value
            return
        o1 = options["opt_level"] == "O1"
        if name == "cast_model_type" and o1 and value not in (None, False, torch.float32):
            warn_or_err("O1 inserts casts around Torch functions rather than model weights, so with O1, "
                        "the model weights themselves should remain FP32. If you wish to cast the model "
                        "to a different type, use opt_level='O2' or 'O3'. cast_model_type was {}".format(value))
        elif name == "patch_torch_functions" and value and not o1:
            warn_or_err("Currently, patch_torch_functions=True should only be set by selecting opt_level='O1'.")
        elif name == "keep_batchnorm_fp32":
            if o1 and value is not None:
                warn_or_err("With opt_level O1, batchnorm functions are automatically patched to run in FP32, "
                            "so keep_batchnorm_fp32 should be None. keep_batchnorm_fp32 was {}".format(value))
            value = {"False": False, "True": True}.get(value, value) if isinstance(value, str) else value
            assert value in (True, False, None), (
                "keep_batchnorm_fp32 must be a boolean, the string 'True' or 'False', or None, "
                "found keep_batchnorm_fp32={}".format(value))
        elif name == "master_weights" and o1 and value is not None:
            warn_or_err("It doesn't make sense to use master_weights with O1. "
                        "With O1, your model weights themselves should be FP32.")
        elif name == "loss_scale" and value != "dynamic":
            value = float(value)
        options[name] = value


# opt level -> (brief, defaults), as apex defines them.
OPT_LEVELS = {
    "O0": ("O0:  Pure FP32 training.\n", dict(
        cast_model_type=torch.float32, patch_torch_functions=False, keep_batchnorm_fp32=None,
        master_weights=False, loss_scale=1.0)),
    "O1": ("O1:  Insert automatic casts around Pytorch functions and Tensor methods.\n", dict(
        cast_model_type=None, patch_torch_functions=True, keep_batchnorm_fp32=None,
        master_weights=None, loss_scale="dynamic")),
    "O2": ("O2:  FP16 training with FP32 batchnorm and FP32 master weights.\n", dict(
        cast_model_type=torch.float16, patch_torch_functions=False, keep_batchnorm_fp32=True,
        master_weights=True, loss_scale="dynamic")),
    "O3": ("O3:  Pure FP16 training.", dict(
        cast_model_type=torch.float16, patch_torch_functions=False, keep_batchnorm_fp32=False,
        master_weights=False, loss_scale=1.0)),
}


def _print_options(properties: Properties) -> None:
    for key, value in properties.options.items():
        maybe_print("{:22} : {}".format(key, value), True)


# --- loss scaling -----------------------------------------------------------------------


class LossScaler:
    """apex's loss scaler (``apex.amp.scaler.LossScaler``): same attributes and rules.

    Dynamic: starts at ``min(max_loss_scale, 2**16)``; an overflow halves it (not below
    ``min_loss_scale``) and resets the count of clean steps (``_unskipped``); after
    ``scale_window`` (2000) clean steps it doubles (not above ``max_loss_scale``).
    """

    def __init__(self, loss_scale: Any, init_scale: float = 2.0 ** 16, scale_factor: float = 2.0,
                 scale_window: int = 2000, min_loss_scale: float | None = None,
                 max_loss_scale: float = 2.0 ** 24) -> None:
        self.dynamic = loss_scale == "dynamic"
        self._loss_scale = min(max_loss_scale, init_scale) if self.dynamic else float(loss_scale)
        self._max_loss_scale = max_loss_scale
        self._min_loss_scale = min_loss_scale
        self._scale_seq_len = scale_window
        self._scale_factor = scale_factor
        self._unskipped = 0
        self._has_overflow = False
        self._found_inf: dict[torch.device, torch.Tensor] = {}
        self._inverse: dict[torch.device, tuple[float, torch.Tensor]] = {}

    def loss_scale(self) -> float:
        return self._loss_scale

    def clear_overflow_state(self) -> None:
        self._has_overflow = False

    def unscale(self, grads: list[torch.Tensor]) -> None:
        """Divide ``grads`` by the loss scale in place; with dynamic scaling, note whether
        any of them holds an inf or NaN (read by ``update_scale``)."""
        scale = self._loss_scale
        if not grads or (scale == 1.0 and not self.dynamic):
            return
        groups: dict[tuple[torch.device, torch.dtype], list[torch.Tensor]] = {}
        for grad in grads:
            groups.setdefault((grad.device, grad.dtype), []).append(grad)
        if not self.dynamic:
            for group in groups.values():
                torch._foreach_mul_(group, 1.0 / scale)
            return
        found: dict[torch.device, torch.Tensor] = {}
        for (device, _), group in groups.items():
            found_inf = found.get(device)
            if found_inf is None:
                found_inf = self._found_inf.get(device)
                if found_inf is None:
                    found_inf = self._found_inf[device] = torch.zeros(1, device=device)
                else:
                    found_inf.zero_()
                found[device] = found_inf
            torch._amp_foreach_non_finite_check_and_unscale_(group, found_inf, self._inverse_on(device, scale))
        # One device-to-host read per device, as apex's one read of its overflow buffer.
        self._has_overflow = self._has_overflow or any(bool(flag.item()) for flag in found.values())

    def _inverse_on(self, device: torch.device, scale: float) -> torch.Tensor:
        cached = self._inverse.get(device)
        if cached is None or cached[0] != scale:
            cached = self._inverse[device] = (scale, torch.full((1,), 1.0 / scale, dtype=torch.float32, device=device))
        return cached[1]

    def update_scale(self) -> bool:
        """Apply the step's outcome to the scale; True if the step must be skipped."""
        if self._has_overflow and self.dynamic:
            should_skip = True
            halved = self._loss_scale / self._scale_factor
            self._loss_scale = max(self._min_loss_scale, halved) if self._min_loss_scale else halved
            self._unskipped = 0
        else:
            should_skip = False
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len and self.dynamic:
            self._loss_scale = min(self._max_loss_scale, self._loss_scale * self._scale_factor)
            self._unskipped = 0
        return should_skip


# --- model casting ----------------------------------------------------------------------


def _cast(value: Any, dtype: torch.dtype) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, dict):
        return type(value)((key, _cast(item, dtype)) for key, item in value.items())
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_cast(item, dtype) for item in value)
    if isinstance(value, tuple):  # a namedtuple
        return type(value)(*(_cast(item, dtype) for item in value))
    return value


def _patch_forward(model: torch.nn.Module, inputs: torch.dtype | None, outputs: torch.dtype) -> None:
    forward = model.forward

    @functools.wraps(forward)
    def cast_forward(*args, **kwargs):
        if inputs is not None:
            args, kwargs = _cast(args, inputs), _cast(kwargs, inputs)
        return _cast(forward(*args, **kwargs), outputs)

    model.forward = cast_forward


def _convert_network(model: torch.nn.Module, dtype: torch.dtype, keep_batchnorm_fp32: bool) -> None:
    from torch.nn.modules.batchnorm import _BatchNorm

    for module in model.modules():
        if keep_batchnorm_fp32 and isinstance(module, _BatchNorm) and module.affine:
            continue
        for tensor in list(module.parameters(recurse=False)) + list(module.buffers(recurse=False)):
            if tensor.is_floating_point():
                tensor.data = tensor.data.to(dtype)
                if tensor.grad is not None:
                    tensor.grad.data = tensor.grad.data.to(dtype)


def _float_state_dict_hook(module, state_dict, prefix, local_metadata) -> None:
    # apex O2/O3: model.state_dict() holds float32 weights, so checkpoints load anywhere.
    for key, value in state_dict.items():
        if key.startswith(prefix) and isinstance(value, torch.Tensor) and value.dtype in _HALF:
            state_dict[key] = value.float()


def _check_models(models: list) -> None:
    apex_ddp = [sys.modules[name].DistributedDataParallel for name in ("apex.parallel", __package__ + ".parallel")
                if hasattr(sys.modules.get(name), "DistributedDataParallel")]
    for model in models:
        parallel_type = None
        if isinstance(model, torch.nn.parallel.DistributedDataParallel):
            parallel_type = "torch.nn.parallel.DistributedDataParallel"
        if any(type(model) is cls for cls in apex_ddp):
            parallel_type = "apex.parallel.DistributedDataParallel"
        if isinstance(model, torch.nn.parallel.DataParallel):
            parallel_type = "torch.nn.parallel.DataParallel"
        if parallel_type is not None:
            raise RuntimeError("Incoming model is an instance of {}. ".format(parallel_type) +
                               "Parallel wrappers should only be applied to the model(s) AFTER \n"
                               "the model(s) have been returned from amp.initialize.")


def _check_params_fp32(models: list) -> None:
    # apex also demands CUDA tensors; the stand-in accepts CPU models on purpose.
    for model in models:
        for kind, named in (("param", model.named_parameters()), ("buffer", model.named_buffers())):
            for name, tensor in named:
                if tensor.is_floating_point() and tensor.dtype in _HALF:
                    warn_or_err("Found {} {} with type {}, expected torch.cuda.FloatTensor.\n"
                                "When using amp.initialize, you do not need to call .half() on your model\n"
                                "before passing it, no matter what optimization level you choose.".format(
                                    kind, name, tensor.type()))


# --- optimizers -------------------------------------------------------------------------


class _AmpStash:
    """What amp keeps on each optimizer (``optimizer._amp_stash``, as apex names it)."""

    def __init__(self, step: Callable, zero_grad: Callable) -> None:
        self.step = step  # the optimizer's step and zero_grad as they were before amp
        self.zero_grad = zero_grad
        self.pairs: list[tuple[torch.nn.Parameter, torch.Tensor]] = []  # (model param, fp32 master)
        self.masters: set[int] = set()  # ids of the masters
        self.params_have_scaled_gradients = False
        self.skip: tuple[int, LossScaler] | None = None  # (loss id, scaler) of an overflow


def _amp_step(self, *args, **kwargs):
    """``optimizer.step`` after ``amp.initialize``: skipped once after an overflow; the
    update runs without autocast and fp32 master weights are copied back to the model."""
    stash = self._amp_stash
    if stash.skip is not None:
        if args and args[0] is not None or kwargs.get("closure") is not None:
            raise RuntimeError("Currently, Amp does not support closure use with optimizers.")
        loss_id, scaler = stash.skip
        stash.skip = None
        maybe_print("Gradient overflow.  Skipping step, loss scaler {} reducing loss scale to {}".format(
            loss_id, scaler.loss_scale()))
        for _, master in stash.pairs:
            master.grad = None
        return None
    if _amp_state.cast_device is not None:
        with torch.autocast(_amp_state.cast_device, enabled=False):
            result = stash.step(*args, **kwargs)
    else:
        result = stash.step(*args, **kwargs)
    if stash.pairs:
        with torch.no_grad():
            for model_param, master in stash.pairs:
                model_param.copy_(master)
    return result


def _amp_zero_grad(self, *args, **kwargs):
    self._amp_stash.zero_grad(*args, **kwargs)
    for model_param, _ in self._amp_stash.pairs:
        model_param.grad = None


def _process_optimizer(optimizer: torch.optim.Optimizer, master_weights: bool) -> torch.optim.Optimizer:
    if hasattr(optimizer, "_amp_stash"):  # already prepared
        return optimizer
    # Bound methods (not plain functions): torch's LR schedulers wrap ``optimizer.step``
    # through its ``__func__``.
    stash = optimizer._amp_stash = _AmpStash(optimizer.step, optimizer.zero_grad)
    if master_weights:
        for group in optimizer.param_groups:
            for index, param in enumerate(group["params"]):
                if param.dtype in _HALF:
                    master = param.detach().clone().float().requires_grad_(param.requires_grad)
                    group["params"][index] = master
                    stash.pairs.append((param, master))
                    if param in optimizer.state:
                        optimizer.state[master] = optimizer.state.pop(param)
        stash.masters = {id(master) for _, master in stash.pairs}
        if stash.pairs:
            # Recast any per-parameter state to the masters' dtype, as apex does.
            optimizer.load_state_dict(optimizer.state_dict())
            optimizer.zero_grad = types.MethodType(_amp_zero_grad, optimizer)
    optimizer.step = types.MethodType(_amp_step, optimizer)
    return optimizer


def _stash_of(optimizer) -> _AmpStash:
    stash = getattr(optimizer, "_amp_stash", None)
    if stash is None:  # an optimizer that did not go through amp.initialize
        _process_optimizer(optimizer, master_weights=False)
        stash = optimizer._amp_stash
    return stash


def _prepare_backward(optimizer, stash: _AmpStash, scale: float) -> None:
    # Gradients accumulated by earlier (already unscaled) backward passes are brought to
    # the current scale, so that after this backward all of them are unscaled together.
    # (apex stashes and re-adds them; with a power-of-two scale both are exact.) fp16
    # model gradients of master-weight pairs were folded into the masters already.
    for model_param, _ in stash.pairs:
        model_param.grad = None
    existing = [param.grad for group in optimizer.param_groups for param in group["params"]
                if param.grad is not None and id(param) not in stash.masters]
    if existing and scale != 1.0:
        torch._foreach_mul_(existing, scale)


def _scaled_grads(optimizer, stash: _AmpStash) -> tuple[list[torch.Tensor], list]:
    """The gradients to unscale, and the (master, fresh gradient) pairs to fold in after."""
    if not stash.pairs:
        return [param.grad for group in optimizer.param_groups for param in group["params"]
                if param.grad is not None], []
    fresh = []
    for model_param, master in stash.pairs:
        if model_param.grad is not None:
            fresh.append((master, model_param.grad.float()))
    direct = [param.grad for group in optimizer.param_groups for param in group["params"]
              if param.grad is not None and id(param) not in stash.masters]
    return direct + [grad for _, grad in fresh], fresh


# --- the public API ---------------------------------------------------------------------


def initialize(models, optimizers=None, enabled: bool = True, opt_level: str = "O1",
               cast_model_type: torch.dtype | None = None, patch_torch_functions: bool | None = None,
               keep_batchnorm_fp32: bool | str | None = None, master_weights: bool | None = None,
               loss_scale: float | str | None = None, cast_model_outputs: torch.dtype | None = None,
               num_losses: int = 1, verbosity: int = 1, min_loss_scale: float | None = None,
               max_loss_scale: float = 2.0 ** 24):
    """Prepare model(s) and optimizer(s) for ``opt_level`` (see the module docstring);
    returns them in the shape they were given (single or list), as apex does."""
    _amp_state.opt_properties = Properties()
    _amp_state.verbosity = verbosity
    if not enabled:
        return models if optimizers is None else (models, optimizers)
    if opt_level not in OPT_LEVELS:
        raise RuntimeError(
            "Unexpected optimization level {}. ".format(opt_level) +
            "Options are 'O0', 'O1', 'O2', 'O3'.  Note that in `O0`, `O1`, etc., the prefix O is the letter O, "
            "not the number zero.")
    properties = _amp_state.opt_properties
    brief, defaults = OPT_LEVELS[opt_level]
    properties.enabled = True
    properties.opt_level = opt_level
    for key, value in defaults.items():
        setattr(properties, key, value)
    maybe_print("Selected optimization level {}".format(brief), True)
    maybe_print("Defaults for this optimization level are:", True)
    _print_options(properties)
    _amp_state.min_loss_scale = min_loss_scale
    _amp_state.max_loss_scale = max_loss_scale
    maybe_print("Processing user overrides (additional kwargs that are not None)...", True)
    overrides = dict(cast_model_type=cast_model_type, patch_torch_functions=patch_torch_functions,
                     keep_batchnorm_fp32=keep_batchnorm_fp32, master_weights=master_weights,
                     loss_scale=loss_scale)
    for key, value in overrides.items():
        if value is not None:
            setattr(properties, key, value)
    maybe_print("After processing overrides, optimization options are:", True)
    _print_options(properties)
    return _initialize(models, optimizers, properties, num_losses, cast_model_outputs,
                       explicit_cast=cast_model_type is not None)


def _is_one_optimizer(value) -> bool:
    """An optimizer, or apex.parallel's LARC wrapper around one: apex's ``initialize`` and
    ``scale_loss`` accept both. A LARC instance exists only once its module is imported."""
    if isinstance(value, torch.optim.Optimizer):
        return True
    larc = sys.modules.get("compatfix.apex_standin.parallel.LARC")
    return larc is not None and isinstance(value, larc.LARC)


def _initialize(models, optimizers, properties: Properties, num_losses: int,
                cast_model_outputs: torch.dtype | None, explicit_cast: bool):
    optimizers_was_list = isinstance(optimizers, list)
    if _is_one_optimizer(optimizers):
        optimizers = [optimizers]
    elif optimizers is None:
        optimizers = []
    elif not optimizers_was_list:
        raise TypeError("optimizers must be either a single optimizer or a list of optimizers.")
    models_was_list = isinstance(models, list)
    if isinstance(models, torch.nn.Module):
        models = [models]
    elif not models_was_list:
        raise TypeError("models must be either a single model or a list of models.")
    _check_models(models)
    if not _amp_state.allow_incoming_model_not_fp32:
        _check_params_fp32(models)

    on_cuda = any(param.is_cuda for model in models for param in model.parameters())
    cast_type = properties.cast_model_type
    if cast_type in _HALF and not on_cuda and not explicit_cast:
        cast_type = torch.float32  # the CPU rule: mixed precision on the CPU is float32
    if cast_type is not None and cast_type is not False and cast_type != torch.float32:
        for model in models:
            _convert_network(model, cast_type, bool(properties.keep_batchnorm_fp32))
            _patch_forward(model, cast_type, cast_model_outputs or torch.float32)
            model._register_state_dict_hook(_float_state_dict_hook)
    elif cast_model_outputs is not None:
        for model in models:
            _patch_forward(model, None, cast_model_outputs)

    master = bool(properties.master_weights)
    for index, optimizer in enumerate(optimizers):
        optimizers[index] = _process_optimizer(optimizer, master)

    _amp_state.loss_scalers = [
        LossScaler(properties.loss_scale, min_loss_scale=_amp_state.min_loss_scale,
                   max_loss_scale=_amp_state.max_loss_scale)
        for _ in range(num_losses)
    ]
    if _amp_state.cast_device is not None:  # an earlier initialize turned O1 casts on
        torch.set_autocast_enabled(_amp_state.cast_device, False)
        _amp_state.cast_device = None
    if properties.patch_torch_functions and on_cuda:
        _amp_state.cast_device = "cuda"
        torch.set_autocast_dtype("cuda", torch.float16)
        torch.set_autocast_enabled("cuda", True)
        for owner, name, wrap in _registered:
            setattr(owner, name, wrap(getattr(owner, name)))
        _registered.clear()

    if optimizers_was_list:
        return (models if models_was_list else models[0]), optimizers
    if not optimizers:
        return models if models_was_list else models[0]
    return (models if models_was_list else models[0]), optimizers[0]


def _clear_cast_cache() -> None:
    if _amp_state.cast_device is not None:
        torch.clear_autocast_cache()


class scale_loss:  # noqa: N801 - apex's name; a class: cheaper per step than a generator
    """``with amp.scale_loss(loss, optimizer) as scaled_loss``: yields ``loss.float() *
    loss_scale``; on exit (unless ``delay_unscale``) unscales the gradients of
    ``optimizers``' parameters and checks them for overflow (skipping the next step and
    lowering the scale if there was one). ``model`` is unused, as in apex."""

    __slots__ = ("loss", "optimizers", "loss_id", "delay_unscale", "delay_overflow_check", "stashes", "scaler")

    def __init__(self, loss, optimizers, loss_id: int = 0, model=None, delay_unscale: bool = False,
                 delay_overflow_check: bool = False) -> None:
        self.loss = loss
        self.optimizers = [optimizers] if _is_one_optimizer(optimizers) else optimizers
        self.loss_id = loss_id
        self.delay_unscale = delay_unscale
        self.delay_overflow_check = delay_overflow_check
        self.stashes = None  # None: nothing to do on exit

    def __enter__(self) -> torch.Tensor:
        properties = getattr(_amp_state, "opt_properties", None)
        if properties is None:
            raise RuntimeError("Invoked 'with amp.scale_loss`, but internal Amp state has not been initialized.  "
                               "model, optimizer = amp.initialize(model, optimizer, opt_level=...) must be called "
                               "before `with amp.scale_loss`.")
        if not properties.enabled:
            return self.loss
        scaler = self.scaler = _amp_state.loss_scalers[self.loss_id]
        scale = scaler._loss_scale
        if not properties.master_weights and not scaler.dynamic and scale == 1.0:
            return self.loss.float()
        self.stashes = stashes = [_stash_of(optimizer) for optimizer in self.optimizers]
        if not self.delay_unscale:
            for optimizer, stash in zip(self.optimizers, stashes):
                if not stash.params_have_scaled_gradients:
                    _prepare_backward(optimizer, stash, scale)
        return self.loss.float() * scale

    def __exit__(self, exc_type, exc, traceback) -> bool:
        stashes = self.stashes
        if exc_type is not None or stashes is None:
            if exc_type is None:
                _clear_cast_cache()
            return False
        if self.delay_unscale:
            for stash in stashes:
                stash.params_have_scaled_gradients = True
            _clear_cast_cache()
            return False
        scaler = self.scaler
        scaler.clear_overflow_state()
        grads: list[torch.Tensor] = []
        folds = []
        for optimizer, stash in zip(self.optimizers, stashes):
            scaled, fresh = _scaled_grads(optimizer, stash)
            grads += scaled
            folds += fresh
            stash.params_have_scaled_gradients = False
        scaler.unscale(grads)
        for master, grad in folds:
            if master.grad is None:
                master.grad = grad
            else:
                master.grad.add_(grad)
        if not self.delay_overflow_check and scaler.update_scale():
            for stash in stashes:
                stash.skip = (self.loss_id, scaler)
        _clear_cast_cache()
        return False


def master_params(optimizer) -> Iterator[torch.Tensor]:
    """The parameters ``optimizer`` updates: the fp32 masters under O2."""
    for group in optimizer.param_groups:
        yield from group["params"]


def state_dict(destination: dict | None = None) -> dict:
    """apex's format: ``{'loss_scaler<i>': {'loss_scale': float, 'unskipped': int}}``."""
    if destination is None:
        destination = OrderedDict()
    for index, scaler in enumerate(_amp_state.loss_scalers):
        destination["loss_scaler%d" % index] = {"loss_scale": scaler.loss_scale(), "unskipped": scaler._unskipped}
    return destination


def load_state_dict(state_dict: dict) -> None:
    """Restore loss scales saved by ``state_dict`` here or by real apex."""
    scalers = _amp_state.loss_scalers
    if not hasattr(_amp_state, "opt_properties"):
        raise RuntimeError("amp.load_state_dict needs amp.initialize(...) to be called first.")
    if len(state_dict) != len(scalers):
        print("Warning: state_dict contains {} entries, while {} loss_scalers are used".format(
            len(state_dict), len(scalers)))
    unexpected_keys = []
    index = 0
    for key, value in dict(state_dict).items():
        if "loss_scaler" not in key:
            unexpected_keys.append(key)
            continue
        if index > len(scalers) - 1:
            print("Skipping loss_scaler[{}], since num_losses was set to {}".format(index, len(scalers)))
            break
        scalers[index]._loss_scale = value["loss_scale"]
        scalers[index]._unskipped = value["unskipped"]
        index += 1
    if unexpected_keys:
        raise RuntimeError("Error(s) in loading state_dict. Unexpected key(s) in state_dict: {}. ".format(
            ", ".join('"{}"'.format(key) for key in unexpected_keys)))


@contextlib.contextmanager
def disable_casts() -> Iterator[None]:
    """Run a region without O1's casts."""
    if _amp_state.cast_device is None:
        yield
        return
    with torch.autocast(_amp_state.cast_device, enabled=False):
        yield


# --- user-registered casts --------------------------------------------------------------


def _casting(fn: Callable, dtype_for: Callable[[list], torch.dtype | None], casts_off: bool) -> Callable:
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        device = _amp_state.cast_device
        if device is None:
            return fn(*args, **kwargs)
        tensors = [a for a in list(args) + list(kwargs.values())
                   if isinstance(a, torch.Tensor) and a.is_floating_point()]
        dtype = dtype_for(tensors)
        if dtype is not None:
            args, kwargs = _cast(args, dtype), _cast(kwargs, dtype)
        if casts_off:
            with torch.autocast(device, enabled=False):
                return fn(*args, **kwargs)
        return fn(*args, **kwargs)

    return wrapper


def _widest(tensors: list) -> torch.dtype | None:
    dtypes = {t.dtype for t in tensors}
    return torch.float32 if len(dtypes) > 1 and torch.float32 in dtypes else None


def half_function(fn: Callable) -> Callable:
    """``fn`` receives float16 arguments while O1 casts are on."""
    return _casting(fn, lambda tensors: torch.float16, casts_off=False)


def float_function(fn: Callable) -> Callable:
    """``fn`` receives float32 arguments and runs without casts while O1 casts are on."""
    return _casting(fn, lambda tensors: torch.float32, casts_off=True)


def promote_function(fn: Callable) -> Callable:
    """``fn`` receives its floating arguments in the widest type among them."""
    return _casting(fn, _widest, casts_off=False)


_registered: list[tuple[Any, str, Callable]] = []


def _register(module, name: str, wrap: Callable) -> None:
    if not hasattr(module, name):
        raise ValueError("No function named {} in module {}.".format(name, module))
    _registered.append((module, name, wrap))


def register_half_function(module, name: str) -> None:
    """Before ``initialize``: with O1, ``module.name`` gets float16 arguments."""
    _register(module, name, half_function)


def register_float_function(module, name: str) -> None:
    """Before ``initialize``: with O1, ``module.name`` gets float32 arguments."""
    _register(module, name, float_function)


def register_promote_function(module, name: str) -> None:
    """Before ``initialize``: with O1, ``module.name`` gets its arguments promoted."""
    _register(module, name, promote_function)
