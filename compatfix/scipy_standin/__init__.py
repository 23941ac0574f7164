"""Re-implementations of removed SciPy functions with their old documented behaviour,
used by the shims in ``compatfix/shims/scipy/``."""
