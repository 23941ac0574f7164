"""The 4.x keywords of Trainer, Seq2SeqTrainer, TrainingArguments and
Seq2SeqTrainingArguments that transformers 5.24 removed or renamed: refused with compatfix
off; with it on, passed on under today's names (or kept as the attributes scripts read),
and shown by inspect.signature.

TrainingArguments are built for real (their device set-up needs accelerate, which the py312
stack has); the Trainer tests stop Trainer.__init__ at its first use of ``args`` to read the
arguments it received, so they need no model."""

from __future__ import annotations

import pytest

from support import clean_env, run_python

pytestmark = pytest.mark.stack("py312")

ARGUMENTS = """
import os
import transformers
from transformers import Seq2SeqTrainingArguments, TrainingArguments
results = []
for cls, old in ((TrainingArguments, "no_cuda"), (TrainingArguments, "evaluation_strategy"),
                 (TrainingArguments, "overwrite_output_dir"), (TrainingArguments, "logging_dir"),
                 (Seq2SeqTrainingArguments, "no_cuda"), (Seq2SeqTrainingArguments, "evaluation_strategy")):
    try:
        cls(output_dir="out", **{old: "steps" if old == "evaluation_strategy" else True if old != "logging_dir" else "logs"})
        results.append(True)
    except TypeError:
        results.append(False)
print(results)
"""


def test_old_training_arguments_are_refused_without_compatfix():
    result = run_python(code=ARGUMENTS, compatfix=False)
    assert result.stdout.strip() == str([False] * 6), result.stderr[-2000:]
    result = run_python(code=ARGUMENTS, env=clean_env(COMPATFIX_DISABLE="transformers.training_args.no_cuda"))
    assert result.stdout.strip() == str([False] * 4 + [True] * 2), result.stderr[-2000:]
    result = run_python(code=ARGUMENTS,
                        env=clean_env(COMPATFIX_DISABLE="transformers.training_args_seq2seq.no_cuda"))
    assert result.stdout.strip() == str([True] * 4 + [False] * 2), result.stderr[-2000:]


def test_old_training_arguments_reach_todays_fields(tmp_path):
    result = run_python(
        code="""
        import inspect
        import os
        from transformers import Seq2SeqTrainingArguments, TrainingArguments
        for cls in (TrainingArguments, Seq2SeqTrainingArguments):
            parameters = inspect.signature(cls).parameters
            assert {"no_cuda", "evaluation_strategy", "overwrite_output_dir", "logging_dir"} <= set(parameters)
            assert parameters["overwrite_output_dir"].default is False and "use_cpu" in parameters
        out = %r
        args = Seq2SeqTrainingArguments(output_dir=out, no_cuda=True, evaluation_strategy="steps",
                                        overwrite_output_dir=True, predict_with_generate=True)
        assert args.use_cpu is True and args.eval_strategy == "steps" and args.overwrite_output_dir is True
        assert args.predict_with_generate is True
        # 4.x's default logging_dir: output_dir/runs/<date>_<host>
        assert os.path.dirname(args.logging_dir) == os.path.join(out, "runs"), args.logging_dir
        assert "TENSORBOARD_LOGGING_DIR" not in os.environ
        # a call in today's terms is unchanged
        plain = TrainingArguments(output_dir=out, use_cpu=True, eval_strategy="epoch")
        assert plain.use_cpu is True and plain.eval_strategy == "epoch" and plain.overwrite_output_dir is False
        assert TrainingArguments(output_dir=out).use_cpu is False
        # a given logging_dir is where transformers 5's TensorBoard callback writes
        given = TrainingArguments(output_dir=out, logging_dir=os.path.join(out, "tb"))
        assert given.logging_dir == os.environ["TENSORBOARD_LOGGING_DIR"] == os.path.join(out, "tb")
        try:
            TrainingArguments(output_dir=out, no_cuda=True, use_cpu=False)
        except TypeError as error:
            assert "no_cuda" in str(error)
        else:
            raise AssertionError("no_cuda and use_cpu were both accepted")
        print("ok")
        """ % str(tmp_path)
    )
    assert result.stdout.split() == ["ok"], result.stderr[-3000:]


TRAINER = """
import sys
import inspect
from transformers import Seq2SeqTrainer, Trainer


class Stop(Exception):
    pass


class Arguments:
    @property
    def full_determinism(self):  # Trainer.__init__'s first use of args: read what the call bound
        raise Stop


received = []
for cls in (Trainer, Seq2SeqTrainer):
    tokenizer = object()
    try:
        cls(model=None, args=Arguments(), tokenizer=tokenizer)
    except TypeError:
        received.append(None)
    except Stop:
        frames = []
        trace = sys.exc_info()[2]
        while trace is not None:
            frames.append(trace.tb_frame)
            trace = trace.tb_next
        bound = [f.f_locals for f in frames if f.f_code is inspect.unwrap(Trainer.__init__).__code__][0]
        received.append(bound["processing_class"] is tokenizer)
    print("tokenizer" in inspect.signature(cls).parameters)
print(received)
"""


def test_trainer_tokenizer_is_refused_without_compatfix():
    result = run_python(code=TRAINER, compatfix=False)
    assert result.stdout.split() == ["False", "False", "[None,", "None]"], result.stderr[-2000:]
    result = run_python(code=TRAINER, env=clean_env(COMPATFIX_DISABLE="transformers.trainer_seq2seq.tokenizer"))
    assert result.stdout.split() == ["True", "False", "[True,", "None]"], result.stderr[-2000:]
    result = run_python(code=TRAINER, env=clean_env(COMPATFIX_DISABLE="transformers.trainer.tokenizer"))
    assert result.stdout.split() == ["False", "True", "[None,", "True]"], result.stderr[-2000:]


def test_trainer_tokenizer_is_the_processing_class():
    result = run_python(code=TRAINER, env=clean_env(COMPATFIX_DISABLE="transformers.training_args.no_cuda"))
    assert result.stdout.split() == ["True", "True", "[True,", "True]"], result.stderr[-2000:]
