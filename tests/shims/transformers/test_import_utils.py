"""transformers.processing_utils replaces the transformers module in sys.modules (through
direct_transformers_import, past every finder): the restored top-level names must stay
there after `from transformers import Trainer`. Both ends: transformers 4.57.6 (4.27 added the
re-import) and 5.24; the name checked is one that compatfix restores on both (4.41 removed it)."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312", "transformers4")

CODE = """
import sys
import transformers
first = sys.modules["transformers"]
from transformers import Trainer
assert sys.modules["transformers"] is not first  # transformers' own re-import
try:
    from transformers import BERT_PRETRAINED_CONFIG_ARCHIVE_MAP
    print(len(BERT_PRETRAINED_CONFIG_ARCHIVE_MAP) > 0)
except ImportError:
    print("missing")
"""


def test_restored_names_are_lost_without_the_shim():
    result = run_python(code=CODE, env=clean_env(COMPATFIX_DISABLE="transformers.utils.import_utils.direct_transformers_import"))
    assert result.stdout.split() == ["missing"], result.stderr[-2000:]


def test_restored_names_survive_the_reimport():
    result = run_python(code=CODE)
    assert result.stdout.split() == ["True"], result.stderr[-2000:]
