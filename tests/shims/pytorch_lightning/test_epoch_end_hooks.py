"""Lightning 1.x's ``training_epoch_end`` / ``validation_epoch_end`` / ``test_epoch_end``
on Lightning 2.6: a tiny model trained on the CPU for two epochs, with two validation
dataloaders, then tested.

Expected values are 1.5's (loops/epoch/training_epoch_loop.py, loops/dataloader/
evaluation_loop.py), computed from what the steps themselves returned, recorded by the
model: the training hook gets one dict per batch, ``{"loss": the loss, **the other keys}``,
without the batch whose step returned None; ``validation_epoch_end`` gets one list per
dataloader (two here), also in the sanity check; ``test_epoch_end`` of one dataloader a flat
list. A metric logged in ``validation_epoch_end`` is what ModelCheckpoint monitors."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")  # pytorch-lightning 2.6.6

SHIM = "pytorch_lightning.trainer.epoch_end_hooks"

CODE = r"""
import json, tempfile
import torch
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(12, 3), torch.randn(12, 1))


def loader():
    return DataLoader(data, batch_size=4)


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(3, 1)
        self.returned = {"train": [], "val": [], "test": []}  # what each step returned, per epoch
        self.received = {"train": [], "val": [], "test": []}  # what each epoch-end hook got

    def _loss(self, batch):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def training_step(self, batch, batch_idx):
        if batch_idx == 1:
            return None  # a skipped step: 1.x left it out of the outputs
        loss = self._loss(batch)
        self.returned["train"].append([self.current_epoch, batch_idx, float(loss)])
        return {"loss": loss, "index": batch_idx}

    def training_epoch_end(self, outputs):
        self.received["train"].append([[sorted(o), int(o["index"]), float(o["loss"]), o["loss"].requires_grad]
                                       for o in outputs])

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        value = float(self._loss(batch)) + 10 * dataloader_idx
        self.returned["val"].append([self.trainer.sanity_checking, dataloader_idx, batch_idx, value])
        return {"value": value, "where": [dataloader_idx, batch_idx]}

    def validation_epoch_end(self, outputs):
        self.received["val"].append([self.trainer.sanity_checking, outputs])
        self.log("val_metric", float(sum(o["value"] for o in outputs[0])))

    def test_step(self, batch, batch_idx):
        return batch_idx * 2

    def test_epoch_end(self, outputs):
        self.received["test"].append(outputs)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

    def train_dataloader(self):
        return loader()

    def val_dataloader(self):
        return [loader(), loader()]

    def test_dataloader(self):
        return loader()


class Plain(pl.LightningModule):  # today's module: no 1.x hook
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

    def train_dataloader(self):
        return loader()


options = dict(logger=False, enable_progress_bar=False, enable_model_summary=False, default_root_dir=tempfile.mkdtemp())
found = {}
model = Model()
checkpoint = ModelCheckpoint(monitor="val_metric", mode="min")
trainer = pl.Trainer(max_epochs=2, limit_val_batches=2, num_sanity_val_steps=1, callbacks=[checkpoint], **options)
try:
    trainer.fit(model)
    trainer.test(model, verbose=False)
    found["model"] = [model.returned, model.received, float(checkpoint.best_model_score),
                      callable(type(model).validation_epoch_end)]
except NotImplementedError as error:
    found["model"] = str(error)
plain = pl.Trainer(max_epochs=1, **options)
plain.fit(Plain())
found["plain"] = [type(c).__name__ for c in plain.callbacks]
print(json.dumps(found))
"""


def _run(env):
    result = run_python(code=CODE, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_1x_epoch_end_hooks_get_the_epoch_s_step_outputs():
    found = _run(clean_env(True))
    returned, received, best, still_a_method = found["model"]
    # training: per epoch, one dict per batch that returned one (batches 0 and 2 of 3)
    for epoch in (0, 1):
        steps = [[index, loss] for e, index, loss in returned["train"] if e == epoch]
        assert [index for index, _ in steps] == [0, 2]
        assert received["train"][epoch] == [[["index", "loss"], index, pytest.approx(loss), False]
                                            for index, loss in steps]
    assert len(received["train"]) == 2
    # validation: the sanity check (one batch per dataloader), then two epochs of two batches each
    runs = [(True, 1), (False, 2), (False, 2)]
    assert [sanity for sanity, _ in received["val"]] == [sanity for sanity, _ in runs]
    values = iter(returned["val"])
    expected_best = None
    for (sanity, batches), (got_sanity, outputs) in zip(runs, received["val"]):
        expected = [[], []]
        for _ in range(2 * batches):
            was_sanity, dataloader, batch, value = next(values)
            assert was_sanity is sanity
            expected[dataloader].append({"value": value, "where": [dataloader, batch]})
        assert outputs == expected  # a list per dataloader
        if not sanity:
            total = sum(o["value"] for o in expected[0])
            expected_best = total if expected_best is None else min(expected_best, total)
    assert best == pytest.approx(expected_best)  # what validation_epoch_end logged is monitored
    assert received["test"] == [[0, 2, 4]]  # one dataloader: a flat list
    assert still_a_method
    assert "EpochEndOutputs" not in found["plain"]  # a module without the hooks is untouched


def test_without_the_shim_lightning_2_refuses_the_hooks():
    for env in (clean_env(False), clean_env(True, COMPATFIX_DISABLE=SHIM)):
        found = _run(env)
        assert "Support for `training_epoch_end` has been removed in v2.0.0" in found["model"]
