"""1.x names on Lightning 2.6 that the corpus scan still found after the first round:
``pytorch_lightning.cluster_environments`` (1.0-1.1's home of the cluster environments, the
same classes as ``plugins.environments`` today), and ``loggers.LoggerCollection`` (1.5's
class: a tiny model trained through a collection of two CSV loggers writes every logged value
to both, as each logger alone would)."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")  # pytorch-lightning 2.6.6

SHIMS = ("pytorch_lightning.cluster_environments", "pytorch_lightning.loggers.LoggerCollection")

CODE = r"""
import csv, glob, json, os, tempfile
import torch
import pytorch_lightning as pl
from pytorch_lightning.loggers import CSVLogger
from pytorch_lightning.plugins import environments
from torch.utils.data import DataLoader, TensorDataset

found = {}
try:
    from pytorch_lightning.cluster_environments import SLURMEnvironment, TorchElasticEnvironment

    found["environments"] = [TorchElasticEnvironment is environments.TorchElasticEnvironment,
                             SLURMEnvironment is environments.SLURMEnvironment,
                             pl.cluster_environments.TorchElasticEnvironment is TorchElasticEnvironment]
except ImportError as error:
    found["environments"] = str(error)


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(3, 1)
        self.logged = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        self.logged.append(round(float(loss), 6))
        self.log("train_loss", loss, on_step=True, on_epoch=False)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

    def train_dataloader(self):
        torch.manual_seed(0)
        return DataLoader(TensorDataset(torch.randn(12, 3), torch.randn(12, 1)), batch_size=4)


try:
    from pytorch_lightning.loggers import LoggerCollection

    roots = [tempfile.mkdtemp(), tempfile.mkdtemp()]
    loggers = [CSVLogger(roots[0], name="a"), CSVLogger(roots[1], name="b")]
    collection = LoggerCollection(loggers)
    model = Model()
    trainer = pl.Trainer(max_epochs=2, logger=collection, log_every_n_steps=1, enable_progress_bar=False,
                         enable_model_summary=False, enable_checkpointing=False)
    trainer.fit(model)
    written = []
    for root in roots:
        with open(glob.glob(os.path.join(root, "*", "*", "metrics.csv"))[0]) as handle:
            written.append([round(float(row["train_loss"]), 6) for row in csv.DictReader(handle) if row["train_loss"]])
    found["collection"] = [model.logged, written, collection.name, collection.version,
                           len(collection.experiment), collection[1] is loggers[1]]
except ImportError as error:
    found["collection"] = str(error)
print(json.dumps(found))
"""


def _run(env):
    result = run_python(code=CODE, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_1x_names_are_today_s_classes_and_1x_s_collection():
    found = _run(clean_env(True))
    assert found["environments"] == [True, True, True]
    logged, written, name, version, experiments, indexed = found["collection"]
    assert len(logged) == 6 and written == [logged, logged]  # every logged value, in each logger
    assert [name, version, experiments, indexed] == ["a_b", "0_0", 2, True]


def test_without_the_shims_the_names_are_missing():
    found = _run(clean_env(False))
    assert "No module named 'pytorch_lightning.cluster_environments'" in found["environments"]
    assert "cannot import name 'LoggerCollection'" in found["collection"]
    found = _run(clean_env(True, COMPATFIX_DISABLE=SHIMS[1]))
    assert found["environments"] == [True, True, True] and "LoggerCollection" in found["collection"]
