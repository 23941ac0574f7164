"""facebookresearch/ConvNeXt, image classification (2022: timm 0.3.2, torch.cuda.amp
NativeScaler, ``torch.distributed.launch``, ``torch._six``, tensorboardX).

TRAINING.md's single-machine command and README.md's evaluation command; overrides are
main.py's own options: convnext_tiny on 32x32 images (its stem and downsamplers reduce
32 -> 1), batch 4, one worker, no warm-up, 1 + 1 epochs.
"""

import synthetic
from zoo import Step

REPO = "facebookresearch/ConvNeXt"
FIELD = "classification"
STACKS = ["modern"]
CHECKPOINT = "train/checkpoint-[0-9]*.pth"  # not checkpoint-best.pth, which it refuses to resume
INSTALLS = "tensorboardX (its requirements: `pip install timm==0.3.2 tensorboardX six`)"


def make_data(root):
    synthetic.image_folder(root, classes=2, per_class=8, size=32)


SMALL = ["--model", "convnext_tiny", "--drop_path", "0.1", "--batch_size", "4", "--lr", "4e-3",
         "--update_freq", "1", "--input_size", "32", "--num_workers", "1", "--warmup_epochs", "0",
         "--data_path", "{data}"]
LAUNCH = ["python", "-m", "torch.distributed.launch", "--nproc_per_node=1", "--master_port={port}", "main.py"]

STEPS = [
    Step("train", LAUNCH + SMALL + ["--epochs", "1", "--output_dir", "{out}/train"],
         expect=CHECKPOINT, expect_log=r"Accuracy of the model on the \d+ test images"),
    Step("resume", LAUNCH + SMALL + ["--epochs", "2", "--output_dir", "{out}/resume", "--resume", "{checkpoint}"],
         expect="resume/checkpoint-1.pth", expect_log=r"Resume checkpoint"),
    Step("evaluate", ["python", "main.py", "--model", "convnext_tiny", "--eval", "true", "--resume", "{checkpoint}",
                      "--input_size", "32", "--drop_path", "0.1", "--data_path", "{data}", "--num_workers", "1",
                      "--batch_size", "4"],
         expect_log=r"Accuracy of the network on \d+ test images"),
]
