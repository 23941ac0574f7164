"""Shims for ``transformers.models``: each model module's shims in the file that mirrors it."""
