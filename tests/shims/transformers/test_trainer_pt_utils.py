"""trainer_pt_utils.SequentialDistributedSampler and DistributedTensorGatherer (removed in
transformers 5) against the real transformers 5.24: missing with compatfix off; with it on,
4.x's blocks and 4.x's gathering back into dataset order, written out here by hand."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

PRESENT = ("import transformers.trainer_pt_utils as t\n"
           "print([hasattr(t, n) for n in ('SequentialDistributedSampler', 'DistributedTensorGatherer')])")


def test_sampler_is_missing_without_compatfix():
    for env in (clean_env(compatfix=False),
                clean_env(COMPATFIX_DISABLE="transformers.trainer_pt_utils.SequentialDistributedSampler")):
        result = run_python(code=PRESENT, env=env)
        assert result.stdout.strip() == "[False, False]", result.stderr[-2000:]


def test_sampler_gives_4x_blocks():
    result = run_python(
        code="""
        import torch
        from transformers.trainer_pt_utils import SequentialDistributedSampler
        data = list(range(10))
        # 10 items over 3 processes: blocks of ceil(10 / 3) = 4, padded with the first 2 indices
        blocks = [list(SequentialDistributedSampler(data, num_replicas=3, rank=r)) for r in range(3)]
        assert blocks == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]], blocks
        # batch_size=3: blocks of ceil(10 / (3 * 2)) * 3 = 6 for 2 processes
        sampler = SequentialDistributedSampler(data, num_replicas=2, rank=1, batch_size=3)
        assert len(sampler) == 6 and list(sampler) == [6, 7, 8, 9, 0, 1]
        # 2 items over 4 processes, batches of 2: the padding wraps round more than once
        assert list(SequentialDistributedSampler([0, 1], num_replicas=4, rank=3, batch_size=2)) == [0, 1]
        assert isinstance(sampler, torch.utils.data.Sampler)
        loader = torch.utils.data.DataLoader(data, sampler=sampler, batch_size=3)
        assert [batch.tolist() for batch in loader] == [[6, 7, 8], [9, 0, 1]]
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


def test_gatherer_puts_rows_back_in_dataset_order():
    result = run_python(
        code="""
        import numpy as np
        from transformers.trainer_pt_utils import DistributedTensorGatherer, SequentialDistributedSampler
        # 4.x's docstring example: 16 samples, batches of 2, 3 processes
        blocks = [list(SequentialDistributedSampler(list(range(16)), num_replicas=3, rank=r, batch_size=2))
                  for r in range(3)]
        assert blocks == [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11], [12, 13, 14, 15, 0, 1]]
        gatherer = DistributedTensorGatherer(world_size=3, num_samples=16, make_multiple_of=2)
        assert gatherer.total_samples == 18 and gatherer.process_length == 6
        for step in range(3):  # what all_gather gives: each process's batch, process 0's first
            gathered = np.concatenate([np.array(block[2 * step:2 * step + 2]) for block in blocks])
            gatherer.add_arrays(gathered)
        assert gatherer.finalize().tolist() == list(range(16))
        # nested arrays, and a second dimension that grows: padded with padding_index
        gatherer = DistributedTensorGatherer(world_size=2, num_samples=3, padding_index=-1)
        gatherer.add_arrays((np.array([[1, 1], [2, 2]]), np.array([10, 20])))
        gatherer.add_arrays((np.array([[3, 3, 3], [4, 4, 4]]), np.array([30, 40])))
        rows, values = gatherer.finalize()
        # process 0 holds samples 0 and 1 (its row of each step), process 1 sample 2 and the padding
        assert rows.tolist() == [[1, 1, -1], [3, 3, 3], [2, 2, -1]], rows.tolist()
        assert values.tolist() == [10, 30, 20]
        assert DistributedTensorGatherer(world_size=2, num_samples=4).finalize() is None
        print("ok")
        """
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]
