"""pycocotools.mmpycocotools_api: mmdet 2.3-2.11 need mmpycocotools (OpenMMLab's
pycocotools fork), which no longer builds; compatfix gives official pycocotools the
fork's snake_case COCO API and lets mmdet.datasets.coco read the fork's version.

The real mmdet 2.10 is on the mmold stack (installed with pycocotools in place of
mmpycocotools, requirements/mmold-nodeps.txt); the API itself is checked on modern too.
Expected values are worked out by hand from the tiny annotation file below.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from support import clean_env, run_python

SHIM = "pycocotools.mmpycocotools_api"
# Two images, two categories: image 1 has one box of each, image 2 one box of "b".
ANNOTATIONS = dict(
    images=[dict(id=1, file_name="1.png", width=64, height=64),
            dict(id=2, file_name="2.png", width=64, height=64)],
    annotations=[dict(id=10, image_id=1, category_id=1, bbox=[2, 2, 20, 20], area=400, iscrowd=0),
                 dict(id=11, image_id=1, category_id=2, bbox=[30, 30, 20, 20], area=400, iscrowd=0),
                 dict(id=12, image_id=2, category_id=2, bbox=[8, 8, 30, 30], area=900, iscrowd=0)],
    categories=[dict(id=1, name="a"), dict(id=2, name="b")],
)


def write_annotations(tmp_path):
    path = tmp_path / "ann.json"
    path.write_text(json.dumps(ANNOTATIONS))
    return str(path)


@pytest.mark.stack("modern", "mmold")
def test_fork_api_answers_like_the_fork(tmp_path):
    code = textwrap.dedent("""
        import sys, pycocotools
        from pycocotools.coco import COCO
        from compatfix.openmmlab import cocoapi
        cocoapi.add_fork_api(pycocotools)
        coco = COCO(sys.argv[1])
        print("CATS", coco.get_cat_ids(cat_names=["b"]), coco.get_cat_ids())
        print("ANNS", coco.get_ann_ids(img_ids=[1]), coco.get_ann_ids(cat_ids=[2]))
        print("IMGS", coco.get_img_ids(cat_ids=[2]), coco.get_img_ids(img_ids=[2]))
        print("LOAD", [a["id"] for a in coco.load_anns([12])], coco.load_cats([1])[0]["name"],
              coco.load_imgs([2])[0]["file_name"])
        print("MAPS", sorted(a["id"] for a in coco.img_ann_map[1]), sorted(coco.cat_img_map[2]))
        print("VERSION", hasattr(pycocotools, "__version__"))
    """)
    result = run_python("-c", code, write_annotations(tmp_path), env=clean_env(compatfix=False))
    out = result.stdout
    assert "CATS [2] [1, 2]" in out, out + result.stderr
    assert "ANNS [10, 11] [11, 12]" in out
    assert "IMGS [1, 2] [2]" in out
    assert "LOAD [12] a 2.png" in out
    assert "MAPS [10, 11] [1, 2]" in out
    assert "VERSION False" in out  # only mmdet.datasets.coco is shown the fork's version


MMDET_EVAL = textwrap.dedent("""
    import sys
    import numpy as np
    from mmdet.apis import train_detector  # noqa: F401  (mmdet <= 2.10 fails here without the fix)
    from mmdet.datasets import CocoDataset
    dataset = CocoDataset(ann_file=sys.argv[1], pipeline=[], img_prefix="", classes=("a", "b"))
    # Perfect detections: every ground-truth box, score 1 -> COCO bbox mAP 1.0.
    results = []
    for info in dataset.data_infos:
        boxes = [np.zeros((0, 5), np.float32), np.zeros((0, 5), np.float32)]
        for ann in dataset.coco.load_anns(dataset.coco.get_ann_ids(img_ids=[info["id"]])):
            x, y, w, h = ann["bbox"]
            label = dataset.cat2label[ann["category_id"]]
            boxes[label] = np.vstack([boxes[label], [[x, y, x + w, y + h, 1.0]]]).astype(np.float32)
        results.append(boxes)
    metrics = dataset.evaluate(results, metric="bbox")
    import pycocotools
    print("MAP", round(metrics["bbox_mAP"], 3), "VERSION", hasattr(pycocotools, "__version__"))
""")


@pytest.mark.stack("mmold")
def test_mmdet_2_10_coco_needs_the_fork_without_the_fix(tmp_path):
    off = run_python("-c", MMDET_EVAL, write_annotations(tmp_path), env=clean_env(COMPATFIX_DISABLE=SHIM))
    assert "AttributeError: module 'pycocotools' has no attribute '__version__'" in off.stderr, off.stderr[-2000:]


@pytest.mark.stack("mmold")
def test_mmdet_2_10_coco_dataset_and_evaluation_run_on_official_pycocotools(tmp_path):
    on = run_python("-c", MMDET_EVAL, write_annotations(tmp_path), env=clean_env())
    assert "MAP 1.0 VERSION False" in on.stdout, on.stdout[-2000:] + on.stderr[-3000:]
    assert "compatfix: this mmdet's COCO dataset needs mmpycocotools" in on.stderr
