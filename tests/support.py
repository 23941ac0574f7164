"""Helpers for tests that run Python in a subprocess: compatfix activates at interpreter
start-up (compatfix.pth), so on/off comparisons need fresh interpreters."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import textwrap

# Children run from an empty folder unless a test says otherwise: from the repository
# root, `python -c` would import the source tree's compatfix instead of the installed one.
NEUTRAL_CWD = tempfile.mkdtemp(prefix="compatfix-tests-")

# Variables that would leak the outer run's compatfix options into a test's child.
_COMPATFIX_VARIABLES = (
    "COMPATFIX", "COMPATFIX_DISABLE", "COMPATFIX_ENABLE", "COMPATFIX_STRICT",
    "COMPATFIX_REPORT", "COMPATFIX_DEVICE", "COMPATFIX_RUN_ID",
    "COMPATFIX_TORCH_LOAD", "COMPATFIX_TORCH_LOAD_TRUST", "COMPATFIX_TRUST_STORE",
)


def clean_env(compatfix: bool = True, **extra: str) -> dict[str, str]:
    """The current environment without compatfix settings; COMPATFIX=0 when off."""
    env = {k: v for k, v in os.environ.items() if k not in _COMPATFIX_VARIABLES}
    env.pop("PYTHONPATH", None)
    # torch.save under compatfix records what it wrote (docs/checkpoints.md): keep the
    # tests' records out of the user's own trust store.
    env.setdefault("COMPATFIX_TRUST_STORE", os.path.join(NEUTRAL_CWD, "trusted-checkpoints.tsv"))
    if not compatfix:
        env["COMPATFIX"] = "0"
    env["PYTHONWARNINGS"] = "ignore::FutureWarning"  # torch.jit.script's deprecation noise
    env.update(extra)
    return env


def run_python(
    *args: str,
    code: str | None = None,
    compatfix: bool = True,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    timeout: float = 300,
    python: str = sys.executable,
) -> subprocess.CompletedProcess:
    """Run ``python [args] [-c code]`` and capture text output (never raises on exit code)."""
    command = [python, *args]
    if code is not None:
        command += ["-c", textwrap.dedent(code)]
    return subprocess.run(
        command,
        env=clean_env(compatfix) if env is None else env,
        cwd=NEUTRAL_CWD if cwd is None else cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def free_port() -> int:
    """A loopback TCP port that was free a moment ago (for rendezvous in tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
