"""Shims for SciPy; each submodule's shims live beside this file (``misc.py`` for
``scipy.misc``, ``integrate.py`` for ``scipy.integrate``)."""
