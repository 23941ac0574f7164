"""ashleve/lightning-hydra-template, the 2021-22 research template on pytorch-lightning 1.5
and hydra 1.1 (``pytorch_lightning.Trainer`` built by ``hydra.utils.instantiate``,
``Trainer(gpus=0, resume_from_checkpoint=...)``, torchmetrics 0.7, rich callbacks). Tested at
d25db15 (2022-02-19), when requirements.txt asked for pytorch-lightning>=1.5.10.

The README's ``python train.py`` (with its documented overrides ``trainer.max_epochs=...``
and ``+trainer.<flag>=...``) and ``python test.py ckpt_path=...``; the overrides are the
template's own config keys and hydra's: data_dir (MNIST's raw files, made tiny, with a
matching ``datamodule.train_val_test_split``), hydra.run.dir (outputs), a few batches, and
``trainer.resume_from_checkpoint`` for the resume.
"""

import synthetic
from zoo import Step

REPO = "ashleve/lightning-hydra-template"
FIELD = "classification (pytorch-lightning 1.x)"
STACKS = ["pl15"]
CHECKPOINT = "train/checkpoints/last.ckpt"
NOTES = ("Not yet: pytorch-lightning 1.5 does not run on Python 3.11. Its datamodule hooks record that setup ran "
         "in an attribute named with an f-string of the stage, `f\"_has_{name}_{stage}\"` "
         "(pytorch_lightning/core/datamodule.py:459), where the stage is a `TrainerFn`, a `str` mixin Enum "
         "(pytorch_lightning/utilities/enums.py:19). Python 3.11 formats such members as `TrainerFn.FITTING`, "
         "not `fit`, so the name read back was never set: AttributeError at the first `trainer.fit`. Needs: "
         "LightningEnum formatting as its value on Python >= 3.11, for pytorch-lightning < 1.6.")
# hydra-core 1.1.x does not import on Python 3.11 (its dataclass configs have mutable defaults,
# which Python 3.11's dataclasses refuse: ValueError at hydra/conf/__init__.py); the template's
# ``hydra-core>=1.1.0`` resolves to 1.3.2 today, which the recipe installs.
INSTALLS = ("pytorch-lightning 1.5.10, torchmetrics 0.7.3, pyDeprecate 0.3.1 (without their setuptools==59.5.0 "
            "pin), hydra-core 1.3.2 (requirements.txt: >=1.1.0; 1.1.x does not import on Python 3.11), "
            "hydra-colorlog 1.1.0, python-dotenv, rich, tensorboard (requirements.txt), "
            "into pl15, a copy of the modern venv")


def make_data(root):
    synthetic.mnist_raw(root, train=200, test=80)


SMALL = ["data_dir={data}", "datamodule.train_val_test_split=[200,40,40]", "datamodule.batch_size=8",
         "+trainer.limit_train_batches=4", "+trainer.limit_val_batches=2", "+trainer.limit_test_batches=2"]

STEPS = [
    Step("train", ["python", "train.py", "trainer.max_epochs=1", "hydra.run.dir={out}/train"] + SMALL,
         expect=CHECKPOINT, expect_log=r"test/acc"),
    Step("resume", ["python", "train.py", "trainer.max_epochs=2", "hydra.run.dir={out}/resume",
                    "trainer.resume_from_checkpoint={checkpoint}"] + SMALL,
         expect="resume/checkpoints/last.ckpt", expect_log=r"test/acc"),
    Step("evaluate", ["python", "test.py", "ckpt_path={checkpoint}", "hydra.run.dir={out}/evaluate",
                      "data_dir={data}", "datamodule.train_val_test_split=[200,40,40]", "datamodule.batch_size=8"],
         expect_log=r"test/acc"),
]
