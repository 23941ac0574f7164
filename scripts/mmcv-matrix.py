"""Driver of the mmcv 1.x lite matrix (run by scripts/mmcv-matrix.sh, once per row venv).

In the row's venv, under compatfix (its .pth, with COMPATFIX_DEVICE=cpu), it
1. records the installed mmcv / mmseg / mmdet / torch and the mmcv range each of mmseg
   and mmdet accepts at import (their own MMCV_MIN/MMCV_MAX and
   mmcv_minimum_version/mmcv_maximum_version);
2. imports mmcv.ops, mmseg.models, mmseg.apis, mmdet.models, mmdet.apis;
3. for several model-zoo configs of each package (the package's own config file where
   the wheel ships its configs, mmseg >= 0.2x / mmdet >= 2.1x; otherwise the same model
   written out in that release's config schema, marked "inline"), made tiny only in
   what a CPU run needs (BN for SyncBN, no pretrained download, 2 classes, 64-128 px):
   builds the model with the package's build_segmentor/build_detector, trains it with
   the package's own train_segmentor/train_detector (2 iterations / 1 epoch, with the
   validation hook), loads the checkpoint it wrote, and tests it with single_gpu_test
   and the dataset's own evaluate (mIoU; COCO bbox mAP through pycocotools);
4. writes one JSON result. ``--table DIR`` prints docs/openmmlab-matrix.md from the JSONs.

Tiny data is generated: a COCO-format detection set (4 train / 2 val 64x64 images, two
categories) and a two-class segmentation folder (images + label PNGs). Nothing is
downloaded.
"""

from __future__ import annotations

import argparse
import copy
import glob
import json
import os
import sys
import time
import traceback

SEG_CONFIGS = {  # name -> config file inside mmseg's shipped configs
    "fcn_r50-d8": "fcn/fcn_r50-d8_512x1024_40k_cityscapes.py",
    "pspnet_r50-d8": "pspnet/pspnet_r50-d8_512x1024_40k_cityscapes.py",
    "upernet_r50": "upernet/upernet_r50_512x1024_40k_cityscapes.py",
}
DET_CONFIGS = {
    "retinanet_r50_fpn": "retinanet/retinanet_r50_fpn_1x_coco.py",
    "faster_rcnn_r50_fpn": "faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py",
}


# --- inline configs: the model-zoo models in the mmseg 0.x / mmdet 2.x schema ----------

def _seg_inline(name):
    norm = dict(type="BN", requires_grad=True)
    loss = dict(type="CrossEntropyLoss", use_sigmoid=False, loss_weight=1.0)
    aux = dict(type="FCNHead", in_channels=1024, in_index=2, channels=256, num_convs=1,
               concat_input=False, dropout_ratio=0.1, num_classes=19, norm_cfg=norm,
               align_corners=False, loss_decode=dict(loss, loss_weight=0.4))
    dilated = dict(type="ResNetV1c", depth=50, num_stages=4, out_indices=(0, 1, 2, 3),
                   dilations=(1, 1, 2, 4), strides=(1, 2, 1, 1), norm_cfg=norm, norm_eval=False,
                   style="pytorch", contract_dilation=True)
    if name == "fcn_r50-d8":
        head = dict(type="FCNHead", in_channels=2048, in_index=3, channels=512, num_convs=2,
                    concat_input=True, dropout_ratio=0.1, num_classes=19, norm_cfg=norm,
                    align_corners=False, loss_decode=loss)
        backbone = dilated
    elif name == "pspnet_r50-d8":
        head = dict(type="PSPHead", in_channels=2048, in_index=3, channels=512,
                    pool_scales=(1, 2, 3, 6), dropout_ratio=0.1, num_classes=19, norm_cfg=norm,
                    align_corners=False, loss_decode=loss)
        backbone = dilated
    else:
        head = dict(type="UPerHead", in_channels=[256, 512, 1024, 2048], in_index=[0, 1, 2, 3],
                    pool_scales=(1, 2, 3, 6), channels=512, dropout_ratio=0.1, num_classes=19,
                    norm_cfg=norm, align_corners=False, loss_decode=loss)
        backbone = dict(dilated, dilations=(1, 1, 1, 1), strides=(1, 2, 2, 2))
    return dict(type="EncoderDecoder", pretrained=None, backbone=backbone, decode_head=head,
                auxiliary_head=aux, train_cfg=dict(), test_cfg=dict(mode="whole"))


def _det_inline(name):
    backbone = dict(type="ResNet", depth=50, num_stages=4, out_indices=(0, 1, 2, 3),
                    frozen_stages=1, norm_cfg=dict(type="BN", requires_grad=True), norm_eval=True,
                    style="pytorch")
    coder = dict(type="DeltaXYWHBBoxCoder", target_means=[0.0] * 4, target_stds=[1.0] * 4)
    if name == "retinanet_r50_fpn":
        return dict(
            type="RetinaNet", pretrained=None, backbone=backbone,
            neck=dict(type="FPN", in_channels=[256, 512, 1024, 2048], out_channels=256,
                      start_level=1, add_extra_convs="on_input", num_outs=5),
            bbox_head=dict(
                type="RetinaHead", num_classes=80, in_channels=256, stacked_convs=4,
                feat_channels=256,
                anchor_generator=dict(type="AnchorGenerator", octave_base_scale=4,
                                      scales_per_octave=3, ratios=[0.5, 1.0, 2.0],
                                      strides=[8, 16, 32, 64, 128]),
                bbox_coder=coder,
                loss_cls=dict(type="FocalLoss", use_sigmoid=True, gamma=2.0, alpha=0.25, loss_weight=1.0),
                loss_bbox=dict(type="L1Loss", loss_weight=1.0)),
            train_cfg=dict(assigner=dict(type="MaxIoUAssigner", pos_iou_thr=0.5, neg_iou_thr=0.4,
                                         min_pos_iou=0, ignore_iof_thr=-1),
                           allowed_border=-1, pos_weight=-1, debug=False),
            test_cfg=dict(nms_pre=1000, min_bbox_size=0, score_thr=0.05,
                          nms=dict(type="nms", iou_threshold=0.5), max_per_img=100))
    return dict(
        type="FasterRCNN", pretrained=None, backbone=backbone,
        neck=dict(type="FPN", in_channels=[256, 512, 1024, 2048], out_channels=256, num_outs=5),
        rpn_head=dict(
            type="RPNHead", in_channels=256, feat_channels=256,
            anchor_generator=dict(type="AnchorGenerator", scales=[8], ratios=[0.5, 1.0, 2.0],
                                  strides=[4, 8, 16, 32, 64]),
            bbox_coder=coder,
            loss_cls=dict(type="CrossEntropyLoss", use_sigmoid=True, loss_weight=1.0),
            loss_bbox=dict(type="L1Loss", loss_weight=1.0)),
        roi_head=dict(
            type="StandardRoIHead",
            bbox_roi_extractor=dict(type="SingleRoIExtractor",
                                    roi_layer=dict(type="RoIAlign", output_size=7, sampling_ratio=0),
                                    out_channels=256, featmap_strides=[4, 8, 16, 32]),
            bbox_head=dict(type="Shared2FCBBoxHead", in_channels=256, fc_out_channels=1024,
                           roi_feat_size=7, num_classes=80,
                           bbox_coder=dict(coder, target_stds=[0.1, 0.1, 0.2, 0.2]),
                           reg_class_agnostic=False,
                           loss_cls=dict(type="CrossEntropyLoss", use_sigmoid=False, loss_weight=1.0),
                           loss_bbox=dict(type="L1Loss", loss_weight=1.0))),
        train_cfg=dict(
            rpn=dict(assigner=dict(type="MaxIoUAssigner", pos_iou_thr=0.7, neg_iou_thr=0.3,
                                   min_pos_iou=0.3, match_low_quality=True, ignore_iof_thr=-1),
                     sampler=dict(type="RandomSampler", num=256, pos_fraction=0.5,
                                  neg_pos_ub=-1, add_gt_as_proposals=False),
                     allowed_border=-1, pos_weight=-1, debug=False),
            rpn_proposal=dict(nms_pre=2000, max_per_img=1000, nms=dict(type="nms", iou_threshold=0.7),
                              min_bbox_size=0),
            rcnn=dict(assigner=dict(type="MaxIoUAssigner", pos_iou_thr=0.5, neg_iou_thr=0.5,
                                    min_pos_iou=0.5, match_low_quality=False, ignore_iof_thr=-1),
                      sampler=dict(type="RandomSampler", num=512, pos_fraction=0.25,
                                   neg_pos_ub=-1, add_gt_as_proposals=True),
                      pos_weight=-1, debug=False)),
        test_cfg=dict(
            rpn=dict(nms_pre=1000, max_per_img=1000, nms=dict(type="nms", iou_threshold=0.7),
                     min_bbox_size=0),
            rcnn=dict(score_thr=0.05, nms=dict(type="nms", iou_threshold=0.5), max_per_img=100)))


# --- tiny data ---------------------------------------------------------------------------

def make_data(root):
    import numpy as np
    from PIL import Image

    rng = np.random.RandomState(0)
    coco = {}
    for split, count in (("train", 4), ("val", 2)):
        os.makedirs(os.path.join(root, "coco", split), exist_ok=True)
        images, annotations = [], []
        for index in range(count):
            name = "%s_%d.png" % (split, index)
            Image.fromarray(rng.randint(0, 255, (64, 64, 3), dtype=np.uint8)).save(
                os.path.join(root, "coco", split, name))
            images.append(dict(id=index + 1, file_name=name, width=64, height=64))
            for box in range(2):
                x, y = 4 + 24 * box, 6 + 20 * box
                annotations.append(dict(id=len(annotations) + 1, image_id=index + 1,
                                        category_id=1 + box, bbox=[x, y, 30, 28], area=30 * 28,
                                        iscrowd=0, segmentation=[]))
        coco[split] = os.path.join(root, "coco", split + ".json")
        with open(coco[split], "w") as out:
            json.dump(dict(images=images, annotations=annotations,
                           categories=[dict(id=1, name="a"), dict(id=2, name="b")]), out)
        for kind in ("img", "ann"):
            os.makedirs(os.path.join(root, "seg", kind, split), exist_ok=True)
        for index in range(count):
            image = rng.randint(0, 255, (64, 64, 3), dtype=np.uint8)
            label = np.zeros((64, 64), dtype=np.uint8)
            label[16:48, 8 + 8 * index:40 + 8 * index] = 1
            Image.fromarray(image).save(os.path.join(root, "seg", "img", split, "%d.png" % index))
            Image.fromarray(label).save(os.path.join(root, "seg", "ann", split, "%d.png" % index))
    return coco


NORMALIZE = dict(type="Normalize", mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375], to_rgb=True)


def seg_data(root):
    train = [dict(type="LoadImageFromFile"), dict(type="LoadAnnotations"),
             dict(type="Resize", img_scale=(64, 64), keep_ratio=True), dict(type="RandomFlip", prob=0.5),
             NORMALIZE, dict(type="DefaultFormatBundle"), dict(type="Collect", keys=["img", "gt_semantic_seg"])]
    test = [dict(type="LoadImageFromFile"),
            dict(type="MultiScaleFlipAug", img_scale=(64, 64), flip=False, transforms=[
                dict(type="Resize", keep_ratio=True), dict(type="RandomFlip"), NORMALIZE,
                dict(type="ImageToTensor", keys=["img"]), dict(type="Collect", keys=["img"])])]

    def split(name, pipeline):
        return dict(type="CustomDataset", data_root=os.path.join(root, "seg"), img_dir="img/" + name,
                    ann_dir="ann/" + name, img_suffix=".png", seg_map_suffix=".png",
                    classes=("background", "thing"), palette=[[0, 0, 0], [255, 255, 255]],
                    pipeline=pipeline)

    return dict(samples_per_gpu=2, workers_per_gpu=0, train=split("train", train),
                val=split("val", test), test=split("val", test))


def det_data(root, coco):
    train = [dict(type="LoadImageFromFile"), dict(type="LoadAnnotations", with_bbox=True),
             dict(type="Resize", img_scale=(128, 128), keep_ratio=True),
             dict(type="RandomFlip", flip_ratio=0.5), NORMALIZE, dict(type="Pad", size_divisor=32),
             dict(type="DefaultFormatBundle"), dict(type="Collect", keys=["img", "gt_bboxes", "gt_labels"])]
    test = [dict(type="LoadImageFromFile"),
            dict(type="MultiScaleFlipAug", img_scale=(128, 128), flip=False, transforms=[
                dict(type="Resize", keep_ratio=True), dict(type="RandomFlip"), NORMALIZE,
                dict(type="Pad", size_divisor=32), dict(type="ImageToTensor", keys=["img"]),
                dict(type="Collect", keys=["img"])])]

    def split(name, pipeline):
        return dict(type="CocoDataset", ann_file=coco[name], img_prefix=os.path.join(root, "coco", name),
                    classes=("a", "b"), pipeline=pipeline)

    return dict(samples_per_gpu=2, workers_per_gpu=0, train=split("train", train),
                val=split("val", test), test=split("val", test))


# --- making a zoo config CPU-sized ------------------------------------------------------

def _walk(value, fix):
    if isinstance(value, dict):
        fix(value)
        for item in value.values():
            _walk(item, fix)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _walk(item, fix)


def tiny(model):
    """BN for SyncBN, no pretrained weights, 2 classes, every score threshold at 0 (an
    untrained detector's scores are below the zoo's 0.05: the evaluation would see no box)."""
    def fix(node):
        if node.get("type") == "SyncBN":
            node["type"] = "BN"
        if "num_classes" in node:
            node["num_classes"] = 2
        if "score_thr" in node:
            node["score_thr"] = 0.0
        node.pop("init_cfg", None)
    # A copy that keeps tuples: layers such as mmseg's JPU assert a tuple argument.
    model = copy.deepcopy(model)
    model["pretrained"] = None
    _walk(model, fix)
    return model


def model_config(library, name, package_dir):
    import mmcv

    files = {"mmseg": SEG_CONFIGS, "mmdet": DET_CONFIGS}[library]
    shipped = os.path.join(package_dir, ".mim", "configs", files[name])
    if os.path.exists(shipped):
        cfg = mmcv.Config.fromfile(shipped)
        model = cfg.model.to_dict() if hasattr(cfg.model, "to_dict") else dict(cfg.model)
        for key in ("train_cfg", "test_cfg"):  # the schema before model.train_cfg
            if key not in model and cfg.get(key) is not None:
                model[key] = dict(cfg[key])
        source = "own config " + files[name]
    else:
        model = _seg_inline(name) if library == "mmseg" else _det_inline(name)
        source = "inline (%s not shipped in this wheel)" % files[name]
    return tiny(model), source


def base_cfg(work_dir, data, runner, evaluation):
    import mmcv

    cfg = mmcv.Config(dict(
        data=data, optimizer=dict(type="SGD", lr=0.001, momentum=0.9, weight_decay=0.0001),
        optimizer_config=dict(grad_clip=None), lr_config=dict(policy="fixed"),
        checkpoint_config=dict(interval=1 if runner["type"] == "EpochBasedRunner" else 2),
        log_config=dict(interval=1, hooks=[dict(type="TextLoggerHook")]),
        runner=runner, evaluation=evaluation, workflow=[("train", 1)], log_level="INFO",
        dist_params=dict(backend="nccl"), resume_from=None, load_from=None, seed=0,
        gpu_ids=[0], work_dir=work_dir))
    cfg.gpu_ids = range(1)
    return cfg


# --- the steps ------------------------------------------------------------------------

def run_config(library, name, root, coco, package_dir):
    import mmcv
    from mmcv.parallel import MMDataParallel
    from mmcv.runner import load_checkpoint

    outcome = {"library": library, "config": name}
    model_cfg, outcome["source"] = model_config(library, name, package_dir)
    work_dir = os.path.join(root, "work", name)
    stage = "build"
    try:
        if library == "mmseg":
            from mmseg.apis import single_gpu_test, train_segmentor
            from mmseg.datasets import build_dataloader, build_dataset
            from mmseg.models import build_segmentor as build
            cfg = base_cfg(work_dir, seg_data(root), dict(type="IterBasedRunner", max_iters=2),
                           dict(interval=2, metric="mIoU"))
            train, metric = train_segmentor, "mIoU"
        else:
            from mmdet.apis import single_gpu_test, train_detector
            from mmdet.datasets import build_dataloader, build_dataset
            from mmdet.models import build_detector as build
            cfg = base_cfg(work_dir, det_data(root, coco), dict(type="EpochBasedRunner", max_epochs=1),
                           dict(interval=1, metric="bbox"))
            train, metric = train_detector, "bbox"
        cfg.model = model_cfg
        model = build(mmcv.ConfigDict(model_cfg))
        model.init_weights()
        stage = "train+validate"
        dataset = build_dataset(cfg.data.train)
        model.CLASSES = dataset.CLASSES
        train(model, [dataset], cfg, distributed=False, validate=True, timestamp="matrix", meta=dict())
        stage = "checkpoint"
        checkpoints = sorted(glob.glob(os.path.join(work_dir, "iter_*.pth")) +
                             glob.glob(os.path.join(work_dir, "epoch_*.pth")))
        assert checkpoints, "no checkpoint in " + work_dir
        load_checkpoint(model, checkpoints[-1], map_location="cpu")
        stage = "test"
        test_set = build_dataset(cfg.data.test, dict(test_mode=True))
        loader = build_dataloader(test_set, samples_per_gpu=1, workers_per_gpu=0, dist=False, shuffle=False)
        results = single_gpu_test(MMDataParallel(model, device_ids=[0]), loader)
        metrics = test_set.evaluate(results, metric=metric)
        outcome["metrics"] = {k: float(v) for k, v in metrics.items()
                              if isinstance(v, (int, float)) and k in ("mIoU", "aAcc", "bbox_mAP", "bbox_mAP_50")}
        outcome["status"] = "pass"
    except BaseException as exc:  # noqa: B036  (SystemExit from a library counts too)
        outcome["status"] = "fail at " + stage
        outcome["error"] = "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            outcome["where"] = "%s:%d" % (frames[-1].filename.split("site-packages/")[-1], frames[-1].lineno)
        traceback.print_exc()
    return outcome


def versions():
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("torch", "numpy", "mmcv", "mmsegmentation", "mmdet", "compatfix"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--row")
    parser.add_argument("--out")
    parser.add_argument("--work", default=".")
    parser.add_argument("--table", metavar="RESULTS_DIR")
    args = parser.parse_args()
    if args.table:
        sys.stdout.write(table(args.table))
        return 0
    result = {"row": args.row, "versions": versions(), "ranges": {}, "imports": {}, "configs": [],
              "date": time.strftime("%Y-%m-%d")}
    start = time.time()
    for module in ("mmcv.ops", "mmseg.models", "mmseg.apis", "mmdet.models", "mmdet.apis"):
        try:
            __import__(module)
            result["imports"][module] = "ok"
        except BaseException as exc:  # noqa: B036
            result["imports"][module] = "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
            traceback.print_exc()
    for package, low, high in (("mmseg", "MMCV_MIN", "MMCV_MAX"),
                               ("mmdet", "mmcv_minimum_version", "mmcv_maximum_version")):
        module = sys.modules.get(package)
        if module is not None:
            result["ranges"][package] = "%s..%s" % (getattr(module, low, "?"), getattr(module, high, "?"))
    root = os.path.abspath(args.work)
    coco = make_data(root)
    for library, names in (("mmseg", SEG_CONFIGS), ("mmdet", DET_CONFIGS)):
        if result["imports"].get(library + ".apis") != "ok":
            continue
        package_dir = os.path.dirname(sys.modules[library].__file__)
        for name in names:
            print("[mmcv-matrix] %s %s" % (library, name), flush=True)
            result["configs"].append(run_config(library, name, root, coco, package_dir))
    result["seconds"] = round(time.time() - start)
    with open(args.out, "w") as out:
        json.dump(result, out, indent=1)
    ok = all(v == "ok" for v in result["imports"].values()) and all(
        c["status"] == "pass" for c in result["configs"])
    print("[mmcv-matrix] %s: %s" % (args.row, "pass" if ok else "FAIL"))
    return 0 if ok else 1


def table(results_dir):
    rows = []
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        with open(path) as f:
            rows.append(json.load(f))
    rows.sort(key=lambda r: [int(p) for p in (r["versions"].get("mmcv") or "0").split(".")[:3]])
    lines = [
        "# OpenMMLab 1.x matrix under compatfix",
        "",
        "Generated by `bash scripts/mmcv-matrix.sh` (see its header) from",
        "`acceptance/results/mmcv-matrix/*.json`; do not edit by hand. Each row is an mmcv 1.x",
        "lite build (no compiled ops: `mmcv._ext` is compatfix's stand-in) with an mmseg 0.x and an",
        "mmdet 2.x release whose own import-time check accepts it, on today's torch, in CPU mode.",
        "For each config: build with the package's builder, `train_segmentor`/`train_detector`",
        "(2 iterations / 1 epoch, validation hook on), load the checkpoint written, then",
        "`single_gpu_test` and the dataset's own `evaluate` (mIoU; COCO bbox mAP via pycocotools)",
        "on generated tiny data. Metrics of untrained tiny runs only show that evaluation ran.",
        "\"own config\" is the config file the wheel ships (made CPU-sized: BN for SyncBN, no",
        "pretrained download, 2 classes, score threshold 0); \"inline\" is the same model-zoo model",
        "written out in that release's schema, for wheels that ship no configs (mmseg < 0.2x,",
        "mmdet < 2.1x). mmdet 2.10/2.11 are installed without their `mmpycocotools` requirement,",
        "whose sdist no longer builds; today's pycocotools takes its place and the",
        "`pycocotools.mmpycocotools_api` shim gives it the fork's API. Which compiled ops the",
        "whole model zoo calls, and which of them compatfix's `mmcv._ext` provides, is in",
        "[mmcv-ops.md](mmcv-ops.md).",
        "",
        "| mmcv | mmseg (accepts mmcv) | mmdet (accepts mmcv) | torch | imports | config | source | status | metric | error |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        v = r["versions"]
        imports = "ok" if all(x == "ok" for x in r["imports"].values()) else "; ".join(
            "%s: %s" % (k, x) for k, x in r["imports"].items() if x != "ok")
        head = "| %s | %s (%s) | %s (%s) | %s | %s " % (
            v.get("mmcv"), v.get("mmsegmentation"), r["ranges"].get("mmseg", "?"), v.get("mmdet"),
            r["ranges"].get("mmdet", "?"), v.get("torch"), imports.replace("|", "/"))
        if not r["configs"]:
            lines.append(head + "| - | - | - | - | - |")
        for c in r["configs"]:
            metric = ", ".join("%s %.3f" % kv for kv in sorted(c.get("metrics", {}).items()))
            error = (c.get("error", "") + (" (%s)" % c["where"] if c.get("where") else "")).replace("|", "/")
            lines.append(head + "| %s %s | %s | %s | %s | %s |" % (
                c["library"], c["config"], c["source"], c["status"], metric, error[:160]))
            head = "| | | | | "
    dates = sorted({r.get("date", "?") for r in rows})
    lines += ["", "Last run: %s." % ", ".join(dates), ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
