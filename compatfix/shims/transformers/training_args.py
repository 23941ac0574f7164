"""Shims for ``transformers.training_args``: the ``TrainingArguments`` keywords of 4.x that
transformers 5 removed or renamed and 2020-22 scripts still pass:

- ``no_cuda=`` is today's ``use_cpu=`` (renamed in 4.34), ``evaluation_strategy=`` today's
  ``eval_strategy=`` (renamed in 4.41);
- ``overwrite_output_dir`` (default False) was never read by the Trainer, only by the
  scripts (``if os.path.exists(args.output_dir) and not args.overwrite_output_dir``): it is
  kept as the attribute they read;
- ``logging_dir`` is kept as the attribute, 4.x's default ``output_dir/runs/<time>_<host>``
  when not given; where given, it also becomes ``TENSORBOARD_LOGGING_DIR`` (unless that is
  set), the variable through which transformers 5's TensorBoard callback takes the folder.

``Seq2SeqTrainingArguments`` has its own dataclass ``__init__``, shimmed in
``training_args_seq2seq.py``. A dataclass subclass defined in user code also has its own,
which these shims do not reach; nor do ``HfArgumentParser`` command-line options.
"""

from __future__ import annotations

import os
from typing import Any

from compatfix.registry import RISK_BEHAVIOUR, Shim
from compatfix.shims.transformers import accept_old_keywords

RENAMED = {"no_cuda": "use_cpu", "evaluation_strategy": "eval_strategy"}
KEPT = {"overwrite_output_dir": False, "logging_dir": None}


def keep_old_attributes(arguments: Any, values: dict[str, Any]) -> None:
    arguments.overwrite_output_dir = values["overwrite_output_dir"]
    logging_dir = values["logging_dir"]
    if logging_dir is None:
        from transformers.integrations.integration_utils import default_logdir

        logging_dir = os.path.join(arguments.output_dir or "", default_logdir())
    else:
        logging_dir = os.path.expanduser(logging_dir)
        os.environ.setdefault("TENSORBOARD_LOGGING_DIR", logging_dir)
    arguments.logging_dir = logging_dir


def accept_old_arguments(cls: type, shim: str) -> None:
    accept_old_keywords(cls, RENAMED, KEPT, shim, after=keep_old_attributes)


def accept_in_training_arguments(module) -> None:
    accept_old_arguments(module.TrainingArguments, "transformers.training_args.no_cuda")


BROKE = ("transformers 4.51 removed TrainingArguments' evaluation_strategy= (eval_strategy since 4.41), and "
         "transformers 5 no_cuda= (use_cpu since 4.34), overwrite_output_dir= and logging_dir=, which 2020-22 scripts pass and read")
SUMMARY = ("accept no_cuda= as use_cpu= and evaluation_strategy= as eval_strategy=; keep overwrite_output_dir and "
           "logging_dir as attributes (a given logging_dir becomes TENSORBOARD_LOGGING_DIR); a call without them "
           "is unchanged")

SHIMS = (
    Shim(
        "transformers.training_args.no_cuda",
        targets=["transformers.training_args"],
        # 4.51 removed evaluation_strategy=, 5.0 the others; each keyword is handled only where the
        # installed __init__ lacks it
        requires={"transformers": ">=4.51"},
        apply=accept_in_training_arguments,
        risk=RISK_BEHAVIOUR,
        broke=BROKE,
        summary=SUMMARY,
        replacement="TrainingArguments(use_cpu=..., eval_strategy=...); TENSORBOARD_LOGGING_DIR",
        rewrites={"transformers.TrainingArguments(+no_cuda)": "use_cpu=",
                  "transformers.TrainingArguments(+evaluation_strategy)": "eval_strategy=",
                  "transformers.TrainingArguments(+overwrite_output_dir)": "a script-level flag",
                  "transformers.TrainingArguments(+logging_dir)": "the TENSORBOARD_LOGGING_DIR variable"},
    ),
)
