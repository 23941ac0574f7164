"""mmpycocotools' API on today's pycocotools, for mmdet 2.3-2.11.

``pycocotools.mmpycocotools_api``
    mmdet 2.3 (2020-08) moved its COCO dataset onto ``mmpycocotools``, OpenMMLab's fork of
    pycocotools: the same ``pycocotools`` package with snake_case aliases of the COCO
    index API (``get_ann_ids``, ``get_cat_ids``, ``get_img_ids``, ``load_anns``,
    ``load_cats``, ``load_imgs``, and the ``img_ann_map``/``cat_img_map`` indexes) and a
    ``__version__`` of 12.0.x, which mmdet checks (``assert pycocotools.__version__ >=
    '12.0.2'`` at import up to 2.10, in ``CocoDataset.load_annotations`` in 2.11). mmdet
    2.12 wrapped official pycocotools itself and dropped the check. The fork no longer
    installs: its last sdist (12.0.3) lacks its generated C source and fails to build.
    With official pycocotools, ``import mmdet.apis`` of mmdet <= 2.10 fails with
    ``AttributeError: module 'pycocotools' has no attribute '__version__'``, and 2.11's
    CocoDataset with "Incompatible version of pycocotools is installed".

    The fix, before ``mmdet.datasets.coco`` runs: where ``pycocotools.coco.COCO`` lacks
    them, add the fork's aliases, each calling the official method with the same
    arguments (the fork's keyword names, in the official order); and let code of
    ``mmdet.datasets.coco`` (only that module) read ``pycocotools.__version__`` as
    ``12.0.3``, the fork release whose API this is. Everything else still finds no
    ``__version__`` on official pycocotools. Nothing changes where the fork itself (or
    anything with a ``__version__``) is installed.
"""

from __future__ import annotations

import sys
from types import ModuleType

from compatfix import patching

SHIM_NAME = "pycocotools.mmpycocotools_api"
CONSUMER = "mmdet.datasets.coco"
FORK_VERSION = "12.0.3"


def get_ann_ids(self, img_ids=[], cat_ids=[], area_rng=[], iscrowd=None):  # noqa: B006 (the fork's defaults)
    return self.getAnnIds(img_ids, cat_ids, area_rng, iscrowd)


def get_cat_ids(self, cat_names=[], sup_names=[], cat_ids=[]):  # noqa: B006
    return self.getCatIds(cat_names, sup_names, cat_ids)


def get_img_ids(self, img_ids=[], cat_ids=[]):  # noqa: B006
    return self.getImgIds(img_ids, cat_ids)


def load_anns(self, ids=[]):  # noqa: B006
    return self.loadAnns(ids)


def load_cats(self, ids=[]):  # noqa: B006
    return self.loadCats(ids)


def load_imgs(self, ids=[]):  # noqa: B006
    return self.loadImgs(ids)


FORK_NAMES = {
    "get_ann_ids": get_ann_ids, "get_cat_ids": get_cat_ids, "get_img_ids": get_img_ids,
    "load_anns": load_anns, "load_cats": load_cats, "load_imgs": load_imgs,
    "img_ann_map": property(lambda self: self.imgToAnns, doc="the fork's name of imgToAnns"),
    "cat_img_map": property(lambda self: self.catToImgs, doc="the fork's name of catToImgs"),
}


def _version(module):
    stored = module.__dict__.get("__version__")
    if stored is not None:
        return stored
    if sys._getframe(1).f_globals.get("__name__") == CONSUMER:
        return FORK_VERSION
    raise AttributeError("module 'pycocotools' has no attribute '__version__'")


def add_fork_api(pycocotools: ModuleType) -> str | None:
    if "__version__" in vars(pycocotools):
        return "pycocotools has a __version__ (%s): the fork or a release that has one" % pycocotools.__version__
    from pycocotools import coco

    for name, value in FORK_NAMES.items():
        if not hasattr(coco.COCO, name):
            patching.replace_attribute(coco.COCO, name, value, SHIM_NAME)
    cls = type(pycocotools)
    if not patching.wrapped_by(cls, SHIM_NAME):
        served = type(cls.__name__, (cls,), {"__module__": cls.__module__,
                                             "__version__": property(_version)})
        patching.replace_attribute(pycocotools, "__class__", served, SHIM_NAME)
    from compatfix import _messages

    _messages.say(
        "this mmdet's COCO dataset needs mmpycocotools, OpenMMLab's pycocotools fork, which no "
        "longer installs; compatfix added the fork's snake_case COCO API (get_ann_ids, "
        "get_cat_ids, get_img_ids, load_anns, load_cats, load_imgs, img_ann_map, cat_img_map) "
        "to the installed pycocotools as aliases of its own methods, and mmdet.datasets.coco "
        "reads pycocotools.__version__ as %s." % FORK_VERSION,
        key=SHIM_NAME,
    )
    return None
