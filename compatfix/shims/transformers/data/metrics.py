"""Shims for ``transformers.data.metrics``: the GLUE and XNLI metrics of 4.x
(``simple_accuracy``, ``acc_and_f1``, ``pearson_and_spearman``, ``glue_compute_metrics``,
``xnli_compute_metrics``), which transformers 5 removed.

4.x computed F1 and the Matthews correlation with scikit-learn (binary F1 of label 1,
and sklearn's multiclass MCC) and the correlations with SciPy. scikit-learn is not a
dependency of transformers, so F1 and MCC are computed here with numpy, by the same
definitions; SciPy gives the Pearson and Spearman correlations, as in 4.x.
"""

from __future__ import annotations

from typing import Any

from compatfix.patching import restore_names
from compatfix.registry import PROVIDE, Shim


def simple_accuracy(preds: Any, labels: Any) -> Any:
    """The share of predictions equal to their labels."""
    return (preds == labels).mean()


def _f1(preds: Any, labels: Any) -> float:
    """scikit-learn's default ``f1_score``: binary, of label 1 (0.0 where it is undefined)."""
    import numpy as np

    preds, labels = np.asarray(preds), np.asarray(labels)
    true_positive = float(np.sum((preds == 1) & (labels == 1)))
    wrong = float(np.sum((preds == 1) != (labels == 1)))
    return 0.0 if true_positive == 0 else 2 * true_positive / (2 * true_positive + wrong)


def _matthews(labels: Any, preds: Any) -> float:
    """scikit-learn's ``matthews_corrcoef`` (its multiclass form; 0.0 where it is undefined)."""
    import numpy as np

    labels, preds = np.asarray(labels), np.asarray(preds)
    classes = np.union1d(labels, preds)
    true_counts = np.array([np.sum(labels == c) for c in classes], dtype=np.float64)
    pred_counts = np.array([np.sum(preds == c) for c in classes], dtype=np.float64)
    correct, samples = float(np.sum(labels == preds)), float(len(labels))
    covariance = correct * samples - float(np.dot(true_counts, pred_counts))
    spread = (samples ** 2 - float(np.dot(pred_counts, pred_counts))) * (samples ** 2 - float(np.dot(true_counts, true_counts)))
    return 0.0 if spread == 0 else covariance / np.sqrt(spread)


def acc_and_f1(preds: Any, labels: Any) -> dict[str, Any]:
    acc = simple_accuracy(preds, labels)
    f1 = _f1(preds, labels)
    return {"acc": acc, "f1": f1, "acc_and_f1": (acc + f1) / 2}


def pearson_and_spearman(preds: Any, labels: Any) -> dict[str, Any]:
    from scipy.stats import pearsonr, spearmanr

    pearson_corr = pearsonr(preds, labels)[0]
    spearman_corr = spearmanr(preds, labels)[0]
    return {"pearson": pearson_corr, "spearmanr": spearman_corr, "corr": (pearson_corr + spearman_corr) / 2}


_ACCURACY_KEYS = {"sst-2": "acc", "mnli": "mnli/acc", "mnli-mm": "mnli-mm/acc", "qnli": "acc", "rte": "acc",
                  "wnli": "acc", "hans": "acc"}


def glue_compute_metrics(task_name: str, preds: Any, labels: Any) -> dict[str, Any]:
    """transformers 4.x's metrics of a GLUE task: MCC for CoLA, accuracy and F1 for MRPC and
    QQP, Pearson and Spearman for STS-B, accuracy for the others."""
    assert len(preds) == len(labels), f"Predictions and labels have mismatched lengths {len(preds)} and {len(labels)}"
    if task_name == "cola":
        return {"mcc": _matthews(labels, preds)}
    if task_name in ("mrpc", "qqp"):
        return acc_and_f1(preds, labels)
    if task_name == "sts-b":
        return pearson_and_spearman(preds, labels)
    if task_name in _ACCURACY_KEYS:
        return {_ACCURACY_KEYS[task_name]: simple_accuracy(preds, labels)}
    raise KeyError(task_name)


def xnli_compute_metrics(task_name: str, preds: Any, labels: Any) -> dict[str, Any]:
    """transformers 4.x's XNLI metric: accuracy."""
    if len(preds) != len(labels):
        raise ValueError(f"Predictions and labels have mismatched lengths {len(preds)} and {len(labels)}")
    if task_name == "xnli":
        return {"acc": simple_accuracy(preds, labels)}
    raise KeyError(task_name)


NAMES = {"simple_accuracy": simple_accuracy, "acc_and_f1": acc_and_f1, "pearson_and_spearman": pearson_and_spearman,
         "glue_compute_metrics": glue_compute_metrics, "xnli_compute_metrics": xnli_compute_metrics}


def provide_metrics(module) -> None:
    module.__path__ = []  # 4.x's was a package (its squad_metrics is not provided)
    restore_names(module, NAMES, "transformers.data.metrics")


SHIMS = (
    Shim(
        "transformers.data.metrics",
        targets=["transformers.data.metrics"],
        kind=PROVIDE,
        requires={"transformers": ">=5.0"},
        apply=provide_metrics,
        broke="transformers 5 removed transformers.data.metrics, the GLUE/XNLI metrics of 2019-22 fine-tuning "
        "scripts",
        summary="provide simple_accuracy, acc_and_f1, pearson_and_spearman, glue_compute_metrics and "
        "xnli_compute_metrics with 4.x's results (F1 and MCC by scikit-learn's definitions, on numpy)",
        replacement="the evaluate library's glue metric, or scikit-learn and scipy.stats",
        rewrites={"transformers.data.metrics": "evaluate.load('glue', task), or scikit-learn and scipy.stats"},
    ),
)
