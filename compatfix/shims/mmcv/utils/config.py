"""Shims for mmcv 1.x's ``Config`` (``mmcv.utils.config``).

``mmcv.utils.config_yapf_verify``
    ``Config.pretty_text`` (and so ``Config.dump`` and every ``print(cfg)`` or
    ``cfg.pretty_text`` in a train script) formats the config with
    ``FormatCode(text, style_config=yapf_style, verify=True)``. yapf 0.40.2 (2023-09)
    dropped ``FormatCode``'s ``verify`` argument, so mmcv <= 1.7.1 fails with
    ``TypeError: FormatCode() got an unexpected keyword argument 'verify'``. mmcv 1.7.2
    checks yapf's version itself. mmcv binds ``from yapf.yapflib.yapf_api import
    FormatCode`` when ``mmcv.utils.config`` is imported, so the fix replaces that module's
    ``FormatCode`` name (not yapf's) with one that drops ``verify``, and only when the
    installed ``FormatCode`` has no ``verify`` parameter. ``verify=True`` only asked yapf
    to re-parse its own output, so nothing else changes.
"""

from __future__ import annotations


from compatfix import patching
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_NAME = "mmcv.utils.config_yapf_verify"


def accepts_verify(format_code) -> bool:
    import inspect  # here, not at module level: it costs ~5 ms of every engine load

    try:
        parameters = inspect.signature(format_code).parameters
    except (TypeError, ValueError):  # no signature to read: leave it alone
        return True
    return "verify" in parameters or any(
        parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters.values()
    )


def drop_verify(module) -> None:
    original = vars(module).get("FormatCode")
    if original is None or patching.wrapped_by(original, SHIM_NAME) or accepts_verify(original):
        return

    def without_verify(original):
        def FormatCode(*args, verify=None, **kwargs):  # noqa: N802 - yapf's name
            return original(*args, **kwargs)

        return FormatCode

    patching.wrap(module, "FormatCode", without_verify, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["mmcv.utils.config"],
        requires={"mmcv": ">=1.0,<1.7.2", "yapf": ">=0.40.2"},
        kind=AFTER_IMPORT,
        apply=drop_verify,
        risk=RISK_BEHAVIOUR,
        broke="yapf 0.40.2 (2023-09) dropped FormatCode(verify=...); mmcv <= 1.7.1's "
        "Config.pretty_text/Config.dump call FormatCode(..., verify=True) and fail with "
        "TypeError: FormatCode() got an unexpected keyword argument 'verify'",
        summary="let Config.pretty_text/dump work on yapf >= 0.40.2: the FormatCode that "
        "mmcv.utils.config bound drops verify= (only where yapf's FormatCode has none)",
        replacement="mmcv >= 1.7.2, or yapf < 0.40.2",
    ),
)
