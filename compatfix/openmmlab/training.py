"""What the shims for older mmseg/mmdet training scripts do (``tools/train.py``, notebooks,
with a newer mmseg or mmdet). The records are in ``compatfix/shims/mmseg/{apis,datasets,
models}.py`` and ``compatfix/shims/mmdet/apis.py``.

``mmseg.train_default_device``
    mmseg 0.25 (MLU support, open-mmlab/mmsegmentation#1515) made ``train_segmentor``
    read ``cfg.device`` (``build_dp(model, cfg.device, ...)``, ``build_ddp`` likewise) and
    made its own ``tools/train.py`` set ``cfg.device = get_device()``. A ``tools/train.py``
    written for an earlier mmseg never sets it, so training fails before the first
    iteration with ``AttributeError: 'ConfigDict' object has no attribute 'device'``
    (mmdet#7848, #7901 for mmdet 2.24's identical change). The fix sets the value the
    newer ``tools/train.py`` sets when the config has none: mmseg's ``get_device()``
    (``'cuda'`` with a GPU, else ``'cpu'``), and ``'cpu'`` for a non-distributed run
    under compatfix's CPU mode (where ``torch.cuda.is_available()`` says True).

``mmdet.train_default_device``
    The same for mmdet's ``train_detector``, which reads ``cfg.device`` since mmdet
    2.24 (its own ``tools/train.py`` sets it from ``mmdet.utils.get_device()``).

``mmseg.no_persistent_workers_without_workers``
    mmseg 0.15 (open-mmlab/mmsegmentation#646) gave ``build_dataloader`` the default
    ``persistent_workers=True``, and torch's ``DataLoader`` refuses that without
    worker processes: a config with ``workers_per_gpu=0`` (the usual setting for
    debugging, CPU runs and Windows) fails with ``ValueError: persistent_workers option
    needs num_workers > 0`` (mmseg#1775, #2514). Persistent workers mean nothing
    without workers, so the fix passes ``persistent_workers=False`` when the loader
    gets no worker processes; every other call is unchanged.

``mmseg.out_of_place_lateral_add``
    mmseg < 0.20's ``UPerHead`` and ``FPN`` add the upsampled coarser level into the
    finer one in place (``laterals[i - 1] += resize(laterals[i], ...)``). The finer
    lateral is the output of a ``ConvModule`` whose ReLU needs its output for the
    backward pass, and since torch 1.10 autograd rejects the in-place change at
    ``backward()``: ``RuntimeError: one of the variables needed for gradient
    computation has been modified by an inplace operation: [torch.FloatTensor
    [N, C, H, W]], which is output 0 of Relu, is at version 1; expected
    version 0 instead`` (torch 2.14's wording; torch 1.10 said ``ReluBackward0``;
    mmseg#1046, fixed upstream by open-mmlab/mmsegmentation#1103 in mmseg 0.20; the
    FPN neck only when given an ``act_cfg``, its lateral convolutions have no ReLU by
    default). The fix gives each lateral convolution's output to the head as a copy
    while gradients are recorded (a forward hook on ``lateral_convs``), so the in-place
    add changes the copy, not the tensor the ReLU saved. The values are the same; the
    cost is one copy of each lateral map per training forward pass.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from compatfix import patching

SHIM_DEVICE = "mmseg.train_default_device"
SHIM_DEVICE_MMDET = "mmdet.train_default_device"
SHIM_WORKERS = "mmseg.no_persistent_workers_without_workers"
SHIM_LATERAL = "mmseg.out_of_place_lateral_add"


def _tell(shim: str, key: str, text: str) -> None:
    from compatfix import _messages

    _messages.say(text, key=key)
    patching.record_redirect(shim, key)


# --- cfg.device ---------------------------------------------------------------------


def default_device(library: str, distributed: bool) -> str:
    """The device ``library``'s newer tools/train.py would put in ``cfg.device``."""
    from compatfix import _engine

    engine = _engine.active()
    if engine is not None and engine.settings.device == "cpu" and not distributed:
        return "cpu"
    return importlib.import_module(library + ".utils").get_device()


def _make_train_function(original, shim: str, library: str, since: str):
    import inspect  # here, not at module level: it costs ~5 ms of every engine load

    signature = inspect.signature(original)

    def train_function(*args, **kwargs):
        call = signature.bind(*args, **kwargs)
        cfg = call.arguments["cfg"]
        if cfg.get("device") is None:
            device = default_device(library, bool(call.arguments.get("distributed", False)))
            cfg.device = device
            _tell(
                shim,
                "cfg.device missing -> %r" % device,
                "the config has no `device` (tools/train.py from before %s %s does not set it) "
                "and this %s reads cfg.device: using %r, what newer tools/train.py sets "
                "(cfg.device = get_device())." % (library, since, original.__name__, device),
            )
        return original(*args, **kwargs)

    return train_function


def patch_train_segmentor(module: ModuleType) -> None:
    patching.wrap(module, "train_segmentor",
                  lambda original: _make_train_function(original, SHIM_DEVICE, "mmseg", "0.25"), SHIM_DEVICE)


def patch_train_detector(module: ModuleType) -> None:
    patching.wrap(module, "train_detector",
                  lambda original: _make_train_function(original, SHIM_DEVICE_MMDET, "mmdet", "2.24"),
                  SHIM_DEVICE_MMDET)


# --- persistent_workers -------------------------------------------------------------


def _make_build_dataloader(original):
    import inspect  # here, not at module level: it costs ~5 ms of every engine load

    signature = inspect.signature(original)

    def build_dataloader(*args, **kwargs):
        call = signature.bind(*args, **kwargs)
        call.apply_defaults()
        arguments = call.arguments
        # build_dataloader's own arithmetic: workers_per_gpu each for dist, times num_gpus otherwise.
        workers = arguments["workers_per_gpu"] * (1 if arguments["dist"] else arguments["num_gpus"])
        if arguments.get("persistent_workers") and workers == 0:
            arguments["persistent_workers"] = False
            args, kwargs = call.args, call.kwargs
            _tell(
                SHIM_WORKERS,
                "persistent_workers=True with 0 workers -> False",
                "build_dataloader got persistent_workers=True (its default since mmseg 0.15) "
                "and no worker processes (workers_per_gpu=0), which torch's DataLoader refuses "
                "(persistent_workers option needs num_workers > 0): building it without "
                "persistent workers, which mean nothing without workers.",
            )
        return original(*args, **kwargs)

    return build_dataloader


def patch_build_dataloader(module: ModuleType) -> None:
    patching.wrap(module, "build_dataloader", _make_build_dataloader, SHIM_WORKERS)


# --- in-place lateral add -----------------------------------------------------------


def _output_copy_while_recording(module, inputs, output):
    """Forward hook: a copy of a lateral map that the head will change in place."""
    import torch

    if torch.is_grad_enabled() and isinstance(output, torch.Tensor) and output.requires_grad:
        return output.clone()
    return None


def _make_init(original):
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        for conv in getattr(self, "lateral_convs", ()):
            conv.register_forward_hook(_output_copy_while_recording)

    return __init__


def patch_lateral_convs(module: ModuleType) -> None:
    """Hook the lateral convolutions of the UPerHead/FPN that ``module`` defines."""
    for name in ("UPerHead", "FPN"):
        cls = vars(module).get(name)
        if isinstance(cls, type) and cls.__module__ == module.__name__:
            patching.wrap(cls, "__init__", _make_init, SHIM_LATERAL)
