"""Shims for ``torch.autograd`` submodules (``profiler.py`` for ``torch.autograd.profiler``)."""
