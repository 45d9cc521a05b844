"""The model-training jobs of the label-DP audit and the files they write (observational paper §6.2).

The observational label-inference attack compares a target model ``M`` (fitted on the
target half with the labels a label-DP mechanism released,
:func:`ppaudit.experiments.labeldp_release.train_target_model`) with a reference model ``M'``
fitted on the reference half with the *true* labels (:func:`train_reference_model`). The
reference job writes two files (:func:`write_model_outputs`): an ``.npz`` with the
probabilities on the target half and on the test set (plus the labels), and a JSON of the
scalar metrics. One job per dataset trains every (mechanism, ε) target model of the dataset
(:func:`train_target_models`: each model with its own generator, the soft-label MLPs as one
stacked block, :func:`fit_released_block`) and writes them as one bundle
(:func:`write_model_bundle` / :func:`read_model_bundle`), read by the audit job (rule
``audit_labeldp_models``).
"""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Sequence

import numpy as np

from ...io import atomic_path, write_json
from ...rng import job_generator
from ...models.soft_label import fit_predict_soft
from .data import LabelDPData
from .release import fit_released, log_loss, parse_epsilon, release_labels

__all__ = ["PROBABILITY_KEYS", "fit_released_block", "model_name", "read_model_bundle", "train_reference_model", "train_target_models", "write_model_bundle", "write_model_outputs"]

#: The arrays of a training result that go to the ``.npz`` (everything else goes to the JSON).
PROBABILITY_KEYS = ("target_probs", "test_probs")


def train_reference_model(data: LabelDPData, settings: dict, rng: np.random.Generator) -> dict:
    """Fit the reference model ``M'`` on the reference half with its true labels (observational paper §6.2).

    Args:
        data: the split dataset (:func:`ppaudit.experiments.labeldp_data.load_labeldp_dataset`).
        settings: the dataset's settings; ``settings["model"]`` are the model's hyper-parameters.
        rng: the job's generator; one integer drawn from it seeds the model.

    Returns:
        The keys of :func:`~ppaudit.experiments.labeldp_release.train_target_model`'s result that
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
    metrics = _split_result(result, "result")
    _write_files(data, {k: result[k] for k in PROBABILITY_KEYS}, metrics, probs_path, metrics_path)
    return metrics


def _split_result(result: dict, what: str) -> dict:
    """The metrics of a training result (every entry but the probabilities; non-finite floats as
    strings, since JSON has no infinity), after checking that it holds the probabilities."""
    missing = [k for k in PROBABILITY_KEYS if k not in result]
    if missing:
        raise ValueError(f"{what} must hold {list(PROBABILITY_KEYS)}, missing {missing}")
    return {k: (str(v) if isinstance(v, float) and not math.isfinite(v) else v) for k, v in result.items() if k not in PROBABILITY_KEYS}


def _write_files(data: LabelDPData, arrays: dict, metrics: dict, probs_path, metrics_path) -> None:
    """The ``.npz`` (labels + ``arrays``, written atomically), then the metrics JSON."""
    with atomic_path(probs_path) as tmp:
        buf = io.BytesIO()
        np.savez_compressed(buf, y_target=data.y_target, y_test=data.y_test, **arrays)
        tmp.write_bytes(buf.getvalue())
    write_json(metrics, metrics_path)


def _blockable(data: LabelDPData, xtr, info: dict) -> bool:
    """Releases whose model is the plain soft-label MLP on feature vectors (no FixMatch student, not
    CatBoost, not a torch network on images)."""
    return data.name != "tabular" and "_unlabeled" not in info and not hasattr(xtr, "iloc") and np.ndim(xtr) == 2


def fit_released_block(data: LabelDPData, releases: Sequence[tuple], x_predict: Sequence[list], settings: dict, seeds: Sequence[int]) -> list[list[np.ndarray]]:
    """:func:`~ppaudit.experiments.labeldp_release.fit_released` for many releases at once.

    Releases whose model is the soft-label MLP and whose training sets share one shape are
    trained as one stacked block (:func:`ppaudit.models.soft_mlp.soft_mlp_fit_predict_block`,
    ALIBI/AGIBI's iterative prior per model, Malek et al. 2021 §5.2); the others (FixMatch
    students, CatBoost) one at a time. Noise corrections (``_correction``) are applied as there.

    Args:
        data: the dataset.
        releases: ``(train_x, train_y, info)`` triples from ``release_labels`` (its claimed ε dropped).
        x_predict: per release, the arrays to predict.
        settings: the dataset's settings (``model``, ``fixmatch``).
        seeds: per release, the model's integer seed.

    Returns:
        Per release, the probabilities on each of its ``x_predict`` arrays.

    Raises:
        ValueError: when the three sequences differ in length.
    """
    from ...models.soft_mlp import soft_mlp_fit_predict_block

    if not (len(releases) == len(x_predict) == len(seeds)):
        raise ValueError(f"releases, x_predict and seeds need one entry each, got {len(releases)}, {len(x_predict)}, {len(seeds)}")
    out: list = [None] * len(releases)
    groups: dict[tuple, list[int]] = {}
    for i, (xtr, _, info) in enumerate(releases):
        if _blockable(data, xtr, info):
            groups.setdefault(tuple(np.shape(xtr)), []).append(i)
        else:
            out[i] = fit_released(data, xtr, releases[i][1], info, list(x_predict[i]), settings, int(seeds[i]))
    for idx in groups.values():
        fits = soft_mlp_fit_predict_block([releases[i][0] for i in idx], [releases[i][1] for i in idx], [list(x_predict[i]) for i in idx],
                                          data.num_classes, settings["model"], [int(seeds[i]) for i in idx],
                                          [releases[i][2].get("_soft_label_fn") for i in idx])  # fmt: skip
        for i, probs in zip(idx, fits):
            corr = releases[i][2].get("_correction")
            out[i] = [corr(p) for p in probs] if corr is not None else probs
    return out


def model_name(algo: str, eps: str) -> str:
    """The name of one target model in a bundle (and of its file before bundles): ``"{algo}_eps{eps}"``."""
    return f"{algo}_eps{eps}"


def train_target_models(data: LabelDPData, models: Sequence[tuple[str, str]], settings: dict, seed: int) -> dict[str, dict]:
    """Every target model ``M`` of one dataset: release labels, fit, predict (observational paper §6.2).

    Model ``(algo, ε)`` is :func:`~ppaudit.experiments.labeldp_release.train_target_model` with
    the generator ``job_generator(seed, "labeldp_target", dataset, algo, ε text)``: its release
    and its model seed do not depend on the other models. The soft-label MLPs whose training
    sets share one shape are fitted as one stacked block (:func:`fit_released_block`); CatBoost
    and FixMatch students one at a time.

    Args:
        data: the split dataset.
        models: ``(algo, ε text)`` pairs (``"inf"`` or a number, as in the file names).
        settings: the dataset's settings with ``delta`` and the mechanism options.
        seed: the workflow seed.

    Returns:
        ``{model_name: result}`` in the order of ``models``; each result as
        ``train_target_model``'s (``target_probs``, ``test_probs``, ``claimed_epsilon``,
        ``test_accuracy``, ``test_log_loss``, ``train_size`` and the mechanism's extras).

    Raises:
        ValueError: for a repeated model (and as ``release_labels``).
    """
    names = [model_name(a, e) for a, e in models]
    if len(set(names)) != len(names):
        raise ValueError(f"every (algo, eps) must appear once, got {names}")
    releases, seeds, extras = [], [], []
    for algo, eps in models:
        rng = job_generator(seed, "labeldp_target", data.name, algo, eps)
        xtr, ytr, claimed, info = release_labels(data, algo, parse_epsilon(eps), settings, rng)
        releases.append((xtr, ytr, info))
        seeds.append(int(rng.integers(2**31 - 1)))
        extras.append(dict({k: v for k, v in info.items() if not k.startswith("_")}, claimed_epsilon=float(claimed),
                           train_size=int(len(ytr) if np.ndim(ytr) == 1 else ytr.shape[0])))  # fmt: skip
    fits = fit_released_block(data, releases, [[data.x_target, data.x_test]] * len(models), settings, seeds)
    out = {}
    for name, extra, (target_probs, test_probs) in zip(names, extras, fits):
        out[name] = dict(extra, target_probs=target_probs, test_probs=test_probs, test_accuracy=float(np.mean(test_probs.argmax(axis=1) == data.y_test)),
                         test_log_loss=log_loss(test_probs, data.y_test))  # fmt: skip
    return out


def write_model_bundle(results: dict[str, dict], data: LabelDPData, probs_path: str | os.PathLike, metrics_path: str | os.PathLike) -> dict:
    """Write the target models of one dataset: one ``.npz`` and one JSON, each atomically.

    Args:
        results: ``{model_name: result}`` (:func:`train_target_models`).
        data: the dataset (its ``y_target`` and ``y_test`` go into the ``.npz``).
        probs_path: the ``.npz``: ``y_target``, ``y_test`` and ``"{name}.target_probs"``,
            ``"{name}.test_probs"`` per model.
        metrics_path: the JSON ``{name: metrics}``; non-finite floats written as strings.

    Returns:
        The metrics as written.

    Raises:
        ValueError: for an empty bundle or a result without ``target_probs`` / ``test_probs``.
    """
    if not results:
        raise ValueError("a model bundle needs at least one model, got 0")
    arrays, metrics = {}, {}
    for name, res in results.items():
        metrics[name] = _split_result(res, f"result {name!r}")
        arrays.update({f"{name}.{k}": res[k] for k in PROBABILITY_KEYS})
    _write_files(data, arrays, metrics, probs_path, metrics_path)
    return metrics


def read_model_bundle(probs_path: str | os.PathLike, metrics_path: str | os.PathLike) -> dict[str, dict]:
    """Read :func:`write_model_bundle`'s files: ``{name: metrics plus y_target, y_test, target_probs, test_probs}``.

    Raises:
        ValueError: when the two files name different models.
    """
    from pathlib import Path

    metrics = json.loads(Path(metrics_path).read_text(encoding="utf-8"))
    with np.load(probs_path) as z:
        names = sorted({k.rsplit(".", 1)[0] for k in z.files if "." in k})
        if names != sorted(metrics):
            raise ValueError(f"{probs_path} holds models {names} but {metrics_path} holds {sorted(metrics)}")
        return {n: dict(metrics[n], y_target=z["y_target"], y_test=z["y_test"], **{k: z[f"{n}.{k}"] for k in PROBABILITY_KEYS}) for n in metrics}
