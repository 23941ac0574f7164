"""compatfix: run 2020-22 deep-learning research code unmodified on today's stack.

Importing this package is cheap on purpose (it runs in every process through
``compatfix.pth``); the public helpers below load their machinery when called.
"""

__version__ = "0.1.0"
__all__ = ["activate", "get_original", "is_patched", "__version__"]


def activate() -> None:
    """Activate compatfix in this process (for interpreters started without the
    ``.pth`` file, e.g. ``python -S``); shims for already imported targets apply now."""
    import _compatfix_bootstrap as _bootstrap

    _bootstrap.activate("api")


def get_original(owner: object, name: str) -> object:
    """``owner.name`` as it was before compatfix touched it."""
    from compatfix import patching

    return patching.get_original(owner, name)


def is_patched(owner: object, name: str) -> bool:
    """Whether compatfix added or replaced ``owner.name``."""
    from compatfix import patching

    return patching.is_patched(owner, name)
