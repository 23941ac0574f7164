"""Tiny synthetic data sets in the layouts that 2020-22 repositories read.

Images are random but deterministic (seeded), so a run is reproducible; classes differ in
their mean colour, so a classifier can learn something in a few steps.
"""

from __future__ import annotations

import os
import random
import struct
import zlib


def _png(path: str, width: int, height: int, pixel) -> None:
    """Write an 8-bit RGB (or grayscale when ``pixel`` returns an int) PNG, stdlib only:
    the harness must not depend on the stack it is testing."""
    sample = pixel(0, 0)
    gray = isinstance(sample, int)
    rows = bytearray()
    for y in range(height):
        rows.append(0)  # filter: none
        for x in range(width):
            value = pixel(x, y)
            rows.extend([value] if gray else value)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 0 if gray else 2, 0, 0, 0)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(rows)))
                     + chunk(b"IEND", b""))


def _noisy_image(rng: random.Random, base: tuple[int, int, int]):
    noise = [[tuple(max(0, min(255, c + rng.randint(-40, 40))) for c in base) for _ in range(64)] for _ in range(64)]
    return lambda x, y: noise[y % 64][x % 64]


def image_folder(root: str, classes: int = 2, per_class: int = 4, size: int = 32,
                 splits: tuple[str, ...] = ("train", "val"), extension: str = ".png") -> None:
    """``root/<split>/<class>/<n>.png`` (torchvision ImageFolder, ImageNet layout)."""
    rng = random.Random(0)
    for split in splits:
        for index in range(classes):
            base = tuple(int(255 * ((index + 1) * k % 7) / 7) for k in (1, 3, 5))
            for n in range(per_class):
                _png(os.path.join(root, split, "class%d" % index, "%d%s" % (n, extension)),
                     size, size, _noisy_image(rng, base))


def segmentation_folder(root: str, images: int = 4, size: int = 64, classes: int = 3,
                        image_dir: str = "images", label_dir: str = "annotations",
                        splits: tuple[str, str] = ("training", "validation"),
                        image_suffix: str = ".jpg", label_suffix: str = ".png",
                        label_ids: tuple[int, ...] | None = None) -> list[tuple[str, str, str]]:
    """``root/<image_dir>/<split>/<n><image_suffix>`` (PNG bytes: readers decode by content) and the label maps beside them
    (ADE20K layout by default: images/training/*.jpg, annotations/training/*.png).

    Labels are vertical bands of class ids 0..classes-1 (ADE20K uses 0 for "other", which
    ``reduce_zero_label`` maps to 255), or the values ``label_ids[i]`` where a data set's label
    maps store raw ids (Cityscapes' labelIds: 7 road, 8 sidewalk, 11 building); images are
    coloured by their label. Returns (split, image path, label path) relative to ``root``,
    for data sets that read list files.
    """
    values = list(label_ids) if label_ids is not None else list(range(classes))
    written = []
    rng = random.Random(1)
    colours = [tuple(rng.randint(0, 255) for _ in range(3)) for _ in range(classes)]
    for split in splits:
        for n in range(images):
            offset = rng.randint(0, size)

            def label(x, y, offset=offset):
                return ((x + offset) * classes // size) % classes

            stem = "img%d" % n
            label_path = os.path.join(label_dir, split, stem + label_suffix)
            image_path = os.path.join(image_dir, split, stem + image_suffix)
            _png(os.path.join(root, label_path), size, size, lambda x, y: values[label(x, y)])
            _png(os.path.join(root, image_path), size, size,
                 lambda x, y: tuple(max(0, min(255, c + rng.randint(-20, 20))) for c in colours[label(x, y)]))
            written.append((split, image_path, label_path))
    return written


def coco_folder(root: str, images: int = 4, size: int = 64, categories: tuple[str, ...] = ("person", "car"),
                splits: tuple[str, ...] = ("train2017", "val2017")) -> None:
    """COCO instance layout: ``root/<split>/<n>.jpg`` (PNG bytes) and
    ``root/annotations/instances_<split>.json``. Each image has one filled rectangle per
    category, in the category's colour, on a grey background; its box, polygon and area
    are the annotation. Category ids are COCO's own (person 1, car 3, ...), names as in COCO.
    """
    import json

    coco_ids = {"person": 1, "bicycle": 2, "car": 3, "motorcycle": 4, "airplane": 5, "bus": 6}
    rng = random.Random(2)
    colours = [tuple(rng.randint(0, 255) for _ in range(3)) for _ in categories]
    os.makedirs(os.path.join(root, "annotations"), exist_ok=True)
    for split in splits:
        listing: dict[str, list] = {"images": [], "annotations": [],
                                    "categories": [{"id": coco_ids[name], "name": name} for name in categories]}
        for n in range(images):
            boxes = []
            for index, name in enumerate(categories):
                w, h = rng.randint(size // 4, size // 2), rng.randint(size // 4, size // 2)
                x, y = rng.randint(0, size - w), rng.randint(0, size - h)
                boxes.append((index, x, y, w, h))

            def pixel(px, py, boxes=boxes):
                for index, x, y, w, h in reversed(boxes):
                    if x <= px < x + w and y <= py < y + h:
                        return colours[index]
                return (128, 128, 128)

            image_id = len(listing["images"]) + 1
            _png(os.path.join(root, split, "%d.jpg" % n), size, size, pixel)
            listing["images"].append({"id": image_id, "file_name": "%d.jpg" % n, "width": size, "height": size})
            for index, x, y, w, h in boxes:
                listing["annotations"].append({
                    "id": len(listing["annotations"]) + 1, "image_id": image_id,
                    "category_id": coco_ids[categories[index]], "bbox": [x, y, w, h], "area": w * h, "iscrowd": 0,
                    "segmentation": [[x, y, x + w, y, x + w, y + h, x, y + h]]})
        with open(os.path.join(root, "annotations", "instances_%s.json" % split), "w") as handle:
            json.dump(listing, handle)


def mnist_raw(root: str, train: int = 60000, test: int = 100) -> None:
    """``root/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte``: what torchvision's
    MNIST reads (and, finding them, does not download). ``train`` is 60000 by default
    because 2020-22 code splits the training set with fixed sizes (55000 + 5000). Pixels are
    random; the label is the image's index modulo 10."""
    rng = random.Random(0)
    folder = os.path.join(root, "MNIST", "raw")
    os.makedirs(folder, exist_ok=True)
    for prefix, count in (("train", train), ("t10k", test)):
        with open(os.path.join(folder, "%s-images-idx3-ubyte" % prefix), "wb") as handle:
            handle.write(struct.pack(">IIII", 2051, count, 28, 28) + rng.randbytes(count * 28 * 28))
        with open(os.path.join(folder, "%s-labels-idx1-ubyte" % prefix), "wb") as handle:
            handle.write(struct.pack(">II", 2049, count) + bytes(n % 10 for n in range(count)))


def text_corpus(root: str, words: int = 2000, vocabulary: int = 50,
                names: tuple[str, ...] = ("train.txt", "valid.txt", "test.txt"), first_line: str = "") -> None:
    """``root/{train,valid,test}.txt`` (Wikitext-2's layout): lines of words from a small
    vocabulary, each file ``words`` words long, in short lines as Wikitext's, after
    ``first_line`` (text whose characters a script needs in the vocabulary)."""
    rng = random.Random(2)
    vocab = ["w%d" % n for n in range(vocabulary)]
    os.makedirs(root, exist_ok=True)
    for name in names:
        with open(os.path.join(root, name), "w") as handle:
            handle.write(first_line + "\n" if first_line else "")
            for _ in range(words // 10):
                handle.write(" " + " ".join(rng.choice(vocab) for _ in range(10)) + " \n")


def video_frames(root: str, classes: int = 2, per_class: int = 3, frames: int = 8, size: int = 32,
                 annotation: str = "kinetics.json", video_dir: str = "jpg") -> None:
    """Videos as folders of frames, ``root/<video_dir>/<label>/<video id>/image_00001.jpg``
    (PNG bytes: readers decode by content), and the ActivityNet-style annotation file that
    3D-CNN repositories of 2019-21 read: labels, and per video its subset ("training" or
    "validation") and ``segment`` [1, frames + 1]. Every video is in both subsets'
    sizes: ``per_class`` of each class in each."""
    rng = random.Random(3)
    database = {}
    for index in range(classes):
        label = "class%d" % index
        base = tuple(int(255 * ((index + 1) * k % 7) / 7) for k in (1, 3, 5))
        for subset in ("training", "validation"):
            for n in range(per_class):
                video = "%s_%s_%d" % (label, subset, n)
                for frame in range(1, frames + 1):
                    _png(os.path.join(root, video_dir, label, video, "image_%05d.jpg" % frame), size, size,
                         _noisy_image(rng, base))
                database[video] = {"subset": subset, "annotations": {"label": label, "segment": [1, frames + 1]}}
    import json

    with open(os.path.join(root, annotation), "w") as handle:
        json.dump({"labels": ["class%d" % index for index in range(classes)], "database": database}, handle)


def yolo_folder(root: str, images: int = 4, size: int = 64, classes: tuple[str, ...] = ("thing",)) -> None:
    """Darknet's layout, as YOLO repositories of 2019-21 read it: ``root/images/<n>.jpg``
    (PNG bytes: readers decode by content), ``root/labels/<n>.txt`` with one box per image
    (``class x_center y_center width height``, scaled to [0, 1]), train.txt and valid.txt
    listing the images' absolute paths, classes.names, and ``custom.data`` naming them."""
    rng = random.Random(4)
    paths = []
    for n in range(images):
        x0, y0 = rng.randint(0, size // 2), rng.randint(0, size // 2)
        w, h = rng.randint(size // 4, size // 2), rng.randint(size // 4, size // 2)

        def pixel(x, y, x0=x0, y0=y0, w=w, h=h):
            return (230, 40, 40) if x0 <= x < x0 + w and y0 <= y < y0 + h else (30, 30, 90)
        path = os.path.join(root, "images", "%d.jpg" % n)
        _png(path, size, size, pixel)
        os.makedirs(os.path.join(root, "labels"), exist_ok=True)
        with open(os.path.join(root, "labels", "%d.txt" % n), "w") as handle:
            handle.write("0 %.4f %.4f %.4f %.4f\n" % ((x0 + w / 2) / size, (y0 + h / 2) / size, w / size, h / size))
        paths.append(os.path.abspath(path))
    for name in ("train.txt", "valid.txt"):
        with open(os.path.join(root, name), "w") as handle:
            handle.write("\n".join(paths) + "\n")
    with open(os.path.join(root, "classes.names"), "w") as handle:
        handle.write("\n".join(classes) + "\n")
    with open(os.path.join(root, "custom.data"), "w") as handle:
        handle.write("classes=%d\ntrain=%s\nvalid=%s\nnames=%s\n" % (
            len(classes), os.path.join(os.path.abspath(root), "train.txt"),
            os.path.join(os.path.abspath(root), "valid.txt"), os.path.join(os.path.abspath(root), "classes.names")))


def shapenet_parts(root: str, categories: tuple[tuple[str, str], ...] = (("Airplane", "02691156"), ("Bag", "02773838")),
                   per_split: int = 4, points: int = 64) -> None:
    """ShapeNet part segmentation's layout (shapenetcore_partanno_segmentation_benchmark):
    synsetoffset2category.txt, ``<synset>/points/<id>.pts`` (one "x y z" line per point),
    ``<synset>/points_label/<id>.seg`` (a part id per point) and
    train_test_split/shuffled_{train,val,test}_file_list.json. Each category is a blob
    around its own centre, so a classifier can tell them apart."""
    rng = random.Random(5)
    os.makedirs(os.path.join(root, "train_test_split"), exist_ok=True)
    with open(os.path.join(root, "synsetoffset2category.txt"), "w") as handle:
        handle.write("".join("%s\t%s\n" % pair for pair in categories))
    import json

    for split in ("train", "val", "test"):
        listed = []
        for index, (_, synset) in enumerate(categories):
            for n in range(per_split):
                shape = "%s_%d" % (split, n)
                for folder in ("points", "points_label"):
                    os.makedirs(os.path.join(root, synset, folder), exist_ok=True)
                with open(os.path.join(root, synset, "points", shape + ".pts"), "w") as pts, \
                        open(os.path.join(root, synset, "points_label", shape + ".seg"), "w") as seg:
                    for _ in range(points):
                        xyz = [index * 2 + rng.gauss(0, 0.5) for _ in range(3)]
                        pts.write("%.4f %.4f %.4f\n" % tuple(xyz))
                        seg.write("%d\n" % (1 + (xyz[0] > index * 2)))
                listed.append("shape_data/%s/%s" % (synset, shape))
        with open(os.path.join(root, "train_test_split", "shuffled_%s_file_list.json" % split), "w") as handle:
            json.dump(listed, handle)


def paired_folder(root: str, splits: dict[str, int] | None = None, size: int = 128,
                  clean: str = "groundtruth", degraded: str = "input") -> None:
    """Image restoration's paired layout (SIDD patches as denoising repositories read them):
    ``root/<split>/<clean>/<n>.png`` and the same name under ``<degraded>/``, a smooth image
    and a noisy copy of it."""
    rng = random.Random(6)
    for split, count in (splits or {"train": 8, "val": 2}).items():
        for n in range(count):
            base = tuple(rng.randint(40, 215) for _ in range(3))

            def smooth(x, y, base=base):
                return tuple(max(0, min(255, c + (x + y) % 32 - 16)) for c in base)
            noisy = _noisy_image(rng, base)
            _png(os.path.join(root, split, clean, "%d.png" % n), size, size, smooth)
            _png(os.path.join(root, split, degraded, "%d.png" % n), size, size,
                 lambda x, y, smooth=smooth, noisy=noisy: tuple((a + b) // 2 for a, b in zip(smooth(x, y), noisy(x, y))))
