"""``--report`` / ``COMPATFIX_REPORT`` on paths that are not regular files, and a report
too large to read (issue 13, finding 5). Each child limits its own address space, so
that a reader of /dev/zero fails instead of taking the machine's memory."""

from __future__ import annotations

import json
import os

from support import clean_env, run_python

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
