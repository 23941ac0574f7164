"""Shims for ``pytorch_lightning.trainer``: ``Trainer.add_argparse_args`` and
``Trainer.from_argparse_args``, which 1.x scripts build their command line and their
Trainer with, and which Lightning 2.0 removed (for LightningCLI); and a strategy passed in
``plugins=``, as 1.x code passed ``DDPPlugin``, which 1.8 stopped accepting; and the
Trainer keywords 1.5-2.0 removed (``gpus=``, ``progress_bar_refresh_rate=``,
``resume_from_checkpoint=``, ...), each turned into its 2.x meaning by
``_trainer_keywords.py``, with resuming for ``fit``; and the evaluation methods' 1.x keyword
names (``fit(train_dataloader=)``, ``test(test_dataloaders=)``, ``validate(val_dataloaders=)``)."""

from __future__ import annotations

from compatfix.patching import replace_attribute, wrap
from compatfix.registry import AFTER_IMPORT, RISK_BEHAVIOUR, Shim

SHIM_ARGPARSE = "pytorch_lightning.trainer.argparse"
SHIM_STRATEGY_IN_PLUGINS = "pytorch_lightning.trainer.strategy_in_plugins"
SHIM_OLD_KEYWORDS = "pytorch_lightning.trainer.removed_keywords"
SHIM_OLD_DATALOADERS = "pytorch_lightning.trainer.dataloaders_keywords"
SHIM_EPOCH_END_HOOKS = "pytorch_lightning.trainer.epoch_end_hooks"
SHIM_STEP_END_HOOKS = "pytorch_lightning.trainer.step_end_hooks"
METHODS = ("add_argparse_args", "from_argparse_args", "parse_argparser")
# Where a Trainer built with resume_from_checkpoint= keeps it for its fit().
RESUME_ATTRIBUTE = "_compatfix_resume_from_checkpoint"


def restore_argparse(module) -> str | None:
    from compatfix.shims.pytorch_lightning import _argparse

    trainer = module.Trainer
    missing = [name for name in METHODS if not hasattr(trainer, name)]
    if not missing:
        return "Trainer has add_argparse_args, from_argparse_args and parse_argparser here"
    for name, method in _argparse.classmethods(tuple(missing)).items():
        replace_attribute(trainer, name, method, SHIM_ARGPARSE)
    return None


def _strategy_out_of_plugins(init):
    from pytorch_lightning.strategies import Strategy

    def __init__(self, *args, **kwargs):
        # Only the two keywords are looked at: binding every argument would pass each default
        # explicitly, and Trainer's PL_TRAINER_* environment defaults would no longer apply.
        plugins = kwargs.get("plugins")
        if plugins is not None and kwargs.get("strategy", "auto") == "auto":
            listed = list(plugins) if isinstance(plugins, (list, tuple)) else [plugins]
            strategies = [plugin for plugin in listed if isinstance(plugin, Strategy)]
            if len(strategies) == 1:  # 1.x: the one training-type plugin among the plugins
                kwargs["strategy"] = strategies[0]
                kwargs["plugins"] = [plugin for plugin in listed if plugin is not strategies[0]] or None
        return init(self, *args, **kwargs)

    return __init__


def accept_strategy_in_plugins(module) -> str | None:
    import inspect

    from pytorch_lightning.strategies import Strategy

    from compatfix.shims.pytorch_lightning._argparse import annotation_types

    trainer = module.Trainer
    plugins = inspect.signature(trainer.__init__).parameters.get("plugins")
    if plugins is None:
        return "Trainer takes no plugins here"
    admitted = [t for t in annotation_types(plugins.annotation) if isinstance(t, type)]
    if any(issubclass(Strategy, t) for t in admitted) or plugins.annotation is inspect.Parameter.empty:
        return "Trainer's plugins take a strategy here"
    wrap(trainer, "__init__", _strategy_out_of_plugins, SHIM_STRATEGY_IN_PLUGINS)
    return None


def _with_old_keywords(init):
    import inspect

    from compatfix.shims.pytorch_lightning import _trainer_keywords

    defaults = {p.name: p.default for p in inspect.signature(init).parameters.values()}

    def __init__(self, *args, **kwargs):
        kept = {}
        if set(kwargs) & set(_trainer_keywords.OLD_KEYWORDS) or _trainer_keywords.is_strategy_name(
                kwargs.get("accelerator")):
            kwargs, kept = _trainer_keywords.translate(kwargs, defaults)
        init(self, *args, **kwargs)
        if kept.get("resume_from_checkpoint") is not None:
            self.__dict__[RESUME_ATTRIBUTE] = kept["resume_from_checkpoint"]

    __init__.old_parameters = _trainer_keywords.old_parameters  # for the argparse helpers
    return __init__


def _fit_resuming(fit):
    def fit_resuming(self, *args, **kwargs):
        remembered = self.__dict__.get(RESUME_ATTRIBUTE)
        if remembered is not None and kwargs.get("ckpt_path") is None and len(args) < 5:
            kwargs["ckpt_path"] = remembered  # 1.x: fit resumed from resume_from_checkpoint
        return fit(self, *args, **kwargs)

    return fit_resuming


def _accepting_old_dataloaders_name(old: str, new: str):
    """``fit(train_dataloader=)``, ``test(test_dataloaders=)``, ``validate(val_dataloaders=)``:
    1.4 renamed them ``train_dataloaders`` and ``dataloaders``, 1.6 removed the old names."""

    def make(method):
        def with_old_name(self, *args, **kwargs):
            if old in kwargs and new not in kwargs:
                kwargs[new] = kwargs.pop(old)
            return method(self, *args, **kwargs)

        return with_old_name

    return make


# method -> (1.x's keyword, today's)
OLD_DATALOADERS_NAMES = {"fit": ("train_dataloader", "train_dataloaders"), "test": ("test_dataloaders", "dataloaders"),
                         "validate": ("val_dataloaders", "dataloaders")}


def accept_old_dataloaders_names(module) -> str | None:
    import inspect

    wrapped = 0
    for method, (old, new) in OLD_DATALOADERS_NAMES.items():
        parameters = inspect.signature(getattr(module.Trainer, method)).parameters
        if old not in parameters and new in parameters:  # by the signature: a Trainer with the old name keeps it
            wrapped += wrap(module.Trainer, method, _accepting_old_dataloaders_name(old, new), SHIM_OLD_DATALOADERS)
    return None if wrapped else "Trainer's fit, test and validate take their 1.x keywords here"


def accept_old_keywords(module) -> str | None:
    import inspect

    from compatfix.shims.pytorch_lightning._trainer_keywords import OLD_KEYWORDS

    trainer = module.Trainer
    taken = inspect.signature(trainer.__init__).parameters
    if any(name in taken for name in OLD_KEYWORDS):
        return "Trainer still takes its 1.x keywords here"
    wrap(trainer, "__init__", _with_old_keywords, SHIM_OLD_KEYWORDS)
    wrap(trainer, "fit", _fit_resuming, SHIM_OLD_KEYWORDS)
    return None


EPOCH_END_HOOKS = ("training_epoch_end", "validation_epoch_end", "test_epoch_end")


def _verify_with_epoch_end_hooks(verify):
    from compatfix.shims.pytorch_lightning._callbacks import epoch_end_outputs_type

    def _verify_loop_configurations(trainer):
        model = trainer.lightning_module
        defined = [hook for hook in EPOCH_END_HOOKS if callable(getattr(model, hook, None))]
        if not defined:
            return verify(trainer)
        collector = epoch_end_outputs_type()  # made here: the shim applies while pytorch_lightning imports
        if not any(isinstance(callback, collector) for callback in trainer.callbacks):
            trainer.callbacks.insert(0, collector())  # first: 1.5 ran the hooks before on_*_epoch_end
        # 2.x refuses a module that defines them; hidden from that check only, for this call
        for hook in defined:
            vars(model)[hook] = None
        try:
            return verify(trainer)
        finally:
            for hook in defined:
                vars(model).pop(hook, None)

    return _verify_loop_configurations


def restore_epoch_end_hooks(module) -> str | None:
    import sys

    # 2.0 removed the hooks and added the check that refuses them, called by Trainer._run
    loop_module = sys.modules["pytorch_lightning.trainer.trainer"]
    if getattr(loop_module, "_verify_loop_configurations", None) is None:
        return "Trainer checks its loops elsewhere here"
    wrap(loop_module, "_verify_loop_configurations", _verify_with_epoch_end_hooks, SHIM_EPOCH_END_HOOKS)
    return None


STEP_END_HOOKS = {"training_step": "training_step_end", "validation_step": "validation_step_end",
                  "test_step": "test_step_end"}
STEP_END_MARK = "__compatfix_step_end__"


def _step_then_step_end(trainer, step, hook):
    def run_step(*args, **kwargs):
        output = step(*args, **kwargs)
        step_end = getattr(trainer.lightning_module, STEP_END_HOOKS[hook], None)
        # 1.x: the step's output went through *_step_end, whose return replaced it (the loss too)
        return step_end(output) if callable(step_end) else output

    setattr(run_step, STEP_END_MARK, True)
    return run_step


def _verify_with_step_end_hooks(verify):
    def _verify_loop_configurations(trainer):
        model = trainer.lightning_module
        if any(callable(getattr(model, hook, None)) for hook in STEP_END_HOOKS.values()):
            strategy = trainer.strategy
            for hook in STEP_END_HOOKS:  # the strategy's calls, which the loops make: 1.x called the hook after
                step = getattr(strategy, hook)
                if not getattr(step, STEP_END_MARK, False):
                    vars(strategy)[hook] = _step_then_step_end(trainer, step, hook)
        return verify(trainer)

    return _verify_loop_configurations


def restore_step_end_hooks(module) -> str | None:
    import sys

    loop_module = sys.modules["pytorch_lightning.trainer.trainer"]
    if getattr(loop_module, "_verify_loop_configurations", None) is None:
        return "Trainer checks its loops elsewhere here"
    wrap(loop_module, "_verify_loop_configurations", _verify_with_step_end_hooks, SHIM_STEP_END_HOOKS)
    return None


SHIMS = (
    Shim(
        SHIM_ARGPARSE,
        # the package: its import ends after pytorch_lightning.trainer.trainer's, with Trainer in it
        targets=["pytorch_lightning.trainer"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=2.0"},
        apply=restore_argparse,
        risk=RISK_BEHAVIOUR,
        broke="pytorch-lightning 2.0 (2023-03) removed Trainer.add_argparse_args, from_argparse_args and "
        "parse_argparser (1.x scripts: parser = Trainer.add_argparse_args(parser); "
        "trainer = Trainer.from_argparse_args(args))",
        summary="restore them as 1.x wrote them (pytorch_lightning/utilities/argparse.py), over today's "
        "Trainer signature: one --option per parameter, parsed as 1.x parsed its type; the Trainer is "
        "built from the namespace's keys it takes",
        replacement="LightningCLI, or parser.add_argument for the options you need and Trainer(**vars)",
        rewrites={
            "pytorch_lightning.Trainer.add_argparse_args": "parser.add_argument(...) per option, or LightningCLI",
            "pytorch_lightning.Trainer.from_argparse_args": "Trainer(max_epochs=args.max_epochs, ...)",
            "pytorch_lightning.Trainer.parse_argparser": "parser.parse_args()",
            "pytorch_lightning.trainer.Trainer.add_argparse_args": "parser.add_argument(...) per option, or LightningCLI",
            "pytorch_lightning.trainer.Trainer.from_argparse_args": "Trainer(max_epochs=args.max_epochs, ...)",
            "pytorch_lightning.trainer.trainer.Trainer.add_argparse_args":
                "parser.add_argument(...) per option, or LightningCLI",
            "pytorch_lightning.trainer.trainer.Trainer.from_argparse_args": "Trainer(max_epochs=args.max_epochs, ...)",
        },
    ),
    Shim(
        SHIM_STRATEGY_IN_PLUGINS,
        targets=["pytorch_lightning.trainer"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=1.8"},
        apply=accept_strategy_in_plugins,
        risk=RISK_BEHAVIOUR,
        broke="pytorch-lightning 1.8 (2022-11) stopped accepting a training-type plugin in Trainer(plugins=...) "
        "(1.x: plugins=DDPPlugin(find_unused_parameters=False)): MisconfigurationException: Found invalid type "
        "for plugin",
        summary="a single Strategy among plugins= is passed as strategy= (where strategy is left at 'auto'), as "
        "1.x took it; the other plugins stay",
        replacement="Trainer(strategy=DDPStrategy(...), plugins=[...the others])",
    ),
    Shim(
        SHIM_OLD_KEYWORDS,
        targets=["pytorch_lightning.trainer"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=2.0"},
        apply=accept_old_keywords,
        risk=RISK_BEHAVIOUR,
        broke="pytorch-lightning 1.5-2.0 (2021-11 to 2023-03) removed Trainer's gpus, tpu_cores, num_processes, "
        "distributed_backend (and strategies passed as accelerator=), progress_bar_refresh_rate, "
        "checkpoint_callback, weights_summary, resume_from_checkpoint, replace_sampler_ddp, terminate_on_nan, "
        "track_grad_norm, stochastic_weight_avg, amp_backend/amp_level and more: TypeError: unexpected keyword "
        "argument",
        summary="each 1.x keyword given (not at its 1.x default) becomes its 2.x meaning, never overriding a 2.x "
        "keyword the call gives: gpus=N as accelerator='gpu', devices=N (ddp_spawn for several, as 1.5 chose); "
        "the 1.x callbacks for progress bar, summary, NaN check, grad norms and SWA; resume_from_checkpoint as "
        "fit(ckpt_path=); logging-only keywords dropped with a warning; 1.x maths 2.x lacks (dp over several "
        "devices, apex O2, ddp2, horovod) raise with what to use",
        replacement="accelerator= and devices=, strategy=, callbacks=[TQDMProgressBar(refresh_rate=N)], "
        "enable_checkpointing=, enable_model_summary=, fit(ckpt_path=), use_distributed_sampler=",
        rewrites={
            "pytorch_lightning.Trainer(+%s)" % keyword: instead
            for keyword, instead in (
                ("gpus", "accelerator='gpu', devices=..."), ("tpu_cores", "accelerator='tpu', devices=..."),
                ("num_processes", "accelerator='cpu', devices=N, strategy='ddp_spawn'"),
                ("distributed_backend", "strategy="),
                ("progress_bar_refresh_rate", "callbacks=[TQDMProgressBar(refresh_rate=N)], or "
                 "enable_progress_bar=False for 0"),
                ("checkpoint_callback", "enable_checkpointing="), ("weights_summary", "enable_model_summary= "
                 "or callbacks=[ModelSummary(max_depth=-1)]"),
                ("resume_from_checkpoint", "trainer.fit(model, ckpt_path=...)"),
                ("replace_sampler_ddp", "use_distributed_sampler="),
                ("terminate_on_nan", "a callback checking the loss in on_before_backward"),
                ("track_grad_norm", "self.log_dict(grad_norm(self, p)) in on_before_optimizer_step"),
                ("stochastic_weight_avg", "callbacks=[StochasticWeightAveraging(swa_lrs=...)]"),
                ("amp_backend", "precision='16-mixed'"), ("amp_level", "precision='16-mixed'"),
                ("auto_select_gpus", "devices=find_usable_cuda_devices(N)"),
                ("flush_logs_every_n_steps", "the logger's flush_logs_every_n_steps"),
                ("move_metrics_to_cpu", "nothing"), ("log_gpu_memory", "callbacks=[DeviceStatsMonitor()]"),
                ("prepare_data_per_node", "the module's prepare_data_per_node attribute"),
                ("reload_dataloaders_every_epoch", "reload_dataloaders_every_n_epochs=1"),
                ("process_position", "callbacks=[TQDMProgressBar(process_position=...)]"),
            )
        },
    ),
    Shim(
        SHIM_OLD_DATALOADERS,
        targets=["pytorch_lightning.trainer"],
        requires={"pytorch_lightning": ">=1.6"},
        apply=accept_old_dataloaders_names,
        broke="pytorch-lightning 1.6 (2022-03) removed fit(train_dataloader=), test(test_dataloaders=) and "
        "validate(val_dataloaders=) (renamed in 1.4): TypeError: unexpected keyword argument",
        summary="pass them on as train_dataloaders= and dataloaders=; calls with today's names are unchanged",
        replacement="fit(train_dataloaders=...), test(dataloaders=...), validate(dataloaders=...)",
        rewrites={"pytorch_lightning.Trainer.%s(+%s)" % (method, old): "%s(%s=...)" % (method, new)
                  for method, (old, new) in OLD_DATALOADERS_NAMES.items()},
    ),
    Shim(
        SHIM_EPOCH_END_HOOKS,
        targets=["pytorch_lightning.trainer"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=2.0"},
        apply=restore_epoch_end_hooks,
        risk=RISK_BEHAVIOUR,
        broke="pytorch-lightning 2.0 (2023-03) removed LightningModule.training_epoch_end, validation_epoch_end "
        "and test_epoch_end(outputs): NotImplementedError: Support for `validation_epoch_end` has been removed "
        "in v2.0.0",
        summary="for a module that defines them, the epoch's step outputs are collected (by a callback run "
        "first) and given to the hook at the epoch's end as 1.5 did: a list of step returns, one list per "
        "dataloader where there are several; modules without them are untouched",
        replacement="on_train_epoch_end / on_validation_epoch_end / on_test_epoch_end, with the step outputs "
        "kept in a list attribute (Lightning PR 16520)",
    ),
    Shim(
        SHIM_STEP_END_HOOKS,
        targets=["pytorch_lightning.trainer"],
        kind=AFTER_IMPORT,
        requires={"pytorch_lightning": ">=2.0"},
        apply=restore_step_end_hooks,
        risk=RISK_BEHAVIOUR,
        broke="pytorch-lightning 2.0 (2023-03) removed LightningModule.training_step_end, validation_step_end and "
        "test_step_end without an error: a 1.x module's hooks are silently never called (its loss or metric "
        "reduction in them is lost)",
        summary="for a module that defines them, each step's output goes through its *_step_end hook, whose "
        "return replaces it (for training: the loss backward uses), as 1.x did; other modules are untouched",
        replacement="do the reduction at the end of training_step / validation_step, or in on_*_batch_end",
    ),
)
