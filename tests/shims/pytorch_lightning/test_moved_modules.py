"""The 1.x modules and names Lightning moved, on Lightning 2.6: each old spelling, both as
an import and as an attribute chain, gives the object that Lightning's own deprecation
layer of 1.6-1.9 forwarded it to (its documented new home), checked by behaviour where the
object is a function: rank_zero_only runs on rank 0 and sets .rank, seed_everything seeds
torch (the same draws after the same seed), load reads back what torch.save wrote,
_module_available answers for "os" and a missing module."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")  # pytorch-lightning 2.6.6, torchmetrics 1.9.0

SHIMS = (
    "pytorch_lightning.moved_modules", "pytorch_lightning.metrics", "pytorch_lightning.profiler",
    "pytorch_lightning.utilities.moved_modules", "pytorch_lightning.utilities.distributed",
    "pytorch_lightning.utilities.cloud_io", "pytorch_lightning.utilities._module_available",
    "pytorch_lightning.utilities.seed.seed_everything", "pytorch_lightning.callbacks.moved_modules",
    "pytorch_lightning.callbacks.base",
)

CODE = r"""
import json, logging, os, tempfile
import torch
import torchmetrics
import pytorch_lightning as pl
from pytorch_lightning import profilers
from pytorch_lightning.callbacks.callback import Callback as TodaysCallback

checks = {}


def check(name, probe):
    try:
        checks[name] = probe()
    except (ImportError, AttributeError) as error:
        checks[name] = "%s: %s" % (type(error).__name__, error)


def rank_zero():
    from pytorch_lightning.utilities.distributed import rank_zero_info, rank_zero_only

    ran = []
    rank_zero_only(lambda: ran.append(1))()
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("pytorch_lightning.utilities.rank_zero")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    rank_zero_info("hello")
    return [ran, rank_zero_only.rank, [r.getMessage() for r in records],
            pl.utilities.distributed.rank_zero_only is rank_zero_only]


def metrics():
    from pytorch_lightning.metrics import Metric

    class Total(pl.metrics.Metric):  # a 1.x metric subclass
        def __init__(self):
            super().__init__()
            self.add_state("total", default=torch.tensor(0.0), dist_reduce_fx="sum")

        def update(self, x):
            self.total += x.sum()

        def compute(self):
            return self.total

    total = Total()
    total.update(torch.tensor([1.0, 2.0]))
    total.update(torch.tensor([3.0]))
    return [Metric is torchmetrics.Metric, float(total.compute())]


def profiler():
    from pytorch_lightning.profiler import AdvancedProfiler, PassThroughProfiler, PyTorchProfiler, SimpleProfiler

    return [SimpleProfiler is profilers.SimpleProfiler, AdvancedProfiler is profilers.AdvancedProfiler,
            PassThroughProfiler is profilers.PassThroughProfiler, PyTorchProfiler is profilers.PyTorchProfiler,
            pl.profiler.BaseProfiler is profilers.Profiler]


def seed():
    from pytorch_lightning.utilities.seed import seed_everything

    first = [seed_everything(7), torch.rand(3).tolist()]
    torch.manual_seed(7)
    return [first == [7, torch.rand(3).tolist()], pl.utilities.seed.seed_everything is seed_everything]


def cloud_io():
    from pytorch_lightning.utilities.cloud_io import get_filesystem, load

    path = os.path.join(tempfile.mkdtemp(), "state.pt")
    torch.save({"w": torch.arange(3)}, path)
    return [load(path, map_location="cpu")["w"].tolist(), type(get_filesystem(path)).__name__,
            pl.utilities.cloud_io.load is load]


def callback_base():
    from pytorch_lightning.callbacks.base import Callback

    return [Callback is TodaysCallback, pl.callbacks.base.Callback is TodaysCallback]


check("rank_zero", rank_zero)
check("metrics", metrics)
check("profiler", profiler)
check("seed", seed)
check("cloud_io", cloud_io)
check("module_available", lambda: [pl.utilities._module_available("os"),
                                   pl.utilities._module_available("os.no_such_module")])
check("callback_base", callback_base)
print(json.dumps(checks))
"""

EXPECTED = {
    "rank_zero": [[1], 0, ["hello"], True],
    "metrics": [True, 6.0],
    "profiler": [True] * 5,
    "seed": [True, True],
    "cloud_io": [[0, 1, 2], "LocalFileSystem", True],
    "module_available": [True, False],
    "callback_base": [True, True],
}


def _run(env):
    result = run_python(code=CODE, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_moved_names_are_today_s_objects_under_their_1x_names():
    assert _run(clean_env(True)) == EXPECTED


def test_without_the_shims_each_old_name_fails():
    for env in (clean_env(False), clean_env(True, COMPATFIX_DISABLE=",".join(SHIMS))):
        found = _run(env)
        failed = {name for name, value in found.items() if isinstance(value, str)}
        assert failed == set(EXPECTED), found
