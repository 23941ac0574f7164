"""transformers.file_utils' 4.x names that transformers 5.24 lacks: cached_property with
4.x's caching rule (kept in ``__cached_<name>``, computed again while None, unlike
functools.cached_property), torch_required, the framework probes, is_offline_mode."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

PRESENT = """
import transformers.file_utils as file_utils
print([hasattr(file_utils, n) for n in ("cached_property", "torch_required", "is_tf_available", "is_flax_available",
                                        "is_torch_tpu_available", "is_offline_mode")])
"""


def test_file_utils_names_are_missing_without_compatfix():
    for env in (clean_env(compatfix=False), clean_env(COMPATFIX_DISABLE="transformers.file_utils.cached_property")):
        result = run_python(code=PRESENT, env=env)
        assert result.stdout.strip() == "[False, False, False, False, False, False]", result.stderr[-2000:]


@pytest.mark.stack("py312", "transformers4")  # both ends: 4.57.6 and 5.24
def test_file_utils_names_behave_as_in_4x():
    result = run_python(
        code="""
        import transformers
        from transformers.file_utils import (cached_property, is_flax_available, is_offline_mode, is_tf_available,
                                             is_torch_tpu_available, torch_required)
        calls = []

        class Arguments:
            answer = None

            @cached_property
            @torch_required
            def devices(self):
                calls.append(1)
                return self.answer

        arguments = Arguments()
        assert isinstance(Arguments.__dict__["devices"], property)
        assert arguments.devices is None and arguments.devices is None and len(calls) == 2  # None: not kept
        arguments.answer = "cpu"
        assert arguments.devices == "cpu" and arguments.devices == "cpu" and len(calls) == 3
        assert arguments.__dict__["__cached_devices"] == "cpu"
        assert Arguments.devices is Arguments.__dict__["devices"]
        assert is_tf_available is transformers.is_tf_available and is_tf_available() is False
        assert is_flax_available() is False and is_torch_tpu_available() is False
        print(is_offline_mode())
        """,
        env=clean_env(HF_HUB_OFFLINE="1"),
    )
    assert result.stdout.split() == ["True"], result.stderr[-3000:]
