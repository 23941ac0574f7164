"""SwinTransformer/Swin-Transformer-Object-Detection: Mask R-CNN + Swin on COCO (2021: a
vendored fork of mmdet 2.11 that tools/dist_train.sh puts first on PYTHONPATH, asserting
mmcv 1.2.4-1.4.0; mmcv_custom's EpochBasedRunnerAmp and DistOptimizerHook with apex amp
(``use_fp16=True``), mmcv-full's RoIAlign and nms, pycocotools evaluation). Tested at
6a979e2 (2021-06-25), before the 2022 RepPoints-v2 additions.

README's ``tools/dist_train.sh CONFIG GPUS --cfg-options …`` and its test command
(``tools/dist_test.sh CONFIG CHECKPOINT GPUS --eval bbox segm``), run with bash (the
scripts use ``${@:3}``); overrides only through the scripts' ``--cfg-options`` (mmcv
1.3's DictAction): a 16-wide Swin with one block per stage, 32-channel FPN and heads,
the AutoAugment and test scales brought down to 64-96 px, COCO-layout synthetic data
(two categories, one box and polygon each per 64x64 image, trained as a 2-class subset
of COCO's the way mmdet's docs do it), batch 2, 1 + 1 epochs, and a test score threshold of 0
so that the barely trained model's detections reach COCOeval.

Stack paper (mmcv 1.3.0): inside the mmcv range the vendored mmdet asserts.
"""

import synthetic
from zoo import Step

REPO = "SwinTransformer/Swin-Transformer-Object-Detection"
FIELD = "object detection"
STACKS = ["paper"]
CHECKPOINT = "train/epoch_*.pth"
CONFIG = "configs/swin/mask_rcnn_swin_tiny_patch4_window7_mstrain_480-800_adamw_1x_coco.py"
INSTALLS = ("six and pycocotools into the paper venv (requirements/runtime.txt: six, and mmpycocotools, whose "
            "sdist no longer builds; official pycocotools with compatfix's fork-API shim stands in)")


def make_data(root):
    synthetic.coco_folder(root, images=4, size=64)


MODEL = [
    "model.backbone.embed_dim=16", "model.backbone.depths=[1,1,1,1]", "model.backbone.num_heads=[1,1,1,1]",
    "model.neck.in_channels=[16,32,64,128]", "model.neck.out_channels=32",
    "model.rpn_head.in_channels=32", "model.rpn_head.feat_channels=32",
    "model.roi_head.bbox_roi_extractor.out_channels=32", "model.roi_head.bbox_head.in_channels=32",
    "model.roi_head.bbox_head.fc_out_channels=64", "model.roi_head.mask_roi_extractor.out_channels=32",
    "model.roi_head.mask_head.in_channels=32", "model.roi_head.mask_head.conv_out_channels=32",
    "model.roi_head.mask_head.num_convs=1",
    # The two categories of the synthetic data, as mmdet's docs train on a subset of COCO's
    # (data.*.classes and the heads' num_classes).
    "model.roi_head.bbox_head.num_classes=2", "model.roi_head.mask_head.num_classes=2",
    # A model trained for 2-4 steps scores every class near 1/3 or below, often under 0.05:
    # with none kept, mmdet skips COCOeval ("The testing results of the whole dataset is empty").
    "model.test_cfg.rcnn.score_thr=0.0", "model.test_cfg.rcnn.max_per_img=20",
]


def data(split, folder):
    return ["data.%s.ann_file={data}/annotations/instances_%s.json" % (split, folder),
            "data.%s.img_prefix={data}/%s/" % (split, folder), "data.%s.classes=(person,car)" % split]


TEST = data("test", "val2017") + ["data.test.pipeline.1.img_scale=(96,64)"]


def options(epochs):
    return ["--cfg-options"] + data("train", "train2017") + data("val", "val2017") + TEST + MODEL + [
        "data.train.pipeline.3.policies.0.0.img_scale=[(96,64),(120,80)]",
        "data.train.pipeline.3.policies.1.0.img_scale=[(96,64)]",
        "data.train.pipeline.3.policies.1.1.crop_size=(48,64)",
        "data.train.pipeline.3.policies.1.2.img_scale=[(96,64),(120,80)]",
        "data.val.pipeline.1.img_scale=(96,64)", "data.samples_per_gpu=2", "data.workers_per_gpu=1",
        "runner.max_epochs=%d" % epochs, "log_config.interval=1"]


STEPS = [
    Step("train", ["bash", "tools/dist_train.sh", CONFIG, "1", "--work-dir", "{out}/train", "--seed", "0"]
         + options(1), expect=CHECKPOINT, expect_log=r"bbox_mAP"),
    Step("resume", ["bash", "tools/dist_train.sh", CONFIG, "1", "--work-dir", "{out}/resume", "--seed", "0",
                    "--resume-from", "{checkpoint}"] + options(2),
         expect="resume/epoch_2.pth", expect_log=r"resumed epoch 1, iter \d+"),
    Step("evaluate", ["bash", "tools/dist_test.sh", CONFIG, "{checkpoint}", "1", "--eval", "bbox", "segm",
                      "--cfg-options"] + TEST + MODEL,
         expect_log=r"segm_mAP"),
]
