"""np.warnings (gone since numpy 1.24) against the real numpy of the stacks: missing with
compatfix off; with it on, the standard library's warnings module, so 2019-22 code's
``np.warnings.filterwarnings('ignore')`` silences warnings as it did."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern", "numpy1")

CODE = """
import numpy as np, warnings
np.warnings.filterwarnings("ignore", message="quiet please")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("default")
    np.warnings.filterwarnings("ignore", message="quiet please")
    warnings.warn("quiet please")
    warnings.warn("loud")
print(np.warnings is warnings, [str(w.message) for w in caught])
"""


def test_np_warnings_is_missing_without_compatfix():
    for env in (clean_env(False), clean_env(COMPATFIX_DISABLE="numpy.warnings")):
        result = run_python(code=CODE, env=env)
        assert result.returncode != 0 and "has no attribute 'warnings'" in result.stderr, result.stderr[-2000:]


def test_np_warnings_is_the_warnings_module():
    result = run_python(code=CODE)
    assert result.stdout.strip() == "True ['loud']", result.stderr[-2000:]
