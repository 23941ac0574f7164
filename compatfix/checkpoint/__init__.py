"""Checkpoint loading under torch >= 2.6's ``weights_only=True`` default (docs/checkpoints.md).

- ``unpickler``: the data-only unpickler, which rebuilds data and runs no code a file names;
- ``trust_store``: the sha256s of the checkpoints this machine's ``torch.save`` wrote;
- ``policy``: the ``torch.load``/``torch.save`` wrappers that try torch, then the data-only
  loader, then trust, and say why a file was refused.

The shim records that switch these on are in ``compatfix.shims.torch.serialization``.
"""
