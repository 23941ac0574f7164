"""One ``ast`` walk per Python file: the uses of indexed names, with import aliases
resolved (``import numpy as np``, ``from torch._six import inf``), attribute chains
followed, and calls checked against their patterns' argument conditions.

Aliases are tracked per file, not per scope: an import inside a function counts for the
whole file, and a name rebound by assignment is not followed. That is the price of a
static check; it errs towards reporting.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from compatfix.scan._index import Index, Pattern


@dataclass(frozen=True)
class Use:
    """A match in source code: where, what the code says, and the pattern."""

    line: int
    column: int  # 1-based, as editors count
    name: str  # the resolved dotted name (or the call)
    kind: str  # "import", "reference" or "call"
    pattern: Pattern


def _dotted(node: ast.expr) -> list[str] | None:
    """``a.b.c`` -> ['a', 'b', 'c']; None for anything but names and attributes."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


class _Walker(ast.NodeVisitor):
    def __init__(self, index: Index) -> None:
        self.index = index
        self.aliases: dict[str, str] = {}  # local name -> dotted name it is bound to
        self.uses: list[Use] = []
        self._seen: set[tuple[int, int, str]] = set()

    def _add(self, node: ast.stmt | ast.expr, name: str, kind: str, pattern: Pattern) -> None:
        key = (node.lineno, node.col_offset, pattern.key)
        if key not in self._seen:
            self._seen.add(key)
            self.uses.append(Use(node.lineno, node.col_offset + 1, name, kind, pattern))

    def _resolve(self, node: ast.expr) -> str | None:
        parts = _dotted(node)
        if parts is None or parts[0] not in self.aliases:
            return None
        return ".".join([self.aliases[parts[0]], *parts[1:]])

    def _check_name(self, node: ast.stmt | ast.expr, dotted: str, kind: str) -> None:
        pattern = self.index.lookup_name(dotted)
        if pattern is not None:
            self._add(node, dotted, kind, pattern)

    # imports -------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                head = alias.name.partition(".")[0]
                self.aliases[head] = head
            self._check_name(node, alias.name, "import")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:  # a relative import: the repository's own code
            return
        for alias in node.names:
            if alias.name == "*":
                self._check_name(node, node.module, "import")
                continue
            dotted = "%s.%s" % (node.module, alias.name)
            self.aliases[alias.asname or alias.name] = dotted
            self._check_name(node, dotted, "import")

    # references and calls -----------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = self._resolve(node)
        if dotted is None:
            self.generic_visit(node)
            return
        # The whole chain is one reference: its inner attributes are not uses of their own.
        self._check_name(node, dotted, "reference")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        dotted = self._resolve(func) if isinstance(func, (ast.Attribute, ast.Name)) else None
        candidates: list[Pattern] = []
        if dotted is not None:
            candidates += self.index.calls.get(dotted, [])
            candidates += self.index.module_calls.get(dotted.rpartition(".")[0], [])
        if isinstance(func, ast.Attribute):
            candidates += self.index.methods.get(func.attr, [])
        if candidates:
            positional: list[object] = [arg.value if isinstance(arg, ast.Constant) else None for arg in node.args]
            keywords = {keyword.arg for keyword in node.keywords if keyword.arg is not None}
            unpacked = any(isinstance(arg, ast.Starred) for arg in node.args) or any(
                keyword.arg is None for keyword in node.keywords)
            for pattern in candidates:
                if pattern.matches_call(positional, keywords, unpacked):
                    shown = dotted or "%s(%s)" % (".".join(_dotted(func) or ["*", pattern.name[2:]]),
                                                  repr(pattern.string_argument) if pattern.string_argument else "")
                    self._add(node, shown, "call", pattern)
        self.generic_visit(node)


def scan_source(text: str, filename: str, index: Index) -> list[Use]:
    """The uses in one file's text; raises SyntaxError (or ValueError: a null byte) where
    it does not parse as Python 3."""
    tree = ast.parse(text, filename=filename)
    walker = _Walker(index)
    walker.visit(tree)
    return walker.uses
