"""torch._six, against the real torch 2.x and timm 0.3.2 (which imports it)."""

from __future__ import annotations

import os
import textwrap

from support import clean_env, run_python


def test_timm_0_3_2_imports_only_with_compatfix():
    off = run_python(code="import timm", compatfix=False)
    assert "No module named 'torch._six'" in off.stderr
    on = run_python(code="import timm; print(timm.__version__)")
    assert on.stdout.split() == ["0.3.2"], on.stderr


def test_torch_six_names_have_their_torch_1_x_meaning():
    result = run_python(
        code="""
        import collections.abc, math
        from torch._six import container_abcs, string_classes, int_classes, inf, nan
        assert container_abcs is collections.abc and int_classes is int
        assert string_classes == (str, bytes) and inf == math.inf and math.isnan(nan)
        import torch._six
        print(torch._six.__compatfix_provided__)
        """
    )
    assert result.stdout.split() == ["torch._six"], result.stderr


def test_missing_names_are_added_to_an_old_torch_six(tmp_path):
    # torch 1.8-1.13 cannot be installed on Python 3.11, so a stand-in torch 1.10
    # package (with the torch._six of that era, lacking container_abcs) is used here.
    package = tmp_path / "torch"
    package.mkdir()
    (package / "__init__.py").write_text("__version__ = '1.10.2+cu113'\n")
    (package / "_six.py").write_text("import math\ninf = math.inf\nstring_classes = (str, bytes)\n")
    code = textwrap.dedent(
        """
        from torch._six import container_abcs, int_classes, inf
        import torch._six
        print(hasattr(torch._six, "__compatfix_provided__"), int_classes is int)
        """
    )
    off = run_python(code=code, env=clean_env(False, PYTHONPATH=str(tmp_path)))
    assert "cannot import name 'container_abcs'" in off.stderr
    on = run_python(code=code, env=clean_env(True, PYTHONPATH=str(tmp_path)))
    assert on.stdout.split() == ["False", "True"], on.stderr
