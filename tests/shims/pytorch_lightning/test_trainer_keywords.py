"""Lightning 1.x's removed Trainer keywords on Lightning 2.6, read back from the Trainer that
2.6 built: its accelerator, device ids, strategy, callbacks and flags.

Expected values are 1.5's documented meanings (trainer.py's docstring and its connectors):
``gpus=2`` / ``"0,1"`` / ``[1, 3]`` / ``-1`` are two GPUs, ids 0 and 1, ids 1 and 3, all; ``"3"``
a count; several GPUs or processes without a backend run ``ddp_spawn``; ``accelerator="ddp_cpu"``
spawns ``num_processes`` CPU processes; ``progress_bar_refresh_rate=0`` means no bar;
``weights_summary=None`` no summary, ``"full"`` every layer. The GPU cases run on this CPU
machine with CUDA's availability and device count mocked: the Trainer is built, not fitted.
The training cases fit a tiny model on the CPU for two epochs and compare what the keyword
did (the resumed epoch, the logged gradient norm, the NaN stop) with values computed here."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")  # pytorch-lightning 2.6.6

SHIM = "pytorch_lightning.trainer.removed_keywords"

BUILD = r"""
import argparse, json, warnings
from unittest import mock
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelSummary, TQDMProgressBar

options = dict(logger=False)
found = {}


def describe(trainer):
    return {"accelerator": type(trainer.accelerator).__name__, "ids": trainer.device_ids,
            "strategy": type(trainer.strategy).__name__,
            "start": getattr(getattr(trainer.strategy, "_launcher", None), "_start_method", None)}


def attempt(key, make):
    try:
        found[key] = make()
    except Exception as error:
        found[key] = "%s: %s" % (type(error).__name__, str(error).split(chr(10))[0])


cuda = [mock.patch("lightning_fabric.accelerators.cuda.num_cuda_devices", return_value=4),
        mock.patch("torch.cuda.is_available", return_value=True),
        mock.patch("pytorch_lightning.accelerators.cuda.CUDAAccelerator.is_available", return_value=True)]
for patch in cuda:
    patch.start()
for gpus in (2, "0,1", [1, 3], -1, "3", 1):
    attempt("gpus=%r" % (gpus,), lambda: describe(pl.Trainer(gpus=gpus, **options)))
attempt("gpus+ddp", lambda: describe(pl.Trainer(gpus=2, distributed_backend="ddp", **options)))
attempt("gpus+accelerator=ddp", lambda: describe(pl.Trainer(gpus=2, accelerator="ddp", **options)))
attempt("gpus+devices", lambda: describe(pl.Trainer(gpus=2, devices=[3], **options)))  # 2.x keyword wins
attempt("dp one gpu", lambda: describe(pl.Trainer(gpus=1, accelerator="dp", **options)))
attempt("dp two gpus", lambda: describe(pl.Trainer(gpus=2, accelerator="dp", **options)))
attempt("apex O1", lambda: pl.Trainer(gpus=1, precision=16, amp_backend="apex", amp_level="O1", **options).precision)
attempt("apex O2", lambda: pl.Trainer(gpus=1, precision=16, amp_backend="apex", **options).precision)
for patch in cuda:
    patch.stop()

attempt("gpus=0", lambda: describe(pl.Trainer(gpus=0, **options)))
attempt("num_processes", lambda: describe(pl.Trainer(num_processes=3, **options)))
attempt("ddp_cpu", lambda: describe(pl.Trainer(accelerator="ddp_cpu", num_processes=2, **options)))
attempt("accelerator=ddp", lambda: describe(pl.Trainer(accelerator="ddp", **options)))
attempt("ddp2", lambda: describe(pl.Trainer(distributed_backend="ddp2", **options)))


def bar(trainer):
    callback = trainer.progress_bar_callback
    return None if callback is None else [type(callback).__name__, callback.refresh_rate]


attempt("bar 7", lambda: bar(pl.Trainer(progress_bar_refresh_rate=7, **options)))
attempt("bar 0", lambda: bar(pl.Trainer(progress_bar_refresh_rate=0, **options)))
attempt("bar 0, enabled", lambda: bar(pl.Trainer(progress_bar_refresh_rate=0, enable_progress_bar=True, **options)))
attempt("bar 7, own bar", lambda: bar(pl.Trainer(progress_bar_refresh_rate=7, callbacks=[TQDMProgressBar(3)],
                                                 **options)))
attempt("checkpoint_callback", lambda: pl.Trainer(checkpoint_callback=False, **options).checkpoint_callback)


def summaries(trainer):
    return [[type(c).__name__, c._max_depth] for c in trainer.callbacks if isinstance(c, ModelSummary)]


attempt("summary None", lambda: summaries(pl.Trainer(weights_summary=None, **options)))
attempt("summary full", lambda: summaries(pl.Trainer(weights_summary="full", **options)))
attempt("replace_sampler_ddp", lambda: pl.Trainer(replace_sampler_ddp=False, **options)
        ._accelerator_connector.use_distributed_sampler)
attempt("reload_dataloaders_every_epoch", lambda: pl.Trainer(reload_dataloaders_every_epoch=True, **options)
        .reload_dataloaders_every_n_epochs)
attempt("callbacks", lambda: [type(c).__name__ for c in pl.Trainer(
    terminate_on_nan=True, track_grad_norm=2, stochastic_weight_avg=True, **options).callbacks][:3])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        attempt("dropped", lambda: describe(pl.Trainer(flush_logs_every_n_steps=10, move_metrics_to_cpu=True,
                                                       log_gpu_memory="all", prepare_data_per_node=False, **options)))
    found["warnings"] = sorted(str(w.message).split("(", 2)[2].split("=")[0] for w in caught
                               if "compatfix" in str(w.message))
# 1.x defaults, as from_argparse_args passes them, change nothing; nor do 2.x calls
plain = pl.Trainer(**options)
found["today"] = [describe(plain), [type(c).__name__ for c in plain.callbacks]]


def with_1x_defaults():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer = pl.Trainer(gpus=None, num_processes=1, weights_summary="top", track_grad_norm=-1.0,
                             prepare_data_per_node=True, checkpoint_callback=True, amp_level="O2", **options)
    return [describe(trainer), [type(c).__name__ for c in trainer.callbacks],
            [str(w.message) for w in caught if "compatfix" in str(w.message)]] == found["today"] + [[]]


attempt("defaults", with_1x_defaults)


def from_command_line():
    parser = pl.Trainer.add_argparse_args(argparse.ArgumentParser())
    args = parser.parse_args(["--gpus", "0", "--progress_bar_refresh_rate", "0", "--max_epochs", "2"])
    trainer = pl.Trainer.from_argparse_args(args, **options)
    return [describe(trainer)["accelerator"], bar(trainer), trainer.max_epochs]


try:
    attempt("argparse", from_command_line)
except SystemExit:
    found["argparse"] = "SystemExit"
print(json.dumps(found))
"""

TRAIN = r"""
import json, math, os, tempfile
import torch
import pytorch_lightning as pl
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(8, 3), torch.randn(8, 1))


class Model(pl.LightningModule):
    def __init__(self, poison=False):
        super().__init__()
        self.layer = torch.nn.Linear(3, 1)
        self.poison = poison

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        return loss * float("nan") if self.poison and self.current_epoch == 1 else loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)

    def train_dataloader(self):
        return DataLoader(data, batch_size=4)


class Record(pl.Callback):
    def __init__(self):
        self.epochs, self.norms = [], []

    def on_train_epoch_start(self, trainer, module):
        self.epochs.append(trainer.current_epoch)

    def on_before_optimizer_step(self, trainer, module, optimizer):
        grads = [p.grad.detach().flatten() for p in module.parameters()]
        self.norms.append(float(torch.linalg.vector_norm(torch.cat(grads), 2)))


root = tempfile.mkdtemp()
options = dict(logger=False, enable_progress_bar=False, enable_model_summary=False, default_root_dir=root)
found = {}
try:
    first = pl.Trainer(max_epochs=1, **options)
    first.fit(Model())
    path = os.path.join(root, "epoch0.ckpt")
    first.save_checkpoint(path)
    record = Record()
    trainer = pl.Trainer(max_epochs=2, resume_from_checkpoint=path, callbacks=[record], **options)
    trainer.fit(Model())
    found["resumed"] = [record.epochs, trainer.global_step]
    record = Record()
    trainer = pl.Trainer(max_epochs=2, track_grad_norm=2, callbacks=[record], **options)
    trainer.fit(Model())
    logged = trainer.callback_metrics
    found["grad_norm"] = [float(logged["grad_2.0_norm_total_step"]), record.norms[-1],
                          sorted(k for k in logged if k.startswith("grad_2.0_norm_layer"))]
    try:
        trainer = pl.Trainer(max_epochs=2, terminate_on_nan=True, **options)
        trainer.fit(Model(poison=True))
        found["nan"] = ["trained on", trainer.current_epoch]
    except ValueError as error:
        found["nan"] = [str(error), trainer.current_epoch]
    trainer = pl.Trainer(max_epochs=2, stochastic_weight_avg=True, **options)
    trainer.fit(Model())
    swa = trainer.callbacks[0]
    found["swa"] = [type(swa).__name__, swa._swa_lrs, swa._initialized]
except TypeError as error:
    found["error"] = str(error)
print(json.dumps(found))
"""


def _run(code, env):
    result = run_python(code=code, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_1x_keywords_build_the_trainer_they_asked_for():
    found = _run(BUILD, clean_env(True))
    spawn = {"accelerator": "CUDAAccelerator", "strategy": "DDPStrategy", "start": "spawn"}
    assert found["gpus=2"] == dict(spawn, ids=[0, 1])
    assert found["gpus='0,1'"] == dict(spawn, ids=[0, 1])
    assert found["gpus=[1, 3]"] == dict(spawn, ids=[1, 3])
    assert found["gpus=-1"] == dict(spawn, ids=[0, 1, 2, 3])
    assert found["gpus='3'"] == dict(spawn, ids=[0, 1, 2])
    single = {"accelerator": "CUDAAccelerator", "strategy": "SingleDeviceStrategy", "start": None}
    assert found["gpus=1"] == dict(single, ids=[0])
    assert found["gpus+ddp"] == dict(spawn, ids=[0, 1], start=None)  # 2.x's "ddp" runs the script again per device
    assert found["gpus+accelerator=ddp"] == found["gpus+ddp"]
    assert found["gpus+devices"] == dict(single, ids=[3])
    assert found["dp one gpu"] == dict(single, ids=[0])
    assert "'dp' (DataParallel) over several devices was removed" in found["dp two gpus"]
    assert found["apex O1"] == "16-mixed"
    assert "amp_backend='apex' at level O2 was removed" in found["apex O2"]
    cpu = {"accelerator": "CPUAccelerator", "start": None, "strategy": "SingleDeviceStrategy", "ids": [0]}
    assert found["gpus=0"] == cpu
    assert found["num_processes"] == dict(cpu, strategy="DDPStrategy", start="spawn", ids=[0, 1, 2])
    assert found["ddp_cpu"] == dict(cpu, strategy="DDPStrategy", start="spawn", ids=[0, 1])
    assert found["accelerator=ddp"] == dict(cpu, strategy="DDPStrategy")  # 1.x: ddp on the CPU, no GPU asked
    assert "'ddp2' has no Lightning 2.x counterpart" in found["ddp2"]
    assert found["bar 7"] == ["TQDMProgressBar", 7]
    assert found["bar 0"] is None
    assert found["bar 0, enabled"] is not None  # the 2.x keyword the call gives wins
    assert found["bar 7, own bar"] == ["TQDMProgressBar", 3]  # 1.x: a bar among the callbacks is the one
    assert found["checkpoint_callback"] is None
    assert found["summary None"] == []
    assert found["summary full"] == [["ModelSummary", -1]]
    assert found["replace_sampler_ddp"] is False
    assert found["reload_dataloaders_every_epoch"] == 1
    assert found["callbacks"] == ["SWAAtOptimizerLrs", "TerminateOnNan", "TrackGradNorm"]
    assert found["dropped"] == cpu  # dropped, each warned about once
    assert found["warnings"] == ["flush_logs_every_n_steps", "log_gpu_memory", "move_metrics_to_cpu",
                                 "prepare_data_per_node"]
    assert found["defaults"] is True
    assert found["argparse"] == ["CPUAccelerator", None, 2]


def test_today_s_trainer_is_unchanged_by_the_shim():
    on = _run(BUILD, clean_env(True))
    off = _run(BUILD, clean_env(True, COMPATFIX_DISABLE=SHIM))
    assert on["today"] == off["today"]


def test_without_the_shim_the_1x_keywords_are_rejected():
    for env in (clean_env(False), clean_env(True, COMPATFIX_DISABLE=SHIM)):
        found = _run(BUILD, env)
        for key in ("gpus=2", "gpus=0", "num_processes", "bar 7", "checkpoint_callback", "summary None", "dropped",
                    "callbacks"):
            assert "unexpected keyword argument" in found[key], (key, found[key])
        assert "invalid accelerator name" in found["accelerator=ddp"]
    assert found["argparse"] == "SystemExit"  # --gpus is no option of today's Trainer


def test_the_1x_keywords_train_as_they_did():
    found = _run(TRAIN, clean_env(True))
    # resumed from the end of epoch 0: only epoch 1 runs, and the step count goes on from 2
    assert found["resumed"] == [[1], 4]
    logged, computed, names = found["grad_norm"]
    assert logged == pytest.approx(computed, rel=1e-5)
    assert {"grad_2.0_norm_layer.bias_step", "grad_2.0_norm_layer.weight_epoch"} <= set(names)
    message, epoch = found["nan"]
    assert message == "The loss returned in `training_step` is nan." and epoch == 1
    assert found["swa"] == ["SWAAtOptimizerLrs", [0.05], True]  # 1.x: the optimizer's lr


def test_without_the_shim_training_with_1x_keywords_fails():
    found = _run(TRAIN, clean_env(True, COMPATFIX_DISABLE=SHIM))
    assert "unexpected keyword argument 'resume_from_checkpoint'" in found["error"]


# 1.x's dataloaders keywords; the expected losses are computed here with torch
EVALUATE = r"""
import json, tempfile
import torch
import pytorch_lightning as pl
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x, y = torch.randn(8, 3), torch.randn(8, 1)


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        return torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.0)  # lr 0: the losses below stay those computed here

    def test_step(self, batch, batch_idx):
        self.log("test_loss", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))


model = Model()
loader = DataLoader(TensorDataset(x, y), batch_size=8)
trainer = pl.Trainer(logger=False, enable_progress_bar=False, enable_model_summary=False,
                     default_root_dir=tempfile.mkdtemp(), max_epochs=1, enable_checkpointing=False)
found = {"expected": float(((model.layer(x) - y) ** 2).mean())}
for name, call in (("fit", lambda: [trainer.fit(model, train_dataloader=loader), trainer.global_step][1]),
                   ("test", lambda: trainer.test(model, test_dataloaders=loader, verbose=False)[0]["test_loss"]),
                   ("validate", lambda: trainer.validate(model, val_dataloaders=loader, verbose=False)[0]["val_loss"])):
    try:
        found[name] = call()
    except TypeError as error:
        found[name] = str(error)
print(json.dumps(found))
"""


def test_fit_test_and_validate_take_their_1x_dataloaders_keywords():
    found = _run(EVALUATE, clean_env(True))
    assert found["fit"] == 1  # one batch of 8, one epoch
    assert found["test"] == pytest.approx(found["expected"], rel=1e-5)
    assert found["validate"] == pytest.approx(found["expected"], rel=1e-5)
    for env in (clean_env(False), clean_env(True, COMPATFIX_DISABLE="pytorch_lightning.trainer.dataloaders_keywords")):
        found = _run(EVALUATE, env)
        assert "unexpected keyword argument 'train_dataloader'" in found["fit"]
        assert "unexpected keyword argument 'test_dataloaders'" in found["test"]
        assert "unexpected keyword argument 'val_dataloaders'" in found["validate"]
