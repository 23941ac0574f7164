"""The data-only loader against crafted checkpoints, zip and legacy (issue 13, finding 1
and the code-execution battery). Every payload here was written for this suite."""

from __future__ import annotations

import json
import os

import pytest

from support import clean_env, run_python

from security import payloads

PROBE = os.path.join(os.path.dirname(__file__), "load_and_probe.py")
UNTOUCHED = {
    "path": "/mine/checkpoint.pth", "namespace_poisoned": False, "counter_most_common": True,
    "function_poisoned": False,
}


def load_and_probe(tmp_path, *paths: str, **extra: str) -> tuple[list[dict], dict, str]:
    env = clean_env(COMPATFIX_TRUST_STORE=str(tmp_path / "store.tsv"), **extra)
    result = run_python(PROBE, *paths, env=env, timeout=240)
    lines = result.stdout.splitlines()
    results = [json.loads(line[len("RESULT "):]) for line in lines if line.startswith("RESULT ")]
    probes = [json.loads(line[len("PROBES "):]) for line in lines if line.startswith("PROBES ")]
    assert len(results) == len(paths) and probes, result.stdout[-3000:] + result.stderr[-3000:]
    return results, probes[0], result.stderr


@pytest.fixture(scope="module")
def poisoned_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("poison")
    files = {}
    for name, pickled in payloads.poisoners("/victim/overwritten.pth").items():
        for kind, path in payloads.write(folder, name, pickled).items():
            files[name, kind] = path
    return folder, files


def test_no_state_reaches_a_class_a_function_or_an_object_twice(poisoned_files):
    folder, files = poisoned_files
    results, probes, _ = load_and_probe(folder, *files.values())
    assert probes == UNTOUCHED  # the process's pathlib, Namespace, Counter, torch functions
    for (name, kind), result in zip(files, results):
        assert not result["ok"], (name, kind, result)
        assert result["error"].startswith("UnpicklingError: compatfix: torch.load("), result["error"]


# torch's unpickler gives a state only to an instance of a type it may build: a class,
# a function or an object already rebuilt (now of its real class) is none of these.
NOT_BUILDABLE = "Can only build Tensor, Parameter, OrderedDict or types allowlisted via `add_safe_globals`, but got "


@pytest.mark.parametrize("kind", sorted(payloads.FORMATS))
def test_each_poisoner_is_refused_for_its_own_reason(poisoned_files, kind):
    folder, files = poisoned_files
    names = ("pathlib_class", "namespace_class", "torch_function", "cfgnode_second_build", "namespace_method_name",
             "namespace_dunder", "namespace_holds_class")
    results, _, _ = load_and_probe(folder, *(files[name, kind] for name in names))
    errors = dict(zip(names, (result.get("error", "").split("\n")[0] for result in results)))
    assert NOT_BUILDABLE + "<class 'type'>" in errors["pathlib_class"]
    assert NOT_BUILDABLE + "<class 'type'>" in errors["namespace_class"]
    assert NOT_BUILDABLE + "<class 'function'>" in errors["torch_function"]
    assert NOT_BUILDABLE + "<class 'yacs.config.CfgNode'>" in errors["cfgnode_second_build"]
    assert "may not set '_get_kwargs', which the class defines" in errors["namespace_method_name"]
    assert "may not set the dunder name '__wrapped__'" in errors["namespace_dunder"]
    assert "the file uses Namespace as a value, which only its loader may hold" in errors["namespace_holds_class"]


def test_a_namespace_may_hold_what_torch_itself_loads(tmp_path):
    # A function of torch's allow-list is a value torch's own weights-only loader returns
    # (with Namespace allow-listed it would return this Namespace too): data, not a change.
    pickled = payloads.stream(payloads.global_("argparse", "Namespace") + payloads.EMPTY_TUPLE + payloads.NEWOBJ
                              + payloads.dict_of(hook=payloads.global_("torch._utils", "_rebuild_tensor_v2"))
                              + payloads.BUILD)
    paths = payloads.write(tmp_path, "holds_function", pickled)
    results, probes, _ = load_and_probe(tmp_path, *paths.values())
    assert probes == UNTOUCHED
    for result in results:
        assert result["ok"] and result["loaded"].startswith("Namespace(hook=<function _rebuild_tensor_v2"), result


def test_the_refusal_leads_with_the_global_and_the_opt_ins(tmp_path):
    # A file that names a global nothing allows: compatfix's first line says which, and
    # how to opt in; torch's own text (which names the first global it met) comes after.
    pickled = payloads.stream(payloads.dict_of(
        mean=payloads.numpy_scalar("f8", b"\0" * 8),
        meter=payloads.call(payloads.global_("train", "AverageMeter")),
    ))
    paths = payloads.write(tmp_path, "foreign", pickled)
    results, _, _ = load_and_probe(tmp_path, *paths.values())
    for result in results:
        first, second = result["error"].split("\n")[:2]
        assert first.startswith("UnpicklingError: compatfix: torch.load(") and "train.AverageMeter" in first, first
        assert "COMPATFIX_TORCH_LOAD_TRUST=" in second and "COMPATFIX_TORCH_LOAD=trust-all" in second
        assert result["error"].index("train.AverageMeter") < result["error"].index("Weights only load failed")


@pytest.fixture(scope="module")
def code_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("code")
    marker = str(folder / "ran")
    files = {}
    for name, pickled in payloads.runs_code(marker).items():
        for kind, path in payloads.write(folder, name, pickled).items():
            files[name, kind] = path
    return folder, marker, files


def test_no_code_running_pickle_runs_by_default(code_files):
    folder, marker, files = code_files
    results, probes, stderr = load_and_probe(folder, *files.values())
    assert not os.path.exists(marker)
    assert probes == UNTOUCHED
    for (name, kind), result in zip(files, results):
        assert not result["ok"], (name, kind, result)
        assert "compatfix: torch.load(" in result["error"] and "which does not hold these bytes" in result["error"]
    assert "runs with full pickle" not in stderr


def test_the_battery_can_fail_the_payloads_run_under_full_pickle(code_files):
    folder, marker, files = code_files
    for kind in payloads.FORMATS:
        load_and_probe(folder, files["exec", kind], COMPATFIX_TORCH_LOAD="trust-all")
        assert os.path.exists(marker), kind
        os.unlink(marker)


# --- issue 18 ---------------------------------------------------------------------------------

SPARSE = """
import argparse, sys, torch
indices = torch.tensor([[0, 1 << 40]])  # index 2**40 in a dimension of size 4
bad = torch.sparse_coo_tensor(indices, torch.ones(2), (4,), check_invariants=False)
torch.save({"s": bad, "args": argparse.Namespace(lr=0.1)}, sys.argv[1], _use_new_zipfile_serialization=sys.argv[2] == "zip")
try:
    torch.load(sys.argv[1])
except Exception as exc:
    print("REFUSED", type(exc).__name__, str(exc).splitlines()[-1][:200])
else:
    print("LOADED")
"""


@pytest.mark.parametrize("kind", sorted(payloads.FORMATS))
def test_sparse_tensors_are_checked_as_torch_checks_them(tmp_path, kind):
    # Finding 2: the data-only load ran with weights_only=False, where torch skips the
    # sparse invariants; the Namespace made compatfix's path take over.
    path = str(tmp_path / "sparse.pth")
    result = run_python("-c", SPARSE, path, kind, env=clean_env(COMPATFIX_TRUST_STORE="off"))
    assert "REFUSED RuntimeError size is inconsistent with indices" in result.stdout, result.stdout + result.stderr


def test_a_shared_list_is_checked_once_not_at_every_use(tmp_path):
    # Finding 5: one memoised 100k-item list referenced by 5,000 objects kept the state
    # check busy for minutes. The walk now visits each object once: count its visits.
    big = payloads.EMPTY_LIST + payloads.MARK + payloads.int1(1) * 100_000 + b"e" + b"r\x00\x00\x00\x00"
    namespace = (payloads.global_("argparse", "Namespace") + payloads.EMPTY_TUPLE + payloads.NEWOBJ
                 + payloads.EMPTY_DICT + payloads.text("items") + b"j\x00\x00\x00\x00" + b"s" + payloads.BUILD)
    pickled = payloads.stream(payloads.EMPTY_LIST + payloads.MARK + big + namespace * 5000 + b"e")
    path = payloads.write(tmp_path, "shared", pickled)["zip"]
    code = """
import sys, torch
from compatfix.checkpoint import unpickler
visits = []
children = unpickler._children
unpickler._children = lambda value: (visits.append(1), children(value))[1]
loaded = torch.load(sys.argv[1])
print("LOADED", len(loaded), len(visits))
"""
    result = run_python("-c", code, path, env=clean_env(COMPATFIX_TRUST_STORE="off"), timeout=120)
    assert result.stdout.startswith("LOADED 5001"), result.stdout + result.stderr[-2000:]
    assert int(result.stdout.split()[2]) <= 5003  # the outer list, the shared list, 5,000 Namespaces


def test_nesting_deeper_than_the_bound_is_refused_with_a_clear_error(tmp_path):
    from compatfix.checkpoint import unpickler

    deep = payloads.EMPTY_LIST * (unpickler.MAX_DEPTH + 5) + b"a" * (unpickler.MAX_DEPTH + 4)
    pickled = payloads.stream(payloads.global_("argparse", "Namespace") + payloads.EMPTY_TUPLE + payloads.NEWOBJ
                              + payloads.EMPTY_DICT + payloads.text("deep") + deep + b"s" + payloads.BUILD)
    paths = payloads.write(tmp_path, "deep", pickled)
    results, _, _ = load_and_probe(tmp_path, *paths.values())
    for result in results:
        assert "nests deeper than %d levels" % unpickler.MAX_DEPTH in result["error"], result


@pytest.mark.parametrize("content, looks_like", [
    (b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head></html>\n", "an HTML page"),
    (b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n", "a Git LFS pointer"),
])
def test_a_file_that_is_no_checkpoint_is_told_apart_from_a_refusal(tmp_path, content, looks_like):
    # Finding 6: an HTML 404 page saved as model.pth was "refused: 60." with the full-pickle opt-in.
    path = tmp_path / "model.pth"
    path.write_bytes(content)
    results, _, _ = load_and_probe(tmp_path, str(path))
    error = results[0]["error"]
    assert "this is not a checkpoint that any loader can read (%s" % looks_like in error, error
    assert "COMPATFIX_TORCH_LOAD_TRUST" not in error and "refused" not in error.splitlines()[0]


def test_a_config_the_file_never_builds_comes_back_as_the_real_class(tmp_path):
    # Finding 6: a CfgNode created but never BUILT came back as compatfix's private class,
    # and torch.save of the loaded checkpoint failed.
    pickled = payloads.stream(payloads.dict_of(cfg=payloads.global_("yacs.config", "CfgNode") + payloads.EMPTY_TUPLE
                                               + payloads.NEWOBJ + payloads.MARK + payloads.text("LR")
                                               + payloads.int1(3) + payloads.SETITEMS))
    paths = payloads.write(tmp_path, "cfg", pickled)
    code = """
import io, sys, torch
for path in sys.argv[1:]:
    cfg = torch.load(path)["cfg"]
    torch.save(cfg, io.BytesIO())
    print("OK", type(cfg).__module__, type(cfg).__qualname__, cfg.LR, cfg.is_frozen())
"""
    result = run_python("-c", code, *paths.values(), env=clean_env(COMPATFIX_TRUST_STORE="off"))
    assert result.stdout.splitlines() == ["OK yacs.config CfgNode 3 False"] * 2, result.stdout + result.stderr
