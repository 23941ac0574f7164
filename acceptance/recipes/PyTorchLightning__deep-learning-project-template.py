"""PyTorchLightning/deep-learning-project-template, the Lightning team's 2020 seed for
research code (pytorch-lightning 1.0: ``Trainer.add_argparse_args`` /
``from_argparse_args``, ``self.log``, ``trainer.test(test_dataloaders=...)``). Tested at
faef5bb (2020-10-08).

The README's ``cd project; python lit_classifier_main.py``: at this commit the MNIST
example it means is project/lit_mnist.py. Its MNIST goes to the current folder (root '',
``download=True``), so the commands run from the synthetic data folder, which holds
MNIST's raw files (60000 training images: the script splits 55000 + 5000). Overrides are
Lightning's own Trainer options that the script exposes: a few batches per epoch, output
under --default_root_dir, and ``--resume_from_checkpoint`` for the resume.
"""

import synthetic
from zoo import Step

REPO = "PyTorchLightning/deep-learning-project-template"
FIELD = "classification (pytorch-lightning 1.x)"
STACKS = ["pl1"]
WORKDIR = "project"
RUN_FROM = "{data}"
CHECKPOINT = "train/**/*.ckpt"
NOTES = ("Not yet: training works (an epoch, validation, a checkpoint), then `trainer.test()` reloads the best "
         "checkpoint and compatfix refuses it (torch's weights-only load: a Lightning callback object in it). "
         "Lightning 1.0 writes checkpoints through an in-memory buffer (`torch.save` into `io.BytesIO`, then "
         "fsspec writes the bytes: pytorch_lightning/utilities/cloud_io.py, atomic_save), so compatfix never "
         "sees the save and does not trust the file as the user's own. Needs: trusting saves made through a "
         "buffer or a file object.")
INSTALLS = ("pytorch-lightning 1.0.8 (requirements.txt: `pytorch-lightning >= 1.0.0rc2`; the 2020 release line), "
            "future and tensorboard, into pl1, a copy of the modern venv")


def make_data(root):
    synthetic.mnist_raw(root)


SMALL = ["--batch_size", "8", "--limit_train_batches", "4", "--limit_val_batches", "2",
         "--limit_test_batches", "2"]

STEPS = [
    Step("train", ["python", "{repo}/lit_mnist.py"] + SMALL + ["--max_epochs", "1", "--default_root_dir", "{out}/train"],
         expect=CHECKPOINT, expect_log=r"test_loss"),
    Step("resume", ["python", "{repo}/lit_mnist.py"] + SMALL + [
        "--max_epochs", "2", "--default_root_dir", "{out}/resume", "--resume_from_checkpoint", "{checkpoint}"],
         expect="resume/**/epoch=1*.ckpt", expect_log=r"test_loss"),
]
