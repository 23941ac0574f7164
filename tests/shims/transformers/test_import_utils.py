"""transformers.processing_utils replaces the transformers module in sys.modules (through
direct_transformers_import, past every finder): the restored top-level names must stay
there after `from transformers import Trainer`."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

CODE = """
import sys
import transformers
first = sys.modules["transformers"]
from transformers import Trainer
assert sys.modules["transformers"] is not first  # transformers' own re-import
try:
    from transformers import AdamW, is_tf_available
    print(AdamW.__name__, is_tf_available())
except ImportError:
    print("missing")
"""


def test_restored_names_are_lost_without_the_shim():
    result = run_python(code=CODE, env=clean_env(COMPATFIX_DISABLE="transformers.utils.import_utils.direct_transformers_import"))
    assert result.stdout.split() == ["missing"], result.stderr[-2000:]


def test_restored_names_survive_the_reimport():
    result = run_python(code=CODE)
    assert result.stdout.split() == ["AdamW", "False"], result.stderr[-2000:]
