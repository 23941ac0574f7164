"""Shims for ``torchvision.models`` submodules: the ``model_urls`` dicts (and the
quantized models' ``quant_model_urls``) that 2019-22 backbone code reads its pretrained
weights' addresses from, and the ``load_state_dict_from_url`` those modules imported."""

from __future__ import annotations

import functools
import importlib
from typing import Optional

from compatfix.patching import Lazy, restore_names
from compatfix.registry import Shim

# torchvision 0.12's dicts (its last before the multi-weight API), module by module. Where
# today's weights enum holds the same file, the entry names that member ("Enum.MEMBER")
# and the URL is read from it; where torchvision 0.13 re-uploaded the weights under a
# new file name (EfficientNet, three quantized models), the entry is 0.12's own URL,
# which is the file old code loaded. None: no pretrained weights then (0.12 said so).
_OLD_FILE = "https://download.pytorch.org/models/"
MODEL_URLS: dict[str, dict[str, Optional[str]]] = {
    "alexnet": {
        "alexnet": "AlexNet_Weights.IMAGENET1K_V1",
    },
    "densenet": {
        "densenet121": "DenseNet121_Weights.IMAGENET1K_V1",
        "densenet169": "DenseNet169_Weights.IMAGENET1K_V1",
        "densenet201": "DenseNet201_Weights.IMAGENET1K_V1",
        "densenet161": "DenseNet161_Weights.IMAGENET1K_V1",
    },
    "detection.faster_rcnn": {
        "fasterrcnn_resnet50_fpn_coco": "FasterRCNN_ResNet50_FPN_Weights.COCO_V1",
        "fasterrcnn_mobilenet_v3_large_320_fpn_coco": "FasterRCNN_MobileNet_V3_Large_320_FPN_Weights.COCO_V1",
        "fasterrcnn_mobilenet_v3_large_fpn_coco": "FasterRCNN_MobileNet_V3_Large_FPN_Weights.COCO_V1",
    },
    "detection.fcos": {
        "fcos_resnet50_fpn_coco": "FCOS_ResNet50_FPN_Weights.COCO_V1",
    },
    "detection.keypoint_rcnn": {
        "keypointrcnn_resnet50_fpn_coco_legacy": "KeypointRCNN_ResNet50_FPN_Weights.COCO_LEGACY",
        "keypointrcnn_resnet50_fpn_coco": "KeypointRCNN_ResNet50_FPN_Weights.COCO_V1",
    },
    "detection.mask_rcnn": {
        "maskrcnn_resnet50_fpn_coco": "MaskRCNN_ResNet50_FPN_Weights.COCO_V1",
    },
    "detection.retinanet": {
        "retinanet_resnet50_fpn_coco": "RetinaNet_ResNet50_FPN_Weights.COCO_V1",
    },
    "detection.ssd": {
        "ssd300_vgg16_coco": "SSD300_VGG16_Weights.COCO_V1",
    },
    "detection.ssdlite": {
        "ssdlite320_mobilenet_v3_large_coco": "SSDLite320_MobileNet_V3_Large_Weights.COCO_V1",
    },
    "efficientnet": {
        "efficientnet_b0": _OLD_FILE + "efficientnet_b0_rwightman-3dd342df.pth",
        "efficientnet_b1": _OLD_FILE + "efficientnet_b1_rwightman-533bc792.pth",
        "efficientnet_b2": _OLD_FILE + "efficientnet_b2_rwightman-bcdf34b7.pth",
        "efficientnet_b3": _OLD_FILE + "efficientnet_b3_rwightman-cf984f9c.pth",
        "efficientnet_b4": _OLD_FILE + "efficientnet_b4_rwightman-7eb33cd5.pth",
        "efficientnet_b5": _OLD_FILE + "efficientnet_b5_lukemelas-b6417697.pth",
        "efficientnet_b6": _OLD_FILE + "efficientnet_b6_lukemelas-c76e70fd.pth",
        "efficientnet_b7": _OLD_FILE + "efficientnet_b7_lukemelas-dcc49843.pth",
    },
    "googlenet": {
        "googlenet": "GoogLeNet_Weights.IMAGENET1K_V1",
    },
    "inception": {
        "inception_v3_google": "Inception_V3_Weights.IMAGENET1K_V1",
    },
    "mobilenetv2": {
        "mobilenet_v2": "MobileNet_V2_Weights.IMAGENET1K_V1",
    },
    "mobilenetv3": {
        "mobilenet_v3_large": "MobileNet_V3_Large_Weights.IMAGENET1K_V1",
        "mobilenet_v3_small": "MobileNet_V3_Small_Weights.IMAGENET1K_V1",
    },
    "regnet": {
        "regnet_y_400mf": "RegNet_Y_400MF_Weights.IMAGENET1K_V1",
        "regnet_y_800mf": "RegNet_Y_800MF_Weights.IMAGENET1K_V1",
        "regnet_y_1_6gf": "RegNet_Y_1_6GF_Weights.IMAGENET1K_V1",
        "regnet_y_3_2gf": "RegNet_Y_3_2GF_Weights.IMAGENET1K_V1",
        "regnet_y_8gf": "RegNet_Y_8GF_Weights.IMAGENET1K_V1",
        "regnet_y_16gf": "RegNet_Y_16GF_Weights.IMAGENET1K_V1",
        "regnet_y_32gf": "RegNet_Y_32GF_Weights.IMAGENET1K_V1",
        "regnet_x_400mf": "RegNet_X_400MF_Weights.IMAGENET1K_V1",
        "regnet_x_800mf": "RegNet_X_800MF_Weights.IMAGENET1K_V1",
        "regnet_x_1_6gf": "RegNet_X_1_6GF_Weights.IMAGENET1K_V1",
        "regnet_x_3_2gf": "RegNet_X_3_2GF_Weights.IMAGENET1K_V1",
        "regnet_x_8gf": "RegNet_X_8GF_Weights.IMAGENET1K_V1",
        "regnet_x_16gf": "RegNet_X_16GF_Weights.IMAGENET1K_V1",
        "regnet_x_32gf": "RegNet_X_32GF_Weights.IMAGENET1K_V1",
    },
    "resnet": {
        "resnet18": "ResNet18_Weights.IMAGENET1K_V1",
        "resnet34": "ResNet34_Weights.IMAGENET1K_V1",
        "resnet50": "ResNet50_Weights.IMAGENET1K_V1",
        "resnet101": "ResNet101_Weights.IMAGENET1K_V1",
        "resnet152": "ResNet152_Weights.IMAGENET1K_V1",
        "resnext50_32x4d": "ResNeXt50_32X4D_Weights.IMAGENET1K_V1",
        "resnext101_32x8d": "ResNeXt101_32X8D_Weights.IMAGENET1K_V1",
        "wide_resnet50_2": "Wide_ResNet50_2_Weights.IMAGENET1K_V1",
        "wide_resnet101_2": "Wide_ResNet101_2_Weights.IMAGENET1K_V1",
    },
    "segmentation.deeplabv3": {
        "deeplabv3_resnet50_coco": "DeepLabV3_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1",
        "deeplabv3_resnet101_coco": "DeepLabV3_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1",
        "deeplabv3_mobilenet_v3_large_coco": "DeepLabV3_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1",
    },
    "segmentation.fcn": {
        "fcn_resnet50_coco": "FCN_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1",
        "fcn_resnet101_coco": "FCN_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1",
    },
    "segmentation.lraspp": {
        "lraspp_mobilenet_v3_large_coco": "LRASPP_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1",
    },
    "shufflenetv2": {
        "shufflenetv2_x0.5": "ShuffleNet_V2_X0_5_Weights.IMAGENET1K_V1",
        "shufflenetv2_x1.0": "ShuffleNet_V2_X1_0_Weights.IMAGENET1K_V1",
        "shufflenetv2_x1.5": None,
        "shufflenetv2_x2.0": None,
    },
    "squeezenet": {
        "squeezenet1_0": "SqueezeNet1_0_Weights.IMAGENET1K_V1",
        "squeezenet1_1": "SqueezeNet1_1_Weights.IMAGENET1K_V1",
    },
    "vgg": {
        "vgg11": "VGG11_Weights.IMAGENET1K_V1",
        "vgg13": "VGG13_Weights.IMAGENET1K_V1",
        "vgg16": "VGG16_Weights.IMAGENET1K_V1",
        "vgg19": "VGG19_Weights.IMAGENET1K_V1",
        "vgg11_bn": "VGG11_BN_Weights.IMAGENET1K_V1",
        "vgg13_bn": "VGG13_BN_Weights.IMAGENET1K_V1",
        "vgg16_bn": "VGG16_BN_Weights.IMAGENET1K_V1",
        "vgg19_bn": "VGG19_BN_Weights.IMAGENET1K_V1",
    },
    "video.resnet": {
        "r3d_18": "R3D_18_Weights.KINETICS400_V1",
        "mc3_18": "MC3_18_Weights.KINETICS400_V1",
        "r2plus1d_18": "R2Plus1D_18_Weights.KINETICS400_V1",
    },
    "vision_transformer": {
        "vit_b_16": "ViT_B_16_Weights.IMAGENET1K_V1",
        "vit_b_32": "ViT_B_32_Weights.IMAGENET1K_V1",
        "vit_l_16": "ViT_L_16_Weights.IMAGENET1K_V1",
        "vit_l_32": "ViT_L_32_Weights.IMAGENET1K_V1",
    },
}
QUANT_MODEL_URLS: dict[str, dict[str, Optional[str]]] = {
    "quantization.googlenet": {
        "googlenet_fbgemm": _OLD_FILE + "quantized/googlenet_fbgemm-c00238cf.pth",
    },
    "quantization.inception": {
        "inception_v3_google_fbgemm": _OLD_FILE + "quantized/inception_v3_google_fbgemm-71447a44.pth",
    },
    "quantization.mobilenetv2": {
        "mobilenet_v2_qnnpack": "MobileNet_V2_QuantizedWeights.IMAGENET1K_QNNPACK_V1",
    },
    "quantization.mobilenetv3": {
        "mobilenet_v3_large_qnnpack": "MobileNet_V3_Large_QuantizedWeights.IMAGENET1K_QNNPACK_V1",
    },
    "quantization.resnet": {
        "resnet18_fbgemm": "ResNet18_QuantizedWeights.IMAGENET1K_FBGEMM_V1",
        "resnet50_fbgemm": "ResNet50_QuantizedWeights.IMAGENET1K_FBGEMM_V1",
        "resnext101_32x8d_fbgemm": "ResNeXt101_32X8D_QuantizedWeights.IMAGENET1K_FBGEMM_V1",
    },
    "quantization.shufflenetv2": {
        "shufflenetv2_x0.5_fbgemm": "ShuffleNet_V2_X0_5_QuantizedWeights.IMAGENET1K_FBGEMM_V1",
        "shufflenetv2_x1.0_fbgemm": _OLD_FILE + "quantized/shufflenetv2_x1_fbgemm-db332c57.pth",
    },
}
# torchvision 0.12's quantized modules imported the float module's model_urls too.
QUANTIZED_FLOAT_URLS = {
    "quantization.googlenet": "googlenet",
    "quantization.mobilenetv2": "mobilenetv2",
    "quantization.mobilenetv3": "mobilenetv3",
    "quantization.resnet": "resnet",
}
# The model modules whose code imported load_state_dict_from_url in torchvision 0.12.
STATE_DICT_FROM_URL_MODULES = (
    *MODEL_URLS, *QUANT_MODEL_URLS, "convnext", "mnasnet", "optical_flow.raft", "segmentation._utils",
)
PREFIX = "torchvision.models."


@functools.lru_cache(maxsize=None)
def _urls(table: str, short_name: str) -> dict[str, Optional[str]]:
    """One module's dict, built once: the float module and the quantized modules that
    imported it share the one object, as they did."""
    module = importlib.import_module(PREFIX + short_name)
    entries = (MODEL_URLS if table == "model_urls" else QUANT_MODEL_URLS)[short_name]
    urls: dict[str, Optional[str]] = {}
    for key, entry in entries.items():
        if entry is None or entry.startswith(_OLD_FILE):
            urls[key] = entry
        else:
            enum_name, _, member = entry.partition(".")
            urls[key] = getattr(module, enum_name)[member].url
    return urls


def restore_model_urls(module) -> None:
    short_name = module.__name__[len(PREFIX):]
    # a quantization module's model_urls were its float model's
    source = QUANTIZED_FLOAT_URLS.get(short_name, short_name)
    restore_names(module, {"model_urls": Lazy(functools.partial(_urls, "model_urls", source))},
                  "torchvision.models.model_urls")


def restore_quant_model_urls(module) -> None:
    short_name = module.__name__[len(PREFIX):]
    restore_names(module, {"quant_model_urls": Lazy(functools.partial(_urls, "quant_model_urls", short_name))},
                  "torchvision.models.quant_model_urls")


def restore_load_state_dict_from_url(module) -> None:
    from torch.hub import load_state_dict_from_url

    restore_names(module, {"load_state_dict_from_url": load_state_dict_from_url},
                  "torchvision.models.load_state_dict_from_url")


MODEL_URLS_BROKE = (
    "torchvision 0.13 (2022-06) replaced the model modules' model_urls dicts with the weights enums, kept them "
    "deprecated through 0.14, and 0.15 (2023-03) removed them: `from torchvision.models.resnet import model_urls` "
    "(backbone files of 2019-22 detectors, CRAFT's vgg16_bn) fails")

SHIMS = (
    Shim(
        "torchvision.models.model_urls",
        targets=[PREFIX + name for name in (*MODEL_URLS, *QUANTIZED_FLOAT_URLS)],
        requires={"torchvision": ">=0.15"},
        apply=restore_model_urls,
        restores=["model_urls"],
        broke=MODEL_URLS_BROKE,
        summary="restore each model module's model_urls with torchvision 0.12's keys and URLs, read from today's "
        "weights enums where they hold the same file",
        replacement="the weights enums: ResNet50_Weights.IMAGENET1K_V1.url (or .get_state_dict())",
        rewrites={"torchvision.models.%s.model_urls" % name: "the %s weights enums' .url" % name
                  for name in (*MODEL_URLS, *QUANTIZED_FLOAT_URLS)},
    ),
    Shim(
        "torchvision.models.quant_model_urls",
        targets=[PREFIX + name for name in QUANT_MODEL_URLS],
        requires={"torchvision": ">=0.15"},
        apply=restore_quant_model_urls,
        restores=["quant_model_urls"],
        broke=MODEL_URLS_BROKE,
        summary="restore each quantized model module's quant_model_urls with torchvision 0.12's keys and URLs",
        replacement="the quantized weights enums: ResNet50_QuantizedWeights.IMAGENET1K_FBGEMM_V1.url",
        rewrites={"torchvision.models.%s.quant_model_urls" % name: "the %s quantized weights enums' .url" % name
                  for name in QUANT_MODEL_URLS},
    ),
    Shim(
        "torchvision.models.load_state_dict_from_url",
        targets=[PREFIX + name for name in STATE_DICT_FROM_URL_MODULES],
        requires={"torchvision": ">=0.13"},
        apply=restore_load_state_dict_from_url,
        restores=["load_state_dict_from_url"],
        broke="torchvision 0.13 (2022-06) stopped importing load_state_dict_from_url into the model modules "
        "(the weights enums load their files), which code imported from there "
        "(`from torchvision.models.resnet import load_state_dict_from_url`)",
        summary="restore load_state_dict_from_url on those modules as torch.hub's, which it was",
        replacement="torch.hub.load_state_dict_from_url",
        renames={"torchvision.models.%s.load_state_dict_from_url" % name: "torch.hub.load_state_dict_from_url"
                 for name in STATE_DICT_FROM_URL_MODULES},
    ),
)
