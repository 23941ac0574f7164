"""Shims for PyYAML: ``yaml.load(f)`` without a Loader, which PyYAML 6 turned into an error.

PyYAML 5.1-5.4 answered such a call with ``FullLoader`` (and a warning); this shim does
the same and says so once. It never picks the unsafe loader: FullLoader refuses
``!!python/object/apply`` and the other tags that construct arbitrary objects.
"""

from __future__ import annotations

from typing import Any

from compatfix._messages import say
from compatfix.patching import record_redirect, replace_attribute
from compatfix.registry import RISK_BEHAVIOUR, Shim

SHIM_NAME = "yaml.default_loader"


def _default_loader(yaml_module, function: str) -> Any:
    say(
        "yaml.%s() was called without Loader, which PyYAML 6 requires: using yaml.FullLoader, "
        "as PyYAML 5.1-5.4 did (it does not construct arbitrary Python objects). Pass "
        "Loader=yaml.SafeLoader or yaml.FullLoader to silence this." % function,
        key="%s:%s" % (SHIM_NAME, function),
    )
    record_redirect(SHIM_NAME, "yaml.%s without Loader -> FullLoader" % function)
    return yaml_module.FullLoader


def default_to_full_loader(yaml_module) -> None:
    original_load = yaml_module.load
    original_load_all = yaml_module.load_all

    def load(stream: Any, Loader: Any = None) -> Any:
        """``yaml.load`` that, as in PyYAML 5.1-5.4, uses FullLoader when no Loader is given."""
        if Loader is None:
            Loader = _default_loader(yaml_module, "load")
        return original_load(stream, Loader)

    def load_all(stream: Any, Loader: Any = None) -> Any:
        """``yaml.load_all`` that, as in PyYAML 5.1-5.4, uses FullLoader when no Loader is given."""
        if Loader is None:
            Loader = _default_loader(yaml_module, "load_all")
        return original_load_all(stream, Loader)

    # Only where Loader is still required (a PyYAML that has a default keeps its own).
    for name, replacement, original in (("load", load, original_load), ("load_all", load_all, original_load_all)):
        if getattr(original, "__defaults__", None) is None:
            replacement.__wrapped__ = original
            replace_attribute(yaml_module, name, replacement, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["yaml"],
        requires={"yaml": ">=6"},
        apply=default_to_full_loader,
        risk=RISK_BEHAVIOUR,
        broke="PyYAML 6.0 (2021-10) made Loader a required argument of yaml.load and "
        "yaml.load_all: TypeError: load() missing 1 required positional argument: 'Loader'",
        summary="yaml.load/load_all without Loader use FullLoader, as PyYAML 5.1-5.4 did "
        "(never the unsafe loader), and say so once",
    ),
)
