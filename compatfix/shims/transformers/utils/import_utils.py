"""Shims for ``transformers.utils.import_utils``: ``direct_transformers_import`` runs
transformers' ``__init__`` a second time, outside the import system, and leaves the new
``transformers`` module it makes in ``sys.modules``; ``transformers.processing_utils``
does so when it loads, which ``Trainer``, the pipelines and the image processors import.
From then on ``import transformers`` and ``from transformers import ...`` get that new
module, which no finder saw, so it lacks the names the ``transformers`` shims restore.

The wrapper hands the new module to the engine as a fresh import of ``transformers``, so
it gets the same shims, by the same decisions, as the first one did.
"""

from __future__ import annotations

from typing import Any, Callable

from compatfix.patching import wrap
from compatfix.registry import Shim

SHIM = "transformers.utils.import_utils.direct_transformers_import"


def _shim_new_module(original: Callable[..., Any]) -> Callable[..., Any]:
    def direct_transformers_import(*args: Any, **kwargs: Any) -> Any:
        module = original(*args, **kwargs)
        from compatfix import _engine

        engine = _engine.active()
        if engine is not None:
            engine.run_after(module)
        return module

    return direct_transformers_import


def shim_reimports(module) -> None:
    wrap(module, "direct_transformers_import", _shim_new_module, SHIM)


SHIMS = (
    Shim(
        SHIM,
        targets=["transformers.utils.import_utils"],
        # 4.27 added direct_transformers_import and processing_utils' call of it
        requires={"transformers": ">=4.27"},
        apply=shim_reimports,
        broke="transformers.processing_utils re-runs transformers' __init__ through direct_transformers_import "
        "and puts the new module in sys.modules, past every finder: after `from transformers import Trainer`, "
        "`from transformers import AdamW` sees a module without the names compatfix restored",
        summary="give the module direct_transformers_import makes the shims of transformers, as to a fresh import",
        replacement="nothing to port: this only keeps the other transformers shims in effect",
    ),
)
