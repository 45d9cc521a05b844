"""The two model-training jobs of the label-DP audit and the files they write (observational paper §6.2).

The observational label-inference attack compares a target model ``M`` (fitted on the
target half with the labels a label-DP mechanism released,
:func:`ppaudit.experiments.labeldp_data.train_target_model`) with a reference model ``M'``
fitted on the reference half with the *true* labels (:func:`train_reference_model`). Both
jobs write the same two files (:func:`write_model_outputs`): an ``.npz`` with the
probabilities on the target half and on the test set (plus the labels), and a JSON of the
scalar metrics, read by the audit job (rule ``audit_labeldp_model``).
"""

from __future__ import annotations

import io
import math
import os

import numpy as np

from ..io import atomic_path, write_json
from .labeldp_data import LabelDPData, fit_predict_soft, log_loss

__all__ = ["PROBABILITY_KEYS", "train_reference_model", "write_model_outputs"]

#: The arrays of a training result that go to the ``.npz`` (everything else goes to the JSON).
PROBABILITY_KEYS = ("target_probs", "test_probs")


def train_reference_model(data: LabelDPData, settings: dict, rng: np.random.Generator) -> dict:
    """Fit the reference model ``M'`` on the reference half with its true labels (observational paper §6.2).

    Args:
        data: the split dataset (:func:`ppaudit.experiments.labeldp_data.load_labeldp_dataset`).
        settings: the dataset's settings; ``settings["model"]`` are the model's hyper-parameters.
        rng: the job's generator; one integer drawn from it seeds the model.

    Returns:
        The keys of :func:`~ppaudit.experiments.labeldp_data.train_target_model`'s result that
        the audit reads: ``target_probs`` (on the target half), ``test_probs``,
        ``claimed_epsilon`` (∞: no privacy), ``test_accuracy`` and ``test_log_loss``.

    Raises:
        KeyError: if ``settings`` has no ``model``.
    """
    target_probs, test_probs = fit_predict_soft(
        data.name, data.x_ref, data.y_ref, [data.x_target, data.x_test], data.num_classes, settings["model"], int(rng.integers(2**31 - 1))
    )
    return {
        "target_probs": target_probs,
        "test_probs": test_probs,
        "claimed_epsilon": float("inf"),
        "test_accuracy": float(np.mean(test_probs.argmax(1) == data.y_test)),
        "test_log_loss": log_loss(test_probs, data.y_test),
    }


def write_model_outputs(result: dict, data: LabelDPData, probs_path: str | os.PathLike, metrics_path: str | os.PathLike) -> dict:
    """Write a training result: probabilities (``.npz``) and metrics (JSON), each atomically.

    Args:
        result: a result of :func:`train_reference_model` or ``train_target_model`` (not modified).
        data: the dataset (its ``y_target`` and ``y_test`` go into the ``.npz``).
        probs_path: the ``.npz``: ``y_target``, ``y_test``, ``target_probs``, ``test_probs``.
        metrics_path: the JSON of every other entry; non-finite floats written as strings
            (``"inf"``), since JSON has no infinity.

    Returns:
        The metrics as written.

    Raises:
        ValueError: if ``result`` lacks ``target_probs`` or ``test_probs``.
    """
    missing = [k for k in PROBABILITY_KEYS if k not in result]
    if missing:
        raise ValueError(f"result must hold {list(PROBABILITY_KEYS)}, missing {missing}")
    arrays = {k: result[k] for k in PROBABILITY_KEYS}
    metrics = {k: (str(v) if isinstance(v, float) and not math.isfinite(v) else v) for k, v in result.items() if k not in PROBABILITY_KEYS}
    with atomic_path(probs_path) as tmp:
        buf = io.BytesIO()
        np.savez_compressed(buf, y_target=data.y_target, y_test=data.y_test, **arrays)
        tmp.write_bytes(buf.getvalue())
    write_json(metrics, metrics_path)
    return metrics
