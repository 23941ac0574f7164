"""microsoft/Swin-Transformer, image classification (2021: timm 0.3.2, apex amp O1,
``torch.distributed.launch`` with ``--local_rank``, nccl). Test at the 2021 code: the
last commit before the apex -> torch.cuda.amp port, 86d4625 (2021-08-09).

The README's (get_started.md) training, resume and evaluation commands; every override is
one of main.py's own options (--cfg, --data-path, --batch-size, --output, --resume,
--eval, --opts KEY VALUE): a tiny Swin (embed 24, depths 1-1-1-1, window 4) on 32x32
images, one DataLoader worker, and 1 + 1 epochs.
"""

import synthetic
from zoo import Step

REPO = "microsoft/Swin-Transformer"
FIELD = "classification"
STACKS = ["modern"]
INSTALLS = "termcolor (get_started.md: `pip install opencv-python==4.4.0.46 termcolor==1.1.0 yacs==0.1.8`)"
CHECKPOINT = "train/**/ckpt_epoch_*.pth"


def make_data(root):
    synthetic.image_folder(root, classes=2, per_class=8, size=32)


TINY = [
    "--opts", "MODEL.SWIN.EMBED_DIM", "24", "MODEL.SWIN.DEPTHS", "[1, 1, 1, 1]",
    "MODEL.SWIN.NUM_HEADS", "[1, 1, 1, 1]", "MODEL.SWIN.WINDOW_SIZE", "4", "DATA.IMG_SIZE", "32",
    "DATA.NUM_WORKERS", "1", "TRAIN.WARMUP_EPOCHS", "0", "PRINT_FREQ", "1",
]
LAUNCH = ["python", "-m", "torch.distributed.launch", "--nproc_per_node", "1", "--master_port", "{port}",
          "main.py", "--cfg", "configs/swin_tiny_patch4_window7_224.yaml", "--data-path", "{data}",
          "--batch-size", "4"]

STEPS = [
    Step("train", LAUNCH + ["--output", "{out}/train"] + TINY + ["TRAIN.EPOCHS", "1"],
         expect=CHECKPOINT, expect_log=r"\* Acc@1"),
    Step("resume", LAUNCH + ["--output", "{out}/resume", "--resume", "{checkpoint}"] + TINY + ["TRAIN.EPOCHS", "2"],
         expect="resume/**/ckpt_epoch_1.pth", expect_log=r"Resuming form .*ckpt_epoch_0"),
    Step("evaluate", LAUNCH + ["--output", "{out}/eval", "--eval", "--resume", "{checkpoint}"] + TINY,
         expect_log=r"\* Acc@1"),
]
