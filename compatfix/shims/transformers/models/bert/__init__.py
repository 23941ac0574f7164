"""Shims for ``transformers.models.bert``."""
