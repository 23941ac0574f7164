"""Shims for mmsegmentation 0.x (built on mmcv 1.x): training code written for one mmseg
release run with another (``training``), the mmcv version assert at import
(``version_assert``), and apex AMP set-up for stock ``train_segmentor`` (``amp``)."""
