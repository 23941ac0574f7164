"""Shims for ``torch.optim`` submodules (``lr_scheduler.py`` for ``torch.optim.lr_scheduler``)."""
