"""Shims for ``torch.nn`` submodules (``parallel.py`` for ``torch.nn.parallel``)."""
