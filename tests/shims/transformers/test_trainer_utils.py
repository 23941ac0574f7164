"""transformers.trainer_utils' EvaluationStrategy and default_hp_space (removed in
transformers 5), against the real transformers 5.24."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

PRESENT = """
import transformers.trainer_utils as trainer_utils
print([hasattr(trainer_utils, n) for n in ("EvaluationStrategy", "default_hp_space")])
"""


def test_trainer_utils_names_are_missing_without_compatfix():
    for env in (clean_env(compatfix=False),
                clean_env(COMPATFIX_DISABLE="transformers.trainer_utils.EvaluationStrategy")):
        result = run_python(code=PRESENT, env=env)
        assert result.stdout.strip() == "[False, False]", result.stderr[-2000:]


def test_trainer_utils_names_keep_4x_values():
    result = run_python(
        code="""
        from transformers.trainer_utils import (EvaluationStrategy, HPSearchBackend, IntervalStrategy,
                                                default_hp_space, default_hp_space_optuna)
        # 4.x: NO = "no", STEPS = "steps", EPOCH = "epoch"
        assert [(m.name, m.value) for m in EvaluationStrategy] == [("NO", "no"), ("STEPS", "steps"), ("EPOCH", "epoch")]
        assert EvaluationStrategy("steps") is IntervalStrategy.STEPS
        assert default_hp_space[HPSearchBackend.OPTUNA] is default_hp_space_optuna
        assert default_hp_space[HPSearchBackend("ray")].__name__ == "default_hp_space_ray"
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]
