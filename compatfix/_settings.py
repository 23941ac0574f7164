"""compatfix's options, read from the environment, so that every process of a run
(launcher workers, spawn children) sees the options given to ``python -m compatfix``. Bad
values never crash the program: each yields one problem line and is ignored.

The bottom floor of the core: it imports no other compatfix module. The engine reads
it at a target's first import; ``compatfix list``, the runner, the scanner and the doctor
read it too, so they all understand the same values.
"""

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Mapping

# Annotations are quoted instead of ``from __future__ import annotations``: this module
# loads with a target's first import (numpy never loads __future__ itself).

ENV_DISABLE = "COMPATFIX_DISABLE"
ENV_ENABLE = "COMPATFIX_ENABLE"
ENV_STRICT = "COMPATFIX_STRICT"
ENV_REPORT = "COMPATFIX_REPORT"
ENV_DEVICE = "COMPATFIX_DEVICE"

DEVICES = ("cpu",)
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def split_names(value: str) -> "tuple[str, ...]":
    return tuple(part.strip() for part in value.split(",") if part.strip())


def matches(name: str, pattern: str) -> bool:
    """fnmatch's case-sensitive match, imported only for a pattern that needs it (the
    engine loads with the first target import, and most runs name no pattern at all)."""
    if not any(c in pattern for c in "*?["):
        return name == pattern
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)


class Settings:
    """Parsed options. ``problems`` lists what was wrong with the raw values."""

    def __init__(
        self,
        disable: "Iterable[str]" = (),
        enable: "Iterable[str]" = (),
        strict: bool = False,
        report_path: "str | None" = None,
        device: "str | None" = None,
        problems: "Iterable[str]" = (),
    ) -> None:
        self.disable = tuple(disable)
        self.enable = tuple(enable)
        self.strict = strict
        self.report_path = report_path
        self.device = device
        self.problems = list(problems)

    @classmethod
    def from_environ(cls, environ: "Mapping[str, str] | None" = None) -> "Settings":
        env = os.environ if environ is None else environ
        problems = []
        strict_raw = env.get(ENV_STRICT, "").strip().lower()
        if strict_raw not in _TRUE + _FALSE:
            problems.append("%s=%r is not a yes/no value; strict mode stays off" % (ENV_STRICT, strict_raw))
        device = env.get(ENV_DEVICE, "").strip().lower() or None
        if device is not None and device not in DEVICES:
            problems.append(
                "%s=%r is not a known device (known: %s); ignoring it" % (ENV_DEVICE, device, ", ".join(DEVICES))
            )
            device = None
        return cls(
            disable=split_names(env.get(ENV_DISABLE, "")),
            enable=split_names(env.get(ENV_ENABLE, "")),
            strict=strict_raw in _TRUE,
            report_path=env.get(ENV_REPORT, "").strip() or None,
            device=device,
            problems=problems,
        )

    def unknown_names(self, known: "Iterable[str]") -> "list[str]":
        """Problem lines for disable/enable patterns that match no known shim."""
        known = list(known)
        problems = []
        for variable, patterns in ((ENV_DISABLE, self.disable), (ENV_ENABLE, self.enable)):
            for pattern in patterns:
                if not any(matches(name, pattern) for name in known):
                    problems.append(
                        "%s names %r, which matches no shim (see `compatfix list`); ignoring it" % (variable, pattern)
                    )
        return problems

    def is_enabled(self, name: str, default: bool) -> "tuple[bool, str]":
        """Whether a shim is on, and why (for reports). Disabling wins over enabling."""
        for pattern in self.disable:
            if matches(name, pattern):
                return False, "disabled by %s=%s" % (ENV_DISABLE, pattern)
        for pattern in self.enable:
            if matches(name, pattern):
                return True, "enabled by %s=%s" % (ENV_ENABLE, pattern)
        if default:
            return True, "on by default"
        return False, "off by default (enable with %s=%s)" % (ENV_ENABLE, name)
