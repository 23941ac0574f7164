"""Meituan-AutoML/Twins, image classification (2021: the PVT/DeiT training code on timm
0.3.2, ``torch.distributed.launch --use_env``, RASampler, a termcolor logger).

README's training and evaluation commands; overrides are main.py's own options:
alt_gvt_small (Twins-SVT-S) on 32x32 images resized to 224 by the stock transforms,
batch 4, one worker, no warm-up, no repeated augmentation (RASampler keeps no sample of a
tiny set), 1 + 1 epochs. The evaluation gets --output_dir too: without it main.py writes
its log folder, named after the model, into the current directory (the clone).
"""

import synthetic
from zoo import Step

REPO = "Meituan-AutoML/Twins"
FIELD = "classification"
STACKS = ["modern"]
CHECKPOINT = "train/checkpoint.pth"
INSTALLS = "termcolor (requirements.txt)"


def make_data(root):
    synthetic.image_folder(root, classes=2, per_class=8, size=32)


SMALL = ["--model", "alt_gvt_small", "--batch-size", "4", "--data-path", "{data}",
         "--num_workers", "1", "--warmup-epochs", "0", "--no-repeated-aug"]
LAUNCH = ["python", "-m", "torch.distributed.launch", "--nproc_per_node=1", "--master_port={port}", "--use_env",
          "main.py"]

STEPS = [
    Step("train", LAUNCH + SMALL + ["--epochs", "1", "--output_dir", "{out}/train"],
         expect=CHECKPOINT, expect_log=r"Accuracy of the network on the \d+ test images"),
    Step("resume", LAUNCH + SMALL + ["--epochs", "2", "--output_dir", "{out}/resume", "--resume", "{checkpoint}"],
         expect="resume/checkpoint.pth", expect_log=r"Epoch: \[1\]"),
    Step("evaluate", ["python", "main.py", "--eval", "--resume", "{checkpoint}", "--model", "alt_gvt_small",
                      "--data-path", "{data}", "--num_workers", "1", "--batch-size", "4",
                      "--output_dir", "{out}/eval"],
         expect_log=r"Accuracy of the network on the \d+ test images"),
]
