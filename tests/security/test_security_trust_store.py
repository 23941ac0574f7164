"""The trust store against a second process and a second user (issue 13, findings 2-5).

A hostile checkpoint runs code under full pickle; each test gives an attacker one way
to get it trusted and checks that its code does not run."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import struct

import pytest

from support import clean_env, run_python

from security import payloads

FORMATS = sorted(payloads.FORMATS)


def benign_and_hostile(folder, kind: str, marker: str) -> tuple[str, bytes, bytes]:
    """A checkpoint that needs full pickle but runs nothing (a datetime.date), and a
    hostile one of exactly the same size. Returns (benign path, benign, hostile bytes)."""
    wrap = payloads.FORMATS[kind]
    hostile = wrap(payloads.runs_code(marker)["exec"])
    date = payloads.call(payloads.global_("datetime", "date"), b"M" + struct.pack("<H", 2020) + b"K\x01K\x01")
    for pad in range(len(hostile)):
        benign = wrap(payloads.stream(payloads.dict_of(date=date, pad=payloads.text("p" * pad))))
        if len(benign) == len(hostile):
            break
    else:
        raise AssertionError("no padding makes the two files the same size")
    path = folder / ("benign.%s.pth" % kind)
    path.write_bytes(benign)
    return str(path), benign, hostile


def write_store(store, *files: bytes) -> None:
    store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    lines = ["%s\t%d\t2021-01-01T00:00:00Z\t/somewhere.pth\n" % (hashlib.sha256(data).hexdigest(), len(data))
             for data in files]
    store.write_text("# compatfix trust store\n" + "".join(lines))
    store.chmod(0o600)


def env(store, **extra: str) -> dict[str, str]:
    return clean_env(COMPATFIX_TRUST_STORE=str(store), **extra)


LOAD = """
import sys, torch
try:
    print("LOADED", torch.load(sys.argv[1]))
except Exception as exc:
    print("REFUSED", str(exc).splitlines()[0])
"""


@pytest.mark.parametrize("kind", FORMATS)
def test_the_bytes_that_were_hashed_are_the_bytes_that_load(tmp_path, kind):
    # Finding 2: another process replaces the file (same size) right after compatfix
    # checked its hash. An audit hook does the swap at that moment: after the second
    # read of the store (sizes, then hashes).
    marker = str(tmp_path / "ran")
    path, benign, hostile = benign_and_hostile(tmp_path, kind, marker)
    (tmp_path / "hostile").write_bytes(hostile)
    store = tmp_path / "cache" / "store.tsv"
    write_store(store, benign)
    code = """
import os, sys
store, checkpoint, hostile = sys.argv[1:4]
reads = []
def swap(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes)) and os.fsdecode(args[0]) == store:
        reads.append(1)
        if len(reads) == 2:
            os.replace(hostile, checkpoint)
sys.addaudithook(swap)
""" + LOAD.replace("sys.argv[1]", "checkpoint")
    result = run_python("-c", code, str(store), path, str(tmp_path / "hostile"), env=env(store), timeout=120)
    assert "LOADED {'date': datetime.date(2020, 1, 1)" in result.stdout, result.stdout + result.stderr[-2000:]
    assert open(path, "rb").read() == hostile  # the swap did happen
    assert not os.path.exists(marker)


@pytest.mark.parametrize("attack", ["group_writable_file", "world_writable_folder", "other_owner", "link"])
def test_a_store_someone_else_could_write_is_ignored(tmp_path, attack):
    # Finding 3: another user pre-creates the store (or can write it) and lists a
    # hostile file's hash.
    marker = str(tmp_path / "ran")
    hostile = tmp_path / "hostile.pth"
    hostile.write_bytes(payloads.as_zip(payloads.runs_code(marker)["exec"]))
    store = tmp_path / "shared" / "store.tsv"
    write_store(store, hostile.read_bytes())
    if attack == "group_writable_file":
        store.chmod(0o620)
    elif attack == "world_writable_folder":
        store.parent.chmod(0o777)
    elif attack == "link":  # the store's name points at a file elsewhere (one the attacker can change)
        elsewhere = tmp_path / "elsewhere.tsv"
        store.rename(elsewhere)
        store.symlink_to(elsewhere)
    else:
        if not hasattr(os, "chown") or os.getuid() != 0:
            pytest.skip("giving the store to another user needs root")
        os.chown(store, 65534, 65534)
    result = run_python("-c", LOAD, str(hostile), env=env(store), timeout=120)
    assert "REFUSED compatfix: torch.load(" in result.stdout, result.stdout + result.stderr[-2000:]
    assert not os.path.exists(marker)
    assert result.stderr.count("compatfix ignores the trust store %s" % store) == 1, result.stderr


def test_compatfix_creates_the_store_0600_in_a_0700_folder(tmp_path):
    store = tmp_path / "new" / "compatfix" / "store.tsv"
    result = run_python(code="import torch, datetime; torch.save(datetime.date(2020, 1, 1), %r)"
                        % str(tmp_path / "own.pth"), env=env(store), timeout=120)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.parent).st_mode) == 0o700


LINE_SEPARATORS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\r\n")


def test_no_save_path_adds_a_line_to_the_store(tmp_path):
    # Finding 4: a save path (an experiment name from a config) that holds a line
    # separator followed by a store line for a hostile file's hash.
    marker = str(tmp_path / "ran")
    hostile = tmp_path / "hostile.pth"
    hostile.write_bytes(payloads.as_zip(payloads.runs_code(marker)["exec"]))
    data = hostile.read_bytes()
    forged = "%s\t%d\t2021-01-01T00:00:00Z\tforged" % (hashlib.sha256(data).hexdigest(), len(data))
    names = ["exp%d%s%s.pth" % (number, separator, forged) for number, separator in enumerate(LINE_SEPARATORS)]
    store = tmp_path / "cache" / "store.tsv"
    code = "import sys, torch\nfor name in sys.argv[1:]:\n    torch.save({'epoch': 1}, name)\n"
    saved = run_python("-c", code, *(str(tmp_path / name) for name in names), env=env(store), timeout=120)
    assert saved.returncode == 0, saved.stderr
    lines = [line for line in store.read_text(encoding="utf-8").split("\n") if line and not line.startswith("#")]
    assert len(lines) == len(names)
    result = run_python("-c", LOAD, str(hostile), env=env(store), timeout=120)
    assert "REFUSED compatfix: torch.load(" in result.stdout, result.stdout + result.stderr[-2000:]
    assert not os.path.exists(marker)


@pytest.mark.parametrize("kind", FORMATS)
def test_a_save_to_a_named_pipe_does_not_hang(tmp_path, kind):
    # Finding 5: compatfix used to reopen the pipe to hash what was written.
    fifo = tmp_path / "stream.pth"
    os.mkfifo(fifo)
    code = """
import sys, threading, torch
got = []
reader = threading.Thread(target=lambda: got.append(len(open(sys.argv[1], "rb").read())))
reader.start()
torch.save({"epoch": 1}, sys.argv[1], _use_new_zipfile_serialization=sys.argv[2] == "zip")
reader.join()
print("SAVED", got[0] > 0)
"""
    result = run_python("-c", code, str(fifo), kind, env=env(tmp_path / "store.tsv"), timeout=60)
    assert "SAVED True" in result.stdout, result.stderr[-2000:]


@pytest.mark.parametrize("kind", FORMATS)
def test_a_save_to_a_non_utf8_path_succeeds_and_is_trusted(tmp_path, kind):
    # Finding 5: the record's UnicodeEncodeError turned a written checkpoint into a failed save.
    code = """
import datetime, os, sys, torch
path = os.fsdecode(os.fsencode(sys.argv[1]) + b"/run\\xff.pth")
torch.save(datetime.date(2020, 1, 1), path, _use_new_zipfile_serialization=sys.argv[2] == "zip")
print("SAVED")
print("LOADED", torch.load(path))
"""
    store = tmp_path / "cache" / "store.tsv"
    result = run_python("-c", code, str(tmp_path), kind, env=env(store), timeout=120)
    assert "SAVED" in result.stdout and "LOADED 2020-01-01" in result.stdout, result.stderr[-2000:]
    assert store.read_bytes().isascii()
    assert json.loads('"%s"' % store.read_text().split("\n")[2].split("\t")[3]).endswith("/run\udcff.pth")
