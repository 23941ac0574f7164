"""Shims for ``mmseg.apis``: ``train_segmentor`` with older training scripts (see
``compatfix.openmmlab.training`` and ``compatfix.openmmlab.amp``)."""

from __future__ import annotations

from compatfix.openmmlab import amp, training
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim


SHIMS = (
    Shim(
        training.SHIM_DEVICE,
        targets=["mmseg.apis.train"],
        requires={"mmseg": ">=0.25,<1.0"},
        kind=AFTER_IMPORT,
        apply=training.patch_train_segmentor,
        risk=RISK_BEHAVIOUR,
        broke="mmseg 0.25 (2022-06, #1515) made train_segmentor read cfg.device, which only "
        "its own newer tools/train.py sets: older training scripts fail with AttributeError: "
        "'ConfigDict' object has no attribute 'device'",
        summary="train_segmentor fills a missing cfg.device as newer tools/train.py does "
        "(get_device(); 'cpu' for a non-distributed run in CPU mode)",
        replacement="cfg.device = mmseg.utils.get_device() before train_segmentor, as tools/train.py does",
    ),
    Shim(
        "mmseg.apex_amp_before_wrappers",
        targets=["mmseg.apis.train"],
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
