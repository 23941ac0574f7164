"""Shims for ``transformers.models.roberta``."""
