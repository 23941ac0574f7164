"""facebookresearch/moco-v3, self-supervised ResNet (2021: ``mp.spawn`` with
``--multiprocessing-distributed`` and a tcp rendezvous, nccl, ``torch.cuda.amp``
autocast and GradScaler, its LARS optimizer, torch.utils.tensorboard, timm 0.4.9's
``timm.models.layers.helpers`` imported at the top of vits.py). Tested at c349e6e
(2021-11-25), the repository's last commit.

README's pre-training command (1 node), the same with ``--resume``, and its linear
classification (main_lincls.py ``--pretrained``, which trains and validates a linear
head). Overrides are the scripts' own options: ResNet-18 (``-a``: any torchvision name),
a 16-d head with a 32-d MLP, total batch 4, one worker, no warm-up, 1 + 1 epochs, and the
rendezvous on a free local port.

Stack timm1 (timm 1.x): the README asks for timm 0.4.9, and vits.py imports
``PatchEmbed`` from ``timm.models.layers``, which timm 0.3.2 (the modern stack's) lacks.

Run from the output folder (RUN_FROM), the scripts named by their path in the clone:
main_moco.py saves ``checkpoint_%04d.pth.tar``, main_lincls.py ``checkpoint.pth.tar`` and
``model_best.pth.tar``, and SummaryWriter() its ``runs/``, all into the current folder,
with no option to move them.
"""

import synthetic
from zoo import Step

REPO = "facebookresearch/moco-v3"
FIELD = "self-supervised"
STACKS = ["timm1"]
RUN_FROM = "{out}"
CHECKPOINT = "checkpoint_*.pth.tar"
INSTALLS = "tensorboard into the timm1 venv (torch.utils.tensorboard, which main_moco.py imports)"


def make_data(root):
    synthetic.image_folder(root, classes=2, per_class=4, size=32)


DIST = ["--dist-url", "tcp://localhost:{port}", "--multiprocessing-distributed", "--world-size", "1", "--rank", "0"]
PRETRAIN = ["python", "{repo}/main_moco.py", "-a", "resnet18", "-b", "4", "--moco-dim", "16", "--moco-mlp-dim", "32",
            "--moco-m-cos", "--crop-min=.2", "--warmup-epochs", "0", "-j", "1", "-p", "1"] + DIST

STEPS = [
    Step("train", PRETRAIN + ["--epochs", "1", "{data}"], expect="checkpoint_0000.pth.tar",
         expect_log=r"Epoch: \[0\]"),
    Step("resume", PRETRAIN + ["--epochs", "2", "--resume", "{checkpoint}", "{data}"], expect="checkpoint_0001.pth.tar",
         expect_log=r"=> loaded checkpoint .* \(epoch 1\)"),
    Step("evaluate", ["python", "{repo}/main_lincls.py", "-a", "resnet18", "--lr", "0.1", "-b", "4", "--epochs", "1",
                      "-j", "1", "-p", "1", "--pretrained", "{checkpoint}"] + DIST + ["{data}"],
         expect_log=r"\* Acc@1"),
]

NOTES = ("Runs on the timm1 stack (its README asks for timm 0.4.9; vits.py's `timm.models.layers.helpers` "
         "import is served by `timm.layers_submodules` on timm 1.x). The three scripts write their checkpoints "
         "and tensorboard runs into the current folder with no option to move them, so the zoo runs them from "
         "the output folder, naming each script by its path in the clone.")
