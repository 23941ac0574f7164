"""facebookresearch/swav, self-supervised ResNet-50 (2020-21: apex ``amp`` O1 with
``--use_fp16 true``, apex's LARC optimizer wrapper, ``torch.distributed.launch``, nccl,
``torch.cuda.set_device``, pandas for its training statistics). Tested at 06b1b7c
(2021-09-21), the repository's last commit.

README's single-node training command and its linear evaluation (eval_linear.py);
overrides are main_swav.py's and eval_linear.py's own options: a small head (hidden 64,
features 16, 10 prototypes), 2 crops of 64 px, batch 2, one worker, 1 + 1 epochs
(training again into the same --dump_path resumes from its checkpoint.pth.tar), and
--dump_path in the scratch folder (its default is the current directory, the clone).
"""

import os

import synthetic
from zoo import Step

REPO = "facebookresearch/swav"
FIELD = "self-supervised"
STACKS = ["modern"]
CHECKPOINT = "train/checkpoint.pth.tar"
INSTALLS = "pandas (README: \"Other dependencies: scipy, pandas, numpy\")"


def make_data(root):
    synthetic.image_folder(root, classes=2, per_class=4, size=32)
    # The user's `mkdir`: both scripts write into --dump_path and create only its subfolders.
    for name in ("train", "eval"):
        os.makedirs(os.path.join(os.path.dirname(root), "out", name))


LAUNCH = ["python", "-m", "torch.distributed.launch", "--nproc_per_node=1", "--master_port={port}"]
TRAIN = LAUNCH + ["main_swav.py", "--data_path", "{data}/train", "--base_lr", "0.6", "--final_lr", "0.0006",
                  "--warmup_epochs", "0", "--batch_size", "2", "--size_crops", "64", "--nmb_crops", "2",
                  "--min_scale_crops", "0.14", "--max_scale_crops", "1.", "--use_fp16", "true",
                  "--freeze_prototypes_niters", "1", "--queue_length", "0", "--epoch_queue_starts", "15",
                  "--hidden_mlp", "64", "--feat_dim", "16", "--nmb_prototypes", "10", "--workers", "1",
                  "--dump_path", "{out}/train"]

STEPS = [
    Step("train", TRAIN + ["--epochs", "1"], expect=CHECKPOINT, expect_log=r"Starting epoch 0"),
    Step("resume", TRAIN + ["--epochs", "2"], expect="train/checkpoints/ckp-1.pth",
         expect_log=r"Found checkpoint at .*checkpoint.pth.tar"),
    Step("evaluate", LAUNCH + ["eval_linear.py", "--data_path", "{data}", "--pretrained", "{checkpoint}",
                               "--epochs", "1", "--batch_size", "2", "--workers", "1", "--dump_path", "{out}/eval"],
         expect_log=r"Test:.*Acc@1"),
]

NOTES = ("Found two breakages, now shims: `from apex.parallel.LARC import LARC` (the apex stand-in had no "
         "LARC, and its apex.parallel was no package: `apex.parallel.LARC`), and eval_linear.py's top-k "
         "accuracy, `correct[:k].view(-1)` on `pred.t().eq(...)`, which torch >= 1.7 refuses because "
         "comparison results follow their input's transposed strides (`torch.comparisons_contiguous`).")
