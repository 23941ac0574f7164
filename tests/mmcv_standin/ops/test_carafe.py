"""CARAFE kernels of the mmcv._ext stand-in (compatfix.mmcv_standin.ops.carafe).

The reference is the definition in mmcv's CUDA kernel (carafe_naive_cuda_kernel.cuh),
written here as plain loops over output pixels and kernel positions; its gradients come
from autograd through those loops. The stand-in's kernels run in this process; mmcv's
own CARAFE classes run in a fresh interpreter with compatfix on and off.
"""

import pytest

torch = pytest.importorskip("torch")  # in-process numerics: stacks with torch only

from compatfix.mmcv_standin.ops import carafe as kernels
from compatfix._versions import release_tuple as release
from support import run_mmcv_op_wrapper

pytestmark = pytest.mark.stack("modern", "paper", "mmold")


def reference(features, masks, kernel_size, group_size, scale_factor):
    """out[n, c, y, x] = sum_ij features[n, c, y//s + i - r, x//s + j - r] * masks[n, g*k*k + i*k + j, y, x]."""
    n, c, h, w = features.shape
    k, s, r = kernel_size, scale_factor, (kernel_size - 1) // 2
    per_group = c // group_size
    values = []
    for b in range(n):
        for ch in range(c):
            g = ch // per_group
            for y in range(h * s):
                for x in range(w * s):
                    total = features.new_zeros(())
                    for i in range(k):
                        for j in range(k):
                            fy, fx = y // s + i - r, x // s + j - r
                            if 0 <= fy < h and 0 <= fx < w:
                                total = total + features[b, ch, fy, fx] * masks[b, g * k * k + i * k + j, y, x]
                    values.append(total)
    return torch.stack(values).view(n, c, h * s, w * s)


def reference_grads(features, masks, upstream, *args):
    f, m = features.clone().requires_grad_(), masks.clone().requires_grad_()
    return torch.autograd.grad(reference(f, m, *args), (f, m), upstream)


CASES = [  # (n, c, h, w, kernel_size, group_size, scale_factor)
    (2, 4, 3, 4, 3, 2, 2),
    (1, 3, 4, 3, 5, 1, 1),
    (1, 2, 2, 3, 1, 2, 3),
    (1, 4, 2, 2, 5, 4, 2),  # a kernel wider than the map
]


def inputs(n, c, h, w, k, groups, s):
    generator = torch.Generator().manual_seed(n * 1000 + c * 100 + k * 10 + s)
    features = torch.randn(n, c, h, w, dtype=torch.float64, generator=generator)
    masks = torch.rand(n, groups * k * k, h * s, w * s, dtype=torch.float64, generator=generator)
    return features, masks


@pytest.mark.parametrize("case", CASES)
def test_forward_and_backward_match_the_loop_reference(case):
    n, c, h, w, k, groups, s = case
    features, masks = inputs(*case)
    output = torch.zeros(n, c, h * s, w * s, dtype=torch.float64)
    rfeatures, routput, rmasks = torch.zeros_like(features), torch.zeros_like(output), torch.zeros_like(masks)
    kernels.carafe_forward(features, masks, rfeatures, routput, rmasks, output, kernel_size=k, group_size=groups,
                           scale_factor=s)
    expected = reference(features, masks, k, groups, s)
    torch.testing.assert_close(output, expected, rtol=0, atol=1e-12)
    # The kernel's NHWC copies, of which the Python wrapper passes rfeatures to the backward.
    assert torch.equal(rfeatures, features.permute(0, 2, 3, 1)) and rfeatures.shape == (n, h, w, c)
    assert torch.equal(rmasks, masks.permute(0, 2, 3, 1))
    torch.testing.assert_close(routput, expected.permute(0, 2, 3, 1), rtol=0, atol=1e-12)

    upstream = torch.randn_like(output)
    grad_features, grad_masks = torch.zeros_like(features), torch.zeros_like(masks)
    scratch = [torch.zeros_like(output) for _ in range(2)] + [torch.zeros_like(features), torch.zeros_like(masks)]
    kernels.carafe_backward(upstream, rfeatures, masks, *scratch, grad_features, grad_masks, kernel_size=k,
                            group_size=groups, scale_factor=s)
    expected_features, expected_masks = reference_grads(features, masks, upstream, k, groups, s)
    torch.testing.assert_close(grad_features, expected_features, rtol=0, atol=1e-12)
    torch.testing.assert_close(grad_masks, expected_masks, rtol=0, atol=1e-12)


@pytest.mark.parametrize("case", CASES[:2])
def test_the_naive_kernels_compute_the_same(case):
    n, c, h, w, k, groups, s = case
    features, masks = inputs(*case)
    output = torch.zeros(n, c, h * s, w * s, dtype=torch.float64)
    kernels.carafe_naive_forward(features, masks, output, kernel_size=k, group_size=groups, scale_factor=s)
    torch.testing.assert_close(output, reference(features, masks, k, groups, s), rtol=0, atol=1e-12)
    upstream = torch.randn_like(output)
    grad_features, grad_masks = torch.zeros_like(features), torch.zeros_like(masks)
    kernels.carafe_naive_backward(upstream, features, masks, grad_features, grad_masks, kernel_size=k,
                                  group_size=groups, scale_factor=s)
    expected = reference_grads(features, masks, upstream, k, groups, s)
    torch.testing.assert_close((grad_features, grad_masks), expected, rtol=0, atol=1e-12)


def test_gradcheck_of_the_backward_against_the_forward():
    class Carafe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, features, masks):
            ctx.save_for_backward(features, masks)
            return kernels.carafe(features, masks, 3, 2, 2)

        @staticmethod
        def backward(ctx, grad):
            return kernels.carafe_grads(grad, *ctx.saved_tensors, 3, 2, 2)

    features, masks = inputs(1, 4, 3, 3, 3, 2, 2)
    assert torch.autograd.gradcheck(Carafe.apply, (features.requires_grad_(), masks.requires_grad_()))


def test_a_hand_computed_case():
    features = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    # All-ones masks sum each pixel's zero-padded 3x3 neighbourhood: the whole 2x2 map.
    ones = torch.ones(1, 9, 2, 2)
    assert kernels.carafe(features, ones, 3, 1, 1).tolist() == [[[[10.0, 10.0], [10.0, 10.0]]]]
    # A one-hot mask at kernel position (0, 0) reads the up-left neighbour.
    up_left = torch.zeros(1, 9, 2, 2)
    up_left[:, 0] = 1.0
    assert kernels.carafe(features, up_left, 3, 1, 1).tolist() == [[[[0.0, 0.0], [0.0, 1.0]]]]
    # Kernel size 1, scale 2: nearest upsampling weighted by the mask.
    half = torch.full((1, 1, 4, 4), 0.5)
    assert kernels.carafe(features, half, 1, 1, 2)[0, 0, :, 0].tolist() == [0.5, 0.5, 1.5, 1.5]


def test_mmcv_carafe_runs_on_the_standin_and_matches_the_reference(tmp_path):
    saved = run_mmcv_op_wrapper("carafe", tmp_path)
    features, masks = saved["inputs"]["features"], saved["inputs"]["masks"]
    torch.testing.assert_close(saved["output"], reference(features, masks, 3, 2, 2), rtol=0, atol=1e-12)
    if release(saved["mmcv"]) < (1, 6, 2):
        # CARAFEFunction.backward of mmcv < 1.6.2 asserts CUDA tensors before it calls
        # the kernel: on the CPU only its forward runs (CUDA tensors get both).
        assert saved["grads"] is None and saved["backward_error"] == "assert grad_output.is_cuda", saved
        return
    expected = reference_grads(features, masks, saved["upstream"], 3, 2, 2)
    torch.testing.assert_close((saved["grads"]["features"], saved["grads"]["masks"]), expected, rtol=0, atol=1e-12)


def test_mmcv_carafe_naive_runs_on_the_standin_and_matches_the_reference(tmp_path):
    saved = run_mmcv_op_wrapper("carafe_naive", tmp_path)
    features, masks = saved["inputs"]["features"], saved["inputs"]["masks"]
    torch.testing.assert_close(saved["output"], reference(features, masks, 5, 1, 3), rtol=0, atol=1e-12)
