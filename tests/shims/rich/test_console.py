"""rich's Console.clear_live() without a live display (rich >= 14.1 raises IndexError):
nothing happens, as before 14.1; a live display still comes and goes as rich's own
Live context manager makes it."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern")  # rich 15

CODE = """
import io
from rich.console import Console
from rich.live import Live

console = Console(file=io.StringIO())
try:
    console.clear_live()  # pytorch-lightning 1.5's RichProgressBar does this first
    print("cleared")
except IndexError as exc:
    print("IndexError", exc)
with Live(console=console):
    print("live", len(console._live_stack))
print("after", len(console._live_stack))
"""


def test_clearing_without_a_live_display_does_nothing():
    result = run_python(code=CODE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:3] == ["cleared", "live 1", "after 0"], result.stdout


@pytest.mark.parametrize("env", [clean_env(False), clean_env(COMPATFIX_DISABLE="rich.console.clear_live_without_live")],
                         ids=["compatfix-off", "shim-disabled"])
def test_without_the_shim_it_raises(env):
    result = run_python(code=CODE, env=env)
    assert result.stdout.split("\n")[:3] == ["IndexError pop from empty list", "live 1", "after 0"], result.stdout
