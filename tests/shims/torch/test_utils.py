"""torch._utils._accumulate (removed in torch 2.3) and Sampler's data_source argument
(removed in torch 2.10), against the real torch 2.14 of the stacks."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("modern", "paper", "timm1")

ACCUMULATE = """
import operator
from torch._utils import _accumulate
print(list(_accumulate([1, 2, 3, 4, 5])), list(_accumulate([1, 2, 3, 4, 5], operator.mul)), list(_accumulate([])))
"""


def test_accumulate_is_missing_without_compatfix():
    for env in (clean_env(False), clean_env(COMPATFIX_DISABLE="torch._utils.accumulate")):
        result = run_python(code=ACCUMULATE, env=env)
        assert result.returncode != 0 and "cannot import name '_accumulate'" in result.stderr


def test_accumulate_gives_the_running_totals():
    result = run_python(code=ACCUMULATE)
    # torch 1.x's docstring comments: 1 3 6 10 15, and with operator.mul 1 2 6 24 120
    assert result.stdout.strip() == "[1, 3, 6, 10, 15] [1, 2, 6, 24, 120] []", result.stderr


# A 2021 sampler (the pattern of RandomIdentitySampler and the bucketing samplers) that
# passes its dataset on to Sampler.__init__, and a today's one that does not.
SAMPLERS = """
import warnings
warnings.simplefilter("error")  # the shim must not warn (torch 2.2-2.9 did, when given data_source)
import torch
from torch.utils.data import DataLoader, Sampler

class ReversedSampler(Sampler):
    def __init__(self, data_source):
        super().__init__(data_source)
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source) - 1, -1, -1))

    def __len__(self):
        return len(self.data_source)

class KeywordSampler(ReversedSampler):
    def __init__(self, data_source):
        Sampler.__init__(self, data_source=data_source)
        self.data_source = data_source

class ModernSampler(Sampler[int]):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

data = list(range(10, 15))
print([batch.tolist() for batch in DataLoader(data, sampler=ReversedSampler(data), batch_size=2)])
print(list(KeywordSampler(data)), list(ModernSampler(3)))
"""


def test_a_sampler_passing_its_dataset_fails_without_compatfix():
    result = run_python(code=SAMPLERS, compatfix=False)
    assert result.returncode != 0 and "object.__init__() takes exactly one argument" in result.stderr, \
        result.stderr[-2000:]


def test_a_sampler_passing_its_dataset_works_and_a_modern_one_is_unchanged():
    for env in (clean_env(), clean_env(COMPATFIX_DISABLE="torch.utils.data.Sampler.data_source")):
        result = run_python(code=SAMPLERS, env=env)
        if "COMPATFIX_DISABLE" in env:
            assert result.returncode != 0 and "object.__init__() takes exactly one argument" in result.stderr, \
                result.stderr[-2000:]
            continue
        # indices 4..0 of data, in batches of two
        assert result.stdout.splitlines() == ["[[14, 13], [12, 11], [10]]", "[4, 3, 2, 1, 0] [0, 1, 2]"], \
            result.stderr[-2000:]
