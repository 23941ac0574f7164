"""torch names that 2020-22 code uses and torch 1.8-2.14 removed: torch.Assert,
set_deterministic / is_deterministic, torch._six.PY3 / PY37, torch.hub._download_url_to_file,
torch.multiprocessing._supports_context, torch.nn.modules.linear._LinearWithBias and
autograd.profiler.profile(use_cuda=), against the real torch 2.14 of the stacks."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern", "paper", "timm1")

RENAMED = """
import torch
torch.Assert(torch.tensor(True), "fine")
try:
    torch.Assert(False, "the message")
except AssertionError as error:
    print("raised", error)
before = torch.is_deterministic()
torch.set_deterministic(True)
print(before, torch.are_deterministic_algorithms_enabled(), torch.is_deterministic())
torch.set_deterministic(False)
print(torch.are_deterministic_algorithms_enabled())
"""


def test_assert_and_deterministic_are_missing_without_the_shim():
    for env in (clean_env(False), clean_env(COMPATFIX_DISABLE="torch.renamed_functions")):
        result = run_python(code=RENAMED, env=env)
        assert "module 'torch' has no attribute 'Assert'" in result.stderr, result.stderr[-2000:]


def test_assert_raises_with_its_message_and_deterministic_sets_the_flag():
    result = run_python(code=RENAMED)
    # torch 1.7: Assert(condition, message) is `assert condition, message`;
    # set_deterministic(d) sets the flag that are_deterministic_algorithms_enabled reads.
    assert result.stdout.splitlines() == ["raised the message", "False True True", "False"], result.stderr[-2000:]


SMALL_NAMES = """
import os, tempfile
from torch.hub import _download_url_to_file
from torch.multiprocessing import _supports_context
from torch._six import PY3, PY37
print(PY3, PY37, _supports_context)
folder = tempfile.mkdtemp()
source, copy = os.path.join(folder, "weights.bin"), os.path.join(folder, "copy.bin")
with open(source, "wb") as f:
    f.write(b"0123456789")
_download_url_to_file("file://" + source, copy, None, False)
print(open(copy, "rb").read())
"""


@pytest.mark.parametrize("shim, missing", [("torch.hub.download_url_to_file", "_download_url_to_file"),
                                           ("torch.multiprocessing.supports_context", "_supports_context")])
def test_small_names_are_missing_without_their_shims(shim, missing):
    off = run_python(code=SMALL_NAMES, compatfix=False)
    assert "cannot import name '_download_url_to_file'" in off.stderr, off.stderr[-2000:]  # the first of them
    result = run_python(code=SMALL_NAMES, env=clean_env(COMPATFIX_DISABLE=shim))
    assert "cannot import name %r" % missing in result.stderr, result.stderr[-2000:]
    result = run_python(code="from torch._six import PY3", compatfix=False)
    assert "No module named 'torch._six'" in result.stderr


def test_small_names_have_their_old_meaning():
    result = run_python(code=SMALL_NAMES)
    # The download helper copies what the URL names (a file:// URL needs no network).
    assert result.stdout.splitlines() == ["True True True", "b'0123456789'"], result.stderr[-2000:]


LINEAR_WITH_BIAS = """
import pickle, torch
# A torch 1.6-1.8 pickle of a whole model names the class with the GLOBAL opcode, by
# module and name; this is that reference as pickle writes it, loaded first, as a fresh
# process loading such a checkpoint does.
pickled = pickle.loads(b"ctorch.nn.modules.linear\\n_LinearWithBias\\n.")
from torch.nn.modules.linear import _LinearWithBias
print(pickled is _LinearWithBias)
layer = _LinearWithBias(4, 3)
print(isinstance(layer, torch.nn.Linear), tuple(layer.weight.shape), tuple(layer.bias.shape))
x = torch.randn(2, 4)
print(torch.allclose(layer(x), x @ layer.weight.T + layer.bias))
"""


def test_linear_with_bias_is_missing_without_the_shim():
    for env in (clean_env(False), clean_env(COMPATFIX_DISABLE="torch.nn.modules.linear.linear_with_bias")):
        result = run_python(code=LINEAR_WITH_BIAS, env=env)
        assert "Can't get attribute '_LinearWithBias'" in result.stderr, result.stderr[-2000:]


def test_linear_with_bias_is_a_linear_with_a_bias():
    result = run_python(code=LINEAR_WITH_BIAS)
    assert result.stdout.splitlines() == ["True", "True (3, 4) (3,)", "True"], result.stderr[-2000:]


PROFILE = """
import inspect, warnings
import torch
from torch.autograd import profiler
print("use_cuda" in inspect.signature(profiler.profile).parameters)
with profiler.profile(use_cuda=False) as prof:
    torch.ones(3).sum()
print(prof.use_device, any(event.name == "aten::sum" for event in prof.function_events))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    on_gpu = profiler.profile(True, True)  # torch 1.7's positional use_cuda
print(on_gpu.use_device if torch.cuda.is_available() else
      [str(w.message) for w in caught if "CUDA" in str(w.message)])
"""


def test_profile_use_cuda_is_refused_without_the_shim():
    for env in (clean_env(False), clean_env(COMPATFIX_DISABLE="torch.autograd.profiler.profile.use_cuda")):
        result = run_python(code=PROFILE, env=env)
        assert "unexpected keyword argument 'use_cuda'" in result.stderr, result.stderr[-2000:]


def test_profile_use_cuda_means_use_device_cuda():
    result = run_python(code=PROFILE)
    lines = result.stdout.splitlines()
    assert lines[:2] == ["True", "None True"], result.stderr[-2000:]
    # use_cuda=True asks for CUDA profiling: on a machine without CUDA, today's profiler
    # says so and profiles the CPU only, as torch 2.2-2.13 did for use_cuda=True.
    assert lines[2] in ("cuda", "['CUDA is not available, disabling CUDA profiling']"), result.stderr[-2000:]
