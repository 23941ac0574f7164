"""Shims for ``transformers.utils``."""
