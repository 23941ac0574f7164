"""HRNet/HRNet-Semantic-Segmentation (HRNet-OCR branch), semantic segmentation on
Cityscapes (2019-21: yacs configs, ``torch.distributed.launch`` with ``--local_rank`` and
nccl, torch's SyncBatchNorm, ``np.int``, ``torchvision.models.utils``, tensorboardX).
Tested at 0bbb288 (2021-05-04), the branch's last commit.

README's training command (``$PY_CMD tools/train.py --cfg …`` with PyTorch 1.1's
``python -m torch.distributed.launch``; training again into the same output folder resumes
from its checkpoint.pth.tar, TRAIN.RESUME being true in the config) and its
``python tools/test.py --cfg … TEST.MODEL_FILE …`` evaluation. Overrides are the scripts'
own yacs options after the config: a 1-block HRNet with 8-64 channels, 64x64 crops, the
data root and list files, batch 2 on one "GPU", one worker, 1 + 1 epochs, and the output
and log folders in the scratch folder. MODEL.PRETRAINED is a file that does not exist,
which the model's init_weights skips (the ImageNet weights are a download).
"""

import os

import synthetic
from zoo import Step

REPO = "HRNet/HRNet-Semantic-Segmentation"
FIELD = "semantic segmentation"
STACKS = ["modern"]
CHECKPOINT = "train/cityscapes/*/checkpoint.pth.tar"
CONFIG = "experiments/cityscapes/seg_hrnet_w48_train_512x1024_sgd_lr1e-2_wd5e-4_bs_12_epoch484.yaml"
INSTALLS = "tensorboardX, tqdm (requirements.txt; the stack has the other packages the code imports)"


def make_data(root):
    written = synthetic.segmentation_folder(root, images=4, size=64, classes=3, image_dir="leftImg8bit",
                                            label_dir="gtFine", splits=("train", "val"), image_suffix=".png",
                                            label_ids=(7, 8, 11))
    for split in ("train", "val"):
        with open(os.path.join(root, split + ".lst"), "w") as handle:
            handle.writelines("%s\t%s\n" % (image, label) for where, image, label in written if where == split)


TINY = [
    "GPUS", "(0,)", "WORKERS", "1", "PRINT_FREQ", "1",
    "DATASET.ROOT", "{data}/", "DATASET.TRAIN_SET", "train.lst", "DATASET.TEST_SET", "val.lst",
    "MODEL.PRETRAINED", "{data}/no-imagenet-weights.pth",
    "MODEL.EXTRA.STAGE1.NUM_BLOCKS", "[1]", "MODEL.EXTRA.STAGE1.NUM_CHANNELS", "[16]",
    "MODEL.EXTRA.STAGE2.NUM_BLOCKS", "[1, 1]", "MODEL.EXTRA.STAGE2.NUM_CHANNELS", "[8, 16]",
    "MODEL.EXTRA.STAGE3.NUM_MODULES", "1", "MODEL.EXTRA.STAGE3.NUM_BLOCKS", "[1, 1, 1]",
    "MODEL.EXTRA.STAGE3.NUM_CHANNELS", "[8, 16, 32]",
    "MODEL.EXTRA.STAGE4.NUM_MODULES", "1", "MODEL.EXTRA.STAGE4.NUM_BLOCKS", "[1, 1, 1, 1]",
    "MODEL.EXTRA.STAGE4.NUM_CHANNELS", "[8, 16, 32, 64]",
    "TRAIN.IMAGE_SIZE", "[64, 64]", "TRAIN.BASE_SIZE", "64", "TRAIN.BATCH_SIZE_PER_GPU", "2",
    "TEST.IMAGE_SIZE", "[64, 64]", "TEST.BASE_SIZE", "64",
]
TRAIN = ["python", "-m", "torch.distributed.launch", "--nproc_per_node=1", "--master_port={port}", "tools/train.py",
         "--cfg", CONFIG, "OUTPUT_DIR", "{out}/train", "LOG_DIR", "{out}/log"] + TINY

STEPS = [
    Step("train", TRAIN + ["TRAIN.END_EPOCH", "1"], expect=CHECKPOINT, expect_log=r"MeanIU"),
    Step("resume", TRAIN + ["TRAIN.END_EPOCH", "2"], expect="train/cityscapes/*/final_state.pth",
         expect_log=r"loaded checkpoint \(epoch 1\)"),
    Step("evaluate", ["python", "tools/test.py", "--cfg", CONFIG, "OUTPUT_DIR", "{out}/test", "LOG_DIR", "{out}/log",
                      "TEST.MODEL_FILE", "{checkpoint}"] + TINY,
         expect_log=r"MeanIU: "),
]
