"""Census of the compiled mmcv ops (``mmcv._ext``) that the model zoo calls on the CPU.

Run by scripts/mmcv-ops-census.sh in .venvs/modern (mmcv 1.7.2 lite, mmseg 0.30.0,
mmdet 2.28.2) under compatfix in CPU mode (COMPATFIX_DEVICE=cpu). For one config per
model family folder of each package's shipped configs (``<pkg>/.mim/configs/<family>/``,
the first ``*.py`` in sorted order, plus the configs in ``EXTRA`` whose layers reach other
ops; ``--all`` takes every config), it

1. loads the config and makes its model CPU-sized with scripts/mmcv-matrix.py's
   ``tiny()`` (BN for SyncBN, no pretrained weights, 2 classes, score thresholds 0);
2. builds the model (the package's ``build_segmentor``/``build_detector``) and calls
   ``init_weights()``;
3. runs one training step (``model.train_step`` on a generated batch of two 128x128
   images with boxes, masks and labels as the model's ``forward_train`` asks for them, then
   ``loss.backward()``) and one test forward (``model(return_loss=False, rescale=True)``
   on one image);
4. records every ``mmcv._ext`` function called in each phase, and the outcome:
   ``pass``; ``missing op`` (compatfix's stand-in has no fallback for the op named in
   ``missing_op``); ``error`` (another reason: its exception's first line and the
   innermost frame); ``timeout``; ``crash``.

Each config runs in its own forked child process of a parent that imported torch, mmcv,
mmseg and mmdet once (an import costs ~10 s here, a config a few seconds), with a time
limit, so a crash or a hang costs one config. The recording wraps the attributes of the
provided ``mmcv._ext`` module in this process only; compatfix itself is unchanged.

Output: one JSON per package under ``--out`` (acceptance/results/mmcv-ops-census/).
``--doc OUT.md`` writes docs/mmcv-ops.md from those JSONs and compatfix's list of
implemented ops (no model is run). Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import inspect
import json
import os
import sys
import textwrap
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SIZE = 128  # image side: every zoo model here downsamples by at most 32 (or 64 in P6 necks)
LIBRARIES = {"mmseg": "mmsegmentation", "mmdet": "mmdet"}


def _matrix():
    """scripts/mmcv-matrix.py, for its ``tiny()`` and ``_walk()`` (its file name is not importable)."""
    spec = importlib.util.spec_from_file_location("mmcv_matrix", os.path.join(HERE, "mmcv-matrix.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the recorder ------------------------------------------------------------------------

CALLS: dict[str, list[str]] = {}
PHASE = ["build"]


def _recording(name, function):
    def call(*args, **kwargs):
        names = CALLS.setdefault(PHASE[0], [])
        if name not in names:
            names.append(name)
        return function(*args, **kwargs)

    call.__name__ = name
    call.census_wrapped = function
    return call


def install_recorder():
    """Wrap every op of the provided ``mmcv._ext``, including the stubs it makes on demand."""
    import mmcv._ext as ext

    if getattr(ext, "__compatfix_provided__", None) != "mmcv._ext":
        raise SystemExit("mmcv._ext is not compatfix's stand-in: run under compatfix with mmcv lite")
    for name in dir(ext):
        value = getattr(ext, name)
        if not name.startswith("_") and callable(value) and not isinstance(value, type):
            setattr(ext, name, _recording(name, value))
    on_demand = ext.__getattr__

    def __getattr__(name):
        value = on_demand(name)
        wrapped = _recording(name, value)
        setattr(ext, name, wrapped)
        return wrapped

    ext.__getattr__ = __getattr__


# --- configs ---------------------------------------------------------------------------


# Configs beyond the first of their family whose layers reach an mmcv._ext op on the CPU
# that the first config of that family does not (found by grepping the shipped configs
# for the layers of mmcv.ops that call mmcv._ext on CPU tensors in mmcv 1.7.2: deformable
# RoI pooling, soft-NMS, the guided-anchoring heads' MaskedConv2d, CARAFE's mask head).
EXTRA = {
    "mmdet": ("dcn/faster_rcnn_r50_fpn_dpool_1x_coco.py", "dcnv2/faster_rcnn_r50_fpn_mdpool_1x_coco.py",
              "faster_rcnn/faster_rcnn_r50_fpn_soft_nms_1x_coco.py",
              "guided_anchoring/ga_faster_r50_fpn_1x_coco.py", "guided_anchoring/ga_retinanet_r50_fpn_1x_coco.py",
              "guided_anchoring/ga_rpn_r50_fpn_1x_coco.py", "carafe/mask_rcnn_r50_fpn_carafe_1x_coco.py"),
}


# What a failure that no op causes comes from, as found in its log (shown in the doc).
NOTES = {
    "mobilenet_v3/lraspp_m-v3-d8_512x1024_320k_cityscapes.py":
        "its LR-ASPP head pools with a 49x49 kernel, made for the zoo's 512x1024 crops, not 128 px",
    "common/lsj_100e_coco_instance.py": "a data and schedule config for others to inherit",
    "guided_anchoring/ga_retinanet_r50_fpn_1x_coco.py":
        "untrained, no location passes the head's loc_filter_thr, and its get_bboxes cannot take "
        "zero anchors (so MaskedConv2d had nothing to convolve)",
    "queryinst/queryinst_r101_fpn_300_proposals_crop_mstrain_480-800_3x_coco.py":
        "untrained, a predicted box has x2 < x1 and mmdet's mask pasting calls torch.arange with it (the "
        "innermost Python frame is CPU mode's device= wrapper around torch.arange)",
    "solov2/solov2_light_r18_fpn_3x_coco.py":
        "untrained, no mask kernel is kept and SOLOv2's test path interpolates the empty mask tensor",
}

SELECTIONS = {  # the results' "selection", in words
    "all": "every shipped config",
    "families": "first shipped config of each model family folder, and the EXTRA configs (see the script) "
                "whose layers reach other ops",
}


def config_files(library, package_dir, every):
    root = os.path.join(package_dir, ".mim", "configs")
    chosen = []
    for family in sorted(os.listdir(root)):
        files = sorted(glob.glob(os.path.join(root, family, "*.py")))
        if family.startswith("_") or not files:
            continue
        chosen.extend(files if every else files[:1])
    paths = [os.path.relpath(path, root) for path in chosen]
    return sorted(set(paths) | set(EXTRA.get(library, ())))


def _census_sized(node):
    """What tiny() leaves that a census run cannot take: pretrained weights named below
    the top level (DetectoRS' RFP backbone) or a teacher's checkpoint (LD, LAD) would be
    downloaded; per-class loss weights for the zoo's classes (CGNet); and a backbone whose
    position tables are fixed by its img_size (BEiT, MAE) gets the census's image size."""
    if isinstance(node.get("pretrained"), str):
        node["pretrained"] = None
    elif node.get("pretrained") is True:  # timm backbones
        node["pretrained"] = False
    if "teacher_ckpt" in node:
        node["teacher_ckpt"] = None
    loss = node.get("loss_decode")  # mmseg's decode heads: per-class weights of the zoo's classes
    if isinstance(loss, dict) and isinstance(loss.get("class_weight"), (list, tuple)) \
            and len(loss["class_weight"]) != node.get("num_classes"):
        loss["class_weight"] = None
    if "img_size" in node and "type" in node:
        node["img_size"] = SIZE if isinstance(node["img_size"], int) else (SIZE, SIZE)


def model_dict(cfg, matrix):
    """The config's model made CPU-sized, and the image side to run it at: SIZE, or an
    SSD's fixed input size (its VGG extra layers need 300 px)."""
    model = cfg.model.to_dict() if hasattr(cfg.model, "to_dict") else dict(cfg.model)
    for key in ("train_cfg", "test_cfg"):  # the schema before model.train_cfg
        if key not in model and cfg.get(key) is not None:
            model[key] = cfg[key].to_dict() if hasattr(cfg[key], "to_dict") else dict(cfg[key])
    sizes = [SIZE]
    matrix._walk(model, lambda node: sizes.append(node["input_size"])
                 if isinstance(node.get("input_size"), int) else None)
    named_pretrained = "pretrained" in model
    model = matrix.tiny(model)
    if not named_pretrained:  # MaskFormer and others take no such argument
        del model["pretrained"]
    matrix._walk(model, _census_sized)
    return model, max(sizes)


def seg_rescale(cfg):
    """The scale of gt_semantic_seg in the config's training pipeline (HTC and SCNet's
    semantic heads take it at 1/8 through SegRescale), 1 without one."""
    pipeline = cfg.get("train_pipeline") or []
    for step in pipeline:
        if step.get("type") == "SegRescale":
            return float(step.get("scale_factor", 1))
    return 1.0


# --- generated batches ------------------------------------------------------------------


def _meta(index):
    import numpy as np

    shape = (SIZE, SIZE, 3)
    return dict(filename="%d.png" % index, ori_filename="%d.png" % index, ori_shape=shape,
                img_shape=shape, pad_shape=shape, scale_factor=np.ones(4, dtype=np.float32),
                flip=False, flip_direction=None, batch_input_shape=(SIZE, SIZE),
                border=np.array([0, SIZE, 0, SIZE], dtype=np.float32),  # CenterNet's test crop: none
                img_norm_cfg=dict(mean=np.zeros(3), std=np.ones(3), to_rgb=False))


def _images(count):
    import torch

    return torch.randn(count, 3, SIZE, SIZE)


def seg_batches():
    import torch

    label = torch.zeros(2, 1, SIZE, SIZE, dtype=torch.long)
    label[:, :, SIZE // 4:3 * SIZE // 4, SIZE // 8:5 * SIZE // 8] = 1
    label[1, :, :4] = 255  # an ignored band
    train = dict(img=_images(2), img_metas=[_meta(0), _meta(1)], gt_semantic_seg=label)
    test = dict(img=[_images(1)], img_metas=[[_meta(0)]], return_loss=False, rescale=True)
    return train, test


def _boxes():
    import torch

    return torch.tensor([[8.0, 10.0, 70.0, 60.0], [50.0, 40.0, 120.0, 110.0], [20.0, 70.0, 60.0, 124.0]])


def det_batches(model, semantic_scale):
    """What ``model.forward_train`` takes: boxes and labels always, masks, a semantic map
    (at ``semantic_scale``) and proposals where it (or its RoI head) uses them."""
    import torch
    import torch.nn.functional as F
    from mmdet.core import BitmapMasks

    boxes = _boxes()
    labels = torch.tensor([0, 1, 0])
    masks = torch.zeros(3, SIZE, SIZE, dtype=torch.uint8)
    for k, (x1, y1, x2, y2) in enumerate(boxes.int().tolist()):
        masks[k, y1 + 2:y2 - 2, x1 + 2:x2 - 2] = 1
    semantic = torch.zeros(1, SIZE, SIZE, dtype=torch.long)  # the boxes as class 1 (of tiny()'s 2)
    for x1, y1, x2, y2 in boxes.int().tolist():
        semantic[0, y1:y2, x1:x2] = 1
    proposals = torch.cat([boxes + 3.0, torch.full((3, 1), 0.9)], 1)
    parameters = inspect.signature(model.forward_train).parameters
    var_keyword = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    roi_head = getattr(model, "roi_head", None)

    def wanted(key, used_by_roi_head=False):
        return key in parameters or (var_keyword and used_by_roi_head)

    train = dict(img=_images(2), img_metas=[_meta(0), _meta(1)])
    if wanted("gt_bboxes", True):
        train["gt_bboxes"] = [boxes.clone(), boxes[:2].clone()]
    if wanted("gt_labels", True):
        train["gt_labels"] = [labels.clone(), labels[:2].clone()]
    if wanted("gt_masks", getattr(roi_head, "with_mask", False)):
        train["gt_masks"] = [BitmapMasks(masks.numpy(), SIZE, SIZE), BitmapMasks(masks[:2].numpy(), SIZE, SIZE)]
    if wanted("gt_semantic_seg", getattr(roi_head, "with_semantic", False)):
        scaled = F.interpolate(semantic[None].float(), scale_factor=semantic_scale, mode="nearest").long()
        train["gt_semantic_seg"] = torch.cat([scaled, scaled])
    test = dict(img=[_images(1)], img_metas=[[_meta(0)]], return_loss=False, rescale=True)
    if getattr(model, "with_rpn", True) is False and roi_head is not None:  # Fast R-CNN
        train["proposals"] = [proposals.clone(), proposals.clone()]
        test["proposals"] = [[proposals.clone()]]
    return train, test


# --- one config ------------------------------------------------------------------------


def _first_line(exc):
    text = str(exc)
    return "%s: %s" % (type(exc).__name__, text.splitlines()[0] if text else "")


def run_config(library, path, matrix):
    """Build, train one step and test one image; what it called and how it ended."""
    import mmcv
    import torch
    from mmcv._ext import MissingCompiledOpError

    torch.manual_seed(0)
    outcome = {"config": path}
    PHASE[0] = "build"
    try:
        configs = os.path.join(os.path.dirname(sys.modules[library].__file__), ".mim", "configs")
        # Distillation configs name their teacher's config as "configs/...", relative to
        # the package's root; this process is the config's own.
        os.chdir(os.path.dirname(configs))
        cfg = mmcv.Config.fromfile(os.path.join(configs, path))
        if cfg.get("model") is None:
            raise ValueError("the config defines no model (a data or schedule config)")
        model, size = model_dict(cfg, matrix)
        model_cfg = mmcv.ConfigDict(model)
        global SIZE
        SIZE = size  # this child process runs this one config
        if library == "mmseg":
            from mmseg.models import build_segmentor as build
        else:
            from mmdet.models import build_detector as build
        model = build(model_cfg)
        model.init_weights()
        train, test = seg_batches() if library == "mmseg" else det_batches(model, seg_rescale(cfg))
        PHASE[0] = "train"
        model.train()
        outputs = model.train_step(train, None)
        outputs["loss"].backward()
        PHASE[0] = "test"
        model.eval()
        with torch.no_grad():
            model(**test)
        outcome["status"] = "pass"
    except BaseException as exc:  # noqa: B036  (a library's SystemExit counts too)
        missing = exc
        while missing is not None and not isinstance(missing, MissingCompiledOpError):
            missing = missing.__cause__ or missing.__context__
        if missing is not None:
            outcome["status"] = "missing op"
            outcome["missing_op"] = missing.op
        else:
            outcome["status"] = "error"
        # mmcv's registry re-raises a builder's error as type(e)(f"{cls}: {e}"): the
        # first exception of the chain says where it happened.
        root = exc
        while root.__context__ is not None:
            root = root.__context__
        outcome["error"] = _first_line(exc if root is exc or not str(root) else root)
        outcome["phase"] = PHASE[0]
        frames = traceback.extract_tb(root.__traceback__)
        if frames:
            filename = frames[-1].filename.split("site-packages/")[-1]
            outcome["where"] = "%s:%d" % (os.path.relpath(filename, os.path.dirname(HERE)) if filename.startswith(
                os.path.dirname(HERE)) else filename, frames[-1].lineno)
        traceback.print_exc()
    outcome["ops"] = {phase: names for phase, names in CALLS.items() if names}
    return outcome


def run_isolated(library, path, matrix, timeout, log_path):
    """run_config in a forked child: one config's crash, hang or leak stays there."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)

    def child():
        import torch

        torch.set_num_threads(1)
        with open(log_path, "w") as log:
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            writer.send(run_config(library, path, matrix))

    start = time.time()
    process = context.Process(target=child)
    process.start()
    writer.close()
    outcome = None
    if reader.poll(timeout):
        try:
            outcome = reader.recv()
        except EOFError:  # the child died before sending
            pass
    process.join(5)
    if process.is_alive():
        process.kill()
        process.join()
    if outcome is None:
        if time.time() - start >= timeout:
            outcome = {"config": path, "status": "timeout", "error": "over %d s" % timeout}
        else:
            outcome = {"config": path, "status": "crash", "error": "exit code %s" % process.exitcode}
    outcome["seconds"] = round(time.time() - start, 1)
    return outcome


def versions():
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("torch", "torchvision", "numpy", "mmcv", "mmsegmentation", "mmdet", "compatfix"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def census(args):
    import mmcv.ops  # noqa: F401  (provides mmcv._ext)

    install_recorder()
    matrix = _matrix()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.logs, exist_ok=True)
    for library in args.library:
        package = __import__(library)
        __import__(library + ".models")
        __import__(library + ".apis")
        paths = config_files(library, os.path.dirname(package.__file__), args.all)
        if args.only:
            paths = [p for p in paths if any(word in p for word in args.only)]
        result_path = os.path.join(args.out, library + ".json")
        previous = {}
        if args.only and os.path.exists(result_path):  # --only updates those entries
            with open(result_path) as f:
                previous = {c["config"]: c for c in json.load(f)["configs"]}
        for index, path in enumerate(paths):
            log_path = os.path.join(args.logs, path.replace("/", "__") + ".log")
            outcome = run_isolated(library, path, matrix, args.timeout, log_path)
            previous[path] = outcome
            print("[census] %s %d/%d %s: %s %s" % (library, index + 1, len(paths), path, outcome["status"],
                                                   outcome.get("missing_op") or outcome.get("error", "")),
                  flush=True)
        result = {"library": library, "versions": versions(), "date": time.strftime("%Y-%m-%d"),
                  "selection": "all" if args.all else "families",
                  "configs": [previous[p] for p in sorted(previous)]}
        with open(result_path, "w") as out:
            json.dump(result, out, indent=1)
            out.write("\n")


# --- the document ------------------------------------------------------------------------


def _ops_of(config):
    return sorted({name for names in config.get("ops", {}).values() for name in names
                   if not name.startswith("get_")})


def _op_family(name, fallbacks):
    """``carafe_forward`` -> ``carafe``: the op a pybind function belongs to."""
    for family, names in fallbacks.items():
        if name in names:
            return family
    for suffix in ("_forward", "_backward"):
        if suffix in name:
            return name.split(suffix)[0]
    return name


def document(out_dir):
    from compatfix.mmcv_standin.ext import FALLBACKS

    results = []
    for library in LIBRARIES:
        path = os.path.join(out_dir, library + ".json")
        if os.path.exists(path):
            with open(path) as f:
                results.append(json.load(f))
    configs = [(r["library"], c) for r in results for c in r["configs"]]
    needed: dict[str, list[tuple[str, dict]]] = {}
    for library, config in configs:
        ops = {_op_family(n, FALLBACKS) for n in _ops_of(config)}
        if config.get("missing_op"):
            ops.add(_op_family(config["missing_op"], FALLBACKS))
        for op in ops:
            needed.setdefault(op, []).append((library, config))
    counts = {status: sum(c["status"] == status for _, c in configs)
              for status in ("pass", "missing op", "error", "timeout", "crash")}
    versions = results[0]["versions"] if results else {}
    selection = SELECTIONS.get(results[0]["selection"] if results else "", SELECTIONS["families"])
    lines = [
        "# mmcv compiled ops: what the model zoo calls, and what compatfix provides",
        "",
        "Generated by `bash scripts/mmcv-ops-census.sh` (see the header of",
        "`scripts/mmcv-ops-census.py`) from `acceptance/results/mmcv-ops-census/*.json`; do not",
        "edit by hand. mmcv %s, the lite build (no compiled ops: `mmcv._ext` is compatfix's" % versions.get("mmcv"),
        "stand-in), mmsegmentation %s, mmdet %s, torch %s, in CPU mode." % (
            versions.get("mmsegmentation"), versions.get("mmdet"), versions.get("torch")),
        *textwrap.wrap("Configs: the %s." % selection, 88),
        "Each is made CPU-sized (BN for SyncBN, no pretrained weights, 2 classes, 128x128",
        "generated images) and run in its own process: build, one training step with",
        "`backward()`, one test forward, recording every `mmcv._ext` function called.",
        "Without the stand-in none of them runs: `import mmseg.models` and",
        "`import mmdet.models` fail for want of `mmcv._ext`. A config that stops at a missing",
        "op may call more ops after it; the census sees the first.",
        "",
        "%d configs: %s." % (len(configs), ", ".join("%d %s" % (n, s) for s, n in counts.items() if n)),
        "",
        "## The ops",
        "",
        "Op families with a fallback in compatfix (`compatfix/mmcv_standin/`; what each",
        "computes, and which mmcv versions call it, is in the module docstrings): %s." % ", ".join(
            "`%s`" % op for op in FALLBACKS),
        "Every other `mmcv._ext` function imports but raises `MissingCompiledOpError`, naming",
        "itself, when called. The op table counts the configs that call an op family, in",
        "training or test, and of those the ones that run through.",
        "",
        "| op | fallback | configs that call it | of which pass |",
        "|---|---|---|---|",
    ]
    for op, users in sorted(needed.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        passing = [c for _, c in users if c["status"] == "pass"]
        if len(users) > 12:  # nms, roi_align: most of mmdet (see the config table)
            names = "%d configs" % len(users)
        else:
            names = ", ".join("%s `%s`" % (lib, c["config"][:-3]) for lib, c in users)
        lines.append("| `%s` | %s | %s | %d |" % (op, "yes" if op in FALLBACKS else "**no**", names, len(passing)))
    failing = [(lib, c) for lib, c in configs if c["status"] != "pass"]
    lines += [
        "",
        "## The configs that do not run, and why",
        "",
    ]
    for library, c in failing:
        reason = "stops at the missing op `%s`" % c["missing_op"] if c.get("missing_op") else c.get("error", c["status"])
        lines.append("- %s `%s` (%s): %s%s%s" % (library, c["config"], c.get("phase", c["status"]), reason,
                                                 " (%s)" % c["where"] if c.get("where") else "",
                                                 ": " + NOTES[c["config"]] if c["config"] in NOTES else ""))
    if not failing:
        lines.append("None.")
    lines += [
        "",
        "## The configs",
        "",
        "| package | config | status | `mmcv._ext` calls (train; test) | error | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for library, c in configs:
        ops = c.get("ops", {})
        calls = "; ".join(", ".join(n for n in ops.get(phase, []) if not n.startswith("get_")) or "-"
                          for phase in ("train", "test"))
        if ops.get("build"):
            calls = "build: %s; %s" % (", ".join(ops["build"]), calls)
        error = c.get("error", "")
        if c.get("where"):
            error += " (%s)" % c["where"]
        status = c["status"] + (" `%s`" % c["missing_op"] if c.get("missing_op") else "")
        lines.append("| %s | `%s` | %s | %s | %s | %s |" % (
            library, c["config"], status, calls, error.replace("|", "/")[:180], c.get("seconds", "")))
    dates = sorted({r.get("date", "?") for r in results})
    lines += ["", "Last run: %s." % ", ".join(dates), ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", nargs="+", default=list(LIBRARIES), choices=list(LIBRARIES))
    parser.add_argument("--only", nargs="+", help="run only configs whose path contains one of these")
    parser.add_argument("--all", action="store_true", help="every config, not one per family")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per config")
    parser.add_argument("--out", default=os.path.join(HERE, "..", "acceptance", "results", "mmcv-ops-census"))
    parser.add_argument("--logs", default="census-logs", help="one log per config")
    parser.add_argument("--doc", metavar="OUT_MD", help="only write the document from --out's JSONs")
    args = parser.parse_args()
    if args.doc:
        with open(args.doc, "w") as out:
            out.write(document(args.out))
        return 0
    census(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
