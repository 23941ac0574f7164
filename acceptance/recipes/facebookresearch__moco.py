"""facebookresearch/moco, MoCo v1/v2 (2020: ``mp.spawn`` with
``--multiprocessing-distributed`` and a tcp rendezvous, nccl, a 65536-key queue, shuffle-BN
through all_gather). Tested at 7397dfe (2023-01-18, the relicensing commit; the code is
the 2020 release's, reformatted).

README's unsupervised training command (MoCo v2 flags: ``--mlp --moco-t 0.2 --aug-plus
--cos``), the same with ``--resume``, and its linear classification (main_lincls.py
``--pretrained``). Overrides are the scripts' own options: ResNet-18 (``-a``), a 16-d
embedding, batch 4, one worker, 1 + 1 epochs, the rendezvous on a free local port.
Run from the output folder (RUN_FROM): both scripts save their checkpoints into the
current folder with no option to move them.
"""

import synthetic
from zoo import Step

REPO = "facebookresearch/moco"
FIELD = "self-supervised"
STACKS = ["modern"]
RUN_FROM = "{out}"
CHECKPOINT = "checkpoint_*.pth.tar"


def make_data(root):
    synthetic.image_folder(root, classes=2, per_class=4, size=32)


DIST = ["--dist-url", "tcp://localhost:{port}", "--multiprocessing-distributed", "--world-size", "1", "--rank", "0"]
PRETRAIN = ["python", "{repo}/main_moco.py", "-a", "resnet18", "--lr", "0.03", "--batch-size", "4",
            "--moco-dim", "16", "--mlp", "--moco-t", "0.2", "--aug-plus", "--cos", "-j", "1", "-p", "1"] + DIST

STEPS = [
    Step("train", PRETRAIN + ["--epochs", "1", "{data}"], expect="checkpoint_0000.pth.tar",
         expect_log=r"Epoch: \[0\]"),
    Step("resume", PRETRAIN + ["--epochs", "2", "--resume", "{checkpoint}", "{data}"], expect="checkpoint_0001.pth.tar",
         expect_log=r"=> loaded checkpoint .* \(epoch 1\)"),
    Step("evaluate", ["python", "{repo}/main_lincls.py", "-a", "resnet18", "--lr", "30.0", "--batch-size", "4",
                      "--epochs", "1", "-j", "1", "-p", "1", "--pretrained", "{checkpoint}"] + DIST + ["{data}"],
         expect_log=r"\* Acc@1"),
]
