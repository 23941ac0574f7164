"""microsoft/unilm ``beit/semantic_segmentation``: UperNet + BEiT on ADE20K (2021: mmcv-full
1.3.0 + mmseg 0.11.0 pinned; mmcv_custom's IterBasedRunnerAmp, DistOptimizerHook with
use_fp16=True, LayerDecayOptimizerConstructor; apex amp; SyncBN).

The README's commands, through its own shell scripts (tools/dist_train.sh and
tools/dist_test.sh, which call ``python -m torch.distributed.launch``); overrides only
through tools/train.py's ``--options`` (mmcv DictAction) and the scripts' own arguments:
a 4-block, 32-wide BEiT, data root, 4 iterations with a checkpoint and a validation at 2.
"""

import synthetic
from zoo import Step

REPO = "microsoft/unilm"
FIELD = "semantic segmentation"
WORKDIR = "beit/semantic_segmentation"
STACKS = ["modern", "paper"]
CHECKPOINT = "train/iter_*.pth"
CONFIG = "configs/beit/upernet/upernet_beit_base_12_512_slide_160k_ade20k_pt2ft.py"
NOTES = ("Tested in `beit/semantic_segmentation` of the unilm monorepo (commit of the whole repository); "
         "that folder's code is its 2022-04 state (f6e1cc9) but for a 2023 `raise ... from` edit in "
         "mmcv_custom/checkpoint.py and README links.")
# mmcv_custom/checkpoint.py imports scipy; the modern stack has it already.
INSTALLS = "scipy into the paper venv (README: `pip install scipy timm==0.3.2`)"


def make_data(root):
    synthetic.segmentation_folder(root, images=4, size=64, classes=3)


def options(iters):
    return [
        "--options",
        "data.train.data_root={data}", "data.val.data_root={data}", "data.test.data_root={data}",
        "data.samples_per_gpu=2", "data.workers_per_gpu=1",
        "model.backbone.embed_dim=32", "model.backbone.depth=4", "model.backbone.num_heads=2",
        "model.backbone.out_indices=[0,1,2,3]",
        "model.decode_head.in_channels=[32,32,32,32]", "model.decode_head.channels=32",
        "model.auxiliary_head.in_channels=32", "model.auxiliary_head.channels=16",
        "runner.max_iters=%d" % iters, "checkpoint_config.interval=2", "evaluation.interval=2",
        "log_config.interval=1",
    ]


STEPS = [
    Step("train", ["bash", "tools/dist_train.sh", CONFIG, "1", "--work-dir", "{out}/train", "--seed", "0",
                   "--deterministic"] + options(2),
         expect=CHECKPOINT, expect_log=r"mIoU"),
    Step("resume", ["bash", "tools/dist_train.sh", CONFIG, "1", "--work-dir", "{out}/resume", "--seed", "0",
                    "--resume-from", "{checkpoint}"] + options(4),
         expect="resume/iter_4.pth", expect_log=r"resumed from epoch: \d+, iter 2"),
    Step("evaluate", ["bash", "tools/dist_test.sh", CONFIG, "{checkpoint}", "1", "--eval", "mIoU",
                      "--options", "data.test.data_root={data}"]
         + [o for o in options(4)[1:] if o.startswith("model.")],
         expect_log=r"mIoU"),
]
