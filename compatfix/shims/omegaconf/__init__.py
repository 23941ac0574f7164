"""Shims for OmegaConf; each submodule's shims live beside this file (``_utils.py`` for
``omegaconf._utils``)."""
