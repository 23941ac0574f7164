"""skimage.metrics.ssim_data_range (opt-in) against the real scikit-image 0.26: a float image
without data_range raises by default, compatfix on or off; with the shim enabled it gets the
old default, the dtype's range (2 for floats), checked against data_range=2 given explicitly."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern")

CODE = """
import numpy as np
from skimage.metrics import structural_similarity
rng = np.random.default_rng(0)
a, b = rng.random((16, 16)), rng.random((16, 16))
try:
    value = structural_similarity(a, b)
except ValueError as exc:
    print("raised", "must specify the data_range" in str(exc))
else:
    print("value", np.isclose(value, structural_similarity(a, b, data_range=2.0)))
"""


def test_float_ssim_without_data_range_raises_by_default():
    assert run_python(code=CODE, compatfix=False).stdout.split() == ["raised", "True"]
    assert run_python(code=CODE).stdout.split() == ["raised", "True"]  # opt-in: off by default


def test_enabled_it_uses_the_old_default_range():
    result = run_python(code=CODE, env=clean_env(True, COMPATFIX_ENABLE="skimage.metrics.ssim_data_range"))
    assert result.stdout.split() == ["value", "True"], result.stderr
