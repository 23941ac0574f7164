"""Shims for ``mmcv.utils`` submodules (``config``, ``registry``), one file each."""
