"""NMS variants of mmcv's CPU-only kernels: ``softnms`` and ``nms_match``. (Plain ``nms``
is torchvision's, in ``compatfix.mmcv_standin.ext``.)

``softnms`` (Soft-NMS, Bodla et al., ICCV 2017) is what mmcv's ``soft_nms``, and
``batched_nms`` with ``type='soft_nms'`` (CornerNet, CentripetalNet), call. mmcv's kernel (``softnms_cpu``, CPU only, the same in mmcv 1.2.7, 1.3.0 and 1.7.2) works
in float32 on one array of boxes, in place: for ``i = 0, 1, ...`` it swaps the
highest-scoring remaining box (the first one, on ties) into place ``i``, writes it to
``dets[i]``, and decays every later box's score by its IoU ``ovr`` with box ``i`` (method
0: times 0 if ``ovr >= iou_threshold``; 1: times ``1 - ovr`` if so; 2: times
``exp(-ovr**2 / sigma)``). A box whose score falls below ``min_score`` is dropped by
moving the last box into its place, which is then looked at in turn. It returns the
original indices of the boxes kept, in that final order.

Here each step's decay is one vectorised float32 computation (each later box's decay
depends only on box ``i``), and the drop-by-moving-the-last-box order is computed from
which boxes fall below ``min_score``: the holes among the first ``kept`` places are
filled, in order, by the kept boxes behind them, last first. ``exp`` is torch's, which
may differ from the C library's ``expf`` by a unit in the last place.

``nms_match`` (PISA's ``isr_p`` groups its samples with it) is greedy NMS that returns,
for each box kept, the list ``[kept, suppressed...]`` of the boxes it suppresses, in
score order (``nms_match_cpu``, the same in mmcv 1.2.7, 1.3.0 and 1.7.2: float32, IoU
without the legacy +1, ``ovr >= iou_threshold``, order from torch's own descending sort).
"""

from __future__ import annotations


def _moved_order(dropped):
    """The order in which the kernel leaves a run of boxes, ``dropped`` (bool) saying which
    of them fall below min_score: an index tensor into the run, of the kept ones."""
    import torch

    kept = int((~dropped).sum())
    order = torch.arange(kept)
    holes = torch.nonzero(dropped[:kept]).flatten()
    donors = torch.nonzero(~dropped[kept:]).flatten().flip(0) + kept
    order[holes] = donors
    return order


def softnms(boxes, scores, dets, iou_threshold, sigma, min_score, method, offset):
    import torch

    if boxes.numel() == 0:
        return boxes.new_empty((0,), dtype=torch.long)
    x1, y1, x2, y2 = (boxes[:, k].contiguous() for k in range(4))
    areas = (x2 - x1 + offset) * (y2 - y1 + offset)
    state = torch.stack([x1, y1, x2, y2, scores.to(boxes.dtype), areas], dim=1)  # (n, 6)
    inds = torch.arange(boxes.size(0))
    count, i = boxes.size(0), 0
    while i < count:
        best = i + int(torch.argmax(state[i:count, 4]))  # the first maximum, as the kernel's "<"
        if best != i:
            state[[i, best]] = state[[best, i]]
            inds[[i, best]] = inds[[best, i]]
        dets[i] = state[i, :5]
        rest = state[i + 1:count]
        zero = rest.new_zeros(())
        width = torch.maximum(zero, torch.minimum(state[i, 2], rest[:, 2]) - torch.maximum(state[i, 0], rest[:, 0]) + offset)
        height = torch.maximum(zero, torch.minimum(state[i, 3], rest[:, 3]) - torch.maximum(state[i, 1], rest[:, 1]) + offset)
        inter = width * height
        ovr = inter / (state[i, 5] + rest[:, 5] - inter)
        if method == 0:
            weight = torch.where(ovr >= iou_threshold, zero, zero + 1)
        elif method == 1:
            weight = torch.where(ovr >= iou_threshold, 1 - ovr, zero + 1)
        elif method == 2:
            weight = torch.exp(-(ovr * ovr) / sigma)
        else:
            weight = torch.ones_like(ovr)
        rest[:, 4] *= weight
        order = _moved_order(rest[:, 4] < min_score)
        state[i + 1:i + 1 + len(order)] = rest[order].clone()
        inds[i + 1:i + 1 + len(order)] = inds[i + 1:count][order].clone()
        count = i + 1 + len(order)
        i += 1
    return inds[:count]


def nms_match(dets, iou_threshold):
    import torch

    x1, y1, x2, y2, scores = (dets[:, k].contiguous() for k in range(5))
    areas = (x2 - x1) * (y2 - y1)
    order = scores.sort(0, descending=True)[1]
    suppressed = torch.zeros(dets.size(0), dtype=torch.bool)
    matched = []
    for position, i in enumerate(order.tolist()):
        if suppressed[i]:
            continue
        later = order[position + 1:]
        later = later[~suppressed[later]]
        width = (torch.minimum(x2[i], x2[later]) - torch.maximum(x1[i], x1[later])).clamp(min=0)
        height = (torch.minimum(y2[i], y2[later]) - torch.maximum(y1[i], y1[later])).clamp(min=0)
        inter = width * height
        hit = later[inter / (areas[i] + areas[later] - inter) >= iou_threshold]
        suppressed[hit] = True
        matched.append([i] + hit.tolist())
    return matched
