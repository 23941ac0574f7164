"""CPU mode for OpenMMLab 1.x code, by the mmcv module each shim fixes."""
