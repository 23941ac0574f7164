"""Shims for scikit-learn; each submodule's shims live beside this file (``utils.py`` for
``sklearn.utils.linear_assignment_``, ``externals.py`` for ``sklearn.externals.joblib``,
``cluster.py``, ``manifold.py``, ``metrics.py``). This file: what the keyword shims share,
wrapping an estimator's ``__init__`` so that it takes a keyword scikit-learn removed,
keeps it as a parameter (``get_params``, ``clone`` and ``repr`` read ``__init__``'s
signature and the attribute of that name), and passes the rest on unchanged."""

from __future__ import annotations

from typing import Any, Callable

from compatfix.patching import wrap


def accept_keyword(cls: type, keyword: str, translate: Callable[[Any, dict[str, Any]], None], shim: str) -> None:
    """Wrap ``cls.__init__`` to take ``keyword`` (default None, keyword-only, as the
    parameters of today's estimators are). ``translate(value, kwargs)`` turns a given
    value into today's keywords before the call; the value is stored as ``self.<keyword>``."""
    import inspect

    signature = inspect.signature(cls.__init__)
    if keyword in signature.parameters:
        return  # a scikit-learn that still takes it keeps its own

    def make_init(init: Callable[..., Any]) -> Callable[..., Any]:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            value = kwargs.pop(keyword, None)
            if value is not None:
                translate(value, kwargs)
            init(self, *args, **kwargs)
            setattr(self, keyword, value)

        return __init__

    if wrap(cls, "__init__", make_init, shim):
        parameters = list(signature.parameters.values())
        added = inspect.Parameter(keyword, inspect.Parameter.KEYWORD_ONLY, default=None)
        cls.__init__.__signature__ = signature.replace(parameters=[*parameters, added])
