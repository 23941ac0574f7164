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
        replacement="cfg.device = mmdet.utils.get_device() before train_detector, as tools/train.py does",
    ),
    Shim(
        "mmdet.apex_amp_before_wrappers",
        targets=["mmdet.apis.train"],
        requires=amp.REQUIRES,
        kind=AFTER_IMPORT,
        apply=amp.patch_train_function,
        risk=RISK_BEHAVIOUR,
        broke=amp.BROKE,
        summary=amp.SUMMARY,
        replacement="fp16 = dict(loss_scale=512.) with mmcv's Fp16OptimizerHook instead of apex, or call "
        "amp.initialize before the model is wrapped",
    ),
)
