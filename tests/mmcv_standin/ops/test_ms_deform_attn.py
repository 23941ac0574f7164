"""Multi-scale deformable attention kernels of the mmcv._ext stand-in
(compatfix.mmcv_standin.ops.ms_deform_attn), which take mmcv's own pure-torch function.

The reference is the CUDA kernel's definition (ms_deform_attn_cuda_kernel.cuh): per query,
head, level and point, a bilinear sample of the level's value map at
``location * size - 0.5`` (corners outside the map count as 0), weighted and summed;
written here as loops, with autograd through them for the backward.
"""

import pytest

torch = pytest.importorskip("torch")  # in-process numerics: stacks with torch only

from support import run_mmcv_op_wrapper

pytestmark = pytest.mark.stack("modern")  # mmcv >= 1.3.2 has the op (paper: 1.3.0)


def bilinear(plane, y, x):
    """plane (H, W, C) sampled at (y, x) in pixel units; corners outside count as 0."""
    height, width, _ = plane.shape
    y0, x0 = int(torch.floor(y)), int(torch.floor(x))
    total = plane.new_zeros(plane.shape[-1])
    for yy, wy in ((y0, y0 + 1 - y), (y0 + 1, y - y0)):
        for xx, wx in ((x0, x0 + 1 - x), (x0 + 1, x - x0)):
            if 0 <= yy < height and 0 <= xx < width:
                total = total + wy * wx * plane[yy, xx]
    return total


def reference(value, shapes, locations, weights):
    n, _, heads, channels = value.shape
    _, queries, _, levels, points, _ = locations.shape
    starts = [0]
    for h, w in shapes.tolist():
        starts.append(starts[-1] + h * w)
    out = []
    for b in range(n):
        for q in range(queries):
            per_head = []
            for m in range(heads):
                total = value.new_zeros(channels)
                for level, (h, w) in enumerate(shapes.tolist()):
                    plane = value[b, starts[level]:starts[level + 1], m].view(h, w, channels)
                    for p in range(points):
                        x = locations[b, q, m, level, p, 0] * w - 0.5
                        y = locations[b, q, m, level, p, 1] * h - 0.5
                        total = total + weights[b, q, m, level, p] * bilinear(plane, y, x)
                per_head.append(total)
            out.append(torch.cat(per_head))
    return torch.stack(out).view(n, queries, heads * channels)


def test_mmcv_kernel_path_runs_on_the_standin_and_matches_the_reference(tmp_path):
    saved = run_mmcv_op_wrapper("ms_deform_attn", tmp_path)
    inputs = saved["inputs"]
    names = ["value", "sampling_locations", "attention_weights"]
    leaves = [inputs[name].clone().requires_grad_() for name in names]
    expected = reference(leaves[0], inputs["spatial_shapes"], leaves[1], leaves[2])
    torch.testing.assert_close(saved["output"], expected.detach(), rtol=0, atol=1e-12)
    grads = torch.autograd.grad(expected, leaves, saved["upstream"])
    for name, grad in zip(names, grads):
        torch.testing.assert_close(saved["grads"][name], grad, rtol=0, atol=1e-10, msg=name)


def test_a_hand_computed_case():
    from compatfix.mmcv_standin.ops import ms_deform_attn

    pytest.importorskip("mmcv.ops.multi_scale_deform_attn")
    # One 2x2 level, one head, one channel holding 1, 2, 3, 4; one query, one point at
    # the centre of the map (x = y = 0.5 -> pixel 0.5, 0.5): the mean, 2.5, times 2.
    value = torch.tensor([1.0, 2.0, 3.0, 4.0]).view(1, 4, 1, 1)
    locations = torch.full((1, 1, 1, 1, 1, 2), 0.5)
    weights = torch.full((1, 1, 1, 1, 1), 2.0)
    out = ms_deform_attn.ms_deform_attn_forward(value, torch.tensor([[2, 2]]), torch.tensor([0]), locations,
                                                weights, 64)
    assert out.tolist() == [[[5.0]]]
