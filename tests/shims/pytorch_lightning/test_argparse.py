"""Lightning 1.x's Trainer.add_argparse_args / from_argparse_args (and LightningDataModule's),
on Lightning 2.6: a real command line is parsed, and the Trainer's and the DataModule's
attributes are what those options ask for, read back from the objects Lightning built.

Expected values follow 1.x's documented parsing (pytorch_lightning/utilities/argparse.py):
``--flag`` alone is True, ``--flag false`` False, ``0.5`` of an int-or-float parameter is a
float, ``2`` an int, unknown keys of the namespace are ignored, keyword arguments win."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")  # pytorch-lightning 2.6.6

SHIMS = ("pytorch_lightning.trainer.argparse", "pytorch_lightning.core.datamodule.argparse")

CODE = r"""
import argparse, json, sys, tempfile
import pytorch_lightning as pl
import pytorch_lightning.trainer
from pytorch_lightning.accelerators import CPUAccelerator
from pytorch_lightning.callbacks import ModelSummary

found = {}
try:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)  # the script's own option
    parser = pytorch_lightning.trainer.Trainer.add_argparse_args(parser)
    root = tempfile.mkdtemp()
    args = parser.parse_args([
        "--lr", "0.5", "--accelerator", "cpu", "--devices", "1", "--max_epochs", "3",
        "--limit_train_batches", "0.5", "--limit_val_batches", "2", "--val_check_interval", "0.25",
        "--logger", "false", "--enable_progress_bar", "False", "--detect_anomaly", "--precision", "64",
        "--default_root_dir", root,
    ])
    trainer = pl.Trainer.from_argparse_args(args, enable_model_summary=False)
    found["trainer"] = {
        "max_epochs": trainer.max_epochs, "cpu": isinstance(trainer.accelerator, CPUAccelerator),
        "num_devices": trainer.num_devices,
        "limit_train_batches": [type(trainer.limit_train_batches).__name__, trainer.limit_train_batches],
        "limit_val_batches": [type(trainer.limit_val_batches).__name__, trainer.limit_val_batches],
        "val_check_interval": trainer.val_check_interval, "logger": trainer.logger,
        "progress_bar": trainer.progress_bar_callback, "detect_anomaly": trainer._detect_anomaly,
        "precision": trainer.precision, "default_root_dir": trainer.default_root_dir == root,
        "model_summary": any(isinstance(c, ModelSummary) for c in trainer.callbacks),
        "lr": args.lr,
    }
    help_text = parser.format_help()
    found["help"] = ["--max_epochs" in help_text, "--callbacks" in help_text, "pl.Trainer" in help_text]

    # from a parser: its argv is read, as 1.x's parse_argparser did
    sys.argv = ["train.py", "--max_steps", "7", "--accelerator", "cpu", "--logger", "false"]
    parser = pl.Trainer.add_argparse_args(argparse.ArgumentParser(), use_argument_group=False)
    found["from_parser"] = pl.Trainer.from_argparse_args(parser, enable_progress_bar=False).max_steps
except AttributeError as error:
    found["trainer_error"] = str(error)


class Data(pl.LightningDataModule):
    def __init__(self, data_dir: str = "./data", batch_size: int = 32, shuffle: bool = False, workers=0):
        super().__init__()
        self.data_dir, self.batch_size, self.shuffle, self.workers = data_dir, batch_size, shuffle, workers


try:
    parser = Data.add_argparse_args(argparse.ArgumentParser())
    args = parser.parse_args(["--batch_size", "8", "--shuffle"])
    data = Data.from_argparse_args(args, data_dir="/data")
    found["data"] = [data.data_dir, data.batch_size, data.shuffle, data.workers, hasattr(args, "workers")]
except AttributeError as error:
    found["data_error"] = str(error)
print(json.dumps(found))
"""


def _run(env):
    result = run_python(code=CODE, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_1x_command_line_builds_the_trainer_and_the_datamodule_it_asks_for():
    found = _run(clean_env(True))
    assert found["trainer"] == {
        "max_epochs": 3, "cpu": True, "num_devices": 1,
        "limit_train_batches": ["float", 0.5], "limit_val_batches": ["int", 2], "val_check_interval": 0.25,
        "logger": None, "progress_bar": None, "detect_anomaly": True, "precision": "64-true",
        "default_root_dir": True, "model_summary": False, "lr": 0.5,
    }
    # one option per parameter of a type a command line can give (not callbacks), in a group
    assert found["help"] == [True, False, True]
    assert found["from_parser"] == 7
    # the unannotated parameter gets no option (1.x skipped it), keywords override the namespace
    assert found["data"] == ["/data", 8, True, 0, False]


def test_without_the_shims_the_classes_have_no_argparse_methods():
    found = _run(clean_env(False))
    assert "has no attribute 'add_argparse_args'" in found["trainer_error"]
    assert "has no attribute 'add_argparse_args'" in found["data_error"]
    # each shim restores its own class's methods
    found = _run(clean_env(True, COMPATFIX_DISABLE=SHIMS[0]))
    assert "has no attribute 'add_argparse_args'" in found["trainer_error"] and found["data"][1] == 8
    found = _run(clean_env(True, COMPATFIX_DISABLE=SHIMS[1]))
    assert "data_error" in found and found["trainer"]["max_epochs"] == 3
