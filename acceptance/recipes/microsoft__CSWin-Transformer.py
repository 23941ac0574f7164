"""microsoft/CSWin-Transformer, image classification (2021-22: a fork of timm's train.py on
timm 0.3.2, ``--amp`` through apex when it imports, ``torch.distributed.launch``, model EMA,
timm's CheckpointSaver). Sparse clone without dataset/ILSVRC2012_name_*.txt and teaser.png
(the mirror lacks those large files; the code reads them only for its memcached loader):
``git sparse-checkout set --no-cone '/*' '!dataset/ILSVRC2012_name_*.txt' '!teaser.png'``.

README's ``bash train.sh N …`` command for CSWin-T with its own options scaled down
(batch 2, one worker, 1 + 1 epochs, no warm-up), then its --resume and --eval_checkpoint
options. CSWin's split sizes need 224x224 inputs, so 32x32 images are resized by the
stock transforms.
"""

import synthetic
from zoo import Step

REPO = "microsoft/CSWin-Transformer"
FIELD = "classification"
STACKS = ["modern"]
CHECKPOINT = "train/**/checkpoint-*.pth.tar"
NOTES = ("Not yet: main.py always builds its datasets from the ImageNet name lists it tracks "
         "(dataset/ILSVRC2012_name_train.txt, _val.txt; McDataset, memcached or not), and the "
         "repository snapshot available to the zoo lacks those two large files, so the train step "
         "stops at FileNotFoundError before any compatibility question. Needs a full clone.")
INSTALLS = "einops (install_req.sh; its timm==0.3.4 pin is left at the stack's 0.3.2)"


def make_data(root):
    synthetic.image_folder(root, classes=2, per_class=4, size=32)


TRAIN = ["bash", "train.sh", "1", "--data", "{data}", "--model", "CSWin_64_12211_tiny_224", "-b", "2", "--lr", "2e-3",
         "--weight-decay", ".05", "--amp", "--img-size", "224", "--warmup-epochs", "0", "--model-ema-decay", "0.99984",
         "--drop-path", "0.2", "--num-classes", "2", "-j", "1"]

STEPS = [
    Step("train", TRAIN + ["--epochs", "1", "--output", "{out}/train"], expect=CHECKPOINT, expect_log=r"\*\*\* Best metric"),
    Step("resume", TRAIN + ["--epochs", "2", "--output", "{out}/resume", "--resume", "{checkpoint}"],
         expect="resume/**/checkpoint-1.pth.tar", expect_log=r"Restoring model state from checkpoint"),
    Step("evaluate", TRAIN + ["--eval_checkpoint", "{checkpoint}"], expect_log=r"Top-1 accuracy of the model is"),
]
