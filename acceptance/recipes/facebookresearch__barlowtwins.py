"""facebookresearch/barlowtwins, Barlow Twins (2021: ``torch.multiprocessing.spawn`` over
``torch.cuda.device_count()`` GPUs with a fixed tcp rendezvous, nccl, SyncBatchNorm,
``torch.cuda.amp``, LARS, restart from ``checkpoint.pth`` in --checkpoint-dir). Tested at
8e8d284 (2022-02-22).

README's ``python main.py /path/to/imagenet/`` (run again into the same --checkpoint-dir
for the resume, as the script does by itself) and its linear evaluation
``python evaluate.py /path/to/imagenet/ /path/to/checkpoint/resnet50.pth --lr-classifier
0.3``. Overrides are the scripts' own options: a 32-32-32 projector (the ResNet-50 is
fixed), batch 4, one worker, 1 + 1 epochs, checkpoint folders under the output folder.
"""

import synthetic
from zoo import Step

REPO = "facebookresearch/barlowtwins"
FIELD = "self-supervised"
STACKS = ["modern"]
CHECKPOINT = "train/resnet50.pth"


def make_data(root):
    synthetic.image_folder(root, classes=2, per_class=4, size=32)


TRAIN = ["python", "main.py", "{data}", "--batch-size", "4", "--workers", "1", "--projector", "32-32-32",
         "--print-freq", "1", "--checkpoint-dir", "{out}/train"]

STEPS = [
    Step("train", TRAIN + ["--epochs", "1"], expect=CHECKPOINT, expect_log=r'"epoch": 0'),
    Step("resume", TRAIN + ["--epochs", "2"], expect=CHECKPOINT, expect_log=r'"epoch": 1'),
    Step("evaluate", ["python", "evaluate.py", "{data}", "{checkpoint}", "--lr-classifier", "0.3", "--epochs", "1",
                      "--batch-size", "4", "--workers", "1", "--print-freq", "1", "--checkpoint-dir", "{out}/lincls"],
         expect_log=r'"acc1"'),
]
