"""trainer_pt_utils.SequentialDistributedSampler (removed in transformers 5) against the
real transformers 5.24: missing with compatfix off; with it on, 4.x's blocks, written out
here by hand."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

PRESENT = "import transformers.trainer_pt_utils as t\nprint(hasattr(t, 'SequentialDistributedSampler'))"


def test_sampler_is_missing_without_compatfix():
    for env in (clean_env(compatfix=False),
                clean_env(COMPATFIX_DISABLE="transformers.trainer_pt_utils.SequentialDistributedSampler")):
        result = run_python(code=PRESENT, env=env)
        assert result.stdout.strip() == "False", result.stderr[-2000:]


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
