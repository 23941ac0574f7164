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

from support import clean_env, holding_lock, run_python

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


# --- issue 18: the save side ------------------------------------------------------------------

SAVE_COUNTING_OPENS = """
import os, sys, torch
target = sys.argv[1]
opens = []
sys.addaudithook(lambda event, args: opens.append(args[0]) if event == "open" and args and
                 isinstance(args[0], str) and os.path.abspath(args[0]) == target else None)
torch.save({"w": torch.zeros(2)}, target)
print("OPENS", len(opens))
"""


SAVE_WHILE_SWAPPING = """
import os, shutil, sys, torch
target, hostile = sys.argv[1], sys.argv[2]
swapping = []


def swap_at_each_open(event, args):
    # Another process that can rename files in the folder: whenever anything opens the
    # checkpoint's path, it has just put its own file there.
    if event == "open" and args and isinstance(args[0], str) and os.path.abspath(args[0]) == target and not swapping:
        swapping.append(True)
        shutil.copyfile(hostile, target + ".new")
        os.replace(target + ".new", target)
        swapping.clear()


sys.addaudithook(swap_at_each_open)
torch.save({"w": torch.zeros(2)}, target)
print("SAVED")
"""


def test_a_file_swapped_in_at_a_path_save_is_never_trusted(tmp_path):
    # Finding 3: compatfix opened PATH again after the save to hash it; a process that can
    # rename files in the folder swapped a hostile file into that gap, and it was trusted.
    store = tmp_path / "store.tsv"
    target, hostile = str(tmp_path / "model.pth"), tmp_path / "hostile.pth"
    hostile.write_bytes(payloads.as_zip(payloads.runs_code(str(tmp_path / "ran"))["exec"]))
    result = run_python("-c", SAVE_WHILE_SWAPPING, target, str(hostile), env=env(store))
    assert "SAVED" in result.stdout, result.stdout + result.stderr
    digests = [line.split("\t")[0] for line in store.read_text().splitlines() if not line.startswith("#")]
    assert hashlib.sha256(hostile.read_bytes()).hexdigest() not in digests
    data = open(target, "rb").read()  # what is at the path now: the bytes the save wrote
    assert digests == [hashlib.sha256(data).hexdigest()]


SAVE_AFTER_CHDIR = """
import os, sys, torch
mine, elsewhere = sys.argv[1], sys.argv[2]
os.chdir(mine)
with open("ckpt.pth", "wb") as handle:
    os.chdir(elsewhere)  # handle.name ("ckpt.pth") now names the hostile file
    torch.save({"w": torch.zeros(2)}, handle)
print("SAVED")
"""


@pytest.mark.parametrize("kind", FORMATS)
def test_a_file_object_is_hashed_through_what_was_written_not_its_name(tmp_path, kind):
    store = tmp_path / "store.tsv"
    mine, elsewhere = tmp_path / "mine", tmp_path / "elsewhere"
    mine.mkdir()
    elsewhere.mkdir()
    marker = str(tmp_path / "ran")
    hostile = elsewhere / "ckpt.pth"
    hostile.write_bytes(payloads.FORMATS[kind](payloads.runs_code(marker)["exec"]))
    result = run_python("-c", SAVE_AFTER_CHDIR, str(mine), str(elsewhere), env=env(store))
    assert "SAVED" in result.stdout, result.stderr
    digests = {line.split("\t")[0] for line in store.read_text().splitlines() if not line.startswith("#")}
    assert digests == {hashlib.sha256((mine / "ckpt.pth").read_bytes()).hexdigest()}
    result = run_python("-c", LOAD, str(hostile), env=env(store))
    assert "REFUSED" in result.stdout and not os.path.exists(marker), result.stdout + result.stderr


def test_a_save_does_not_wait_for_a_live_lock_holder(tmp_path):
    # Finding 5: a lock without an owner stalled every torch.save 30 s. Now: flock, and a
    # holder that keeps it makes the save skip its record after about a second, with one line.
    store = tmp_path / "store.tsv"
    with holding_lock(str(store) + ".lock"):
        result = run_python("-c", SAVE_COUNTING_OPENS, str(tmp_path / "a.pth"), env=env(store))
    assert "OPENS 1" in result.stdout
    assert result.stderr.count("the trust store is busy") == 1, result.stderr
    assert not store.exists()
    (tmp_path / "store.tsv.lock").write_text("")  # what a killed holder leaves behind: not a lock
    result = run_python("-c", SAVE_COUNTING_OPENS, str(tmp_path / "b.pth"), env=env(store))
    assert "busy" not in result.stderr and "b.pth" in store.read_text()



def test_the_store_survives_a_cut_line_garbage_and_absurd_sizes(tmp_path):
    # Finding 6: a last line without its newline glued every new entry onto it; and
    # finding 5: one absurd size made loading any trusted file read that many bytes.
    from compatfix.checkpoint import trust_store

    store = tmp_path / "store.tsv"
    write_store(store)
    with open(store, "a") as handle:
        handle.write("%s\t%d\t2021-01-01T00:00:00Z\t/huge.pth\n" % ("f" * 64, 100 << 30))  # a 100 GB checkpoint
        handle.write("zz" * 32 + "\t12\tgarbage\t/x\n")
        handle.write("%s\t%s\t-\t/long\n" % ("0" * 64, "9" * 5000))  # int() of it would raise
        handle.write("%s\t123" % ("a" * 64))  # cut short by a full disk
    trust_store.record("/mine.pth", "b" * 64, 42, str(store))
    assert [(digest, size) for digest, size, _, _ in trust_store.entries(str(store))] == [
        ("f" * 64, 100 << 30), ("b" * 64, 42)]


@pytest.mark.parametrize("kind", FORMATS)
def test_a_trusted_small_file_loads_beside_a_huge_entry(tmp_path, kind):
    store = tmp_path / "store.tsv"
    path, benign, _ = benign_and_hostile(tmp_path, kind, str(tmp_path / "ran"))
    write_store(store, benign)
    with open(store, "a") as handle:
        handle.write("%s\t%d\t2021-01-01T00:00:00Z\t/huge.pth\n" % ("f" * 64, 1 << 50))
    code = "import resource; resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))\n" + LOAD
    result = run_python("-c", code, path, env=env(store))
    assert "LOADED" in result.stdout, result.stdout + result.stderr


# A save into a buffer whose bytes reach a file later (issue 20, item 5): Lightning 1.x's
# atomic_save writes torch.save's BytesIO to an fsspec file; fsspec and cloud file objects
# have no descriptor.
BUFFER_SAVE = """
import io, sys, torch


class Meter:  # a project's own class: only full pickle rebuilds it
    def __init__(self):
        self.best = 0.75


class CloudFile:  # write and flush only, like an fsspec or cloud file object
    def __init__(self, path):
        self._file = open(path, "wb")

    def write(self, data):
        return self._file.write(data)

    def flush(self):
        self._file.flush()


buffer = io.BytesIO()
torch.save({"meter": Meter()}, buffer, _use_new_zipfile_serialization=sys.argv[3] == "zip")
with open(sys.argv[1], "wb") as handle:
    handle.write(buffer.getvalue())
cloud = CloudFile(sys.argv[2])
torch.save({"meter": Meter()}, cloud, _use_new_zipfile_serialization=sys.argv[3] == "zip")
cloud._file.close()
"""

LOAD_OWN_CLASS = """
import sys, torch
sys.modules["__main__"].Meter = type("Meter", (), {})
for path in sys.argv[1:]:
    try:
        print("LOADED", torch.load(path)["meter"].best)
    except Exception as exc:
        print("REFUSED", str(exc).splitlines()[0])
"""


@pytest.mark.parametrize("kind", FORMATS)
def test_a_save_through_a_buffer_or_a_file_object_without_a_descriptor_loads_back(tmp_path, kind):
    store = tmp_path / "cache" / "store.tsv"
    through_buffer, through_cloud = str(tmp_path / "buffer.ckpt"), str(tmp_path / "cloud.ckpt")
    saved = run_python("-c", BUFFER_SAVE, through_buffer, through_cloud, kind, env=env(store), timeout=120)
    assert saved.returncode == 0, saved.stderr[-2000:]
    loaded = run_python("-c", LOAD_OWN_CLASS, through_buffer, through_cloud, env=env(store), timeout=120)
    assert loaded.stdout.split("\n")[:2] == ["LOADED 0.75", "LOADED 0.75"], loaded.stdout + loaded.stderr[-2000:]
    paths = [entry.split("\t")[3] for entry in store.read_text().split("\n") if entry and entry[0] != "#"]
    assert paths == ["<buffer: _io.BytesIO>", "<buffer: __main__.CloudFile>"], paths

    # The same saves without compatfix leave nothing to trust: the loads are refused.
    other = tmp_path / "other-store.tsv"
    run_python("-c", BUFFER_SAVE, through_buffer, through_cloud, kind, env=clean_env(False), timeout=120)
    refused = run_python("-c", LOAD_OWN_CLASS, through_buffer, through_cloud, env=env(other), timeout=120)
    assert refused.stdout.count("REFUSED compatfix: torch.load(") == 2, refused.stdout + refused.stderr[-2000:]


def test_a_full_store_drops_buffer_saves_before_file_saves(tmp_path, monkeypatch):
    from compatfix.checkpoint import trust_store

    monkeypatch.setattr(trust_store, "MAX_ENTRIES", 4)
    store = str(tmp_path / "store.tsv")
    trust_store.record("/runs/epoch1.pth", "a" * 64, 10, store)
    for number in range(6):  # a program copying its state through a buffer at every step
        trust_store.record(trust_store.BUFFER_PREFIX + "_io.BytesIO>", "%064x" % number, 10, store)
    trust_store.record("/runs/epoch2.pth", "b" * 64, 10, store)
    kept = [entry[3] for entry in trust_store.entries(store)]
    assert kept == ["/runs/epoch1.pth", trust_store.BUFFER_PREFIX + "_io.BytesIO>",
                    trust_store.BUFFER_PREFIX + "_io.BytesIO>", "/runs/epoch2.pth"], kept
