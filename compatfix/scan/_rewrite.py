"""``compatfix scan --diff`` and ``--write``: the permanent port of the mechanical findings.

A mechanical finding is a use of a name whose record (a shim's or an inventory entry's
``renames``) gives a replacement with the same meaning: an alias (``np.float`` ->
``float``), a moved name (``torch._six.inf`` -> ``math.inf``) or a moved module
(``sklearn.externals.joblib`` -> ``joblib``). Only those are rewritten; a name whose
replacement changes the call or its meaning (``rewrites``: ``np.asscalar(a)`` ->
``a.item()``) is left as it is and listed.

The rewrite works on libcst's concrete syntax tree, so everything it does not change keeps
its formatting and comments. Names are resolved through the file's imports by libcst's
scope analysis (``import numpy as np``, ``from numpy import float as F``, an import inside a
function), not by spelling:

- a reference whose resolved name is a renamed key is replaced by the new name, spelled
  through an import the file already has where one binds the new name's module
  (``np.float_`` -> ``np.float64``), otherwise through an ``import`` that is added;
- ``from OLD import NAME [as LOCAL]`` becomes ``from NEW_MODULE import NEW_NAME [as LOCAL]``,
  ``import NEW [as LOCAL]`` for a module, or ``LOCAL = NEW`` where the new name is a builtin
  or an expression (``string_classes = (str, bytes)``); a builtin of the same name needs
  no line at all;
- an import of a removed module that the rewritten references no longer need is removed
  (``import torch._six`` becomes ``import torch`` where ``torch`` is still used).

libcst is an optional dependency (``pip install 'compatfix[scan]'``); nothing else in
compatfix imports this module.
"""

from __future__ import annotations

import builtins
import difflib
import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import Any, Sequence

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import RemoveImportsVisitor
from libcst.metadata import (
    BuiltinAssignment,
    ExpressionContext,
    ExpressionContextProvider,
    MetadataWrapper,
    PositionProvider,
    QualifiedNameProvider,
    QualifiedNameSource,
    ScopeProvider,
)

from compatfix.scan._index import Index

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Change:
    """One rewrite: where (1-based line), the code before and after."""

    line: int
    old: str
    new: str


@dataclass
class FileRewrite:
    """The new text of one file and what changed; ``skipped``: mechanical uses left as
    they are, with why (a name the new spelling would clash with, a one-line block)."""

    path: str
    old: bytes
    new: bytes
    changes: list[Change] = field(default_factory=list)
    skipped: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.new != self.old


def mechanical_renames(index: Index) -> dict[str, str]:
    """key -> replacement of every dotted key all of whose records call it a rename and
    agree on the replacement (a key that any record rewrites is never renamed)."""
    renames = {}
    for key, pattern in index.names.items():
        if pattern.call or not pattern.sources:
            continue
        replacements = {source.replacement for source in pattern.sources}
        if all(source.mechanical for source in pattern.sources) and len(replacements) == 1:
            renames[key] = replacements.pop()
    return renames


def _lookup(dotted: str, index: Index) -> tuple[str, str] | None:
    """(key, rest) of the longest indexed prefix of ``dotted``: ``numpy.float.__name__`` ->
    ``("numpy.float", ".__name__")``; None where no key covers it."""
    pattern = index.lookup_name(dotted)
    if pattern is None:
        return None
    return pattern.name, dotted[len(pattern.name):]


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _dotted_name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted_name(node.value)
        return None if head is None else "%s.%s" % (head, node.attr.value)
    return None


def _is_expression_name(new: str) -> bool:
    """Whether ``new`` is a builtin or an expression, which an import cannot bind."""
    return not _DOTTED.match(new) or new in _BUILTINS


def _import_target(statement: cst.CSTNode, local: str) -> str | None:
    """The dotted name an import statement binds ``local`` to (``import a.b`` binds ``a``
    to ``a``), or None where it does not bind it."""
    if isinstance(statement, cst.Import):
        for alias in statement.names:
            dotted = _dotted_name(alias.name)
            if dotted is None:
                continue
            if alias.asname is not None:
                if alias.evaluated_alias == local:
                    return dotted
            elif dotted.partition(".")[0] == local:
                return local
    elif isinstance(statement, cst.ImportFrom) and not statement.relative and statement.module is not None:
        module = _dotted_name(statement.module)
        if module is not None and not isinstance(statement.names, cst.ImportStar):
            for alias in statement.names:
                if (alias.evaluated_alias or alias.evaluated_name) == local:
                    return "%s.%s" % (module, alias.evaluated_name)
    return None


class _Plan(cst.CSTVisitor):
    """What to rewrite, decided on the original tree (with its scope metadata) before any
    change: references to replace, import lines to replace, imports to drop or narrow."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ExpressionContextProvider, PositionProvider)

    def __init__(self, index: Index, renames: dict[str, str]) -> None:
        self.index, self.renames = index, renames
        self.references: dict[cst.CSTNode, cst.BaseExpression] = {}
        self.statements: dict[cst.SimpleStatementLine, list[cst.SimpleStatementLine]] = {}
        self.narrowed: dict[cst.ImportAlias, cst.ImportAlias] = {}  # import a.b -> import a
        self.needed_imports: set[str] = set()
        # imports of removed names that may go: (name, module, obj, asname, line)
        self.removals: list[tuple[str, str, str | None, str | None, int]] = []
        self.plain_imports: list[tuple[cst.ImportAlias, str, int]] = []  # import a.b, a.b a removed name
        self.changes: list[Change] = []
        self.skipped: list[tuple[int, str, str]] = []
        self.rewritten: set[str] = set()  # the resolved names of the rewritten references
        self.remaining: set[str] = set()  # the resolved names of every other reference
        # dotted name -> (how a module-level import spells it, the local name, what it binds the local to)
        self.bindings: dict[str, tuple[str, str, str]] = {}

    # helpers --------------------------------------------------------------------------
    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def _resolved(self, node: cst.CSTNode) -> str | None:
        """The one name ``node`` resolves to through an import, or None (a local, a
        builtin, or more than one possibility)."""
        names = self.get_metadata(QualifiedNameProvider, node, set())
        if len(names) != 1:
            return None
        (name,) = names
        return name.name if name.source == QualifiedNameSource.IMPORT else None

    def _rename_of(self, dotted: str, exact: bool = False) -> str | None:
        """The new name of ``dotted`` (of the key that covers it, and what follows the
        key), or None where it is no rename (``exact``: ``dotted`` is the key itself)."""
        found = _lookup(dotted, self.index)
        if found is None or found[0] not in self.renames or (exact and found[1]):
            return None
        key, rest = found
        new = self.renames[key]
        if rest and _is_expression_name(new) and new not in _BUILTINS:
            return None  # "(str, bytes).x" would not mean the old name's attribute
        return new + rest

    def _means(self, node: cst.CSTNode, local: str, target: str | None) -> bool:
        """Whether ``local`` at ``node`` is bound only by imports of ``target`` (None: by
        nothing, or only by imports of names renamed to the builtin ``local``)."""
        scope = self.get_metadata(ScopeProvider, node, None)
        if scope is None:
            return False
        for assignment in scope[local]:
            if isinstance(assignment, BuiltinAssignment):
                if target is None:
                    continue
                return False
            statement = getattr(assignment, "node", None)
            if not isinstance(statement, (cst.Import, cst.ImportFrom)):
                return False
            bound = _import_target(statement, local)
            if target is not None and bound != target:
                return False
            if target is None and (bound is None or self._rename_of(bound) != local):
                return False
        return True

    def _spell(self, node: cst.Attribute, new: str) -> cst.BaseExpression | None:
        """The expression for ``new`` at ``node``, scheduling the import it needs; None
        where a name it would use means something else there."""
        if _is_expression_name(new):
            if new in _BUILTINS:
                return cst.Name(new) if self._means(node, new, None) else None
            return cst.parse_expression(new)
        module, _, attribute = new.rpartition(".")
        # The module the reference itself went through, where the new name is in it: np.float_ -> np.float64
        root: cst.BaseExpression = node
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name) and module and self._resolved(root) == module:
            return cst.parse_expression("%s.%s" % (root.value, attribute))
        for target, rest in ((new, ""), (module, "." + attribute)):
            binding = self.bindings.get(target) if target else None
            if binding is not None and self._means(node, binding[1], binding[2]):
                return cst.parse_expression(binding[0] + rest)
        top = new.partition(".")[0]
        if not self._means(node, top, top):
            return None
        self.needed_imports.add(module or new)
        return cst.parse_expression(new)

    # module-level imports are the spellings a rewrite may reuse --------------------------
    def visit_Module(self, node: cst.Module) -> None:
        for statement in node.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        dotted = _dotted_name(alias.name)
                        if dotted is None:
                            continue
                        if alias.asname is not None and alias.evaluated_alias is not None:
                            local = alias.evaluated_alias
                            self.bindings.setdefault(dotted, (local, local, dotted))
                        else:
                            parts = dotted.split(".")
                            for end in range(1, len(parts) + 1):
                                self.bindings.setdefault(".".join(parts[:end]), (".".join(parts[:end]), parts[0], parts[0]))
                elif isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
                    module = _dotted_name(small.module)
                    if module is None or isinstance(small.names, cst.ImportStar):
                        continue
                    for alias in small.names:
                        local = alias.evaluated_alias or alias.evaluated_name
                        dotted = "%s.%s" % (module, alias.evaluated_name)
                        self.bindings.setdefault(dotted, (local, local, dotted))
        # An import of a renamed name is rewritten itself: it spells nothing new.
        self.bindings = {dotted: binding for dotted, binding in self.bindings.items()
                         if self._rename_of(dotted) is None}

    def leave_Module(self, original_node: cst.Module) -> None:
        """Imports of removed names that the rewritten references were the only uses of."""
        def under(names: set[str], dotted: str) -> bool:
            return any(name == dotted or name.startswith(dotted + ".") for name in names)

        self.removals = [entry for entry in self.removals
                         if under(self.rewritten, entry[0]) and not under(self.remaining, entry[0])]
        for alias, dotted, line in self.plain_imports:
            if not under(self.rewritten, dotted) or under(self.remaining, dotted):
                continue
            top = dotted.partition(".")[0]
            if under(self.remaining, top):  # import torch._six, where torch.ones is still used
                self.narrowed[alias] = alias.with_changes(name=cst.Name(top))
                self.changes.append(Change(line, "import %s" % dotted, "import %s" % top))
            else:
                self.removals.append((dotted, dotted, None, None, line))
        for _, module, name, asname, line in self.removals:
            old = ("from %s import %s" % (module, name)) if name else "import %s" % module
            self.changes.append(Change(line, old + (" as %s" % asname if asname else ""),
                                       "(removed: nothing uses it after the rewrite)"))

    # imports ----------------------------------------------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        lines: list[cst.SimpleStatementLine] = []
        kept: list[cst.BaseSmallStatement] = []
        changed = False
        for small in node.body:
            rest: cst.BaseSmallStatement | None = small
            new_lines: list[cst.SimpleStatementLine] = []
            if isinstance(small, cst.ImportFrom):
                rest, new_lines = self._import_from(small)
            elif isinstance(small, cst.Import):
                rest, new_lines = self._import(small)
            changed = changed or rest is not small or bool(new_lines)
            if rest is not None:
                kept.append(rest)
            lines += new_lines
        if not changed:
            return
        if kept:
            kept[-1] = kept[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            lines.insert(0, cst.SimpleStatementLine(body=kept))
        # The first line keeps the comments above the statement, the last the one after it.
        if lines:
            lines[0] = lines[0].with_changes(leading_lines=node.leading_lines)
            lines[-1] = lines[-1].with_changes(trailing_whitespace=node.trailing_whitespace)
        self.statements[node] = lines
        old = _code(node.with_changes(leading_lines=())).strip()
        new = "; ".join(_code(line.with_changes(leading_lines=())).strip() for line in lines)
        self.changes.append(Change(self._line(node), old, new or "(removed)"))

    def _new_import_line(self, local: str, new: str) -> cst.SimpleStatementLine | None:
        """The statement that binds ``local`` to ``new``; None where the builtin of that
        name needs none."""
        if _is_expression_name(new):
            if new == local:
                return None
            code = "%s = %s" % (local, new)
        elif "." not in new:
            code = "import %s" % new if new == local else "import %s as %s" % (new, local)
        else:
            module, _, name = new.rpartition(".")
            code = "from %s import %s" % (module, name) + ("" if name == local else " as %s" % local)
        statement = cst.parse_statement(code)
        assert isinstance(statement, cst.SimpleStatementLine)
        return statement

    def _import_from(self, node: cst.ImportFrom) -> tuple[cst.ImportFrom | None, list[cst.SimpleStatementLine]]:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return node, []
        module = _dotted_name(node.module)
        if module is None:
            return node, []
        kept, lines = [], []
        for alias in node.names:
            old = "%s.%s" % (module, alias.evaluated_name)
            new = self._rename_of(old)
            if new is None:
                kept.append(alias)
                if self.index.lookup_name(old) is not None:
                    self.removals.append((old, module, alias.evaluated_name, alias.evaluated_alias,
                                          self._line(node)))
                continue
            line = self._new_import_line(alias.evaluated_alias or alias.evaluated_name, new)
            if line is not None:
                lines.append(line)
        if len(kept) == len(node.names):
            return node, []
        if not kept:
            return None, lines
        if node.lpar is None:  # without parentheses, the last name takes no comma
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return node.with_changes(names=kept), lines

    def _import(self, node: cst.Import) -> tuple[cst.Import | None, list[cst.SimpleStatementLine]]:
        kept, lines = [], []
        for alias in node.names:
            dotted = _dotted_name(alias.name)
            new = self._rename_of(dotted) if dotted is not None else None
            if dotted is None or self.index.lookup_name(dotted) is None:
                kept.append(alias)
            elif alias.asname is None:
                # import a.b binds a: its uses are rewritten, and the import follows them
                kept.append(alias)
                self.plain_imports.append((alias, dotted, self._line(node)))
            elif new is None:
                kept.append(alias)
                self.removals.append((dotted, dotted, None, alias.evaluated_alias, self._line(node)))
            else:
                line = self._new_import_line(alias.evaluated_alias or dotted, new)
                if line is not None:
                    lines.append(line)
        if len(kept) == len(node.names):
            return node, []
        if not kept:
            return None, lines
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return node.with_changes(names=kept), lines

    def visit_Import(self, node: cst.Import) -> bool:
        return False  # the names in an import are no references

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    # references -------------------------------------------------------------------------
    def _reference(self, node: cst.Name | cst.Attribute) -> bool:
        resolved = self._resolved(node)
        if resolved is None:
            return True
        new = self._rename_of(resolved, exact=True)
        if self._rename_of(resolved) is not None and (new is None or isinstance(node, cst.Name)):
            # a bare name, or an attribute of one, bound by an import of the renamed name
            # itself (from torch._six import inf): the import is rewritten instead
            return True
        context = self.get_metadata(ExpressionContextProvider, node, None)
        if new is None or context in (ExpressionContext.STORE, ExpressionContext.DEL):
            self.remaining.add(resolved)
            return True
        spelled = self._spell(node, new)
        if spelled is None:
            self.skipped.append((self._line(node), resolved,
                                 "%s is bound to something else here" % new.partition(".")[0]))
            self.remaining.add(resolved)
            return True
        self.references[node] = spelled
        self.rewritten.add(resolved)
        self.changes.append(Change(self._line(node), _code(node), _code(spelled)))
        return False  # its inner names go with it

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self._reference(node)

    def visit_Name(self, node: cst.Name) -> bool:
        return self._reference(node)


class _Apply(cst.CSTTransformer):
    def __init__(self, plan: _Plan) -> None:
        self.plan = plan

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self.plan.references.get(original_node, updated_node)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self.plan.references.get(original_node, updated_node)

    def leave_ImportAlias(self, original_node: cst.ImportAlias, updated_node: cst.ImportAlias) -> cst.ImportAlias:
        return self.plan.narrowed.get(original_node, updated_node)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        """The imports the new names need, after the module's leading imports."""
        if not self.plan.needed_imports:
            return updated_node
        body = list(updated_node.body)
        generated = {id(line) for lines in self.plan.statements.values() for line in lines}
        position = 0
        for number, statement in enumerate(body):
            if not isinstance(statement, cst.SimpleStatementLine):
                break
            if id(statement) in generated:  # a rewritten import, or the assignment that replaced one
                position = number + 1
                continue
            if all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body):
                position = number + 1
            elif number == 0 and isinstance(statement.body[0], cst.Expr) and \
                    isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
                position = 1  # the docstring
            else:
                break
        lines = [cst.parse_statement("import %s" % name) for name in sorted(self.plan.needed_imports)]
        return updated_node.with_changes(body=body[:position] + lines + body[position:])

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine) -> Any:
        lines = self.plan.statements.get(original_node)
        if lines is None:
            return updated_node
        if not lines:
            return cst.RemoveFromParent()
        return cst.FlattenSentinel(lines)


def rewrite_source(data: bytes, path: str, index: Index, renames: dict[str, str] | None = None) -> FileRewrite:
    """The port of one file's source (raises libcst.ParserSyntaxError where it does not
    parse)."""
    renames = mechanical_renames(index) if renames is None else renames
    module = cst.parse_module(data)
    wrapper = MetadataWrapper(module)
    plan = _Plan(index, renames)
    wrapper.visit(plan)
    result = FileRewrite(path, data, data, plan.changes, plan.skipped)
    if not plan.changes:
        return result
    tree = wrapper.module.visit(_Apply(plan))
    # One pass per import: RemoveImportsVisitor keeps one alias per module name, so
    # "import torch._six as six" and "import torch._six" in one pass would keep one of them.
    for _, module_name, name, asname, _ in plan.removals:
        context = CodemodContext()
        RemoveImportsVisitor.remove_unused_import(context, module_name, name, asname)
        tree = RemoveImportsVisitor(context).transform_module(tree)
    result.new = tree.bytes
    result.changes.sort(key=lambda change: change.line)
    return result


def unified_diff(rewrites: Sequence[FileRewrite]) -> str:
    """A diff that ``patch -p1`` and ``git apply`` apply from the scanned folder."""
    out: list[str] = []
    for rewrite in rewrites:
        if not rewrite.changed:
            continue
        old = rewrite.old.decode("utf-8").splitlines(keepends=True)
        new = rewrite.new.decode("utf-8").splitlines(keepends=True)
        for line in difflib.unified_diff(old, new, "a/" + rewrite.path, "b/" + rewrite.path, lineterm="\n"):
            if not line.endswith("\n"):  # the file's last line has no newline
                line += "\n\\ No newline at end of file\n"
            out.append(line)
    return "".join(out)


def write_atomically(file: str, data: bytes) -> None:
    """Replace ``file``'s content in one step (a reader sees the old or the new file, never
    half of one), keeping its permissions."""
    folder = os.path.dirname(os.path.abspath(file))
    mode = os.stat(file).st_mode & 0o7777
    handle, temporary = tempfile.mkstemp(prefix=".compatfix-", suffix=".py", dir=folder)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, file)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
