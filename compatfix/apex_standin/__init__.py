"""A torch-native stand-in for NVIDIA apex's Python API (``apex.amp``, ``apex.optimizers``,
``apex.parallel``, ``apex.normalization``, ``apex.fp16_utils``).

compatfix provides these modules only when no usable real apex can be imported: none is
installed, the installed ``apex`` is PyPI's unrelated web toolkit, or a real apex lacks
the submodule asked for (apex master deleted ``apex.amp`` and ``apex.parallel`` in May
2025). Real apex wins for everything it has. The shim records live in
``compatfix/shims/apex.py``; what is covered, and how it differs from apex, is in
``docs/apex.md``.

Each module here is the body of one apex submodule: its ``__all__`` names are what the
provided module exposes. They import torch, so they load only when code imports apex.
"""

# apex's submodules that compatfix stands in for, in the order apex's __init__ imports them.
SUBMODULES = ("parallel", "amp", "fp16_utils", "optimizers", "normalization")
