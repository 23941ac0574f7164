"""torch.load under torch >= 2.6 (weights_only=True by default), against the real torch
2.14, numpy 2, yacs, mmcv (1.7.2 on modern, 1.3.0 on paper), argparse and pathlib.

tests/fixtures/checkpoints/ holds a legacy-style training script's checkpoint writer
(make_checkpoint.py, objects in legacy_objects.py) and a loader that calls torch.load as
legacy code does (load_checkpoint.py). Every test points the trust store at its own
folder, so nothing is written to the user's cache.
"""

from __future__ import annotations

import json
import os

import pytest

from support import FIXTURES, clean_env, run_python

FIXTURES = os.path.join(FIXTURES, "checkpoints")
MAKE = os.path.join(FIXTURES, "make_checkpoint.py")
LOAD = os.path.join(FIXTURES, "load_checkpoint.py")
TORCH_REFUSAL = "Weights only load failed"
COMPATFIX_REFUSAL = "compatfix: torch.load("
DATA_ONLY_NOTICE = "compatfix loaded it with torch's weights-only loader, which runs no code from the file"
FULL_PICKLE = "runs with full pickle (weights_only=False)"
_OUR_VARIABLES = (
    "COMPATFIX_TORCH_LOAD", "COMPATFIX_TORCH_LOAD_TRUST", "COMPATFIX_TRUST_STORE",
    "TORCH_FORCE_WEIGHTS_ONLY_LOAD", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD",
)


def env_for(store, compatfix: bool = True, **extra: str) -> dict[str, str]:
    env = clean_env(compatfix)
    for name in _OUR_VARIABLES:
        env.pop(name, None)
    env["COMPATFIX_TRUST_STORE"] = str(store)
    env.update(extra)
    return env


def make(folder, *specs: str, compatfix: bool = False, store=None, options=(), **extra: str) -> list[str]:
    """Write checkpoints (KIND or KIND:NAME) into ``folder``, by default without compatfix,
    so that they are in no trust store. Returns their paths."""
    outs, arguments = [], []
    for spec in specs:
        kind, _, name = spec.partition(":")
        outs.append(str(folder / (name or kind + ".pth")))
        arguments.append("%s=%s" % (kind, outs[-1]))
    store = folder / "store.tsv" if store is None else store
    result = run_python(MAKE, *options, *arguments, env=env_for(store, compatfix, **extra))
    assert result.returncode == 0, result.stdout + result.stderr
    return outs


def load(store, *args: str, compatfix: bool = True, **extra: str) -> tuple[list[dict], str]:
    """Load with load_checkpoint.py: one result per file, and the process's stderr."""
    result = run_python(LOAD, *args, env=env_for(store, compatfix, **extra))
    lines = [line[len("RESULT "):] for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, result.stdout[-3000:] + result.stderr[-3000:]
    return [json.loads(line) for line in lines], result.stderr


def values(result: dict) -> dict:
    assert result["ok"], result.get("error")
    return result["values"][1]


DATA_ONLY_KINDS = ("namespace", "numpy", "yacs", "mmcv", "pathlib")


class Checkpoints:
    """Files written once per module (subprocesses with torch are slow here)."""

    def __init__(self, folder) -> None:
        self.folder = folder
        self.store = folder / "store.tsv"  # holds `own` only
        written = make(folder, *DATA_ONLY_KINDS, "plain", "custom", "system", "exec", "exec:exec_opt_in.pth")
        self.legacy = dict(zip(DATA_ONLY_KINDS, written))
        self.plain, self.untrusted, self.system, self.exec, self.exec_opt_in = written[len(DATA_ONLY_KINDS):]
        # torch < 1.6's format cannot be scanned before loading: the loader itself refuses.
        (self.exec_legacy,) = make(folder, "exec:exec_legacy.pth", options=["--legacy-format"])
        (self.own,) = make(folder, "custom:own.pth", compatfix=True, store=self.store)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return Checkpoints(tmp_path_factory.mktemp("checkpoints"))


# --- red without compatfix ------------------------------------------------------------


@pytest.mark.stack("modern", "paper")
def test_legacy_checkpoints_are_refused_without_compatfix(files):
    results, _ = load(files.store, *files.legacy.values(), compatfix=False)
    for result in results:
        assert not result["ok"], result["path"]
        assert result["error_type"] == "UnpicklingError"
        assert result["error"].startswith(TORCH_REFUSAL) and "Unsupported global" in result["error"]


@pytest.mark.stack("modern", "paper")
def test_allow_listing_cfgnode_in_torch_is_not_enough(files):
    # Why compatfix rebuilds dict subclasses itself: torch fills only exact dicts.
    results, _ = load(files.store, "--allow-cfgnode", files.legacy["yacs"], compatfix=False)
    assert results[0]["error"].startswith(TORCH_REFUSAL)
    assert "Can only SETITEMS for dict, collections.OrderedDict, collections.Counter, but got <class " \
        "'yacs.config.CfgNode'>" in results[0]["error"]


# --- green with it ----------------------------------------------------------------------


@pytest.mark.stack("modern", "paper")
def test_data_only_classes_load_with_compatfix(files):
    results, stderr = load(files.store, *files.legacy.values())
    by_kind = dict(zip(DATA_ONLY_KINDS, results))
    for result in results:
        assert values(result)["epoch"] == ["builtins.int", 7]
        assert values(result)["model"][1]["weight"] == ["torch.Tensor", [2, 3], "cpu"]

    args = values(by_kind["namespace"])["args"]
    assert args == ["argparse.Namespace", {
        "lr": ["builtins.float", 0.1], "model": ["builtins.str", "deit_tiny"], "epochs": ["builtins.int", 300],
    }]

    numpy = values(by_kind["numpy"])
    assert numpy["best_acc"] == ["numpy.float64", 81.5]
    assert numpy["step"] == ["numpy.int64", 1200]
    assert numpy["flag"] == ["numpy.bool", True]
    assert numpy["dtype"] == ["numpy.dtypes.Float32DType", "float32"]
    assert numpy["dtype_class"] == ["numpy._DTypeMeta", "<class 'numpy.dtypes.Float64DType'>"]
    assert numpy["mean"] == ["numpy.ndarray", [0.485, 0.456, 0.406]]

    cfg = values(by_kind["yacs"])["cfg"]
    assert cfg[0] == "yacs.config.CfgNode" and cfg[1]["MODEL"][0] == "yacs.config.CfgNode"
    assert by_kind["yacs"]["cfg_frozen"] is True and by_kind["yacs"]["cfg_depth"] == 50

    meta = values(by_kind["mmcv"])["meta"][1]
    assert meta["config"][0] == "mmcv.utils.config.Config"
    assert meta["hook_msgs"][0] == "mmcv.utils.config.ConfigDict"
    assert by_kind["mmcv"]["mmcv_depth"] == 50 and by_kind["mmcv"]["mmcv_best"] == 0.75

    paths = values(by_kind["pathlib"])
    assert paths["output_dir"] == ["pathlib.PosixPath", "/runs/exp1"]
    assert paths["windows_dir"] == ["pathlib.PureWindowsPath", "C:\\runs\\exp1"]

    assert stderr.count(DATA_ONLY_NOTICE) == 1, stderr  # once per process
    assert FULL_PICKLE not in stderr


def test_data_only_classes_load_from_a_file_object(files):
    results, _ = load(files.store, "--buffer", files.legacy["yacs"], files.legacy["namespace"])
    assert [result["ok"] for result in results] == [True, True], results
    assert results[0]["cfg_depth"] == 50


def test_a_numpy_1_checkpoint_in_torch_1_5_format_loads(tmp_path):
    # numpy 1.x pickles name numpy.core.multiarray (numpy 2: numpy._core.multiarray), and
    # torch < 1.6 wrote one pickle stream without a zip. numpy 1 cannot sit next to numpy 2
    # in one environment, so the names are rewritten in the stream as numpy 1 wrote them
    # (a stream's GLOBAL names are newline-terminated text: the rewrite keeps it valid).
    (legacy,) = make(tmp_path, "numpy:numpy1.pth", options=["--legacy-format"])
    data = open(legacy, "rb").read()
    assert b"numpy._core.multiarray\nscalar\n" in data
    open(legacy, "wb").write(data.replace(b"numpy._core.multiarray\n", b"numpy.core.multiarray\n"))
    results, _ = load(tmp_path / "store.tsv", legacy, compatfix=False)
    assert "Unsupported global: GLOBAL numpy.core.multiarray.scalar" in results[0]["error"]
    results, stderr = load(tmp_path / "store.tsv", legacy)
    assert values(results[0])["best_acc"] == ["numpy.float64", 81.5]
    assert values(results[0])["mean"] == ["numpy.ndarray", [0.485, 0.456, 0.406]]
    assert "numpy.core.multiarray.scalar" in stderr and FULL_PICKLE not in stderr


def test_checkpoints_torch_accepts_are_left_to_torch(files):
    results, stderr = load(files.store, files.plain)
    assert values(results[0])["epoch"] == ["builtins.int", 7]
    assert "compatfix" not in stderr


# --- never runs code by default -----------------------------------------------------------


def test_a_pickle_that_runs_code_is_never_executed_by_default(files):
    assert files.store.exists()  # the trust store holds another file
    payloads = (files.system, files.exec, files.exec_legacy)
    results, stderr = load(files.store, *payloads)
    for checkpoint, result in zip(payloads, results):
        assert not os.path.exists(checkpoint + ".ran")
        error = result["error"]
        assert result["error_type"] == "UnpicklingError"
        # compatfix's reason and the opt-ins come first, torch's own text after them.
        assert error.startswith(COMPATFIX_REFUSAL) and TORCH_REFUSAL in error
        assert "with compatfix's data-only classes" in error and "which refused it" in error
        assert "which does not hold these bytes" in error
        assert "COMPATFIX_TORCH_LOAD_TRUST=%s" % checkpoint in error and "COMPATFIX_TORCH_LOAD=trust-all" in error
    # The first line names the global that torch's unpickler (with the data-only classes) refused.
    first_lines = [result["error"].splitlines()[0] for result in results]
    assert "GLOBAL posix.system whose module posix is blocked" in first_lines[0]
    assert "Unsupported global: GLOBAL exec was not an allowed global" in first_lines[1]
    assert "Unsupported global: GLOBAL exec was not an allowed global" in first_lines[2]
    assert FULL_PICKLE not in stderr


@pytest.mark.stack("modern", "paper")
def test_the_data_only_loader_rebuilds_configs_only_from_their_state(tmp_path):
    # Hand-made pickles (the opcodes torch.save's protocol 2 uses) that try to make the
    # allow-listed config classes run their own code with the file's arguments, read by
    # torch's weights-only unpickler with compatfix's data-only classes.
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the checkpoint")
    result = run_python(
        code="""
        import io, pickle, struct, sys
        import torch
        from torch import _weights_only_unpickler
        from compatfix.checkpoint.unpickler import data_only_scope

        def text(value):
            data = value.encode()
            return b"X" + struct.pack("<I", len(data)) + data

        def load(stream):
            try:
                with data_only_scope():
                    return repr(_weights_only_unpickler.load(io.BytesIO(b"\\x80\\x02" + stream + b".")))
            except pickle.UnpicklingError as exc:
                return "refused: %s" % exc

        # Config(None, None, filename) would read the file into the config's text.
        print(load(b"cmmcv.utils.config\\nConfig\\nNN" + text(sys.argv[1]) + b"\\x87R"))
        # A CfgNode whose state sets a method name as an attribute.
        print(load(b"cyacs.config\\nCfgNode\\n)\\x81}" + text("freeze") + text("x") + b"sb"))
        # A CfgNode holding an item named __setstate__: the item is not called.
        print(load(b"cyacs.config\\nCfgNode\\n)\\x81" + text("__setstate__") + b"cnumpy\\ndtype\\nsN" + b"b"))
        print(load(b"cbuiltins\\ngetattr\\n"))
        """.replace("sys.argv[1]", repr(str(secret))),
        env=clean_env(),
    )
    lines = result.stdout.splitlines()
    assert lines[0] == ("refused: compatfix's data-only loader: a Config is created empty and rebuilt from its "
                        "state, never from other arguments"), result.stderr
    assert lines[1].startswith("refused: compatfix's data-only loader: a yacs CfgNode's state must be a dict of")
    assert lines[2].startswith("refused: compatfix's data-only loader: a yacs CfgNode's state must be a dict of")
    assert lines[3].startswith("refused: Unsupported global: GLOBAL getattr was not an allowed global")


def test_the_payload_does_run_once_the_user_opts_in(files):
    # Shows that the test above can fail: the same kind of file runs its code under trust-all.
    results, stderr = load(files.store, files.exec_opt_in, COMPATFIX_TORCH_LOAD="trust-all")
    assert results[0]["ok"] and os.path.exists(files.exec_opt_in + ".ran")
    assert "WARNING: torch.load(%r) %s because COMPATFIX_TORCH_LOAD=trust-all" % (
        files.exec_opt_in, FULL_PICKLE) in stderr


# --- trust: the machine's own checkpoints, and explicit opt-ins --------------------------


def test_a_checkpoint_this_machine_saved_loads_and_modified_bytes_do_not(files, tmp_path):
    store = files.store.read_text()
    assert files.own in store and store.startswith("# compatfix trust store")

    copy = tmp_path / "copy.pth"  # trust follows the bytes, not the path
    copy.write_bytes(open(files.own, "rb").read())
    modified = tmp_path / "modified.pth"
    data = bytearray(open(files.own, "rb").read())
    index = data.index(b"loss")
    data[index:index + 4] = b"LOSS"  # same size, one string changed
    modified.write_bytes(bytes(data))

    results, stderr = load(files.store, files.own, str(copy), str(modified))
    assert values(results[0])["meter"] == ["legacy_objects.AverageMeter", {
        "name": ["builtins.str", "loss"], "sum": ["builtins.float", 0.5], "count": ["builtins.int", 1],
    }]
    assert "torch.load(%r) %s: this machine's torch.save wrote these bytes" % (files.own, FULL_PICKLE) in stderr
    assert results[1]["ok"]
    assert not results[2]["ok"] and "which does not hold these bytes" in results[2]["error"]

    results, stderr = load(files.store, str(modified), COMPATFIX_TORCH_LOAD_TRUST=str(tmp_path))
    assert values(results[0])["meter"][1]["name"] == ["builtins.str", "LOSS"]
    assert "WARNING: torch.load(%r) %s because COMPATFIX_TORCH_LOAD_TRUST lists" % (
        str(modified), FULL_PICKLE) in stderr


def test_a_checkpoint_saved_to_an_open_file_is_trusted_too(tmp_path):
    # mmcv's save_checkpoint writes through `with open(path, 'wb') as f: torch.save(obj, f)`.
    (own,) = make(tmp_path, "custom", compatfix=True, options=["--file-object"])
    results, _ = load(tmp_path / "store.tsv", own)
    assert results[0]["ok"], results[0].get("error")


def test_the_trust_store_can_be_turned_off(tmp_path):
    (own,) = make(tmp_path, "custom", compatfix=True, COMPATFIX_TRUST_STORE="off")
    assert os.listdir(tmp_path) == ["custom.pth"]
    results, _ = load(tmp_path, own, COMPATFIX_TRUST_STORE="off")
    assert "The trust store is off" in results[0]["error"]


def test_the_opt_in_warning_names_the_file_once(files):
    results, stderr = load(files.store, files.untrusted, files.untrusted, COMPATFIX_TORCH_LOAD_TRUST=files.untrusted)
    assert [result["ok"] for result in results] == [True, True]
    assert stderr.count("WARNING: torch.load(%r)" % files.untrusted) == 1, stderr
    results, _ = load(files.store, files.exec, COMPATFIX_TORCH_LOAD_TRUST=files.untrusted)
    assert not results[0]["ok"]  # a listed file trusts that file only
    assert not os.path.exists(files.exec + ".ran")


# --- the caller's and the user's own decisions --------------------------------------------


def test_an_explicit_weights_only_is_respected(files):
    results, _ = load(files.store, "--weights-only", "true", files.legacy["namespace"], files.own)
    for result in results:
        assert result["error"].startswith(TORCH_REFUSAL) and "compatfix" not in result["error"]
    results, stderr = load(files.store, "--weights-only", "false", files.untrusted)
    assert results[0]["ok"] and "compatfix" not in stderr


def test_torch_force_weights_only_load_is_respected(files):
    results, _ = load(files.store, files.legacy["namespace"], TORCH_FORCE_WEIGHTS_ONLY_LOAD="1")
    assert results[0]["error"].startswith(TORCH_REFUSAL) and "compatfix" not in results[0]["error"]


def test_disabling_the_shims_restores_torch_behaviour(files):
    results, _ = load(files.store, files.legacy["namespace"], COMPATFIX_DISABLE="torch.serialization.load_*")
    assert results[0]["error"].startswith(TORCH_REFUSAL) and "compatfix" not in results[0]["error"]
    results, _ = load(files.store, files.legacy["namespace"], files.own, COMPATFIX_DISABLE="torch.serialization.load_trusted_files")
    assert results[0]["ok"]
    assert "not its trust rules: shim torch.serialization.load_trusted_files is disabled" in results[1]["error"]


# --- CPU mode and the report -------------------------------------------------------------


def test_a_checkpoint_written_in_cpu_mode_loads(tmp_path):
    (checkpoint,) = make(tmp_path, "namespace", compatfix=True, options=["--cuda"], COMPATFIX_DEVICE="cpu")
    for extra in ({}, {"COMPATFIX_DEVICE": "cpu"}):
        results, _ = load(tmp_path / "store.tsv", checkpoint, **extra)
        assert values(results[0])["model"][1]["weight"] == ["torch.Tensor", [2, 3], "cpu"]
        assert values(results[0])["args"][0] == "argparse.Namespace"


def test_each_widened_load_is_in_the_report(files, tmp_path):
    report = tmp_path / "report.json"
    results, _ = load(files.store, files.legacy["yacs"], files.own, COMPATFIX_REPORT=str(report))
    assert all(result["ok"] for result in results)
    calls = {
        item["shim"]: item["call"]
        for process in json.loads(report.read_text())["processes"]
        for item in process["redirected"]
    }
    assert calls["torch.serialization.load_data_only_classes"] == "torch.load(%s): data-only classes yacs.config.CfgNode" % (
        files.legacy["yacs"]
    )
    assert calls["torch.serialization.load_trusted_files"].startswith("torch.load(%s): full pickle, this machine's" % files.own)


# --- the trust store itself ----------------------------------------------------------------


def test_trust_store_keeps_the_newest_entries(tmp_path, monkeypatch):
    from compatfix.checkpoint import trust_store as _trust

    store = str(tmp_path / "cache" / "compatfix" / "trusted-checkpoints.tsv")
    monkeypatch.setattr(_trust, "MAX_ENTRIES", 3)
    for number in range(5):
        _trust.record("/ckpt/%d.pth" % number, "%064x" % number, 100 + number, store)
    kept = list(_trust.entries(store))
    assert [entry[3] for entry in kept] == ["/ckpt/2.pth", "/ckpt/3.pth", "/ckpt/4.pth"]
    assert _trust.is_trusted("%064x" % 4, store) and not _trust.is_trusted("%064x" % 1, store)
    assert _trust.trusted_sizes(store) == {102, 103, 104}
    assert not os.path.exists(store + ".lock")


def test_trust_store_location_follows_the_environment(tmp_path, monkeypatch):
    from compatfix.checkpoint import trust_store as _trust

    monkeypatch.delenv("COMPATFIX_TRUST_STORE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _trust.store_path() == str(tmp_path / "compatfix" / "trusted-checkpoints.tsv")
    monkeypatch.setenv("COMPATFIX_TRUST_STORE", str(tmp_path / "elsewhere.tsv"))
    assert _trust.store_path() == str(tmp_path / "elsewhere.tsv")
    monkeypatch.setenv("COMPATFIX_TRUST_STORE", "off")
    assert _trust.store_path() is None


def test_compatfix_trust_lists_and_forgets_entries(tmp_path):
    import hashlib
    import sys

    (own,) = make(tmp_path, "custom:own.pth", compatfix=True)
    store = tmp_path / "store.tsv"
    cli = os.path.join(os.path.dirname(sys.executable), "compatfix")  # the installed console script

    def trust(*args: str):
        import subprocess

        return subprocess.run([cli, "trust", *args], capture_output=True, text=True,
                              env=clean_env(COMPATFIX_TRUST_STORE=str(store)))

    digest = hashlib.sha256(open(own, "rb").read()).hexdigest()
    listed = json.loads(trust("list", "--json").stdout)
    assert [entry["sha256"] for entry in listed["entries"]] == [digest] and listed["entries"][0]["path"] == own
    assert digest[:16] in trust().stdout
    assert trust("forget", str(tmp_path / "other.pth")).returncode == 1
    result = trust("forget", own)
    assert result.returncode == 0 and "forgot 1 entry" in result.stdout
    assert json.loads(trust("list", "--json").stdout)["entries"] == []
    results, _ = load(store, own)
    assert not results[0]["ok"]  # no longer trusted
