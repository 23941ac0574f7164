"""``--report`` / ``COMPATFIX_REPORT`` on paths that are not regular files, and a report
too large to read (issue 13, finding 5). Each child limits its own address space, so
that a reader of /dev/zero fails instead of taking the machine's memory."""

from __future__ import annotations

import json
import os

from support import clean_env, holding_lock, run_python

LIMITED = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
import numpy
print("DONE")
"""
NOT_REGULAR = "is not a regular file (a pipe, a device ...); no report will be written"


def run_with_report(path) -> tuple[str, str]:
    result = run_python(code=LIMITED, env=clean_env(COMPATFIX_REPORT=str(path)), timeout=60)
    return result.stdout, result.stderr


def test_a_named_pipe_as_report_is_refused_at_start(tmp_path):
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    stdout, stderr = run_with_report(fifo)  # used to wait at exit for a writer, for ever
    assert "DONE" in stdout
    assert stderr.count(NOT_REGULAR) == 1, stderr
    assert os.listdir(tmp_path) == ["report.json"]  # no report.json.lock left behind


def test_a_link_to_a_device_as_report_is_refused_at_start(tmp_path):
    link = tmp_path / "report.json"
    link.symlink_to("/dev/zero")  # used to be read until memory ran out
    stdout, stderr = run_with_report(link)
    assert "DONE" in stdout
    assert stderr.count(NOT_REGULAR) == 1, stderr
    assert sorted(os.listdir(tmp_path)) == ["report.json"]


def test_a_huge_report_is_replaced_without_being_read(tmp_path):
    report = tmp_path / "report.json"
    with open(report, "wb") as handle:
        handle.truncate(2 << 30)  # sparse: 2 GiB of zeros that take no disk
    stdout, stderr = run_with_report(report)
    assert "DONE" in stdout, stderr
    written = json.loads(report.read_text())
    assert [process["argv"] for process in written["processes"]] == [["-c"]]
    assert not os.path.exists(str(report) + ".lock")


EXIT_AFTER_PLANTING = """
import os, sys
import numpy  # a target import: the engine starts, and writes its record at exit
report, victim = sys.argv[1], sys.argv[2]
# The names the report writer used to write through: PATH.<pid>.tmp, and the lock.
os.symlink(victim, "%s.%d.tmp" % (report, os.getpid()))
if len(sys.argv) > 3:
    os.symlink(victim, report + ".lock")
print("DONE")
"""


def test_a_planted_link_at_the_temporary_name_is_not_followed(tmp_path):
    # Issue 18, finding 4: a link planted in a shared folder overwrote the victim's file.
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's data")
    report = tmp_path / "report.json"
    result = run_python("-c", EXIT_AFTER_PLANTING, str(report), str(victim),
                        env=clean_env(COMPATFIX_REPORT=str(report)), timeout=60)
    assert "DONE" in result.stdout, result.stderr
    assert victim.read_text() == "the victim's data"
    assert json.loads(report.read_text())["processes"][0]["argv"] == ["-c", str(report), str(victim)]


def test_a_planted_link_at_the_lock_name_is_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's data")
    report = tmp_path / "report.json"
    result = run_python("-c", EXIT_AFTER_PLANTING, str(report), str(victim), "lock",
                        env=clean_env(COMPATFIX_REPORT=str(report)), timeout=60)
    assert "DONE" in result.stdout
    assert victim.read_text() == "the victim's data"
    assert result.stderr.count("could not write the report") == 1, result.stderr


def test_a_lock_held_by_a_live_process_skips_the_report_with_one_line(tmp_path):
    # Issue 18, finding 5: the exit waited 30 s behind a lock; now about a second, then one line.
    report = tmp_path / "report.json"
    with holding_lock(str(report) + ".lock"):
        stdout, stderr = run_with_report(report)
    assert "DONE" in stdout
    assert stderr.count("could not write the report") == 1 and "held by another process" in stderr, stderr
    assert not report.exists()


def test_a_lock_left_by_a_killed_writer_does_not_block(tmp_path):
    report = tmp_path / "report.json"
    (tmp_path / "report.json.lock").write_text("")  # the file a killed writer leaves: no lock on it
    # Finding 5: such a file used to make the writer wait 30 s at exit, then break it. A
    # hang guard below that: the writer must not wait for a lock nobody holds.
    result = run_python(code=LIMITED, env=clean_env(COMPATFIX_REPORT=str(report)), timeout=25)
    stdout, stderr = result.stdout, result.stderr
    assert "DONE" in stdout and "could not write" not in stderr, stderr
    assert json.loads(report.read_text())["processes"]
