"""fudan-zvg/SETR: SETR-Naive (ViT + upsampling heads) on ADE20K (2021: a vendored fork of
mmseg 0.6 that tools/dist_train.sh puts first on PYTHONPATH, asserting mmcv 1.1.2-1.2.7;
mmcv-full 1.2.2 in its README, SyncBN, ``torch.distributed.launch``). Tested at 23f8fde
(2021-07-25), the last commit before the 2022-23 HLG additions.

README's ``./tools/dist_train.sh CONFIG GPUS`` and ``./tools/dist_test.sh CONFIG CHECKPOINT
GPUS --eval mIoU``, run with bash (the scripts use ``${@:3}``); overrides only through
tools/train.py's and tools/test.py's ``--options`` (mmcv 1.2's DictAction, list elements
by index): a 4-block, 32-wide ViT on 64x64 crops with random initialisation (its default
loads ImageNet-21k weights from the network), the three auxiliary heads on blocks 0-2,
64-px slide windows, the data root, 4 iterations with a checkpoint and a
validation at 2.

Stack mmold (mmcv 1.2.7): the only stack inside the mmcv range its vendored mmseg asserts.
"""

import synthetic
from zoo import Step

REPO = "fudan-zvg/SETR"
FIELD = "semantic segmentation"
STACKS = ["mmold"]
CHECKPOINT = "train/iter_*.pth"
CONFIG = "configs/SETR/SETR_Naive_512x512_160k_ade20k_bs_16.py"


def make_data(root):
    synthetic.segmentation_folder(root, images=4, size=64, classes=3)


def heads():
    options = ["model.decode_head.in_channels=32", "model.decode_head.embed_dim=32", "model.decode_head.img_size=64",
               "model.decode_head.in_index=3"]
    for index in range(3):
        prefix = "model.auxiliary_head.%d." % index
        options += [prefix + "in_channels=32", prefix + "embed_dim=32", prefix + "img_size=64",
                    prefix + "in_index=%d" % index]
    return options


MODEL = ["model.backbone.embed_dim=32", "model.backbone.depth=4", "model.backbone.num_heads=2",
         "model.backbone.img_size=64", "model.backbone.random_init=True"] + heads() + [
    "test_cfg.crop_size=64,64", "test_cfg.stride=43,43"]
TEST_DATA = ["data.test.data_root={data}"]


def options(iters):
    return ["--options", "data.train.data_root={data}", "data.val.data_root={data}",
            "data.train.pipeline.3.crop_size=64,64",
            "data.train.pipeline.7.size=64,64", "data.samples_per_gpu=2", "data.workers_per_gpu=1",
            "total_iters=%d" % iters, "checkpoint_config.interval=2", "evaluation.interval=2",
            "log_config.interval=1"] + TEST_DATA + MODEL


STEPS = [
    Step("train", ["bash", "tools/dist_train.sh", CONFIG, "1", "--work-dir", "{out}/train", "--seed", "0"] + options(2),
         expect=CHECKPOINT, expect_log=r"mIoU"),
    Step("resume", ["bash", "tools/dist_train.sh", CONFIG, "1", "--work-dir", "{out}/resume", "--seed", "0",
                    "--resume-from", "{checkpoint}"] + options(4),
         expect="resume/iter_4.pth", expect_log=r"resumed from epoch: \d+, iter 2"),
    Step("evaluate", ["bash", "tools/dist_test.sh", CONFIG, "{checkpoint}", "1", "--eval", "mIoU", "--options"]
         + TEST_DATA + MODEL,
         expect_log=r"mIoU"),
]
