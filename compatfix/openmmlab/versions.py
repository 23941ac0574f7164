"""Reading the mmcv version range an OpenMMLab package asserts at import, from its source
without importing it: shared by ``compatfix doctor`` and the ``mmcv.relaxed_version_assert``
shim."""

from __future__ import annotations

import ast
import re


def parse(filename: str) -> ast.Module | None:
    try:
        with open(filename, "rb") as source:
            return ast.parse(source.read(), filename)
    except (OSError, SyntaxError, ValueError):
        return None


def constants(tree: ast.Module | None) -> dict[str, object]:
    """Module-level ``NAME = <literal>`` and ``NAME: T = <literal>`` assignments."""
    found: dict[str, object] = {}
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            found[target.id] = value.value
    return found


MIN_NAMES = ("MMCV_MIN", "mmcv_minimum_version")
MAX_NAMES = ("MMCV_MAX", "mmcv_maximum_version")

_DIGIT_VERSION = re.compile(
    r"v?(\d+(?:\.\d+)*)"
    r"(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d*))?"
    r"(?:[-_.]?(?:post|rev|r)[-_.]?(\d*))?"
    r"(?:[-_.]?(dev)[-_.]?\d*)?"
    r"(?:\+[a-z0-9.]*)?$"
)
_PRE_RANK = {"a": -3, "alpha": -3, "b": -2, "beta": -2}  # everything else spells rc: -1


def digit_version(version: str) -> tuple[int, ...] | None:
    """What OpenMMLab's ``digit_version`` makes of ``version``, or None if unparsable.

    Theirs (mmseg >= 0.20, mmcv.utils): the release padded/cut to 4 numbers, then
    (-3|-2|-1, n) for a/b/rc pre-releases, (-4, 0) for dev-only ones, (1, n) for post
    releases, (0, 0) otherwise. mmseg 0.11's older list-based one orders every released
    mmcv version the same way. ``_versions.release_tuple`` drops pre-release tags, which
    matters here: ``2.0.0rc4`` must sort below ``2.0.0``.
    """
    match = _DIGIT_VERSION.match(version.strip().lower())
    if match is None:
        return None
    release, pre, pre_number, post_number, dev = match.groups()
    digits = [int(part) for part in release.split(".")][:4]
    digits += [0] * (4 - len(digits))
    if pre:
        digits += [_PRE_RANK.get(pre, -1), int(pre_number or 0)]
    elif dev:
        digits += [-4, 0]
    elif post_number is not None:
        digits += [1, int(post_number or 0)]
    else:
        digits += [0, 0]
    return tuple(digits)


def bound_role(node: ast.AST) -> str | None:
    """"min" or "max" if this side of a comparison is (derived from) the mmcv bound."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            name = sub.id.lower()
            if "min" in name:
                return "min"
            if "max" in name:
                return "max"
    return None


def assert_inclusive(tree: ast.Module) -> dict[str, bool]:
    """Whether each bound the module's ``assert`` checks is inclusive: {"min": .., "max": ..}.

    Both spellings occur: mmseg's chained ``min <= v < max`` (0.30; 0.11 has ``<= max``)
    and mmdet's ``v >= min and v <= max``.
    """
    inclusive: dict[str, bool] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        for compare in ast.walk(node.test):
            if not isinstance(compare, ast.Compare):
                continue
            operands = [compare.left] + list(compare.comparators)
            for left, op, right in zip(operands, compare.ops, operands[1:]):
                # Read every comparison as "smaller <(=) larger".
                if isinstance(op, (ast.Lt, ast.LtE)):
                    smaller, larger, closed = left, right, isinstance(op, ast.LtE)
                elif isinstance(op, (ast.Gt, ast.GtE)):
                    smaller, larger, closed = right, left, isinstance(op, ast.GtE)
                else:
                    continue
                if bound_role(smaller) == "min":
                    inclusive["min"] = closed
                if bound_role(larger) == "max":
                    inclusive["max"] = closed
    return inclusive
