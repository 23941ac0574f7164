"""whai362/PVT (v2 branch), image classification (2021-22: the DeiT training code on timm
0.3.2 with mmcv 1.3.8's Config for its model configs, ``torch.distributed.launch
--use_env``). WORKDIR classification/.

README's ``sh dist_train.sh CONFIG GPUS ...`` commands for training and for evaluation
(--resume ... --eval), run with bash: dist_train.sh uses ``${@:3}``, a bash expansion
that dash (/bin/sh here) rejects ("Bad substitution"), a repository bug unrelated to
compatibility. The model config is configs/pvt_v2/pvt_v2_b0.py's own settings
(model, drop_path, clip_grad) in a copy whose output_dir points at the scratch folder:
main.py lets the config override --output_dir, and the shipped one
(checkpoints/pvt_v2_b0, relative) would write into the clone. Overrides are main.py's
own options: batch 8, one worker, no warm-up, 1 + 1 epochs; 32x32 images resized to 224
by the stock transforms. Repeated augmentation stays on (main.py's default): its other
sampler branch passes ``num_replicas=0`` to DistributedSampler (hard-coded at this commit,
on both branches), which no torch accepts (1.7 divides by it; 1.8+ raises "Invalid rank
0"). RASampler keeps floor(n/256)*256 samples, hence 256 training images.
"""

import os

import synthetic
from zoo import Step

REPO = "whai362/PVT"
FIELD = "classification"
STACKS = ["modern"]
WORKDIR = "classification"
CHECKPOINT = "train/checkpoint.pth"
NOTES = ("timm 0.3.2's RandAugment (main.py's default `--aa rand-m9-mstd0.5-inc1`) calls "
         "`PIL.ImageOps.posterize(img, 0)` when the sampled level rounds to 0 bits; Pillow 13 "
         "raises `ValueError: bits must be between or equal to 1 and 8`, where older Pillow "
         "returned the image with every channel zeroed. A 256-image epoch meets it. The shim "
         "`PIL.ImageOps.posterize_zero_bits` (found by this recipe) restores the old result.")


def make_data(root):
    synthetic.image_folder(root, classes=2, per_class=128, size=32, splits=("train",))
    synthetic.image_folder(root, classes=2, per_class=4, size=32, splits=("val",))
    out = os.path.join(os.path.dirname(root), "out")
    for name in ("train", "resume", "eval"):
        with open(os.path.join(root, "pvt_v2_b0_%s.py" % name), "w") as config:
            config.write("cfg = dict(model='pvt_v2_b0', drop_path=0.1, clip_grad=None, output_dir=%r)\n"
                         % os.path.join(out, name))


SMALL = ["--data-path", "{data}", "--batch-size", "8", "--num_workers", "1", "--warmup-epochs", "0"]

STEPS = [
    Step("train", ["bash", "dist_train.sh", "{data}/pvt_v2_b0_train.py", "1"] + SMALL + ["--epochs", "1"],
         expect=CHECKPOINT, expect_log=r"Accuracy of the network on the \d+ test images"),
    Step("resume", ["bash", "dist_train.sh", "{data}/pvt_v2_b0_resume.py", "1"] + SMALL
         + ["--epochs", "2", "--resume", "{checkpoint}"],
         expect="resume/checkpoint.pth", expect_log=r"Epoch: \[1\]"),
    Step("evaluate", ["bash", "dist_train.sh", "{data}/pvt_v2_b0_eval.py", "1"] + SMALL
         + ["--resume", "{checkpoint}", "--eval"],
         expect_log=r"Accuracy of the network on the \d+ test images"),
]
