"""Shims for mmcv 1.x and the OpenMMLab 0.x/2.x libraries built on it (mmseg, mmdet)."""
