"""Shims for the top-level ``torch`` module; submodules' shims live beside this file
(``_six.py`` for ``torch._six``, ``cuda.py`` for ``torch.cuda``, ...)."""
