"""The model modules' model_urls / quant_model_urls and load_state_dict_from_url, and
transforms.functional._get_image_size, against the real torchvision 0.29 of the stacks.

The expected URLs are torchvision 0.12's own dicts (its last release before the weights
enums), copied here from its source, not read through the shim."""

from __future__ import annotations

import json

import pytest

from support import clean_env, import_outcomes, run_python

pytestmark = pytest.mark.stack("modern", "paper", "timm1")

BASE = "https://download.pytorch.org/models/"
TORCHVISION_0_12 = {
    "torchvision.models.alexnet.model_urls": {
        "alexnet": BASE + "alexnet-owt-7be5be79.pth",
    },
    "torchvision.models.densenet.model_urls": {
        "densenet121": BASE + "densenet121-a639ec97.pth",
        "densenet169": BASE + "densenet169-b2777c0a.pth",
        "densenet201": BASE + "densenet201-c1103571.pth",
        "densenet161": BASE + "densenet161-8d451a50.pth",
    },
    "torchvision.models.detection.faster_rcnn.model_urls": {
        "fasterrcnn_resnet50_fpn_coco": BASE + "fasterrcnn_resnet50_fpn_coco-258fb6c6.pth",
        "fasterrcnn_mobilenet_v3_large_320_fpn_coco": BASE + "fasterrcnn_mobilenet_v3_large_320_fpn-907ea3f9.pth",
        "fasterrcnn_mobilenet_v3_large_fpn_coco": BASE + "fasterrcnn_mobilenet_v3_large_fpn-fb6a3cc7.pth",
    },
    "torchvision.models.detection.fcos.model_urls": {
        "fcos_resnet50_fpn_coco": BASE + "fcos_resnet50_fpn_coco-99b0c9b7.pth",
    },
    "torchvision.models.detection.keypoint_rcnn.model_urls": {
        "keypointrcnn_resnet50_fpn_coco_legacy": BASE + "keypointrcnn_resnet50_fpn_coco-9f466800.pth",
        "keypointrcnn_resnet50_fpn_coco": BASE + "keypointrcnn_resnet50_fpn_coco-fc266e95.pth",
    },
    "torchvision.models.detection.mask_rcnn.model_urls": {
        "maskrcnn_resnet50_fpn_coco": BASE + "maskrcnn_resnet50_fpn_coco-bf2d0c1e.pth",
    },
    "torchvision.models.detection.retinanet.model_urls": {
        "retinanet_resnet50_fpn_coco": BASE + "retinanet_resnet50_fpn_coco-eeacb38b.pth",
    },
    "torchvision.models.detection.ssd.model_urls": {
        "ssd300_vgg16_coco": BASE + "ssd300_vgg16_coco-b556d3b4.pth",
    },
    "torchvision.models.detection.ssdlite.model_urls": {
        "ssdlite320_mobilenet_v3_large_coco": BASE + "ssdlite320_mobilenet_v3_large_coco-a79551df.pth",
    },
    "torchvision.models.efficientnet.model_urls": {
        "efficientnet_b0": BASE + "efficientnet_b0_rwightman-3dd342df.pth",
        "efficientnet_b1": BASE + "efficientnet_b1_rwightman-533bc792.pth",
        "efficientnet_b2": BASE + "efficientnet_b2_rwightman-bcdf34b7.pth",
        "efficientnet_b3": BASE + "efficientnet_b3_rwightman-cf984f9c.pth",
        "efficientnet_b4": BASE + "efficientnet_b4_rwightman-7eb33cd5.pth",
        "efficientnet_b5": BASE + "efficientnet_b5_lukemelas-b6417697.pth",
        "efficientnet_b6": BASE + "efficientnet_b6_lukemelas-c76e70fd.pth",
        "efficientnet_b7": BASE + "efficientnet_b7_lukemelas-dcc49843.pth",
    },
    "torchvision.models.googlenet.model_urls": {
        "googlenet": BASE + "googlenet-1378be20.pth",
    },
    "torchvision.models.inception.model_urls": {
        "inception_v3_google": BASE + "inception_v3_google-0cc3c7bd.pth",
    },
    "torchvision.models.mobilenetv2.model_urls": {
        "mobilenet_v2": BASE + "mobilenet_v2-b0353104.pth",
    },
    "torchvision.models.mobilenetv3.model_urls": {
        "mobilenet_v3_large": BASE + "mobilenet_v3_large-8738ca79.pth",
        "mobilenet_v3_small": BASE + "mobilenet_v3_small-047dcff4.pth",
    },
    "torchvision.models.quantization.googlenet.quant_model_urls": {
        "googlenet_fbgemm": BASE + "quantized/googlenet_fbgemm-c00238cf.pth",
    },
    "torchvision.models.quantization.inception.quant_model_urls": {
        "inception_v3_google_fbgemm": BASE + "quantized/inception_v3_google_fbgemm-71447a44.pth",
    },
    "torchvision.models.quantization.mobilenetv2.quant_model_urls": {
        "mobilenet_v2_qnnpack": BASE + "quantized/mobilenet_v2_qnnpack_37f702c5.pth",
    },
    "torchvision.models.quantization.mobilenetv3.quant_model_urls": {
        "mobilenet_v3_large_qnnpack": BASE + "quantized/mobilenet_v3_large_qnnpack-5bcacf28.pth",
    },
    "torchvision.models.quantization.resnet.quant_model_urls": {
        "resnet18_fbgemm": BASE + "quantized/resnet18_fbgemm_16fa66dd.pth",
        "resnet50_fbgemm": BASE + "quantized/resnet50_fbgemm_bf931d71.pth",
        "resnext101_32x8d_fbgemm": BASE + "quantized/resnext101_32x8_fbgemm_09835ccf.pth",
    },
    "torchvision.models.quantization.shufflenetv2.quant_model_urls": {
        "shufflenetv2_x0.5_fbgemm": BASE + "quantized/shufflenetv2_x0.5_fbgemm-00845098.pth",
        "shufflenetv2_x1.0_fbgemm": BASE + "quantized/shufflenetv2_x1_fbgemm-db332c57.pth",
    },
    "torchvision.models.regnet.model_urls": {
        "regnet_y_400mf": BASE + "regnet_y_400mf-c65dace8.pth",
        "regnet_y_800mf": BASE + "regnet_y_800mf-1b27b58c.pth",
        "regnet_y_1_6gf": BASE + "regnet_y_1_6gf-b11a554e.pth",
        "regnet_y_3_2gf": BASE + "regnet_y_3_2gf-b5a9779c.pth",
        "regnet_y_8gf": BASE + "regnet_y_8gf-d0d0e4a8.pth",
        "regnet_y_16gf": BASE + "regnet_y_16gf-9e6ed7dd.pth",
        "regnet_y_32gf": BASE + "regnet_y_32gf-4dee3f7a.pth",
        "regnet_x_400mf": BASE + "regnet_x_400mf-adf1edd5.pth",
        "regnet_x_800mf": BASE + "regnet_x_800mf-ad17e45c.pth",
        "regnet_x_1_6gf": BASE + "regnet_x_1_6gf-e3633e7f.pth",
        "regnet_x_3_2gf": BASE + "regnet_x_3_2gf-f342aeae.pth",
        "regnet_x_8gf": BASE + "regnet_x_8gf-03ceed89.pth",
        "regnet_x_16gf": BASE + "regnet_x_16gf-2007eb11.pth",
        "regnet_x_32gf": BASE + "regnet_x_32gf-9d47f8d0.pth",
    },
    "torchvision.models.resnet.model_urls": {
        "resnet18": BASE + "resnet18-f37072fd.pth",
        "resnet34": BASE + "resnet34-b627a593.pth",
        "resnet50": BASE + "resnet50-0676ba61.pth",
        "resnet101": BASE + "resnet101-63fe2227.pth",
        "resnet152": BASE + "resnet152-394f9c45.pth",
        "resnext50_32x4d": BASE + "resnext50_32x4d-7cdf4587.pth",
        "resnext101_32x8d": BASE + "resnext101_32x8d-8ba56ff5.pth",
        "wide_resnet50_2": BASE + "wide_resnet50_2-95faca4d.pth",
        "wide_resnet101_2": BASE + "wide_resnet101_2-32ee1156.pth",
    },
    "torchvision.models.segmentation.deeplabv3.model_urls": {
        "deeplabv3_resnet50_coco": BASE + "deeplabv3_resnet50_coco-cd0a2569.pth",
        "deeplabv3_resnet101_coco": BASE + "deeplabv3_resnet101_coco-586e9e4e.pth",
        "deeplabv3_mobilenet_v3_large_coco": BASE + "deeplabv3_mobilenet_v3_large-fc3c493d.pth",
    },
    "torchvision.models.segmentation.fcn.model_urls": {
        "fcn_resnet50_coco": BASE + "fcn_resnet50_coco-1167a1af.pth",
        "fcn_resnet101_coco": BASE + "fcn_resnet101_coco-7ecb50ca.pth",
    },
    "torchvision.models.segmentation.lraspp.model_urls": {
        "lraspp_mobilenet_v3_large_coco": BASE + "lraspp_mobilenet_v3_large-d234d4ea.pth",
    },
    "torchvision.models.shufflenetv2.model_urls": {
        "shufflenetv2_x0.5": BASE + "shufflenetv2_x0.5-f707e7126e.pth",
        "shufflenetv2_x1.0": BASE + "shufflenetv2_x1-5666bf0f80.pth",
        "shufflenetv2_x1.5": None,
        "shufflenetv2_x2.0": None,
    },
    "torchvision.models.squeezenet.model_urls": {
        "squeezenet1_0": BASE + "squeezenet1_0-b66bff10.pth",
        "squeezenet1_1": BASE + "squeezenet1_1-b8a52dc0.pth",
    },
    "torchvision.models.vgg.model_urls": {
        "vgg11": BASE + "vgg11-8a719046.pth",
        "vgg13": BASE + "vgg13-19584684.pth",
        "vgg16": BASE + "vgg16-397923af.pth",
        "vgg19": BASE + "vgg19-dcbb9e9d.pth",
        "vgg11_bn": BASE + "vgg11_bn-6002323d.pth",
        "vgg13_bn": BASE + "vgg13_bn-abd245e5.pth",
        "vgg16_bn": BASE + "vgg16_bn-6c64b313.pth",
        "vgg19_bn": BASE + "vgg19_bn-c79401a0.pth",
    },
    "torchvision.models.video.resnet.model_urls": {
        "r3d_18": BASE + "r3d_18-b3b3357e.pth",
        "mc3_18": BASE + "mc3_18-a90a0ba3.pth",
        "r2plus1d_18": BASE + "r2plus1d_18-91a641e6.pth",
    },
    "torchvision.models.vision_transformer.model_urls": {
        "vit_b_16": BASE + "vit_b_16-c867db91.pth",
        "vit_b_32": BASE + "vit_b_32-d86f8d99.pth",
        "vit_l_16": BASE + "vit_l_16-852ce7e3.pth",
        "vit_l_32": BASE + "vit_l_32-c7638314.pth",
    },
}
# torchvision 0.12's quantized modules imported the float module's model_urls as well.
SHARED = {"quantization.googlenet": "googlenet", "quantization.mobilenetv2": "mobilenetv2",
          "quantization.mobilenetv3": "mobilenetv3", "quantization.resnet": "resnet"}

SHIMS = "torchvision.models.model_urls,torchvision.models.quant_model_urls," \
        "torchvision.models.load_state_dict_from_url,torchvision.transforms.functional.get_image_size"
IMPORTS = [
    "from torchvision.models.resnet import model_urls",
    "from torchvision.models.vgg import model_urls",
    "from torchvision.models.quantization.resnet import quant_model_urls",
    "from torchvision.models.resnet import load_state_dict_from_url",
    "from torchvision.transforms.functional import _get_image_size",
]


@pytest.mark.parametrize("env", [clean_env(False), clean_env(COMPATFIX_DISABLE=SHIMS)],
                         ids=["compatfix-off", "these-shims-disabled"])
def test_the_old_names_are_missing_without_the_shims(env):
    assert import_outcomes(IMPORTS, env) == ["missing"] * len(IMPORTS)


def test_model_urls_are_torchvision_0_12_s():
    result = run_python(code="""
        import importlib, json
        tables = {}
        for dotted in %r:
            module_name, _, table = dotted.rpartition(".")
            tables[dotted] = getattr(importlib.import_module(module_name), table)
        print(json.dumps(tables))
        """ % (sorted(TORCHVISION_0_12),))
    assert json.loads(result.stdout) == TORCHVISION_0_12, result.stderr[-2000:]


def test_the_dicts_are_shared_and_writable_as_they_were():
    result = run_python(code="""
        import importlib
        for quantized, float_module in %r.items():
            q = importlib.import_module("torchvision.models." + quantized)
            f = importlib.import_module("torchvision.models." + float_module)
            print(q.model_urls is f.model_urls)
        # CRAFT's vgg16_bn.py rewrites an entry in place before loading it.
        from torchvision.models.vgg import model_urls
        model_urls["vgg16_bn"] = model_urls["vgg16_bn"].replace("https://", "http://")
        import torchvision.models.vgg
        print(torchvision.models.vgg.model_urls["vgg16_bn"])
        """ % (SHARED,))
    assert result.stdout.splitlines() == ["True"] * len(SHARED) + [
        TORCHVISION_0_12["torchvision.models.vgg.model_urls"]["vgg16_bn"].replace("https://", "http://")
    ], result.stderr[-2000:]


def test_the_urls_today_s_enums_still_hold_are_the_same_files():
    # Where the file is still torchvision's, loading from the old URL loads today's weights.
    result = run_python(code="""
        import json
        from torchvision.models import ResNet50_Weights, VGG16_Weights
        from torchvision.models.resnet import model_urls as resnet
        from torchvision.models.vgg import model_urls as vgg
        print(json.dumps([resnet["resnet50"] == ResNet50_Weights.IMAGENET1K_V1.url,
                          vgg["vgg16"] == VGG16_Weights.IMAGENET1K_V1.url]))
        """)
    assert json.loads(result.stdout) == [True, True], result.stderr[-2000:]


def test_load_state_dict_from_url_and_get_image_size_have_their_old_meaning():
    result = run_python(code="""
        import torch, torch.hub
        from PIL import Image
        from torchvision.models.resnet import load_state_dict_from_url
        from torchvision.models.detection.faster_rcnn import load_state_dict_from_url as detection_loader
        from torchvision.transforms.functional import _get_image_size
        print(load_state_dict_from_url is torch.hub.load_state_dict_from_url is detection_loader)
        # torchvision 0.8-0.10: [width, height], of a PIL image and of a (..., H, W) tensor
        print(_get_image_size(Image.new("RGB", (7, 5))), _get_image_size(torch.zeros(3, 5, 7)))
        """)
    assert result.stdout.splitlines() == ["True", "[7, 5] [7, 5]"], result.stderr[-2000:]
