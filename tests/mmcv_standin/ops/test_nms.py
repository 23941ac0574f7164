"""NMS-variant kernels of the mmcv._ext stand-in (compatfix.mmcv_standin.ops.nms):
softnms and nms_match.

The references are mmcv's C++ kernels (softnms_cpu and nms_match_cpu in
mmcv/ops/csrc/pytorch/cpu/nms.cpp, unchanged from 1.2.7 to 1.7.2) ported line by line to
Python with numpy float32 scalars, softnms's in-place swaps and its
drop-by-moving-the-last-box included.
"""

import math

import pytest

torch = pytest.importorskip("torch")  # in-process numerics: stacks with torch only
np = pytest.importorskip("numpy")

from compatfix.mmcv_standin.ops import nms as kernels
from support import run_mmcv_op_wrapper

pytestmark = pytest.mark.stack("modern", "paper", "mmold")

f32 = np.float32


def reference(boxes, scores, iou_threshold, sigma, min_score, method, offset):
    """softnms_cpu, as written in C++: (dets rows written, kept original indices)."""
    x1, y1, x2, y2 = ([f32(v) for v in boxes[:, k].tolist()] for k in range(4))
    sc = [f32(v) for v in scores.tolist()]
    areas = [(x2[k] - x1[k] + f32(offset)) * (y2[k] - y1[k] + f32(offset)) for k in range(len(sc))]
    inds = list(range(len(sc)))
    dets = []
    n, i = len(sc), 0
    while i < n:
        max_pos = i
        for pos in range(i + 1, n):
            if sc[max_pos] < sc[pos]:
                max_pos = pos
        for array in (x1, y1, x2, y2, sc, areas, inds):
            array[i], array[max_pos] = array[max_pos], array[i]
        dets.append([x1[i], y1[i], x2[i], y2[i], sc[i]])
        pos = i + 1
        while pos < n:
            w = max(f32(0), min(x2[i], x2[pos]) - max(x1[i], x1[pos]) + f32(offset))
            h = max(f32(0), min(y2[i], y2[pos]) - max(y1[i], y1[pos]) + f32(offset))
            inter = w * h
            ovr = inter / (areas[i] + areas[pos] - inter)
            weight = f32(1)
            if method == 0 and ovr >= f32(iou_threshold):
                weight = f32(0)
            elif method == 1 and ovr >= f32(iou_threshold):
                weight = f32(1) - ovr
            elif method == 2:
                weight = f32(math.exp(-(ovr * ovr) / f32(sigma)))
            sc[pos] = sc[pos] * weight
            if sc[pos] < f32(min_score):
                for array in (x1, y1, x2, y2, sc, areas, inds):
                    array[pos] = array[n - 1]
                n -= 1
                pos -= 1
            pos += 1
        i += 1
    return torch.tensor(dets, dtype=torch.float32).view(-1, 5), inds[:n]


def random_case(seed, count=80):
    generator = torch.Generator().manual_seed(seed)
    xy = torch.rand(count, 2, generator=generator) * 50
    boxes = torch.cat([xy, xy + torch.rand(count, 2, generator=generator) * 25 + 2], 1)
    scores = torch.rand(count, generator=generator)
    scores[5:15] = scores[3]  # ties
    return boxes, scores


def call(boxes, scores, *args):
    dets = boxes.new_empty((boxes.size(0), 5))
    inds = kernels.softnms(boxes, scores, dets, *args)
    return dets[:inds.numel()], inds


@pytest.mark.parametrize("method", [0, 1, 2])
@pytest.mark.parametrize("offset", [0, 1])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_the_kernel_ported_line_by_line(method, offset, seed):
    boxes, scores = random_case(seed)
    args = (0.3, 0.5, 0.05, method, offset)
    dets, inds = call(boxes, scores, *args)
    expected_dets, expected_inds = reference(boxes, scores, *args)
    assert inds.tolist() == expected_inds
    # Identical arithmetic but exp: torch's and the C library's may differ in the last place.
    tolerance = 1e-6 if method == 2 else 0.0
    torch.testing.assert_close(dets, expected_dets[:len(expected_inds)], rtol=tolerance, atol=tolerance)
    assert inds.dtype == torch.long


def test_a_hand_computed_case():
    # Two boxes overlapping by half (IoU 1/3) and a distant one; linear decay at 0.3:
    # the second box's 0.8 becomes 0.8 * (1 - 1/3) = 0.533, now below the third's 0.7.
    boxes = torch.tensor([[0.0, 0.0, 10.0, 10.0], [5.0, 0.0, 15.0, 10.0], [50.0, 50.0, 60.0, 60.0]])
    scores = torch.tensor([0.9, 0.8, 0.7])
    dets, inds = call(boxes, scores, 0.3, 0.5, 0.001, 1, 0)
    assert inds.tolist() == [0, 2, 1]
    torch.testing.assert_close(dets[:, 4], torch.tensor([0.9, 0.7, 0.8 * (2 / 3)]))
    # Naive (method 0): the overlapping box is dropped, the last box takes its place.
    dets, inds = call(boxes, scores, 0.3, 0.5, 0.001, 0, 0)
    assert inds.tolist() == [0, 2]


def test_no_boxes():
    dets, inds = call(torch.zeros(0, 4), torch.zeros(0), 0.3, 0.5, 0.001, 1, 0)
    assert inds.shape == (0,) and inds.dtype == torch.long


@pytest.mark.parametrize("method", ["linear", "gaussian"])
def test_mmcv_soft_nms_runs_on_the_standin_and_matches_the_reference(tmp_path, method):
    saved = run_mmcv_op_wrapper("soft_nms_" + method, tmp_path)
    args = (0.3, 0.5, 0.05, {"linear": 1, "gaussian": 2}[method], 0)
    expected_dets, expected_inds = reference(saved["inputs"]["boxes"], saved["inputs"]["scores"], *args)
    assert saved["inds"].tolist() == expected_inds
    torch.testing.assert_close(saved["output"], expected_dets[:len(expected_inds)], rtol=1e-6, atol=1e-6)


def reference_match(dets, iou_threshold):
    """nms_match_cpu, as written in C++ (the order: torch's descending sort, as there)."""
    x1, y1, x2, y2, _ = ([f32(v) for v in dets[:, k].tolist()] for k in range(5))
    areas = [(x2[k] - x1[k]) * (y2[k] - y1[k]) for k in range(len(x1))]
    order = dets[:, 4].sort(0, descending=True)[1].tolist()
    suppressed = [False] * len(x1)
    matched = []
    for position, i in enumerate(order):
        if suppressed[i]:
            continue
        group = [i]
        for j in order[position + 1:]:
            if suppressed[j]:
                continue
            w = max(f32(0), min(x2[i], x2[j]) - max(x1[i], x1[j]))
            h = max(f32(0), min(y2[i], y2[j]) - max(y1[i], y1[j]))
            inter = w * h
            if inter / (areas[i] + areas[j] - inter) >= f32(iou_threshold):
                suppressed[j] = True
                group.append(j)
        matched.append(group)
    return matched


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("threshold", [0.3, 0.6])
def test_nms_match_matches_the_kernel_ported_line_by_line(seed, threshold):
    boxes, scores = random_case(seed)
    dets = torch.cat([boxes, scores[:, None]], 1)
    assert kernels.nms_match(dets, threshold) == reference_match(dets, threshold)


def test_nms_match_hand_computed_case():
    # Box 1 overlaps box 0 with IoU 1/3 (suppressed at 0.3, not at 0.5); box 2 is apart.
    dets = torch.tensor([[0.0, 0.0, 10.0, 10.0, 0.9], [5.0, 0.0, 15.0, 10.0, 0.8], [50.0, 50.0, 60.0, 60.0, 0.95]])
    assert kernels.nms_match(dets, 0.3) == [[2], [0, 1]]
    assert kernels.nms_match(dets, 0.5) == [[2], [0], [1]]


def test_mmcv_nms_match_runs_on_the_standin_and_matches_the_reference(tmp_path):
    saved = run_mmcv_op_wrapper("nms_match", tmp_path)
    expected = reference_match(saved["inputs"]["dets"], 0.4)
    assert [group.tolist() for group in saved["output"]] == expected
