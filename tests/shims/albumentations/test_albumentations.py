"""albumentations 1.x keywords, transforms and module path against the real
albumentations 2.0.8 of the py312 stack. With compatfix off, 2.x warns about the old
keywords and ignores them, and the old names are missing; with it on, each keeps its 1.x
meaning, checked against values computed here without the shim: today's p=1.0 output of
the same seed, OpenCV's own JPEG round trip at the asked quality, the flips written as
numpy slices, and 1.x's brightness/contrast formula (out = img * alpha + beta * 255)."""

from __future__ import annotations

import textwrap
from importlib.metadata import PackageNotFoundError, version

import pytest

from support import clean_env, run_python

# py312 has albumentations 2.0.8, py313 2.0.0: the two ends of the 2.x line, on either
# side of 2.0.7, which removed albumentations.augmentations.transforms.
pytestmark = pytest.mark.stack("py312", "py313")
try:
    MODULE_REMOVED = tuple(int(part) for part in version("albumentations").split(".")[:3]) >= (2, 0, 7)
except PackageNotFoundError:  # a stack without albumentations collects this file, then deselects it
    MODULE_REMOVED = False

PREAMBLE = """
import warnings
import numpy as np
import albumentations as A
IMG = np.random.default_rng(0).integers(0, 256, (40, 60, 3), dtype=np.uint8)

def run(transform, seed, **data):
    transform.set_random_seed(seed)
    return transform(image=IMG, **data)
"""



def program(body: str) -> str:
    return PREAMBLE + textwrap.dedent(body)


SIGNATURES = PREAMBLE + """
import inspect
print([name in inspect.signature(cls).parameters for cls, name in (
    (A.HorizontalFlip, "always_apply"), (A.RandomCrop, "always_apply"), (A.ImageCompression, "quality_lower"),
    (A.ImageCompression, "quality_upper"), (A.RandomResizedCrop, "height"), (A.RandomResizedCrop, "width"))])
print([hasattr(A, name) for name in ("JpegCompression", "RandomBrightness", "RandomContrast", "Flip")])
"""


def test_the_old_api_is_missing_or_ignored_without_compatfix():
    result = run_python(code=SIGNATURES, compatfix=False)
    assert result.stdout.split("\n")[:2] == [str([False] * 6), str([False] * 4)], result.stderr[-2000:]
    result = run_python(code=program("""
        warnings.simplefilter("ignore")
        flip = A.HorizontalFlip(always_apply=True)
        print(all((run(flip, seed)["image"] == IMG[:, ::-1]).all() for seed in range(20)))
        try:
            import albumentations.augmentations.transforms as T
            print(sorted(n for n in ("Flip", "JpegCompression", "RandomBrightness", "RandomContrast") if hasattr(T, n)))
        except ImportError:
            print("no module")
        """), compatfix=False)
    # before 2.0.7 the module is albumentations' own, without the removed transforms
    assert result.stdout.split("\n")[:2] == ["False", "no module" if MODULE_REMOVED else "[]"], \
        result.stderr[-2000:]


def test_each_shim_is_its_own():
    for disabled, expected in [
        ("albumentations.always_apply", [False, False, True, True, True, True]),
        ("albumentations.ImageCompression.quality_lower", [True, True, False, False, True, True]),
        ("albumentations.RandomResizedCrop.height_width", [True, True, True, True, False, False]),
    ]:
        result = run_python(code=SIGNATURES, env=clean_env(COMPATFIX_DISABLE=disabled))
        assert result.stdout.split("\n")[0] == str(expected), (disabled, result.stderr[-2000:])
    result = run_python(code=SIGNATURES, env=clean_env(COMPATFIX_DISABLE="albumentations.JpegCompression"))
    assert result.stdout.split("\n")[1] == str([False, False, False, True]), result.stderr[-2000:]
    result = run_python(code=SIGNATURES, env=clean_env(COMPATFIX_DISABLE="albumentations.Flip"))
    assert result.stdout.split("\n")[1] == str([True, True, True, False]), result.stderr[-2000:]
    module = program("""
        print(hasattr(A.augmentations, "transforms"))
        try:
            import albumentations.augmentations.transforms as T
            print(hasattr(T, "RandomBrightness"))
        except ImportError:
            print("no module")
        """)
    if MODULE_REMOVED:
        result = run_python(code=module, env=clean_env(COMPATFIX_DISABLE="albumentations.augmentations.transforms"))
        assert result.stdout.split("\n")[1] == "no module", result.stderr[-2000:]
        result = run_python(code=module, env=clean_env(
            COMPATFIX_DISABLE="albumentations.augmentations.transforms.attribute"))
        assert result.stdout.split("\n")[:2] == ["False", "True"], result.stderr[-2000:]
    else:
        result = run_python(code=module, env=clean_env(
            COMPATFIX_DISABLE="albumentations.augmentations.transforms.restored_transforms"))
        assert result.stdout.split("\n")[:2] == ["True", "False"], result.stderr[-2000:]
        # the restored names are served from the module only while their own shim is on
        result = run_python(code=module, env=clean_env(COMPATFIX_DISABLE="albumentations.JpegCompression"))
        assert result.stdout.split("\n")[:2] == ["True", "False"], result.stderr[-2000:]


def test_signatures_show_the_old_keywords():
    result = run_python(code=SIGNATURES)
    assert result.stdout.split("\n")[:2] == [str([True] * 6), str([True] * 4)], result.stderr[-2000:]


def test_always_apply_applies_the_transform_every_time():
    result = run_python(code=program("""
        warnings.simplefilter("error")  # 2.x's "not valid for transform" warning must not come
        flip = A.HorizontalFlip(always_apply=True)
        assert flip.p == 1.0
        assert all((run(flip, seed)["image"] == IMG[:, ::-1]).all() for seed in range(20))
        # a random transform: the same output as today's p=1.0 with the same seed
        for seed in range(5):
            old = run(A.Rotate(limit=30, always_apply=True), seed)["image"]
            assert (old == run(A.Rotate(limit=30, p=1.0), seed)["image"]).all()
        assert A.HorizontalFlip(always_apply=False).p == 0.5 and A.HorizontalFlip(p=0.3).p == 0.3
        for make in (lambda: A.RandomCrop(20, 20, always_apply=True), lambda: A.CenterCrop(20, 20, always_apply=True),
                     lambda: A.Resize(20, 30, always_apply=True), lambda: A.RandomRotate90(always_apply=True),
                     lambda: A.RandomResizedCrop(size=(20, 30), always_apply=True)):
            assert make().p == 1.0
        print("ok")
        """))
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


# A 1.x custom transform: its own keywords, then always_apply and p handed to the base by
# position, as 1.x's BasicTransform(always_apply=False, p=0.5) took them.
OLD_CUSTOM_TRANSFORM = program("""
    class AddShift(A.ImageOnlyTransform):
        def __init__(self, shift=1, always_apply=False, p=0.5):
            super().__init__(always_apply, p)
            self.shift = shift

        def apply(self, img, **params):
            return img + self.shift

    class AddOne(A.ImageOnlyTransform):
        def __init__(self, always_apply=False):
            super().__init__(always_apply)

        def apply(self, img, **params):
            return img + 1

    print(AddShift(2, False, 0.3).p, AddShift(2).p, AddShift(2, True, 0.0).p, AddOne().p)
    applied = [(run(AddShift(2), seed)["image"] == IMG + 2).all() for seed in range(40)]
    print(0 < sum(applied) < 40)
    print(A.HorizontalFlip(0.3).p, A.HorizontalFlip(p=0.2).p)  # today's calls are unchanged
    """)


def test_a_1x_custom_transform_passing_always_apply_and_p_by_position():
    result = run_python(code=OLD_CUSTOM_TRANSFORM, compatfix=False)
    # today's base reads the bool as p: False gives p=0, a transform that never runs
    assert result.stdout.split("\n")[:3] == ["0.0 0.0 1.0 0.0", "False", "0.3 0.2"], result.stderr[-2000:]
    result = run_python(code=OLD_CUSTOM_TRANSFORM)
    # 1.x: p as given (0.5 by default), always_apply=True applies whatever p says
    assert result.stdout.split("\n")[:3] == ["0.3 0.5 1.0 0.5", "True", "0.3 0.2"], result.stderr[-2000:]
    result = run_python(code=OLD_CUSTOM_TRANSFORM, env=clean_env(
        COMPATFIX_DISABLE="albumentations.BasicTransform.positional_always_apply"))
    assert result.stdout.split("\n")[0] == "0.0 0.0 1.0 0.0", result.stderr[-2000:]


def test_image_compression_quality_bounds_and_jpeg_compression():
    result = run_python(code=program("""
        import cv2
        warnings.simplefilter("error")

        def jpeg(quality):  # OpenCV's own round trip, as 1.x's image_compression did it
            ok, encoded = cv2.imencode(".jpg", IMG, (int(cv2.IMWRITE_JPEG_QUALITY), quality))
            return cv2.imdecode(encoded, cv2.IMREAD_UNCHANGED)

        assert not (jpeg(20) == jpeg(99)).all()
        compress = A.ImageCompression(quality_lower=20, quality_upper=20, p=1.0)
        assert compress.quality_range == (20, 20) and (run(compress, 0)["image"] == jpeg(20)).all()
        assert A.ImageCompression(quality_lower=40).quality_range == (40, 100)
        assert A.ImageCompression(quality_upper=99).quality_range == (99, 99)
        assert A.ImageCompression(quality_range=(30, 50)).quality_range == (30, 50)
        old = A.JpegCompression(quality_lower=20, quality_upper=20, p=1.0)
        assert isinstance(old, A.ImageCompression) and (run(old, 0)["image"] == jpeg(20)).all()
        assert A.JpegCompression().p == 0.5 and A.JpegCompression(always_apply=True).p == 1.0
        # serialized as 1.x did, and read back
        restored = A.from_dict(A.Compose([A.JpegCompression(quality_lower=20, quality_upper=30)]).to_dict())
        assert type(restored.transforms[0]).__name__ == "JpegCompression"
        assert restored.transforms[0].quality_range == (20, 30)
        print("ok")
        """))
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_random_resized_crop_height_and_width():
    result = run_python(code=program("""
        warnings.simplefilter("error")
        for seed in range(3):
            today = run(A.RandomResizedCrop(size=(20, 30), scale=(0.5, 1.0)), seed)["image"]
            assert today.shape == (20, 30, 3)
            by_keyword = run(A.RandomResizedCrop(height=20, width=30, scale=(0.5, 1.0)), seed)["image"]
            positional = run(A.RandomResizedCrop(20, 30, (0.5, 1.0)), seed)["image"]
            assert (by_keyword == today).all() and (positional == today).all()
        # 1.x's whole positional layout: height, width, scale, ratio, interpolation, always_apply, p
        crop = A.RandomResizedCrop(20, 30, (0.5, 1.0), (1.0, 1.0), 0, False, 0.25)
        assert crop.size == (20, 30) and crop.scale == (0.5, 1.0) and crop.ratio == (1.0, 1.0)
        assert crop.interpolation == 0 and crop.p == 0.25
        try:
            A.RandomResizedCrop(height=20)
        except TypeError:
            print("ok")
        """))
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_random_brightness_and_random_contrast_follow_the_1x_formula():
    result = run_python(code=program("""
        mid = np.full((8, 8, 3), 100, dtype=np.uint8)
        betas, alphas = set(), set()
        for seed in range(10):
            brighter = A.RandomBrightness(limit=0.2, p=1.0)
            brighter.set_random_seed(seed)
            out = brighter(image=mid)["image"].astype(int) - 100
            assert len(np.unique(out)) == 1 and abs(out.flat[0]) <= 51  # + beta * 255, |beta| <= 0.2
            betas.add(int(out.flat[0]))
            contrast = A.RandomContrast(limit=0.2, p=1.0)
            contrast.set_random_seed(seed)
            out = contrast(image=mid)["image"].astype(int)
            assert len(np.unique(out)) == 1 and 80 <= out.flat[0] <= 120  # * alpha, alpha in [0.8, 1.2]
            alphas.add(int(out.flat[0]))
            same = A.RandomBrightnessContrast(brightness_limit=0.2, contrast_limit=0, p=1.0)
            same.set_random_seed(seed)
            brighter.set_random_seed(seed)
            assert (brighter(image=IMG)["image"] == same(image=IMG)["image"]).all()
        assert len(betas) > 1 and len(alphas) > 1
        assert isinstance(A.RandomBrightness(), A.RandomBrightnessContrast) and A.RandomContrast().p == 0.5
        assert A.RandomBrightness(0.3).to_dict()["transform"]["limit"] == (-0.3, 0.3)
        print("ok")
        """))
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_flip_is_one_of_the_three_flips():
    result = run_python(code=program("""
        flips = [IMG[::-1], IMG[:, ::-1], IMG[::-1, ::-1]]  # 1.x's codes 0, 1, -1
        h, w = IMG.shape[:2]
        point = (10.0, 5.0)
        moved = [(10.0, h - 1 - 5.0), (w - 1 - 10.0, 5.0), (w - 1 - 10.0, h - 1 - 5.0)]
        counts = [0, 0, 0]
        flip = A.Compose([A.Flip(p=1.0)], keypoint_params=A.KeypointParams(format="xy"))
        for seed in range(300):
            flip.set_random_seed(seed)
            out = flip(image=IMG, keypoints=[point])
            which = [i for i, expected in enumerate(flips) if (out["image"] == expected).all()]
            assert len(which) == 1
            counts[which[0]] += 1
            assert np.allclose(out["keypoints"][0][:2], moved[which[0]], atol=1.0), (out["keypoints"], which)
        assert all(60 < c < 140 for c in counts), counts
        never = A.Flip(p=0.0)
        assert (never(image=IMG)["image"] == IMG).all() and A.Flip().p == 0.5
        print("ok")
        """))
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_the_old_module_path():
    result = run_python(code=program("""
        from albumentations.augmentations.transforms import Normalize, HueSaturationValue, RandomBrightness, Flip
        import albumentations.augmentations.transforms as T
        assert Normalize is A.Normalize and HueSaturationValue is A.HueSaturationValue and T.Flip is A.Flip
        assert A.augmentations.transforms is T and RandomBrightness is A.RandomBrightness
        assert not hasattr(T, "Cutout")  # gone from albumentations in every form
        print("ok")
        """))
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_old_pipelines_pickle_as_dataloader_workers_need():
    result = run_python(code=program("""
        import copy, pickle
        pipeline = A.Compose([A.HorizontalFlip(always_apply=True), A.RandomBrightness(0.2, p=1.0), A.Flip(p=1.0),
                              A.JpegCompression(p=1.0), A.RandomResizedCrop(height=20, width=30)])
        for copied in (pickle.loads(pickle.dumps(pipeline)), copy.deepcopy(pipeline)):
            names = [type(t).__name__ for t in copied.transforms]
            assert names == ["HorizontalFlip", "RandomBrightness", "Flip", "JpegCompression", "RandomResizedCrop"]
            assert copied.transforms[0].p == 1.0 and copied(image=IMG)["image"].shape == (20, 30, 3)
        # by reference, to the 1.x module path, as 1.x's classes were
        assert type(pickle.loads(pickle.dumps(A.Flip()))) is A.Flip
        print("ok")
        """))
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_a_basic_transform_that_kept_1x_order_is_left_alone():
    # a fork or build whose BasicTransform still takes (always_apply, p): nothing to change
    import types

    from compatfix.shims.albumentations import accept_positional_always_apply

    class BasicTransform:
        def __init__(self, always_apply=False, p=0.5):
            self.always_apply, self.p = always_apply, p

    original = BasicTransform.__init__
    reason = accept_positional_always_apply(types.SimpleNamespace(BasicTransform=BasicTransform))
    assert reason == "BasicTransform.__init__ does not take p first here"
    assert BasicTransform.__init__ is original and BasicTransform(True, 0.3).p == 0.3
