"""A model class written for transformers 3.x/4.x, whose __init__ never calls post_init(), loaded
with from_pretrained on the real transformers 5.24 and 5.0.0 (the first 5.x, which reaches the
same reader from another function): an AttributeError (all_tied_weights_keys)
without compatfix; with it, the checkpoint's weights are loaded exactly (compared with the
saved model's own tensors), the head it lacks is initialised, and the model saves and loads
again. On transformers 4.57.6 such a model loads without the shim, which does not apply there."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

CODE = """
import sys, tempfile
import torch
from transformers import BertConfig, BertModel, BertPreTrainedModel

class OldStyle(BertPreTrainedModel):  # as 2020-22 code wrote them: no post_init() at the end
    def __init__(self, config, labels):
        super().__init__(config)
        self.bert = BertModel(config)
        self.head = torch.nn.Linear(config.hidden_size, labels)

    def forward(self, input_ids):
        return self.head(self.bert(input_ids)[1])

config = BertConfig(vocab_size=30, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
folder = tempfile.mkdtemp()
saved = BertModel(config)
saved.save_pretrained(folder)
try:
    model = OldStyle.from_pretrained(folder, labels=3)
except AttributeError as error:
    print("refused", "all_tied_weights_keys" in str(error))
    sys.exit()
expected = saved.state_dict()
loaded = model.bert.state_dict()
assert all(torch.equal(loaded[k], expected[k]) for k in expected if k in loaded), "weights changed"
# a non-persistent buffer, not in the checkpoint: from_pretrained initialises it afterwards
positions = model.bert.embeddings.position_ids
assert torch.equal(positions, torch.arange(positions.shape[-1]).expand(1, -1)), positions
assert not model.head.weight.is_meta and torch.isfinite(model.head.weight).all()
logits = model(torch.tensor([[1, 2, 3, 4]]))
assert logits.shape == (1, 3)
again = tempfile.mkdtemp()
model.save_pretrained(again)
reloaded = OldStyle.from_pretrained(again, labels=3)
assert torch.equal(reloaded.head.weight, model.head.weight)
print("loaded")
"""


def script(tmp_path) -> str:
    """CODE as a file: transformers 5.0 reads the model class's module's __file__, which
    ``python -c`` lacks."""
    path = tmp_path / "old_style_model.py"
    path.write_text(CODE)
    return str(path)


@pytest.mark.stack("py312", "transformers50")
def test_an_old_style_model_is_refused_without_compatfix(tmp_path):
    for env in (clean_env(compatfix=False),
                clean_env(COMPATFIX_DISABLE="transformers.modeling_utils.PreTrainedModel.post_init")):
        result = run_python(script(tmp_path), env=env)
        assert result.stdout.split() == ["refused", "True"], result.stderr[-3000:]


@pytest.mark.stack("py312", "transformers4", "transformers50")
@pytest.mark.parametrize("device", ["", "cpu"])
def test_an_old_style_model_loads_its_checkpoint_exactly(device, tmp_path):
    """Also in CPU mode, whose factory wrappers once cost transformers 5 its meta-device
    build: the model was built and initialised on the CPU, then its non-persistent buffers
    were replaced by uninitialised memory (position_ids garbage, an IndexError)."""
    result = run_python(script(tmp_path), env=clean_env(COMPATFIX_DEVICE=device))
    assert result.stdout.split() == ["loaded"], result.stderr[-3000:]
