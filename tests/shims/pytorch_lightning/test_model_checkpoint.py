"""ModelCheckpoint's 1.x keywords on Lightning 2.6: filepath= (1.0-1.1), prefix= (1.0-1.2)
and period= (1.0-1.4). The expected files are written from 1.x's documented rules, not from
the shim: filepath "DIR/{epoch}" is dirpath DIR and filename "{epoch}"; the prefix goes
before every name with "-" (1.x's CHECKPOINT_JOIN_CHAR), the last checkpoint's too
("run-last.ckpt"); period=2 saves after every second epoch (epochs 1 and 3 of 0..3)."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")  # pytorch-lightning 2.6.6

SHIM = "pytorch_lightning.callbacks.model_checkpoint.ModelCheckpoint.old_keywords"

CODE = r"""
import inspect, json, os, sys, tempfile
import torch
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint
from pytorch_lightning.callbacks.model_checkpoint import ModelCheckpoint as Same


class Tiny(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch[0]).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(4, 2)), batch_size=2)


root = tempfile.mkdtemp()
found = {"signature": sorted(set(inspect.signature(ModelCheckpoint).parameters) & {"filepath", "prefix", "period"}),
         "same_class": ModelCheckpoint is Same}
try:
    checkpoint = ModelCheckpoint(filepath=os.path.join(root, "{epoch}"), prefix="run", period=2, save_top_k=-1,
                                 save_last=True)
    trainer = pl.Trainer(max_epochs=4, accelerator="cpu", logger=False, enable_progress_bar=False,
                         enable_model_summary=False, callbacks=[checkpoint])
    trainer.fit(Tiny())
    found["files"] = sorted(os.listdir(root))
    # a folder as filepath is the dirpath, with the default names
    folder = tempfile.mkdtemp()
    found["folder"] = [ModelCheckpoint(filepath=folder).dirpath == folder, ModelCheckpoint(filepath=folder).filename]
    try:
        ModelCheckpoint(filepath=folder, dirpath=folder)
    except Exception as error:  # 1.x: filepath OR dirpath + filename
        found["both"] = type(error).__name__
except TypeError as error:
    found["error"] = str(error)
# today's call is unchanged
new = ModelCheckpoint(dirpath=root, filename="x-{step}", every_n_epochs=3)
found["new"] = [new.dirpath == root, new.filename, new._every_n_epochs, new.CHECKPOINT_NAME_LAST]
print(json.dumps(found))
"""


def _run(env):
    result = run_python(code=CODE, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_1x_keywords_save_where_and_when_1x_did():
    found = _run(clean_env(True))
    assert found["signature"] == ["filepath", "period", "prefix"] and found["same_class"]
    assert found["files"] == ["run-epoch=1.ckpt", "run-epoch=3.ckpt", "run-last.ckpt"]
    assert found["folder"] == [True, None]
    assert found["both"] == "MisconfigurationException"
    assert found["new"] == [True, "x-{step}", 3, "last"]


@pytest.mark.parametrize("env", [{"COMPATFIX": "0"}, {"COMPATFIX_DISABLE": SHIM}], ids=["off", "disabled"])
def test_without_the_shim_the_1x_keywords_are_refused(env):
    found = _run(clean_env(True, **env))
    assert found["signature"] == []
    assert "unexpected keyword argument 'filepath'" in found["error"]
    assert found["new"] == [True, "x-{step}", 3, "last"]
