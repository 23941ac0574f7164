"""The top-level names of transformers 4.x that transformers 5.24 lacks: the TensorFlow,
Flax and TPU probes, and the names the submodule shims restore (AdamW, the LM-head auto
class and mapping, top_k_top_p_filtering), as the same objects."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

PROBES = """
import transformers
print([hasattr(transformers, n) for n in ("is_tf_available", "is_flax_available", "is_torch_tpu_available",
                                          "AutoModelWithLMHead", "MODEL_WITH_LM_HEAD_MAPPING", "top_k_top_p_filtering")])
"""


def test_the_probes_are_missing_without_compatfix():
    result = run_python(code=PROBES, compatfix=False)
    assert result.stdout.strip() == "[False, False, False, False, False, False]", result.stderr[-2000:]
    result = run_python(code=PROBES, env=clean_env(COMPATFIX_DISABLE="transformers.is_tf_available"))
    assert result.stdout.strip() == "[False, False, False, True, True, True]", result.stderr[-2000:]


def test_the_probes_answer_what_is_true_here():
    result = run_python(
        code="""
        import importlib.util
        import transformers
        from transformers import is_tf_available, is_flax_available, is_torch_tpu_available
        # transformers 5 has no TensorFlow or Flax models, whatever is installed
        assert is_tf_available() is False and is_flax_available() is False
        # a TPU needs torch_xla, which this stack does not have
        assert importlib.util.find_spec("torch_xla") is None
        assert is_torch_tpu_available() is False
        assert is_torch_tpu_available is transformers.utils.is_torch_tpu_available
        from transformers import top_k_top_p_filtering
        import transformers.generation_utils
        assert top_k_top_p_filtering is transformers.generation_utils.top_k_top_p_filtering
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]
