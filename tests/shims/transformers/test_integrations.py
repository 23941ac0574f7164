"""transformers.integrations.default_hp_search_backend (moved in 4.31, with another contract)
and the transformers.deepspeed module (removed after 4.45) against the real transformers 5.24:
missing with compatfix off; with it on, 4.x's answer (None here: neither Optuna nor Ray Tune is
installed on this stack) and transformers.integrations.deepspeed's objects."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312", "transformers4")

PRESENT = """
import transformers.integrations as integrations
found = [hasattr(integrations, "default_hp_search_backend")]
try:
    from transformers.deepspeed import HfDeepSpeedConfig
    found.append(True)
except ImportError:
    found.append(False)
print(found)
"""


def test_integration_names_are_missing_without_compatfix():
    result = run_python(code=PRESENT, compatfix=False)
    assert result.stdout.strip() == "[False, False]", result.stderr[-2000:]
    result = run_python(code=PRESENT, env=clean_env(COMPATFIX_DISABLE="transformers.integrations.default_hp_search_backend"))
    assert result.stdout.strip() == "[False, True]", result.stderr[-2000:]
    result = run_python(code=PRESENT, env=clean_env(COMPATFIX_DISABLE="transformers.deepspeed"))
    assert result.stdout.strip() == "[True, False]", result.stderr[-2000:]


def test_integration_names_answer_as_in_4x():
    result = run_python(
        code="""
        import importlib.util
        from transformers.integrations import default_hp_search_backend
        assert importlib.util.find_spec("optuna") is None and importlib.util.find_spec("ray") is None
        assert default_hp_search_backend() is None  # 4.x: None when no backend is installed
        import transformers.integrations.deepspeed as integration
        from transformers.deepspeed import HfDeepSpeedConfig, is_deepspeed_zero3_enabled
        assert HfDeepSpeedConfig is integration.HfDeepSpeedConfig
        assert is_deepspeed_zero3_enabled() is False
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


FAIRSCALE = """
import transformers.integrations as integrations
print(integrations.is_fairscale_available() if hasattr(integrations, "is_fairscale_available") else "missing")
"""


def test_fairscale_probe_says_whether_fairscale_imports(tmp_path):
    # 4.35 removed it; a folder with a fairscale package on the path makes the answer True
    (tmp_path / "fairscale").mkdir()
    (tmp_path / "fairscale" / "__init__.py").write_text("")
    assert run_python(code=FAIRSCALE, compatfix=False).stdout.split() == ["missing"]
    disabled = clean_env(COMPATFIX_DISABLE="transformers.integrations.is_fairscale_available")
    assert run_python(code=FAIRSCALE, env=disabled).stdout.split() == ["missing"]
    assert run_python(code=FAIRSCALE).stdout.split() == ["False"]
    result = run_python(code=FAIRSCALE, env=clean_env(PYTHONPATH=str(tmp_path)))
    assert result.stdout.split() == ["True"], result.stderr[-2000:]
