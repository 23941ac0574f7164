"""What the OpenMMLab shims do, shared by the shims of mmcv, mmseg and mmdet: the records are
in ``compatfix/shims/<library>/``; this package holds the code they run."""
