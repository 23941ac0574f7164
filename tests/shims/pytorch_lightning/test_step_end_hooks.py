"""Lightning 1.x's ``training_step_end`` / ``validation_step_end`` / ``test_step_end`` on
Lightning 2.6, which 2.0 stopped calling without an error. In 1.x each step's output went
through the hook and its return replaced it: the training loss that backward used, and what
the epoch-end hook collected. A tiny model takes one SGD step on a loss that its
training_step_end doubles; the expected weights are computed here with torch alone."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")  # pytorch-lightning 2.6.6

SHIM = "pytorch_lightning.trainer.step_end_hooks"

CODE = r"""
import copy, json
import torch
import pytorch_lightning as pl
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x, y = torch.randn(4, 3), torch.randn(4, 1)


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(3, 1)
        self.seen = []

    def training_step(self, batch, batch_idx):
        return {"loss": torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])}

    def training_step_end(self, output):
        return {"loss": output["loss"] * 2}

    def validation_step(self, batch, batch_idx):
        return {"value": 1.5}

    def validation_step_end(self, output):
        self.seen.append(output["value"])
        return output["value"] * 10

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        return DataLoader(TensorDataset(x, y), batch_size=4)

    def val_dataloader(self):
        return DataLoader(TensorDataset(x, y), batch_size=4)


model = Model()
reference = copy.deepcopy(model.layer)
loss = 2 * torch.nn.functional.mse_loss(reference(x), y)
loss.backward()
with torch.no_grad():
    expected = [(p - 0.1 * p.grad).flatten().tolist() for p in reference.parameters()]
trainer = pl.Trainer(max_epochs=1, num_sanity_val_steps=0, logger=False, enable_progress_bar=False,
                     enable_model_summary=False, enable_checkpointing=False)
trainer.fit(model)
got = [p.detach().flatten().tolist() for p in model.layer.parameters()]
print(json.dumps({"expected": expected, "got": got, "seen": model.seen}))
"""


def _run(env):
    result = run_python(code=CODE, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_step_end_hooks_shape_the_loss_and_the_outputs():
    found = _run(clean_env(True))
    for got, expected in zip(found["got"], found["expected"]):
        assert got == pytest.approx(expected, rel=1e-5)
    assert found["seen"] == [1.5]


def test_without_the_shim_lightning_2_skips_them_silently():
    for env in (clean_env(False), clean_env(True, COMPATFIX_DISABLE=SHIM)):
        found = _run(env)
        assert found["seen"] == []
        assert found["got"][0] != pytest.approx(found["expected"][0], rel=1e-5)  # trained on the undoubled loss
