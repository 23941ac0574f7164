"""Shims for ``transformers.models.auto``."""
