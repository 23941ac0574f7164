"""transformers.modeling_utils' 4.x layer helpers that transformers 5.24 lacks there: the
ones that moved to transformers.pytorch_utils are its objects; the head-pruning index and
the Conv1D pruning give 4.x's results, worked out here by hand."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

PRESENT = """
import transformers.modeling_utils as modeling_utils
print([hasattr(modeling_utils, n) for n in ("prune_linear_layer", "find_pruneable_heads_and_indices",
                                            "apply_chunking_to_forward", "prune_conv1d_layer", "TF_WEIGHTS_NAME",
                                            "SequenceSummary")])
"""


def test_layer_helpers_are_missing_without_compatfix():
    for env in (clean_env(compatfix=False),
                clean_env(COMPATFIX_DISABLE="transformers.modeling_utils.prune_linear_layer")):
        result = run_python(code=PRESENT, env=env)
        assert result.stdout.strip() == "[False, False, False, False, False, False]", result.stderr[-2000:]


@pytest.mark.stack("py312", "transformers4")  # both ends: 4.57.6 and 5.24
def test_layer_helpers_give_4x_results():
    result = run_python(
        code="""
        import torch
        import transformers.pytorch_utils as pytorch_utils
        from transformers.modeling_utils import (TF2_WEIGHTS_NAME, TF_WEIGHTS_NAME, Conv1D, apply_chunking_to_forward,
                                                 find_pruneable_heads_and_indices, prune_conv1d_layer, prune_layer,
                                                 prune_linear_layer)
        assert prune_linear_layer is pytorch_utils.prune_linear_layer and Conv1D is pytorch_utils.Conv1D
        assert apply_chunking_to_forward is pytorch_utils.apply_chunking_to_forward
        assert (TF_WEIGHTS_NAME, TF2_WEIGHTS_NAME) == ("model.ckpt", "tf_model.h5")
        # 4 heads of 3: pruning head 2 keeps rows 0-5 and 9-11
        heads, index = find_pruneable_heads_and_indices([2], 4, 3, set())
        assert heads == {2} and index.tolist() == [0, 1, 2, 3, 4, 5, 9, 10, 11] and index.dtype == torch.long
        # head 0 already gone: the layer has 3 heads left; pruning original heads 0 and 3 prunes only 3,
        # which is now the layer's third head (rows 6-8)
        heads, index = find_pruneable_heads_and_indices([0, 3], 3, 3, {0})
        assert heads == {3} and index.tolist() == [0, 1, 2, 3, 4, 5]
        # Conv1D(nf=4, nx=3) has a (3, 4) weight; dim=1 keeps output columns and their bias
        torch.manual_seed(0)
        layer = Conv1D(4, 3)
        with torch.no_grad():
            layer.bias.copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
        pruned = prune_conv1d_layer(layer, torch.tensor([0, 2]))
        assert pruned.weight.shape == (3, 2) and torch.equal(pruned.weight, layer.weight[:, [0, 2]])
        assert pruned.bias.tolist() == [1.0, 3.0] and pruned.weight.requires_grad
        x = torch.randn(5, 3)
        assert torch.allclose(pruned(x), layer(x)[:, [0, 2]])
        rows = prune_layer(layer, torch.tensor([1]), dim=0)
        assert rows.weight.shape == (1, 4) and rows.bias.tolist() == [1.0, 2.0, 3.0, 4.0]
        linear = torch.nn.Linear(3, 4)
        assert prune_layer(linear, torch.tensor([0, 1])).weight.shape == (2, 3)
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


@pytest.mark.stack("py312", "transformers4")  # both ends: 4.57.6 and 5.24
def test_sequence_summary_is_4x_s():
    result = run_python(
        code="""
        import torch
        from types import SimpleNamespace
        from transformers.modeling_utils import SequenceSummary
        # 4.x's SequenceSummary reads these fields of any model's config
        config = SimpleNamespace(hidden_size=2, num_labels=2, summary_type="first", summary_use_proj=True,
                                 summary_proj_to_labels=False, summary_activation="tanh", summary_first_dropout=0.0,
                                 summary_last_dropout=0.0)
        summary = SequenceSummary(config).eval()
        with torch.no_grad():
            summary.summary.weight.copy_(torch.eye(2) * 2)
            summary.summary.bias.zero_()
        hidden = torch.tensor([[[0.5, -0.25], [9.0, 9.0]]])
        # the first token's state, projected (x2) and squashed: tanh(1.0), tanh(-0.5)
        expected = torch.tanh(torch.tensor([[1.0, -0.5]]))
        assert torch.allclose(summary(hidden), expected)
        # the mean of the states, with no projection and no activation
        plain = SimpleNamespace(hidden_size=2, summary_type="mean", summary_use_proj=False, summary_activation=None)
        assert torch.allclose(SequenceSummary(plain).eval()(hidden), torch.tensor([[4.75, 4.375]]))
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]
