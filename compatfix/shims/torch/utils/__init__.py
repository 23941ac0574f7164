"""Shims for ``torch.utils`` submodules (``data.py`` for ``torch.utils.data``)."""
