"""Shims for ``transformers.trainer_pt_utils``: ``SequentialDistributedSampler`` and
``DistributedTensorGatherer``, the evaluation sampler and gatherer of 4.x's Trainer (removed in
transformers 5), which 2020-22 custom training loops use to split an evaluation set over
processes in order and put the gathered predictions back in dataset order.

Each of ``num_replicas`` processes takes one contiguous block of the indices, in order;
the dataset is padded with its first indices, repeated, to a multiple of the block size
(of ``batch_size * num_replicas`` when ``batch_size`` is given), so the gathered
predictions come back in dataset order, with the padding at the end to cut off.

The gatherer receives, at each step, the concatenation of every process's batch (what
``all_gather`` gives: process 0's rows, then process 1's ...) and writes each process's slice
at that process's offset in a storage of the padded dataset's size, so that ``finalize()``
returns the rows in dataset order, truncated to ``num_samples``; a longer second dimension
widens the storage, padded with ``padding_index``.
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


class DistributedTensorGatherer:
    """transformers 4.x's gatherer of per-process evaluation arrays (numpy arrays, or nested
    lists/tuples of them) into dataset order, on the CPU, step by step."""

    def __init__(self, world_size: int, num_samples: int, make_multiple_of: int | None = None,
                 padding_index: int = -100) -> None:
        self.world_size = world_size
        self.num_samples = num_samples
        total_size = world_size if make_multiple_of is None else world_size * make_multiple_of
        self.total_samples = math.ceil(num_samples / total_size) * total_size
        self.process_length = self.total_samples // world_size
        self._storage: Any = None
        self._offsets: list[int] | None = None
        self.padding_index = padding_index

    def add_arrays(self, arrays: Any) -> None:
        """Add one step's gathered ``arrays``; the storage is made at full size at the first
        call, so that running out of memory happens at the start."""
        if arrays is None:
            return
        if self._storage is None:
            from transformers.trainer_pt_utils import nested_new_like

            self._storage = nested_new_like(arrays, self.total_samples, padding_index=self.padding_index)
            self._offsets = list(range(0, self.total_samples, self.process_length))
        slice_len, self._storage = self._nested_set_tensors(self._storage, arrays)
        for i in range(self.world_size):
            self._offsets[i] += slice_len

    def _nested_set_tensors(self, storage: Any, arrays: Any) -> tuple[int, Any]:
        if isinstance(arrays, (list, tuple)):
            result = [self._nested_set_tensors(x, y) for x, y in zip(storage, arrays)]
            return result[0][0], type(arrays)(r[1] for r in result)
        if arrays.shape[0] % self.world_size != 0:
            raise AssertionError("Arrays passed should all have a first dimension multiple of %d, found %d."
                                 % (self.world_size, arrays.shape[0]))
        slice_len = arrays.shape[0] // self.world_size
        for i in range(self.world_size):
            rows = arrays[i * slice_len:(i + 1) * slice_len]
            if len(arrays.shape) == 1:
                storage[self._offsets[i]:self._offsets[i] + slice_len] = rows
            else:
                if len(storage.shape) > 1 and storage.shape[1] < arrays.shape[1]:  # widen on the fly
                    from transformers.trainer_pt_utils import expand_like

                    storage = expand_like(storage, arrays.shape[1], padding_index=self.padding_index)
                storage[self._offsets[i]:self._offsets[i] + slice_len, :arrays.shape[1]] = rows
        return slice_len, storage

    def finalize(self) -> Any:
        """The gathered arrays in dataset order, cut to ``num_samples`` (None if none were added)."""
        if self._storage is None:
            return None
        if self._offsets[0] != self.process_length:
            import logging

            logging.getLogger("transformers.trainer_pt_utils").warning(
                "Not all data has been set. Are you sure you passed all values?")
        from transformers.trainer_pt_utils import nested_truncate

        return nested_truncate(self._storage, self.num_samples)


DistributedTensorGatherer.__module__ = "transformers.trainer_pt_utils"


def restore_sampler(module) -> None:
    restore_names(module, {"SequentialDistributedSampler": sequential_sampler_class(),
                           "DistributedTensorGatherer": DistributedTensorGatherer},
                  "transformers.trainer_pt_utils.SequentialDistributedSampler")


SHIMS = (
    Shim(
        "transformers.trainer_pt_utils.SequentialDistributedSampler",
        targets=["transformers.trainer_pt_utils"],
        requires={"transformers": ">=5.0"},
        apply=restore_sampler,
        restores=["SequentialDistributedSampler", "DistributedTensorGatherer"],
        broke="transformers 5 removed trainer_pt_utils.SequentialDistributedSampler and DistributedTensorGatherer "
        "(deprecated in 4.x), the in-order evaluation sampler and gatherer of 2020-22 distributed evaluation loops",
        summary="restore them: contiguous in-order blocks per process over the dataset padded with its first "
        "indices, and 4.x's gatherer that writes each process's rows back at their place",
        replacement="torch.utils.data.distributed.DistributedSampler(shuffle=False) (interleaved, not blocks), "
        "or accelerate's gather_for_metrics",
        rewrites={"transformers.trainer_pt_utils.SequentialDistributedSampler":
                  "DistributedSampler(dataset, shuffle=False) (its order differs)",
                  "transformers.trainer_pt_utils.DistributedTensorGatherer":
                  "accelerate's Accelerator.gather_for_metrics"},
    ),
)
