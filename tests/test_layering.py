"""The import graph of the installed ``compatfix`` package, computed statically, has no
cycle among the core modules, and no import runs from a floor up to a higher one.

The graph is read with ``ast`` from the files of the installed wheel (what runs), not
from the source tree. Every ``import`` and ``from ... import`` statement counts, at a
module's top level and inside functions and methods alike (a function-level import
runs too, only later): each edge says which it is. Two kinds do not count, because
they never run: imports under ``if TYPE_CHECKING:`` (names for the type checker) and
``importlib.import_module`` with a computed name (how the engine loads shim modules and
plugins; the index and the entry points, not the code, name those).

An import of the package itself (``from compatfix import __version__``) is no edge: a
submodule's import runs the package's ``__init__`` first in any case, and a test below
checks that this ``__init__`` imports nothing of compatfix at its top.
"""

from __future__ import annotations

import ast
import os
import sys

import pytest

import compatfix

PACKAGE = "compatfix"
BOOTSTRAP = "_compatfix_bootstrap"  # the start-up module beside the package (a user of the core)

# The core's floors, lowest first. A module may import modules of its own floor (without
# a cycle) and of the floors below; every other compatfix module stands above the core,
# so a core module never imports one.
FLOORS: tuple[tuple[str, frozenset[str]], ...] = (
    ("base: settings, messages, files, versions, the index, first-use restoration, the plugin scan",
     frozenset({"_settings", "_messages", "_files", "_versions", "_shim_index", "_first_use", "_plugins"})),
    ("records: the shim registry, the report file",
     frozenset({"registry", "_report"})),
    ("decisions and changes: the decision, patching, the outcomes",
     frozenset({"_decision", "patching", "_outcomes"})),
    ("the finder hand-off", frozenset({"_finder"})),
    ("the engine", frozenset({"_engine"})),
)
CORE = {PACKAGE + "." + name: level for level, (_, names) in enumerate(FLOORS) for name in names}
ABOVE_THE_CORE = len(FLOORS)


def _installed_modules() -> dict[str, str]:
    """Module name -> file, for every module of the installed package and the bootstrap."""
    root = os.path.dirname(os.path.abspath(compatfix.__file__))
    modules = {}
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        for file in files:
            if not file.endswith(".py"):
                continue
            parts = os.path.relpath(os.path.join(folder, file), os.path.dirname(root))[:-3].split(os.sep)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = os.path.join(folder, file)
    bootstrap = sys.modules.get(BOOTSTRAP)
    if bootstrap is None:
        import importlib.util

        spec = importlib.util.find_spec(BOOTSTRAP)
        assert spec is not None and spec.origin, "the installed wheel has no %s" % BOOTSTRAP
        modules[BOOTSTRAP] = spec.origin
    else:
        modules[BOOTSTRAP] = bootstrap.__file__
    return modules


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imports(tree: ast.Module, module: str, is_package: bool):
    """``(imported module, line, "module-level" or "function-level")`` for each import
    statement that runs, resolved against ``module``."""

    def visit(node: ast.AST, in_function: bool):
        for child in ast.iter_child_nodes(node):
            if _is_type_checking_block(child):
                for other in child.orelse:  # the else branch does run
                    yield from visit(other, in_function)
                continue
            where = "function-level" if in_function else "module-level"
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, None, child.lineno, where
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[: len(base) - (child.level - 1)]
                    source = ".".join(base + ([child.module] if child.module else []))
                else:
                    source = child.module or ""
                for alias in child.names:
                    yield source, alias.name, child.lineno, where
            yield from visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                       ast.Lambda)))

    yield from visit(tree, False)


def import_graph() -> dict[str, list[tuple[str, int, str]]]:
    """Module -> ``(imported compatfix module, line, kind)`` for the installed package."""
    modules = _installed_modules()
    graph: dict[str, list[tuple[str, int, str]]] = {}
    for module, file in sorted(modules.items()):
        with open(file, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), file)
        edges = []
        is_package = os.path.basename(file) == "__init__.py"
        for source, name, line, kind in _imports(tree, module, is_package):
            # `from a.b import c` imports the module a.b.c where there is one, else a.b.
            target = source + "." + name if name and source + "." + name in modules else source
            while target and target not in modules:  # `import compatfix.x.y` runs compatfix.x.y
                target = target.rpartition(".")[0]
            if target and target != PACKAGE and target != module:
                edges.append((target, line, kind))
        graph[module] = edges
    return graph


def floor_of(module: str) -> int:
    return CORE.get(module, ABOVE_THE_CORE)


def _cycles(graph: dict[str, list[tuple[str, int, str]]], nodes: set[str]) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing
    itself) among ``nodes`` (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target, _, _ in graph.get(node, ()):
            if target not in nodes:
                continue
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(nodes):
        if node not in index:
            connect(node)
    return found


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_every_core_module_is_installed(graph):
    missing = sorted(set(CORE) - set(graph))
    assert not missing, "FLOORS names modules the wheel does not have: %s" % missing


def test_the_core_has_no_import_cycle(graph):
    assert _cycles(graph, set(CORE)) == []


def test_no_import_runs_from_a_floor_up_to_a_higher_one(graph):
    upward = [
        "%s (floor %d) imports %s (%s) at line %d, %s"
        % (module, floor_of(module), target,
           "floor %d" % floor_of(target) if target in CORE else "above the core", line, kind)
        for module, edges in graph.items() if module in CORE
        for target, line, kind in edges if floor_of(target) > floor_of(module)
    ]
    assert upward == []


def test_the_package_init_imports_no_compatfix_module_at_its_top(graph):
    # Why an import of the package itself is no edge: its __init__ depends on nothing.
    assert [edge for edge in graph[PACKAGE] if edge[2] == "module-level"] == []


def test_the_graph_sees_both_kinds_of_import(graph):
    # The test cannot pass by missing imports: known edges of each kind are found.
    assert ("compatfix._settings", "module-level") in {(t, k) for t, _, k in graph["compatfix._engine"]}
    assert ("compatfix._first_use", "function-level") in {(t, k) for t, _, k in graph["compatfix.patching"]}
    assert ("compatfix._engine", "function-level") in {(t, k) for t, _, k in graph[BOOTSTRAP]}


def test_a_cycle_or_an_upward_import_would_be_found():
    # The checks themselves, on a made-up graph: a cycle, and a floor-0 module importing up.
    made_up = {
        "compatfix._settings": [("compatfix._engine", 1, "function-level")],
        "compatfix._engine": [("compatfix._settings", 1, "module-level")],
    }
    assert _cycles(made_up, set(CORE)) == [["compatfix._engine", "compatfix._settings"]]
    assert floor_of("compatfix._engine") > floor_of("compatfix._settings")
