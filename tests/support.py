"""Helpers for tests that run Python in a subprocess: compatfix activates at interpreter
start-up (compatfix.pth), so on/off comparisons need fresh interpreters."""

from __future__ import annotations

import functools
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor

# The suite's folders: test modules live in folders that mirror the code they test, so
# they find fixtures and the checkout from here rather than from their own __file__.
TESTS = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(TESTS, "fixtures")
REPO_ROOT = os.path.dirname(TESTS)

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
    # albumentations 2.x asks PyPI for a newer release at every import: no network in tests
    env.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")
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


def import_outcomes(lines: list[str], env: dict[str, str]) -> list[str]:
    """Run each import statement of ``lines`` in one interpreter: "present" or "missing"
    (an ImportError) for each, in order."""
    result = run_python(
        code="""
        for line in %r:
            try:
                exec(line)
            except ImportError:
                print("missing")
            else:
                print("present")
        """ % (lines,),
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.split()


def free_port() -> int:
    """A loopback TCP port that was free a moment ago (for rendezvous in tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# What libstdc++ prints when a process ends with a joinable std::thread. torch's gloo threads
# can outlive the interpreter's finalisation in a process that never called
# destroy_process_group (pytorch/pytorch#179291: the SIGABRT; its atexit fix was withdrawn,
# as destroying a group at exit can wait on peers). Seen in CI on a loaded machine: on rank 0
# of the SyncBN fixture (2026-12-01), on rank 1 of the mmseg e2e test step (2026-12-02) and
# on rank 0 of the classification e2e test's eval step on py312 and in a world of one (the
# SyncBN single-process case, 2026-12-02), each after the process had written everything it
# was run for; never reproduced on demand.
GLOO_TEARDOWN_ABORT = "terminate called without an active exception"


def finished_but_aborted_at_teardown(returncode: int, output: str, outputs_present: bool) -> bool:
    """Whether a failed distributed run is only gloo's teardown abort, after its outputs
    were written (a test then checks those outputs as usual)."""
    if returncode != 0 and GLOO_TEARDOWN_ABORT in output and outputs_present:
        print("the run wrote its outputs; a rank then aborted at teardown:\n" + output[-2000:])
        return True
    return False


@functools.lru_cache(maxsize=None)
def has_cuda_gpu() -> bool:
    """Whether torch sees a CUDA GPU here: the "fails without CPU mode" halves assume not."""
    completed = run_python(code="import torch; print(torch.cuda.is_available())", compatfix=False)
    return completed.stdout.strip() == "True"


# --- CPU mode: a snippet with the mode on and off ---------------------------------------------

# What real torch says when CUDA code runs on a machine without a GPU.
CUDA_ERROR = re.compile(
    r"Found no NVIDIA driver|Torch not compiled with CUDA|CUDA driver version is insufficient"
    r"|no CUDA GPUs|Attempting to deserialize object on a CUDA device|CUDA error|AcceleratorError"
)


def cpu_env(**extra: str) -> dict[str, str]:
    return clean_env(COMPATFIX_DEVICE="cpu", **extra)


def on_and_off(code: str, off_error=CUDA_ERROR, args=()):
    """Run ``code`` with CPU mode on and off (in parallel); check both outcomes."""
    with ThreadPoolExecutor(2) as pool:
        on_future = pool.submit(run_python, *args, code=code, env=cpu_env())
        off_future = pool.submit(run_python, *args, code=code, env=clean_env())
        on, off = on_future.result(), off_future.result()
    assert on.returncode == 0, on.stdout + on.stderr
    assert "OK" in on.stdout, on.stdout + on.stderr
    assert off.returncode != 0, "passed without CPU mode, so it proves nothing:\n" + off.stdout
    if isinstance(off_error, str):
        assert off_error in off.stderr, off.stderr
    else:
        assert off_error.search(off.stderr), off.stderr
    return on


# --- mmcv's parallel wrappers: tests/fixtures/mm_parallel/cases.py on one rank ----------------

MM_PARALLEL = os.path.join(FIXTURES, "mm_parallel")


def one_rank_env(compatfix: bool, **extra: str) -> dict[str, str]:
    """A world of one on loopback gloo, as a launcher would set it."""
    return clean_env(compatfix, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1",
                     MASTER_PORT=str(free_port()), RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", **extra)


def run_mm_parallel_case(case: str, compatfix: bool = True, timeout: float = 240, **extra: str) -> dict:
    """Run one case of tests/fixtures/mm_parallel/cases.py; its RESULT line as a dict."""
    completed = run_python(os.path.join(MM_PARALLEL, "cases.py"), case, env=one_rank_env(compatfix, **extra),
                           cwd=MM_PARALLEL, timeout=timeout)
    lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, completed.stdout[-3000:] + completed.stderr[-3000:]
    return json.loads(lines[0][len("RESULT "):])


def printed_results(completed) -> list[dict]:
    """The ``RESULT <json>`` objects a run's processes printed (ranks' lines may run
    together on one stdout), sorted by local rank, else rank; the run must have passed."""
    assert completed.returncode == 0, completed.stdout + completed.stderr[-4000:]
    decoder = json.JSONDecoder()
    found, text, start = [], completed.stdout, 0
    while True:
        start = text.find("RESULT ", start)
        if start < 0:
            break
        value, end = decoder.raw_decode(text, start + len("RESULT "))
        found.append(value)
        start = end
    return sorted(found, key=lambda result: result.get("local_rank", result.get("rank", 0)))


# --- mmcv ops through mmcv's own wrappers: tests/fixtures/mm_ops/wrappers.py ------------------

MM_OPS = os.path.join(FIXTURES, "mm_ops")


def run_mmcv_op_wrapper(case: str, folder) -> dict:
    """One case of tests/fixtures/mm_ops/wrappers.py: mmcv's Python wrapper of an op, on
    the installed mmcv lite build. With the ``mmcv._ext`` shim disabled it must fail for
    want of mmcv._ext (the op cannot run at all); under compatfix, what it computed
    (inputs, output, gradients), for the caller's independent reference."""
    import torch

    script = os.path.join(MM_OPS, "wrappers.py")
    saved = os.path.join(str(folder), case + ".pt")
    with ThreadPoolExecutor(2) as pool:
        off = pool.submit(run_python, script, case, saved + ".off",
                          env=clean_env(COMPATFIX_DISABLE="mmcv._ext"))
        on = pool.submit(run_python, script, case, saved)
        off, on = off.result(), on.result()
    assert off.returncode != 0 and "No module named 'mmcv._ext'" in off.stderr, off.stdout + off.stderr[-3000:]
    assert on.returncode == 0 and "saved" in on.stdout, on.stdout + on.stderr[-3000:]
    return torch.load(saved)


_HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("HELD", flush=True)
time.sleep(60)
"""


class holding_lock:
    """``with holding_lock(path):``: another live process holds an flock on ``path``."""

    def __init__(self, path) -> None:
        self.path = str(path)

    def __enter__(self) -> "holding_lock":
        self.holder = subprocess.Popen([sys.executable, "-c", _HOLD_LOCK, self.path], stdout=subprocess.PIPE,
                                       text=True, env=clean_env(False))
        assert self.holder.stdout.readline().strip() == "HELD"
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.holder.kill()
        self.holder.wait()
        self.holder.stdout.close()
