"""Shims for mmdet 2.x, one file per ``mmdet`` submodule they fix."""
