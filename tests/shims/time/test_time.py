"""time.clock (compatfix.shims.time), which Python 3.8 removed, against this interpreter's
real standard library: missing with compatfix off; with it on, Python 3.7's Unix meaning,
the process's CPU time (time.process_time's clock)."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern", "py312", "py313")

# Which clock it reads, without timing anything: each reading lies between two readings of
# the process-time clock taken around it (perf_counter counts from an unrelated origin).
CLOCK = """
import json, time, warnings, numpy
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    brackets = []
    for _ in range(5):
        before = time.process_time()
        reading = time.clock()
        brackets.append(before <= reading <= time.process_time())
print(json.dumps({"between": brackets, "perf_counter_between": before <= time.perf_counter() <= time.process_time(),
                  "warnings": sorted({w.category.__name__ for w in caught})}))
"""


def test_time_clock_fails_without_compatfix():
    result = run_python(code="import numpy, time\ntime.clock()", compatfix=False)
    assert "AttributeError: module 'time' has no attribute 'clock'" in result.stderr
    result = run_python(code="import numpy, time\ntime.clock()", env=clean_env(COMPATFIX_DISABLE="time.clock"))
    assert "AttributeError: module 'time' has no attribute 'clock'" in result.stderr


def test_time_clock_is_the_process_s_cpu_time_on_unix():
    result = run_python(code=CLOCK)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["between"] == [True] * 5 and found["perf_counter_between"] is False
    assert found["warnings"] == ["DeprecationWarning"]
