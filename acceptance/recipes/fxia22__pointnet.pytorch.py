"""fxia22/pointnet.pytorch, PointNet on point clouds (its code is of 2019, the repository
was kept up to 2023: ``Variable``-era training loops, ``.cuda()`` on every batch,
``torch.load`` of a state dict for ``--model``). Tested at bafbf40 (2023-03-23; the code's
last change is f0c2430, 2019-04-17).

The README's ``cd utils; python train_classification.py --dataset <dataset path>
--nepoch=<number epochs> --dataset_type shapenet`` with the script's own options: a tiny
ShapeNet-parts folder (2 categories, 64 points per shape), batch 4, no loader workers, one
epoch, output under the output folder; then the same starting from the saved model
(``--model``). The clone is on PYTHONPATH for what the README's ``pip install -e .`` provides.
"""

import synthetic
from zoo import Step

REPO = "fxia22/pointnet.pytorch"
FIELD = "3D point clouds"
STACKS = ["modern"]
WORKDIR = "utils"
ENV = {"PYTHONPATH": "{repo}/.."}
CHECKPOINT = "cls/cls_model_*.pth"
INSTALLS = "plyfile (setup.py's install_requires: torch, tqdm, plyfile)"


def make_data(root):
    synthetic.shapenet_parts(root)


TRAIN = ["python", "train_classification.py", "--dataset", "{data}", "--nepoch=1", "--dataset_type", "shapenet",
         "--batchSize", "4", "--num_points", "64", "--workers", "0", "--outf", "{out}/cls"]

STEPS = [
    Step("train", TRAIN, expect="cls/cls_model_0.pth", expect_log=r"final accuracy"),
    Step("resume", TRAIN[:-1] + ["{out}/cls2", "--model", "{checkpoint}"], expect="cls2/cls_model_0.pth",
         expect_log=r"final accuracy"),
]
