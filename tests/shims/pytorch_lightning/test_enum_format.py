"""pytorch-lightning 1.x's LightningEnum members in f-strings, on Python >= 3.11: the value,
as on Python <= 3.10 (where Enum.__format__ of a str mixin formatted the member's value,
per the Python 3.10 enum docs), only for Lightning's enums."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern")  # pytorch-lightning 1.1.8

CODE = """
import enum
from pytorch_lightning.utilities import AMPType


class Color(str, enum.Enum):  # the program's own enum: Python's rule of today stays
    RED = "red"


print(f"{AMPType.APEX}|{AMPType.NATIVE:>8}|" + "{}".format(AMPType.APEX) + "|" + f"{Color.RED}")
"""


def test_lightning_enums_format_as_their_value():
    result = run_python(code=CODE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "apex|  native|apex|Color.RED"


def test_without_the_shim_they_format_as_class_and_member():
    for env in (clean_env(True, COMPATFIX_DISABLE="pytorch_lightning.utilities.enum_format"), clean_env(False)):
        result = run_python(code=CODE, env=env)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "AMPType.APEX|AMPType.NATIVE|AMPType.APEX|Color.RED"
