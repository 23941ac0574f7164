"""apex.parallel over two gloo ranks (loopback): DistributedDataParallel with amp O1
equals full-batch training, keeps apex's ``module.`` state-dict keys and sums with
``gradient_average=False``; amp.initialize on it raises apex's error; and under CPU mode
the SyncBatchNorm from convert_syncbn_model equals BatchNorm on the whole batch."""

import json
import os
import subprocess
import sys

from support import FIXTURES, clean_env, finished_but_aborted_at_teardown, free_port

SCRIPT = os.path.join(FIXTURES, "apex", "ddp_two_ranks.py")


def launch(out_dir, compatfix=True):
    env = clean_env(compatfix, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore",
                    COMPATFIX_DEVICE="cpu")
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr",
               "127.0.0.1", "--master_port", str(free_port()), SCRIPT, str(out_dir)]
    return subprocess.run(command, env=env, cwd=str(out_dir), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=200)


def test_apex_parallel_over_two_ranks(tmp_path):
    off = launch(tmp_path, compatfix=False)
    assert off.returncode != 0 and "No module named 'apex'" in off.stderr + off.stdout
    completed = launch(tmp_path)
    written = all((tmp_path / ("rank%d.json" % rank)).exists() for rank in range(2))
    assert completed.returncode == 0 or finished_but_aborted_at_teardown(
        completed.returncode, completed.stderr, written), completed.stdout + completed.stderr
    for rank in range(2):
        with open(tmp_path / ("rank%d.json" % rank)) as handle:
            result = json.load(handle)
        assert result["ddp_max_diff"] < 1e-6
        assert result["state_dict_keys"] == ["module.0.bias", "module.0.weight", "module.2.bias", "module.2.weight"]
        assert result["loss_scale"] == 2.0 ** 16
        assert result["initialize_ddp_error"].startswith(
            "Incoming model is an instance of apex.parallel.DistributedDataParallel. Parallel wrappers should "
            "only be applied to the model(s) AFTER")
        assert result["sum_max_diff"] < 1e-5
        assert result["syncbn_type"] == ["SyncBatchNorm"] and result["syncbn_is_torch_syncbn"]
        assert max(result["syncbn"].values()) < 1e-3, result["syncbn"]
        assert result["syncbn_state_dict_keys"] == [
            "0.bias", "0.weight", "1.bias", "1.num_batches_tracked", "1.running_mean", "1.running_var", "1.weight"]
