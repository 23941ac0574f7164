"""Shims for ``mmdet.apis``: ``train_detector`` with older training scripts (see
``compatfix.openmmlab.training`` and ``compatfix.openmmlab.amp``)."""

from __future__ import annotations

from compatfix.openmmlab import amp, training
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim


SHIMS = (
    Shim(
        training.SHIM_DEVICE_MMDET,
        targets=["mmdet.apis.train"],
        requires={"mmdet": ">=2.24,<3.0"},
        kind=AFTER_IMPORT,
        apply=training.patch_train_detector,
        risk=RISK_BEHAVIOUR,
        broke="mmdet 2.24 (2022-04) made train_detector read cfg.device, which only its own newer "
        "tools/train.py sets: older training scripts and notebooks fail with AttributeError: "
        "'ConfigDict' object has no attribute 'device' (mmdet#7848, #7901, #8535)",
        summary="train_detector fills a missing cfg.device as newer tools/train.py does "
        "(get_device(); 'cpu' for a non-distributed run in CPU mode)",
    ),
    Shim(
        "mmdet.apex_amp_before_wrappers",
        targets=["mmdet.apis.train"],
        requires={"mmcv": ">=1.0,<2.0"},  # mmseg 0.x and mmdet 2.x; their 1.x/3.x need mmcv 2
        kind=AFTER_IMPORT,
        apply=amp.patch_train_function,
        risk=RISK_BEHAVIOUR,
        broke="stock mmseg train_segmentor (0.11-0.30) and mmdet train_detector (2.x) never call "
        "apex.amp.initialize and wrap the model before building the optimizer, so configs with "
        "optimizer_config use_fp16=True (Swin/BEiT DistOptimizerHook) fail at the first `with "
        "amp.scale_loss`: Invoked 'with amp.scale_loss', but internal Amp state has not been "
        "initialized",
        summary="for use_fp16 configs, build the optimizer and call amp.initialize on the "
        "unwrapped model (opt_level from the config or O1, fp16_enabled set) before the train "
        "function wraps it, and hand it that optimizer; left alone when amp is already "
        "initialised",
    ),
)
