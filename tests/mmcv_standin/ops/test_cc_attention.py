"""Criss-cross attention kernels of the mmcv._ext stand-in
(compatfix.mmcv_standin.ops.cc_attention), which mmcv < 1.3.13's CrissCrossAttention calls.

The references are the loops of mmcv's CUDA kernels (cc_attention_cuda_kernel.cuh,
mmcv 1.3.0) written in Python, with autograd through them for the backward, and CCNet's
definition of the layer (each pixel attends over its row and the rest of its column). On
the modern stack, mmcv 1.7.2's own pure-torch CrissCrossAttention is a second, independent
reference for the layer built from these kernels.
"""

import pytest

torch = pytest.importorskip("torch")  # in-process numerics: stacks with torch only

import torch.nn.functional as F

from compatfix.mmcv_standin.ops import cc_attention as kernels
from support import run_mmcv_op_wrapper

pytestmark = pytest.mark.stack("modern", "paper", "mmold")


def neighbours(y, x, height, width):
    """A pixel's criss-cross neighbours in the kernels' order: its row, then the other rows."""
    return [(y, i) for i in range(width)] + [(k, x) for k in range(height) if k != y]


def reference_weight(t, f):
    n, _, h, w = t.shape
    weight = t.new_zeros(n, h + w - 1, h, w)
    for y in range(h):
        for x in range(w):
            for index, (ny, nx) in enumerate(neighbours(y, x, h, w)):
                weight[:, index, y, x] = (t[:, :, y, x] * f[:, :, ny, nx]).sum(1)
    return weight


def reference_map(weight, g):
    out = torch.zeros_like(g)
    _, _, h, w = g.shape
    for y in range(h):
        for x in range(w):
            for index, (ny, nx) in enumerate(neighbours(y, x, h, w)):
                out[:, :, y, x] = out[:, :, y, x] + weight[:, index, y, x, None] * g[:, :, ny, nx]
    return out


def vjp(function, inputs, upstream):
    leaves = [x.clone().requires_grad_() for x in inputs]
    return torch.autograd.grad(function(*leaves), leaves, upstream)


SHAPES = [(2, 3, 4, 5), (1, 2, 1, 3), (1, 2, 3, 1), (1, 1, 1, 1)]


@pytest.mark.parametrize("shape", SHAPES)
def test_ca_forward_and_backward_match_the_kernel_loops(shape):
    n, c, h, w = shape
    t, f = torch.randn(2, *shape, dtype=torch.float64).unbind(0)
    # The kernels add to what they are given: start from ones to see it.
    weight = torch.ones(n, h + w - 1, h, w, dtype=torch.float64)
    kernels.ca_forward(t, f, weight)
    torch.testing.assert_close(weight, 1.0 + reference_weight(t, f), rtol=0, atol=1e-12)
    upstream = torch.randn_like(weight)
    dt, df = torch.ones_like(t), torch.ones_like(f)
    kernels.ca_backward(upstream, t, f, dt, df)
    expected = vjp(reference_weight, (t, f), upstream)
    torch.testing.assert_close((dt - 1.0, df - 1.0), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", SHAPES)
def test_ca_map_forward_and_backward_match_the_kernel_loops(shape):
    n, c, h, w = shape
    weight = torch.randn(n, h + w - 1, h, w, dtype=torch.float64)
    g = torch.randn(shape, dtype=torch.float64)
    out = torch.ones_like(g)
    kernels.ca_map_forward(weight, g, out)
    torch.testing.assert_close(out, 1.0 + reference_map(weight, g), rtol=0, atol=1e-12)
    upstream = torch.randn_like(g)
    dw, dg = torch.ones_like(weight), torch.ones_like(g)
    kernels.ca_map_backward(upstream, weight, g, dw, dg)
    expected = vjp(reference_map, (weight, g), upstream)
    torch.testing.assert_close((dw - 1.0, dg - 1.0), expected, rtol=0, atol=1e-12)


def test_gradcheck_of_the_backwards_against_the_forwards():
    class Weight(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t, f):
            ctx.save_for_backward(t, f)
            return kernels.ca_weight(t, f)

        @staticmethod
        def backward(ctx, dw):
            t, f = ctx.saved_tensors
            dt, df = torch.zeros_like(t), torch.zeros_like(f)
            kernels.ca_backward(dw, t, f, dt, df)
            return dt, df

    class Map(torch.autograd.Function):
        @staticmethod
        def forward(ctx, weight, g):
            ctx.save_for_backward(weight, g)
            return kernels.ca_map(weight, g)

        @staticmethod
        def backward(ctx, dout):
            weight, g = ctx.saved_tensors
            dw, dg = torch.zeros_like(weight), torch.zeros_like(g)
            kernels.ca_map_backward(dout, weight, g, dw, dg)
            return dw, dg

    t, f = torch.randn(2, 1, 2, 3, 4, dtype=torch.float64, requires_grad=True).unbind(0)
    assert torch.autograd.gradcheck(Weight.apply, (t.detach().requires_grad_(), f.detach().requires_grad_()))
    weight = torch.randn(1, 6, 3, 4, dtype=torch.float64, requires_grad=True)
    g = torch.randn(1, 2, 3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(Map.apply, (weight, g))


def test_a_hand_computed_case():
    # A 2x2 map, one channel: pixel (0, 0)'s neighbours are (0, 0), (0, 1), then (1, 0).
    t = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    f = torch.tensor([[[[10.0, 20.0], [30.0, 40.0]]]])
    weight = kernels.ca_weight(t, f)
    assert weight[0, :, 0, 0].tolist() == [10.0, 20.0, 30.0]
    # Pixel (1, 1): row (1, 0), (1, 1), then column (0, 1).
    assert weight[0, :, 1, 1].tolist() == [120.0, 160.0, 80.0]
    out = kernels.ca_map(torch.tensor([1.0, 0.0, 0.5]).view(1, 3, 1, 1).expand(1, 3, 2, 2), f)
    # out[y, x] = f[y, 0] + 0.5 * f[other row, x]
    assert out[0, 0].tolist() == [[10.0 + 15.0, 10.0 + 20.0], [30.0 + 5.0, 30.0 + 10.0]]


def layer_reference(x, params):
    """CCNet's criss-cross attention layer: 1x1 convs, softmax over each pixel's row and
    the rest of its column, gamma * attended values + x."""
    def conv(name, value):
        return F.conv2d(value, params[name + "_conv__weight"], params[name + "_conv__bias"])

    query, key, value = conv("query", x), conv("key", x), conv("value", x)
    _, _, h, w = x.shape
    out = torch.zeros_like(value)
    for y in range(h):
        for xx in range(w):
            places = neighbours(y, xx, h, w)
            energy = torch.stack([(query[:, :, y, xx] * key[:, :, ny, nx]).sum(1) for ny, nx in places], 1)
            attention = F.softmax(energy, 1)
            out[:, :, y, xx] = sum(attention[:, i, None] * value[:, :, ny, nx] for i, (ny, nx) in enumerate(places))
    return params["gamma__scale"] * out + x


def test_mmcv_criss_cross_attention_runs_on_the_standin_and_matches_the_reference(tmp_path):
    # mmcv < 1.3.13 (paper, mmold) computes the layer with these kernels; later mmcv
    # (modern) in torch itself, which this then checks against the same reference.
    # In float32 (see the fixture): the reference runs in float64 on the same inputs.
    saved = run_mmcv_op_wrapper("cc_attention", tmp_path)
    inputs = {name: value.double() for name, value in saved["inputs"].items()}
    leaf = inputs["x"].clone().requires_grad_()
    expected = layer_reference(leaf, inputs)
    torch.testing.assert_close(saved["output"].double(), expected.detach(), rtol=0, atol=1e-5)
    (grad,) = torch.autograd.grad(expected, leaf, saved["upstream"].double())
    torch.testing.assert_close(saved["grads"]["x"].double(), grad, rtol=0, atol=1e-5)


@pytest.mark.stack("modern")
@pytest.mark.filterwarnings("ignore:On January 1, 2023, MMCV")
def test_the_kernels_give_mmcv_172s_own_torch_layer():
    # mmcv 1.7.2 rewrote CrissCrossAttention in torch (einsums, -inf on the column's own
    # pixel): the layer of mmcv 1.3.0 (ca_weight, softmax, ca_map) built from the
    # stand-in's kernels must give the same output and input gradient.
    import mmcv.ops

    torch.manual_seed(1)
    layer = mmcv.ops.CrissCrossAttention(16).double()
    layer.gamma.scale.data.fill_(0.5)
    x = torch.randn(2, 16, 6, 5, dtype=torch.float64, requires_grad=True)
    energy = kernels.ca_weight(layer.query_conv(x), layer.key_conv(x))
    old_style = layer.gamma(kernels.ca_map(F.softmax(energy, 1), layer.value_conv(x))) + x
    new_style = layer(x)
    torch.testing.assert_close(old_style, new_style, rtol=0, atol=1e-12)
    upstream = torch.randn_like(x)
    torch.testing.assert_close(torch.autograd.grad(old_style, x, upstream), torch.autograd.grad(new_style, x, upstream),
                               rtol=0, atol=1e-12)
