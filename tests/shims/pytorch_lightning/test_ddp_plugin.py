"""1.x's DDPPlugin on Lightning 2.6, in the calls 1.x code made: ``Trainer(plugins=
DDPPlugin(find_unused_parameters=False))``, alone or in a list with other plugins. 1.5's
changelog renamed DDPPlugin to DDPStrategy; the Trainer's strategy is then that object, with
the DistributedDataParallel keywords it was given, and the other plugins stay plugins. No
process group is started: the Trainer is built, not fitted."""

from __future__ import annotations

import json

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")  # pytorch-lightning 2.6.6

SHIMS = ("pytorch_lightning.plugins.DDPPlugin", "pytorch_lightning.trainer.strategy_in_plugins")

CODE = r"""
import json
import pytorch_lightning as pl
from pytorch_lightning.plugins.environments import LightningEnvironment
from pytorch_lightning.strategies import DDPStrategy

found = {}
try:
    from pytorch_lightning.plugins import DDPPlugin
except ImportError as error:
    found["import"] = str(error)
    DDPPlugin = DDPStrategy
plugin = DDPPlugin(find_unused_parameters=False)
options = dict(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False)
try:
    trainer = pl.Trainer(plugins=plugin, **options)
    found["alone"] = [trainer.strategy is plugin, trainer.strategy._ddp_kwargs]
    environment = LightningEnvironment()
    plugin = DDPPlugin(find_unused_parameters=True)
    trainer = pl.Trainer(plugins=[environment, plugin], **options)
    found["listed"] = [trainer.strategy is plugin, trainer.strategy._ddp_kwargs,
                       trainer.strategy.cluster_environment is environment]
except Exception as error:
    found["error"] = "%s: %s" % (type(error).__name__, error)
# today's calls are unchanged
found["today"] = [type(pl.Trainer(**options).strategy).__name__,
                  pl.Trainer(strategy=DDPStrategy(), **options).strategy._ddp_kwargs]
print(json.dumps(found))
"""


def _run(env):
    result = run_python(code=CODE, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_ddp_plugin_among_the_plugins_is_the_trainer_s_strategy():
    found = _run(clean_env(True))
    assert found == {"alone": [True, {"find_unused_parameters": False}],
                     "listed": [True, {"find_unused_parameters": True}, True],
                     "today": ["SingleDeviceStrategy", {}]}


def test_without_the_shims_the_1x_calls_fail():
    found = _run(clean_env(False))
    assert "cannot import name 'DDPPlugin'" in found["import"]
    assert found["error"].startswith("MisconfigurationException: Found invalid type for plugin")
    found = _run(clean_env(True, COMPATFIX_DISABLE=SHIMS[1]))  # the name alone is not enough
    assert "import" not in found and "Found invalid type for plugin" in found["error"]
    found = _run(clean_env(True, COMPATFIX_DISABLE=SHIMS[0]))
    assert "cannot import name 'DDPPlugin'" in found["import"] and "alone" in found
