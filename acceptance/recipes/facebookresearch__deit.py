"""facebookresearch/deit, image classification (2021: timm 0.3.2, torch.cuda.amp,
``torch.distributed.launch --use_env``, RASampler). Tested at e6b10b5 (2021-06-18).

README_deit.md's training and evaluation commands; overrides are main.py's own options:
deit_tiny_patch16_224 (its model builder takes no image size, so 32x32 images are resized
to 224 by the stock transforms), batch 4, one worker, no warm-up, no repeated augmentation,
1 + 1 epochs.
"""

import synthetic
from zoo import Step

REPO = "facebookresearch/deit"
FIELD = "classification"
STACKS = ["modern"]
CHECKPOINT = "train/checkpoint.pth"


def make_data(root):
    synthetic.image_folder(root, classes=2, per_class=8, size=32)


SMALL = ["--model", "deit_tiny_patch16_224", "--batch-size", "4", "--data-path", "{data}",
         "--num_workers", "1", "--warmup-epochs", "0",
         # RASampler keeps floor(len/256)*256 samples: none of a tiny set (a ZeroDivisionError)
         "--no-repeated-aug"]
LAUNCH = ["python", "-m", "torch.distributed.launch", "--nproc_per_node=1", "--master_port={port}", "--use_env",
          "main.py"]

STEPS = [
    Step("train", LAUNCH + SMALL + ["--epochs", "1", "--output_dir", "{out}/train"],
         expect=CHECKPOINT, expect_log=r"Accuracy of the network on the \d+ test images"),
    Step("resume", LAUNCH + SMALL + ["--epochs", "2", "--output_dir", "{out}/resume", "--resume", "{checkpoint}"],
         expect="resume/checkpoint.pth", expect_log=r"Epoch: \[1\]"),
    Step("evaluate", ["python", "main.py", "--eval", "--resume", "{checkpoint}", "--model", "deit_tiny_patch16_224",
                      "--data-path", "{data}", "--num_workers", "1", "--batch-size", "4"],
         expect_log=r"Accuracy of the network on the \d+ test images"),
]
