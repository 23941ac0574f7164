"""Shims for ``pytorch_lightning.cluster_environments``, 1.0-1.1's home of the cluster
environments (``ClusterEnvironment``, ``SLURMEnvironment``, ``TorchElasticEnvironment``),
which 1.2 moved to ``pytorch_lightning.plugins.environments``, where they still are. 1.x code
passed them as ``Trainer(plugins=[TorchElasticEnvironment()])``, which 2.x takes as it is.
1.1's methods ``master_address()`` / ``master_port()`` are 2.x's ``main_address`` /
``main_port`` properties (renamed in 1.6): only the import is restored."""

from __future__ import annotations

from compatfix.registry import PROVIDE, Shim
from compatfix.shims.pytorch_lightning import fill_module

SHIM_NAME = "pytorch_lightning.cluster_environments"


def _names() -> dict[str, object]:
    from pytorch_lightning.plugins import environments

    return {name: getattr(environments, name) for name in vars(environments)
            if name.endswith("Environment") and isinstance(getattr(environments, name), type)}


def provide_cluster_environments(module) -> None:
    fill_module(module, _names, SHIM_NAME)


SHIMS = (
    Shim(
        SHIM_NAME,
        targets=["pytorch_lightning.cluster_environments"],
        kind=PROVIDE,
        requires={"pytorch_lightning": ">=1.2"},
        apply=provide_cluster_environments,
        broke="pytorch-lightning 1.2 (2021-02) moved pytorch_lightning.cluster_environments to "
        "pytorch_lightning.plugins.environments",
        summary="provide it with plugins.environments' classes (ClusterEnvironment, SLURMEnvironment, "
        "TorchElasticEnvironment, ...)",
        replacement="pytorch_lightning.plugins.environments",
        renames={"pytorch_lightning.cluster_environments": "pytorch_lightning.plugins.environments"},
    ),
)
