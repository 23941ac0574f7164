"""torchvision's removed modules, against the real torchvision 0.29 of the stacks:
transforms.functional_tensor/functional_pil (renamed private in 0.17; basicsr and the
Real-ESRGAN/GFPGAN lineage import rgb_to_grayscale from it) and models.utils (deleted in
0.11; backbone files imported load_state_dict_from_url from it)."""

from __future__ import annotations

import pytest

from support import run_python

pytestmark = pytest.mark.stack("modern", "paper", "timm1")

IMPORTS = {
    "functional_tensor": "from torchvision.transforms.functional_tensor import rgb_to_grayscale",
    "functional_pil": "import torchvision.transforms.functional_pil",
    "models_utils": "from torchvision.models.utils import load_state_dict_from_url",
}


def test_removed_modules_fail_without_compatfix():
    result = run_python(
        code="""
        for code in %r:
            try:
                exec(code)
            except ModuleNotFoundError as exc:
                print(exc)
        """ % (list(IMPORTS.values()),),
        compatfix=False,
    )
    assert result.stdout.splitlines() == [
        "No module named 'torchvision.transforms.functional_tensor'",
        "No module named 'torchvision.transforms.functional_pil'",
        "No module named 'torchvision.models.utils'",
    ], result.stderr


def test_functional_tensor_is_the_private_module_under_its_old_name():
    result = run_python(
        code="""
        import torch
        from torchvision.transforms import _functional_pil, _functional_tensor
        from torchvision.transforms.functional_tensor import rgb_to_grayscale  # basicsr's degradations.py
        import torchvision.transforms.functional_tensor as F_t
        import torchvision.transforms.functional_pil as F_pil
        assert rgb_to_grayscale is _functional_tensor.rgb_to_grayscale
        assert F_t.adjust_brightness is _functional_tensor.adjust_brightness
        assert F_t._is_tensor_a_torch_image is _functional_tensor._is_tensor_a_torch_image
        assert F_pil.adjust_hue is _functional_pil.adjust_hue
        print(F_t.__compatfix_provided__, rgb_to_grayscale(torch.ones(3, 2, 2)).shape)
        """
    )
    assert result.stdout.strip() == "torchvision.functional_tensor torch.Size([1, 2, 2])", result.stderr


def test_models_utils_loads_a_state_dict_like_torch_hub(tmp_path):
    weights = tmp_path / "tiny-0123abcd.pth"
    result = run_python(
        code="""
        import sys, torch, torch.hub
        from torchvision.models.utils import load_state_dict_from_url
        assert load_state_dict_from_url is torch.hub.load_state_dict_from_url
        torch.save({"weight": torch.arange(3.0)}, %r)
        state = load_state_dict_from_url("file://" + %r, model_dir=%r, progress=False)
        print(state["weight"].tolist())
        """ % (str(weights), str(weights), str(tmp_path / "hub"))
    )
    assert result.stdout.splitlines()[-1] == "[0.0, 1.0, 2.0]", result.stderr
