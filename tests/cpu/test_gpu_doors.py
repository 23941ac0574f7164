"""CPU mode beyond torch (compatfix.cpu.subprocess, .os, .pynvml, .GPUtil, .gpustat): the doors
2020-22 scripts reach the GPU through outside torch answer what ``torch.cuda`` says in CPU
mode, and nothing else changes.

Each door is a case of tests/fixtures/cpu_doors/doors.py, run in a fresh interpreter: under
``COMPATFIX_DEVICE=cpu`` it must pass; in CPU mode with the door's shims disabled it must
fail (no nvidia-smi, no NVML, no such module on this GPU-less machine). ``nvidia-smi`` runs
that are not queries answered here reach the real program: a fake one on PATH records it.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import FIXTURES, clean_env, cpu_env, has_cuda_gpu, run_python

from compatfix.cpu import _nvidia_smi as nvidia_smi

DOORS = os.path.join(FIXTURES, "cpu_doors", "doors.py")
NAME = "CPU (compatfix --device cpu)"
SMI = "cpu.subprocess.nvidia_smi,cpu.os.nvidia_smi"
NVML = "cpu.pynvml.standin,cpu.pynvml.answers"

# case -> the shims that answer it (disabled for the half that must fail)
CASES = {
    "popen_query": SMI,
    "run_list": SMI,
    "run_shell_string": SMI,
    "check_output_list": SMI,
    "check_output_shell": SMI,
    "getoutput": SMI,
    "popen_communicate": SMI,
    "system_prints": SMI,
    "system_pipeline": SMI,
    "popen_grep": SMI,
    "nvidia_smi_count": SMI,
    "pynvml_calls": NVML,
    "nvidia_smi_module": NVML,
    # an installed GPUtil asks nvidia-smi; an installed gpustat asks pynvml
    "gputil_calls": "cpu.GPUtil.standin," + SMI,
    "gpustat_calls": "cpu.gpustat.standin," + NVML,
}


def run_doors(*cases: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return run_python(DOORS, *cases, env=env)


@pytest.fixture(scope="module")
def no_gpu_tools():
    if has_cuda_gpu():
        pytest.skip("a GPU is here: the halves that must fail without CPU mode assume none")


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_door_answers_in_cpu_mode_and_fails_without_its_shim(case, no_gpu_tools):
    with ThreadPoolExecutor(2) as pool:
        on = pool.submit(run_doors, case, env=cpu_env())
        off = pool.submit(run_doors, case, env=cpu_env(COMPATFIX_DISABLE=CASES[case]))
        on, off = on.result(), off.result()
    assert on.returncode == 0 and "OK " + case in on.stdout, on.stdout + on.stderr
    assert off.returncode != 0, "passed with the shims disabled, so it proves nothing:\n" + off.stdout
    if case == "system_prints":  # what nvidia-smi printed reached the process's stdout
        assert "GPU 0: %s (UUID: GPU-compatfix-cpu-0)\n" % NAME in on.stdout, on.stdout


def test_the_doors_agree_with_torch_cuda_on_several_devices(no_gpu_tools):
    """CUDA_VISIBLE_DEVICES=0,1 (as a README's command line sets it) and a launcher's
    LOCAL_WORLD_SIZE=3: torch.cuda plays that many devices, and so does every door."""
    cases = [case for case in sorted(CASES) if case != "popen_query"]  # its unpacking holds for one device
    for extra in ({"CUDA_VISIBLE_DEVICES": "0,1"}, {"LOCAL_WORLD_SIZE": "3", "LOCAL_RANK": "1"}):
        done = run_doors(*cases, env=cpu_env(**extra))
        assert done.returncode == 0 and done.stdout.count("OK ") == len(cases), done.stdout + done.stderr
    done = run_python(code="import torch; print(torch.cuda.device_count())",
                      env=cpu_env(CUDA_VISIBLE_DEVICES="0,1"))
    assert done.stdout.strip() == "2", done.stdout + done.stderr


# --- what is not intercepted -----------------------------------------------------------------

FAKE_SMI = """#!/bin/sh
echo "$@" >> "$FAKE_SMI_LOG"
echo "fake nvidia-smi $*"
"""

OTHER_USES = """
import os, subprocess, torch
print(subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True).stdout, end="")
print(subprocess.check_output("nvidia-smi topo -m", shell=True, text=True), end="")
print(os.popen("nvidia-smi -q").read(), end="")
print(os.popen("nvidia-smi --query-gpu=memory.used --format=csv -l 1 | head -1").read(), end="")
print(subprocess.check_output(["nvidia-smi", "--query-gpu=not.a.field", "--format=csv"], text=True), end="")
print(subprocess.check_output("nvidia-smi -i $GPU -L", shell=True, text=True, env=dict(os.environ, GPU="0")), end="")
print(subprocess.check_output(["nvidia-smi", "-i", "7", "-L"], text=True), end="")
import sys; sys.stdout.flush()
os.system("nvidia-smi topo -m")
print(subprocess.check_output("echo nvidia-smi -L", shell=True, text=True), end="")
"""
OTHER_RUNS = ["topo -m", "topo -m", "-q", "--query-gpu=memory.used --format=csv -l 1", "--query-gpu=not.a.field --format=csv",
              "-i 0 -L", "-i 7 -L", "topo -m"]


def fake_smi_env(tmp_path, **extra: str) -> dict[str, str]:
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "nvidia-smi"
    program.write_text(FAKE_SMI)
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    env = dict(extra, FAKE_SMI_LOG=str(tmp_path / "runs.log"), PATH=str(folder) + os.pathsep + os.environ["PATH"])
    return env


def test_other_uses_of_nvidia_smi_run_the_real_program(tmp_path):
    env = fake_smi_env(tmp_path)
    done = run_python(code=OTHER_USES, env=cpu_env(**env))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "runs.log").read_text().splitlines() == OTHER_RUNS
    assert done.stdout.count("fake nvidia-smi ") == len(OTHER_RUNS)
    assert done.stdout.endswith("nvidia-smi -L\n")  # echo's word, not a command


def test_answered_queries_run_no_process(tmp_path):
    env = fake_smi_env(tmp_path)
    done = run_doors("run_list", "popen_communicate", "system_pipeline", "nvidia_smi_count", env=cpu_env(**env))
    assert done.returncode == 0 and done.stdout.count("OK ") == 4, done.stdout + done.stderr
    assert not (tmp_path / "runs.log").exists()


OUTSIDE = """
import os, subprocess, sys, torch
print(subprocess.check_output(["nvidia-smi", "--query-gpu=memory.used", "--format=csv"], text=True), end="")
print(os.popen("nvidia-smi").read(), end="")
assert not hasattr(subprocess.Popen._execute_child, "__wrapped__")
assert type(os.system).__name__ == "builtin_function_or_method"
assert not torch.cuda.is_available()
import importlib.util
for name in ("pynvml", "GPUtil", "gpustat", "nvidia_smi"):
    module = sys.modules.get(name)
    assert module is None or not hasattr(module, "__compatfix_provided__"), name
    if importlib.util.find_spec(name) is None:
        try:
            __import__(name)
        except ImportError:
            pass
        else:
            raise AssertionError(name + " was provided outside CPU mode")
print("OK")
"""


def test_outside_cpu_mode_nothing_changes(tmp_path, no_gpu_tools):
    env = fake_smi_env(tmp_path)
    done = run_python(code=OUTSIDE, env=clean_env(**env))
    assert done.returncode == 0 and done.stdout.endswith("OK\n"), done.stdout + done.stderr
    assert (tmp_path / "runs.log").read_text().splitlines() == ["--query-gpu=memory.used --format=csv", ""]
    assert done.stdout.count("fake nvidia-smi") == 2


# --- the decisions: cupy and numba.cuda stay unavailable ------------------------------------


def test_numba_cuda_stays_unavailable_in_cpu_mode(no_gpu_tools):
    """CPU mode cannot run CUDA kernels or hold device arrays, so guards such as
    ``numba.cuda.is_available()`` keep their answer: the script takes its CPU branch."""
    pytest.importorskip("numba")
    done = run_python(code="import torch, numba.cuda; print(numba.cuda.is_available())", env=cpu_env())
    assert done.returncode == 0 and done.stdout.strip().endswith("False"), done.stdout + done.stderr


# --- the command-line reader, in process ------------------------------------------------------


@pytest.mark.parametrize("command, action, rest", [
    ("nvidia-smi", "answer", None),
    ("  nvidia-smi -L  ", "answer", None),
    ("/usr/bin/nvidia-smi --query-gpu=name --format=csv", "answer", None),
    ("nvidia-smi --query-gpu='memory.used' --format csv,noheader -i 0", "answer", None),
    ("nvidia-smi -q -d Memory |grep -A4 GPU|grep Free >tmp", "shell", " |grep -A4 GPU|grep Free >tmp"),
    ("nvidia-smi -L 2>/dev/null | wc -l", "shell", " 2>/dev/null | wc -l"),
    ("nvidia-smi -L && echo done", "shell", " && echo done"),
])
def test_answered_command_lines(command, action, rest):
    plan = nvidia_smi.plan_shell(command)
    assert plan is not None and plan[0] == action
    if rest is not None:
        assert plan[2].startswith("printf '%s' '") and plan[2].endswith(rest)


@pytest.mark.parametrize("command", [
    "nvidia-smi topo -m", "nvidia-smi -q", "nvidia-smi -l 1", "nvidia-smi dmon", "nvidia-smi --query-gpu=name",
    "nvidia-smi --query-gpu=name --format=xml", "nvidia-smi --query-gpu=bogus --format=csv",
    "nvidia-smi -i $GPU -L", "nvidia-smi -i `cat id` -L", "nvidia-smi -i 5 -L", "nvidia-smi -i GPU-1234 -L",
    "sudo nvidia-smi -L", "echo nvidia-smi", "nvidia-smi-wrapper -L", "nvidia-smi 'unclosed",
    "CUDA_VISIBLE_DEVICES=0 nvidia-smi -L",
])
def test_other_command_lines_pass_through(command):
    assert nvidia_smi.plan_shell(command) is None


def test_argument_lists_as_popen_gets_them():
    assert nvidia_smi.plan_popen(["nvidia-smi", "-L"], False, None)[0] == "answer"
    assert nvidia_smi.plan_popen(("nvidia-smi",), False, None)[0] == "answer"
    assert nvidia_smi.plan_popen([b"/opt/bin/nvidia-smi", "-L"], False, None)[0] == "answer"
    assert nvidia_smi.plan_popen("nvidia-smi", False, None)[0] == "answer"
    # POSIX: with shell=True a list's first item is the command line
    assert nvidia_smi.plan_popen(["nvidia-smi -L", "ignored"], True, None)[0] == "answer"
    assert nvidia_smi.plan_popen("nvidia-smi --query-gpu=name --format=csv", False, None) is None  # no such program
    assert nvidia_smi.plan_popen(["nvidia-smi", "topo", "-m"], False, None) is None
    assert nvidia_smi.plan_popen(["my-tool", "-L"], False, "/usr/bin/nvidia-smi")[0] == "answer"
    assert nvidia_smi.plan_popen(["nvidia-smi", "-L"], False, "/usr/bin/other") is None
    assert nvidia_smi.plan_popen([sys.executable, "-c", "print('nvidia-smi')"], False, None) is None
    assert nvidia_smi.plan_popen([], False, None) is None
