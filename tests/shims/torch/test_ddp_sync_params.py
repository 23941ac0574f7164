"""DistributedDataParallel._sync_params (removed in torch 1.11) in a world of two CPU
ranks over loopback gloo, against the real torch 2.14 and the real pytorch-lightning 1.1.8
(requirements/modern.txt), whose LightningDistributedDataParallel overrides DDP's forward:
``self._sync_params()`` first, then the LightningModule's training_step, then
``reducer.prepare_for_backward`` (its ``ddp_cpu`` branch, ``overrides/data_parallel.py``).

Expected values come from the ranks' own set-up, not from the shim: each rank sets its
buffer (a running mean) to ``rank + 1`` after DDP's construction (which broadcasts once);
torch 1.x's pre-forward sync made every rank's buffers rank 0's, so 1.0; with
``broadcast_buffers=False`` each rank keeps its own. The gradients are averaged over the
ranks as in any DDP step: rank r's input is ``r + 1``, so the averaged weight gradient of
``sum(x * w)`` is (1 + 2) / 2 = 1.5, at every step. A parameter that gets no gradient
makes the next iteration fail, as DDP without find_unused_parameters always did.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import clean_env, free_port, run_python

pytestmark = pytest.mark.stack("modern")

RANK = """
import json, os, sys
import warnings
warnings.simplefilter("ignore")  # pkg_resources' and Lightning's own deprecation notices
import torch, torch.distributed as dist
import pytorch_lightning
from pytorch_lightning.overrides.data_parallel import LightningDistributedDataParallel
assert pytorch_lightning.__version__ == "1.1.8", pytorch_lightning.__version__

class Net(pytorch_lightning.LightningModule):
    def __init__(self, unused_parameter=False):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(2))
        self.register_buffer("running_mean", torch.zeros(2))
        if unused_parameter:
            self.unused = torch.nn.Parameter(torch.ones(1))

    def training_step(self, x):
        return (x * self.weight).sum() + 0 * self.running_mean.sum()

dist.init_process_group("gloo")
rank = dist.get_rank()
result = {"rank": rank}
for broadcast in (True, False):
    model = LightningDistributedDataParallel(Net(), broadcast_buffers=broadcast)
    grads = []
    for step in range(2):
        with torch.no_grad():
            model.module.running_mean.fill_(rank + 1.0)
        model.module.weight.grad = None
        model(torch.full((2,), rank + 1.0)).backward()
        grads.append(model.module.weight.grad.tolist())
    result[str(broadcast)] = {"running_mean": model.module.running_mean.tolist(), "grads": grads}
model = LightningDistributedDataParallel(Net(unused_parameter=True))
try:
    for step in range(2):
        model(torch.ones(2)).backward()
except RuntimeError as exc:
    result["unused"] = "Expected to have finished reduction in the prior iteration" in str(exc)
print("RESULT " + json.dumps(result), flush=True)
dist.destroy_process_group()
"""


SHIM = "torch.nn.parallel.DistributedDataParallel._sync_params"


def run_two_ranks(disable: str = "") -> list:
    port = str(free_port())

    def rank(index: int):
        env = clean_env(COMPATFIX_DISABLE=disable, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1",
                        MASTER_PORT=port, RANK=str(index), WORLD_SIZE="2", LOCAL_RANK=str(index))
        return run_python(code=RANK, env=env, timeout=240)

    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(rank, range(2)))


def test_lightning_1_1_forward_fails_without_the_shim():
    for completed in run_two_ranks(disable=SHIM):
        assert completed.returncode != 0
        assert "object has no attribute '_sync_params'" in completed.stderr, completed.stderr[-2000:]


def test_lightning_1_1_forward_syncs_buffers_from_rank_zero_and_keeps_the_reducer_working():
    results = []
    for completed in run_two_ranks():
        lines = [line for line in completed.stdout.splitlines() if line.startswith("RESULT ")]
        assert completed.returncode == 0 and len(lines) == 1, completed.stdout + completed.stderr[-3000:]
        results.append(json.loads(lines[0][len("RESULT "):]))
    for result in sorted(results, key=lambda found: found["rank"]):
        own = float(result["rank"] + 1)
        assert result["True"] == {"running_mean": [1.0, 1.0], "grads": [[1.5, 1.5]] * 2}, result
        assert result["False"] == {"running_mean": [own, own], "grads": [[1.5, 1.5]] * 2}, result
        assert result["unused"] is True, result
