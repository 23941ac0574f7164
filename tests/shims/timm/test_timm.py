"""timm shims against the real timm: 1.x on the "timm1" stack, where 2021 classification
code breaks, and 0.3.2 on "modern", where the same code works and every timm shim must
stay out of the way. The legacy code is in tests/fixtures/classification/.

Importing timm 1.x takes many seconds, so the checks of each side (compatfix off, on)
run as sections of one interpreter, and each test looks at its sections' results.
"""

from __future__ import annotations

import json
import os

import pytest

from support import FIXTURES, clean_env, run_python

FIXTURES = os.path.join(FIXTURES, "classification")
TIMM_SHIMS = {"timm.pil_interp", "timm.layers_submodules", "timm.entrypoint_kwargs", "timm.vit_qk_scale"}

# Runs each section of argv[1] (name -> code) in turn and prints what it printed, or its
# traceback, as one JSON line.
RUN_SECTIONS = """
import contextlib, io, json, sys, textwrap, traceback
results = {}
for name, code in json.loads(sys.argv[1]).items():
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(textwrap.dedent(code), {"__name__": "section_" + name})
    except BaseException:
        results[name] = traceback.format_exc()
    else:
        results[name] = out.getvalue()
print("RESULTS " + json.dumps(results))
"""


def run_sections(sections: dict[str, str], compatfix: bool = True, **extra: str) -> dict[str, str]:
    env = clean_env(compatfix, PYTHONPATH=FIXTURES, **extra)
    env["PYTHONWARNINGS"] = "ignore::FutureWarning"  # timm 1.x's deprecated import paths
    result = run_python("-c", RUN_SECTIONS, json.dumps(sections), env=env)
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULTS ")]
    assert lines, result.stdout + result.stderr
    return json.loads(lines[-1][len("RESULTS "):])


BROKEN = {
    "pil_interp": (
        "import legacy_transforms",
        "ImportError: cannot import name '_pil_interp' from 'timm.data.transforms'",
    ),
    "layers_submodule": (
        "from timm.models.layers.helpers import to_2tuple",
        "ModuleNotFoundError: No module named 'timm.models.layers.helpers'",
    ),
    "entrypoint": (
        "import legacy_models, timm; timm.create_model('legacy_tiny_net')",
        "TypeError: legacy_tiny_net() got an unexpected keyword argument 'pretrained_cfg'",
    ),
    "model_class": (
        "import legacy_models, timm; timm.create_model('legacy_tiny_net_kwargs')",
        "TypeError: TinyNet.__init__() got an unexpected keyword argument 'pretrained_cfg'",
    ),
    "block_qk_scale": (
        "import legacy_vit; legacy_vit.TinyEncoder()",
        "TypeError: Block.__init__() got an unexpected keyword argument 'qk_scale'",
    ),
    "attention_qk_scale": (
        "from timm.models.vision_transformer import Attention; Attention(8, 2, qk_scale=None)",
        "TypeError: Attention.__init__() got an unexpected keyword argument 'qk_scale'",
    ),
}

# timm 1.x still re-exports these from timm.models.layers itself (with a FutureWarning):
# only the submodules are gone, so no shim touches that package.
LAYERS_PACKAGE = "from timm.models.layers import DropPath, trunc_normal_, to_2tuple\nprint('ok')"

FIXED = {
    "pil_interp": """
        from PIL import Image
        from timm.data.transforms import _pil_interp
        import legacy_transforms
        assert _pil_interp("bicubic") == Image.BICUBIC and _pil_interp("lanczos") == Image.LANCZOS
        assert _pil_interp("hamming") == Image.HAMMING
        assert _pil_interp("bilinear") == _pil_interp("random") == _pil_interp("nearest") == Image.BILINEAR
        image = Image.linear_gradient("L").convert("RGB")
        print(tuple(legacy_transforms.build_transform(32, "bicubic")(image).shape))
    """,
    "layers_submodules": """
        import timm.layers
        from timm.models.layers.helpers import to_2tuple
        from timm.models.layers.drop import DropPath
        from timm.models.layers.weight_init import trunc_normal_
        import timm.models.layers.create_act as create_act
        assert to_2tuple is timm.layers.helpers.to_2tuple and DropPath is timm.layers.DropPath
        assert trunc_normal_ is timm.layers.trunc_normal_ and create_act.get_act_layer is timm.layers.get_act_layer
        print(to_2tuple(3))
    """,
    "create_model": """
        import torch, timm, legacy_models
        net = timm.create_model("legacy_tiny_net", num_classes=3)
        kw = timm.create_model("legacy_tiny_net_kwargs", num_classes=5, drop_rate=0.25)
        print(tuple(net(torch.zeros(1, 3, 8, 8)).shape), kw.head.out_features, kw.drop.p)
        print(type(timm.create_model("resnet18", num_classes=4)).__name__)  # timm's own model
    """,
    "unrelated_type_errors": """
        import timm, legacy_models
        for name in ("legacy_tiny_net", "legacy_tiny_net_kwargs"):
            try:
                timm.create_model(name, no_such_option=1)
            except TypeError as exc:
                print(str(exc).split("argument ")[-1])
    """,
    "vit_block": """
        import torch, legacy_vit
        from timm.models.vision_transformer import Attention, Block
        encoder = legacy_vit.TinyEncoder(drop_rate=0.1)
        block = encoder.blocks[0]
        print(tuple(encoder(torch.zeros(1, 3, 16, 16)).shape), block.attn.proj_drop.p, block.mlp.drop1.p)
        scaled_keys = set(legacy_vit.TinyEncoder(qk_scale=0.5).blocks[0].state_dict())
        print(scaled_keys == set(Block(16, 2, 2.0, qkv_bias=True).state_dict()))

        torch.manual_seed(0)
        x = torch.randn(2, 5, 8)
        default = Attention(8, num_heads=2, qkv_bias=True).eval()
        for qk_scale in (None, 4 ** -0.5, 1.0):
            scaled = Attention(8, num_heads=2, qkv_bias=True, qk_scale=qk_scale).eval()
            scaled.load_state_dict(default.state_dict())
            reference = Attention(8, num_heads=2, qkv_bias=True).eval()
            reference.load_state_dict(default.state_dict())
            reference.fused_attn = False
            reference.scale = 4 ** -0.5 if qk_scale is None else qk_scale
            with torch.no_grad():
                print(torch.allclose(scaled(x), reference(x), atol=1e-6), torch.allclose(scaled(x), default(x), atol=1e-6))
    """,
}


@pytest.fixture(scope="module")
def without_compatfix() -> dict[str, str]:
    sections = {name: code for name, (code, _) in BROKEN.items()}
    sections["layers_package"] = LAYERS_PACKAGE
    return run_sections(sections, compatfix=False)


@pytest.fixture(scope="module")
def with_compatfix() -> dict[str, str]:
    return run_sections(FIXED)


@pytest.mark.stack("timm1")
@pytest.mark.parametrize("name", sorted(BROKEN))
def test_2021_classification_code_fails_on_timm_1_without_compatfix(without_compatfix, name):
    assert BROKEN[name][1] in without_compatfix[name]


@pytest.mark.stack("timm1")
def test_layers_package_imports_still_work_on_timm_1_without_compatfix(without_compatfix):
    assert without_compatfix["layers_package"] == "ok\n"


@pytest.mark.stack("timm1")
def test_pil_interp_maps_names_as_timm_0_3_did(with_compatfix):
    assert with_compatfix["pil_interp"] == "(3, 32, 32)\n"


@pytest.mark.stack("timm1")
def test_layers_submodules_are_the_timm_layers_modules(with_compatfix):
    assert with_compatfix["layers_submodules"] == "(3, 3)\n"


@pytest.mark.stack("timm1")
def test_user_registered_models_build_through_create_model(with_compatfix):
    assert with_compatfix["create_model"] == "(1, 3) 5 0.25\nResNet\n"


@pytest.mark.stack("timm1")
def test_unrelated_type_errors_still_reach_the_caller(with_compatfix):
    assert with_compatfix["unrelated_type_errors"] == "'no_such_option'\n'no_such_option'\n"


@pytest.mark.stack("timm1")
def test_vit_block_accepts_qk_scale_and_drop_with_their_old_meaning(with_compatfix):
    assert with_compatfix["vit_block"].splitlines() == [
        "(1, 4, 16) 0.1 0.1",  # drop= became proj_drop (attention projection and MLP)
        "True",  # the same state_dict keys
        "True True",  # qk_scale=None: timm's default scale, fused attention kept
        "True True",  # the default value itself
        "True False",  # another value changes the attention, as it did in timm 0.3
    ]


@pytest.mark.stack("modern")
def test_timm_shims_stay_out_of_the_way_on_timm_0_3_2(tmp_path):
    report = tmp_path / "report.json"
    results = run_sections(
        {
            "timm_0_3_2": """
                import compatfix, timm, torch, legacy_models, legacy_transforms, legacy_vit
                from timm.data import transforms
                from timm.models import factory, vision_transformer
                assert timm.__version__ == "0.3.2"
                assert not compatfix.is_patched(transforms, "_pil_interp")
                assert not compatfix.is_patched(factory, "model_entrypoint")
                assert not compatfix.is_patched(vision_transformer.Block, "__init__")
                timm.create_model("legacy_tiny_net", num_classes=3)
                legacy_vit.TinyEncoder(qk_scale=0.5)(torch.zeros(1, 3, 16, 16))
                print("ok")
            """
        },
        COMPATFIX_REPORT=str(report),
    )
    assert results["timm_0_3_2"] == "ok\n"
    process = json.loads(report.read_text())["processes"][0]
    skipped = {entry["shim"]: entry.get("reason", "") for entry in process["skipped"]}
    # timm.pil_interp is decided at the first use of a name it restores; timm 0.3.2 has
    # _pil_interp, whose uses never reach compatfix, so it is never even asked.
    assert TIMM_SHIMS - {"timm.layers_submodules", "timm.pil_interp"} <= set(skipped), process
    assert all("timm 0.3.2 is outside" in skipped[name] for name in TIMM_SHIMS & set(skipped)), skipped
    assert not TIMM_SHIMS & {entry["shim"] for entry in process.get("applied", [])}
