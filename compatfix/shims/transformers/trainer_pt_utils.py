"""Shims for ``transformers.trainer_pt_utils``: ``SequentialDistributedSampler``, the
evaluation sampler of 4.x's Trainer (removed in transformers 5), which 2020-22 custom
training loops use to split an evaluation set over processes in order.

Each of ``num_replicas`` processes takes one contiguous block of the indices, in order;
the dataset is padded with its first indices, repeated, to a multiple of the block size
(of ``batch_size * num_replicas`` when ``batch_size`` is given), so the gathered
predictions come back in dataset order, with the padding at the end to cut off.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from compatfix.patching import restore_names
from compatfix.registry import Shim

_made: dict[str, type] = {}


def sequential_sampler_class() -> type:
    """4.x's ``SequentialDistributedSampler``, a ``torch.utils.data.Sampler`` (made on
    first use: torch is imported then)."""
    if "class" not in _made:
        import torch.distributed as dist
        from torch.utils.data import Sampler

        class SequentialDistributedSampler(Sampler):
            """Contiguous, in-order blocks of a padded dataset, one per process."""

            def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None,
                         batch_size: int | None = None) -> None:
                if num_replicas is None:
                    num_replicas = dist.get_world_size()
                if rank is None:
                    rank = dist.get_rank()
                self.dataset = dataset
                self.num_replicas = num_replicas
                self.rank = rank
                total = len(dataset)
                if batch_size is not None:
                    self.num_samples = math.ceil(total / (batch_size * num_replicas)) * batch_size
                else:
                    self.num_samples = math.ceil(total / num_replicas)
                self.total_size = self.num_samples * num_replicas
                self.batch_size = batch_size

            def __iter__(self) -> Iterator[int]:
                indices = list(range(len(self.dataset)))
                # pad with the first indices; 4.x padded once and failed an assert where that fell short
                while len(indices) < self.total_size:
                    indices += indices[: self.total_size - len(indices)]
                start = self.rank * self.num_samples
                return iter(indices[start:start + self.num_samples])

            def __len__(self) -> int:
                return self.num_samples

        SequentialDistributedSampler.__module__ = "transformers.trainer_pt_utils"
        SequentialDistributedSampler.__qualname__ = "SequentialDistributedSampler"
        _made["class"] = SequentialDistributedSampler
    return _made["class"]


def restore_sampler(module) -> None:
    restore_names(module, {"SequentialDistributedSampler": sequential_sampler_class()},
                  "transformers.trainer_pt_utils.SequentialDistributedSampler")


SHIMS = (
    Shim(
        "transformers.trainer_pt_utils.SequentialDistributedSampler",
        targets=["transformers.trainer_pt_utils"],
        requires={"transformers": ">=5.0"},
        apply=restore_sampler,
        restores=["SequentialDistributedSampler"],
        broke="transformers 5 removed trainer_pt_utils.SequentialDistributedSampler (deprecated in 4.x), the "
        "in-order evaluation sampler of 2020-22 distributed evaluation loops",
        summary="restore it: contiguous in-order blocks per process over the dataset padded with its first indices",
        replacement="torch.utils.data.distributed.DistributedSampler(shuffle=False) (interleaved, not blocks), "
        "or accelerate's gather_for_metrics",
        rewrites={"transformers.trainer_pt_utils.SequentialDistributedSampler":
                  "DistributedSampler(dataset, shuffle=False) (its order differs)"},
    ),
)
