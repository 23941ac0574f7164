"""Shims for ``torch.utils.data``: the ``data_source`` argument that ``Sampler.__init__``
took until torch 2.10, which 2020-22 samplers pass on with ``super().__init__(dataset)``."""

from __future__ import annotations

from compatfix.patching import replace_attribute
from compatfix.registry import RISK_BEHAVIOUR, Shim

SHIM_NAME = "torch.utils.data.Sampler.data_source"


def _accepts_data_source(sampler_class: type) -> bool:
    """Whether ``Sampler(data_source)`` works here (torch < 2.10 accepted and ignored it)."""
    try:
        sampler_class(None)
    except TypeError:
        return False
    return True


def accept_data_source(module) -> str | None:
    sampler_class = module.Sampler
    if _accepts_data_source(sampler_class):
        return "Sampler.__init__ still accepts data_source here"

    def __init__(self, data_source=None) -> None:
        """torch < 2.10: ``data_source`` was accepted and never used (torch 2.2-2.9 warned
        when it was given). Subclasses that call ``super().__init__()`` are unaffected."""

    __init__.__qualname__ = sampler_class.__qualname__ + ".__init__"
    replace_attribute(sampler_class, "__init__", __init__, SHIM_NAME)
    return None


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["torch.utils.data"],
        requires={"torch": ">=2.10"},
        apply=accept_data_source,
        risk=RISK_BEHAVIOUR,
        broke="torch 2.10 (2026-01) removed Sampler.__init__(self, data_source) (pytorch/pytorch#163134; "
        "deprecated since 2.2): a sampler subclass calling super().__init__(dataset) gets "
        "TypeError: Sampler() takes no arguments",
        summary="Sampler.__init__ accepts the old data_source argument again and ignores it, as it always did",
        replacement="super().__init__() without the dataset (Sampler never used it)",
    ),
)
