"""omegaconf._utils.is_primitive_type (renamed is_primitive_type_annotation in OmegaConf
2.2) against the real OmegaConf of the py312 stack (2.3) and of py313 (2.2.1, the first
release without it; 2.2.0 was yanked): missing with compatfix off; with it on, the answers
OmegaConf 2.1.2's body gives (an Enum, int, float, bool, str or NoneType, as a class or as
the type of a value), written out here by hand."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312", "py313")

PRESENT = "import omegaconf._utils as u\nprint(hasattr(u, 'is_primitive_type'))"


def test_missing_without_compatfix():
    assert run_python(code=PRESENT, compatfix=False).stdout.split() == ["False"]
    disabled = clean_env(COMPATFIX_DISABLE="omegaconf._utils.is_primitive_type")
    assert run_python(code=PRESENT, env=disabled).stdout.split() == ["False"]


def test_is_primitive_type_keeps_its_2_1_meaning():
    result = run_python(
        code="""
        import enum, pathlib
        from dataclasses import dataclass
        from omegaconf import OmegaConf
        from omegaconf._utils import is_primitive_type

        class Color(enum.Enum):
            RED = 1

        @dataclass
        class Config:
            x: int = 1

        primitive = [int, float, bool, str, type(None), Color, 3, 2.5, True, "s", None, Color.RED]
        not_primitive = [bytes, b"x", pathlib.Path, pathlib.Path("a"), list, [1], dict, {"a": 1},
                         Config, Config(), OmegaConf.create({"a": 1})]
        print([is_primitive_type(t) for t in primitive].count(True), len(primitive))
        print([is_primitive_type(t) for t in not_primitive].count(True))
        """
    )
    assert result.stdout.split() == ["12", "12", "0"], result.stderr[-2000:]
