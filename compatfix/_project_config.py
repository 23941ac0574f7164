"""``[tool.compatfix]`` in the nearest ``pyproject.toml``: a project's compatfix options.

Read only by ``python -m compatfix`` (``compatfix run``) and the ``compatfix`` command,
never at interpreter start (principle 1: start-up reads environment variables only). The
keys are the runner's option names without their dashes::

    [tool.compatfix]
    disable = ["numpy.builtin_aliases"]   # or "a,b"
    enable = ["torch.inplace_int_arithmetic"]
    strict = true
    report = "compatfix-report.json"      # relative to the pyproject.toml's folder
    device = "cpu"

Each value becomes the environment variable its option sets (``COMPATFIX_DISABLE``...),
so every process of a run sees it. Precedence: a command-line option, then the
environment variable, then this table; the disable/enable lists of all three add up.
"""

from __future__ import annotations

import os
import sys
from typing import Any, NamedTuple

TABLE = "tool.compatfix"
FILE_NAME = "pyproject.toml"

# key -> the environment variable it sets, as the runner's options do
KEYS = {
    "disable": "COMPATFIX_DISABLE",
    "enable": "COMPATFIX_ENABLE",
    "strict": "COMPATFIX_STRICT",
    "report": "COMPATFIX_REPORT",
    "device": "COMPATFIX_DEVICE",
}
LIST_KEYS = ("disable", "enable")


class ProjectConfig(NamedTuple):
    """What ``[tool.compatfix]`` in ``path`` asks for, as environment settings."""

    path: str | None  # the pyproject.toml read, None when there is none (or no table)
    env: dict[str, str]  # variable -> value, as the runner's options would set them
    problems: list[str]  # one line per bad key or value, naming the file and the key
    # key -> the value as written, for messages naming where a setting came from
    raw: dict[str, Any]


NONE = ProjectConfig(None, {}, [], {})


def find_pyproject(start: str) -> str | None:
    """The nearest ``pyproject.toml`` in ``start`` or a folder above it."""
    folder = os.path.abspath(start)
    while True:
        candidate = os.path.join(folder, FILE_NAME)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _toml_loads() -> Any:
    """``tomllib.loads`` (Python 3.11+), else tomli's, else None."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib.loads
    try:
        import tomli  # type: ignore[import-not-found]
    except ImportError:
        return None
    return tomli.loads


def load(start: str) -> ProjectConfig:
    """``[tool.compatfix]`` of the nearest ``pyproject.toml`` from ``start`` up."""
    path = find_pyproject(start)
    if path is None:
        return NONE
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return ProjectConfig(path, {}, ["%s: cannot be read (%s); its [tool.compatfix] is ignored" % (path, exc)], {})
    if b"compatfix" not in data:
        return NONE  # the common case, decided without a TOML parser
    loads = _toml_loads()
    if loads is None:
        return ProjectConfig(path, {}, [
            "%s: reading [tool.compatfix] needs tomli on Python %d.%d (pip install tomli); it is ignored"
            % (path, sys.version_info[0], sys.version_info[1])], {})
    try:
        document = loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:  # tomllib.TOMLDecodeError is a ValueError
        return ProjectConfig(path, {}, ["%s: not valid TOML (%s); its [tool.compatfix] is ignored" % (path, exc)], {})
    table = document.get("tool", {}).get("compatfix")
    if table is None:
        return NONE
    return parse_table(table, path)


def parse_table(table: Any, path: str) -> ProjectConfig:
    """The environment settings of one ``[tool.compatfix]`` table read from ``path``."""
    where = "%s [%s]" % (path, TABLE)
    if not isinstance(table, dict):
        return ProjectConfig(path, {}, ["%s is not a table" % where], {})
    env: dict[str, str] = {}
    problems: list[str] = []
    raw: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KEYS:
            problems.append("%s: unknown key %r (known: %s)" % (where, key, ", ".join(KEYS)))
            continue
        if key in LIST_KEYS:
            if isinstance(value, str):
                names = [part.strip() for part in value.split(",") if part.strip()]
            elif isinstance(value, list) and all(isinstance(item, str) for item in value):
                names = [item.strip() for item in value if item.strip()]
            else:
                problems.append("%s: %s must be a list of shim names, not %r" % (where, key, value))
                continue
            if names:
                env[KEYS[key]] = ",".join(names)
        elif key == "strict":
            if not isinstance(value, bool):
                problems.append("%s: strict must be true or false, not %r" % (where, value))
                continue
            if value:
                env[KEYS[key]] = "1"
        else:
            if not isinstance(value, str) or not value.strip():
                problems.append("%s: %s must be a string, not %r" % (where, key, value))
                continue
            if key == "report":
                value = os.path.join(os.path.dirname(path), os.path.expanduser(value.strip()))
            env[KEYS[key]] = value.strip()
        raw[key] = value
    return ProjectConfig(path, env, problems, raw)
