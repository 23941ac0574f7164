# ==== BEGIN compatfix test-stack selection (owned by the test infrastructure) ====
# Tests run in several virtualenvs ("stacks", see scripts/setup-stacks.sh and
# scripts/test.sh); COMPATFIX_TEST_STACK names the current one (default "modern").
#
#   @pytest.mark.stack("paper", "modern")  -> runs only on those stacks
#   no marker                              -> runs only on "modern"
#
# Tests for other stacks are DESELECTED (not skipped), so each stack's report
# lists only its own tests. The closest marker wins (a function's marker
# overrides its class's or module's `pytestmark`). Unknown stack names are a
# usage error, so a typo cannot silently drop a test everywhere.
#
# NOTE for code appended below: do not define another `pytest_configure`,
# `pytest_collection_modifyitems` or `pytest_report_header` at module level
# (it would replace these and silently disable stack selection); extend the
# functions in this block instead.
import importlib.util
import os

import pytest

STACKS = ("modern", "paper", "numpy1", "timm1", "mmold", "py312", "transformers4", "transformers50", "py313")
DEFAULT_STACK = "modern"


def current_stack():
    """The stack this pytest run targets (COMPATFIX_TEST_STACK, default modern)."""
    return os.environ.get("COMPATFIX_TEST_STACK", DEFAULT_STACK)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "stack(*names): run this test only on the named test stacks "
        f"({', '.join(STACKS)}); unmarked tests run only on '{DEFAULT_STACK}'. "
        "The current stack is $COMPATFIX_TEST_STACK.",
    )
    stack = current_stack()
    if stack not in STACKS:
        raise pytest.UsageError(
            f"COMPATFIX_TEST_STACK={stack!r} is not a known stack {STACKS}"
        )


def pytest_report_header(config):
    # find_spec locates the top-level package without importing (patching) it;
    # it should point into the venv's site-packages, not the source tree.
    try:
        spec = importlib.util.find_spec("compatfix")
        where = spec.origin if spec else "NOT importable"
    except Exception as exc:  # pragma: no cover - diagnostics only
        where = f"lookup failed: {exc!r}"
    return f"compatfix test stack: {current_stack()} (compatfix: {where})"


def _stacks_of(item):
    marker = item.get_closest_marker("stack")
    if marker is None:
        return (DEFAULT_STACK,)
    names = marker.args
    if not names or marker.kwargs:
        raise pytest.UsageError(
            f"{item.nodeid}: use @pytest.mark.stack('name', ...) with at least "
            f"one positional stack name from {STACKS}"
        )
    unknown = [n for n in names if n not in STACKS]
    if unknown:
        raise pytest.UsageError(
            f"{item.nodeid}: unknown stack(s) {unknown} in @pytest.mark.stack; "
            f"known: {STACKS}"
        )
    return names


def pytest_collection_modifyitems(config, items):
    stack = current_stack()
    selected, deselected = [], []
    for item in items:
        (selected if stack in _stacks_of(item) else deselected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected


# ==== END compatfix test-stack selection ====


@pytest.fixture
def needs_python_311():
    """For tests that reproduce the standard library's 3.10/3.11 removals: on an older
    interpreter they would pass for the wrong reason, so they fail instead."""
    import sys

    if sys.version_info < (3, 11):
        pytest.fail("these tests reproduce Python 3.10/3.11 removals: run them on Python >= 3.11")
