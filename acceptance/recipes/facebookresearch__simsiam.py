"""facebookresearch/simsiam, SimSiam (2021: ``mp.spawn`` with
``--multiprocessing-distributed``, nccl, SyncBatchNorm, the predictor's fixed lr, the linear
head's LARS). Tested at a7bc177 (2021-06-19).

README's pre-training command (with ``--fix-pred-lr``), the same with ``--resume``, and its
linear classification (``--pretrained``, ``--lars``). Overrides are the scripts' own
options: ResNet-18 (``-a``), a 32-d projector with an 8-d predictor, batch 4, one worker,
1 + 1 epochs, the rendezvous on a free local port. Run from the output folder (RUN_FROM):
both scripts save their checkpoints into the current folder with no option to move them.
"""

import synthetic
from zoo import Step

REPO = "facebookresearch/simsiam"
FIELD = "self-supervised"
STACKS = ["modern"]
RUN_FROM = "{out}"
CHECKPOINT = "checkpoint_*.pth.tar"


def make_data(root):
    synthetic.image_folder(root, classes=2, per_class=4, size=32)


DIST = ["--dist-url", "tcp://localhost:{port}", "--multiprocessing-distributed", "--world-size", "1", "--rank", "0"]
PRETRAIN = ["python", "{repo}/main_simsiam.py", "-a", "resnet18", "--fix-pred-lr", "--dim", "32", "--pred-dim", "8",
            "-b", "4", "-j", "1", "-p", "1"] + DIST

STEPS = [
    Step("train", PRETRAIN + ["--epochs", "1", "{data}"], expect="checkpoint_0000.pth.tar",
         expect_log=r"Epoch: \[0\]"),
    Step("resume", PRETRAIN + ["--epochs", "2", "--resume", "{checkpoint}", "{data}"], expect="checkpoint_0001.pth.tar",
         expect_log=r"=> loaded checkpoint .* \(epoch 1\)"),
    Step("evaluate", ["python", "{repo}/main_lincls.py", "-a", "resnet18", "--lars", "-b", "4", "--epochs", "1",
                      "-j", "1", "-p", "1", "--pretrained", "{checkpoint}"] + DIST + ["{data}"],
         expect_log=r"\* Acc@1"),
]
