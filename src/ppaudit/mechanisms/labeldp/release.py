"""The output of every label-DP mechanism (:class:`LabelRelease`), the model-callable type and the shared input checks.

A mechanism returns the released labels (hard or soft) with the (ε, δ) that *its own*
analysis claims, so that audits can be set against it (observational paper §3; Malek et al.
2021, §2). ``FitPredictProba`` callables have the signature
``fit_predict_proba(X_train, y_train, X_predict) -> (len(X_predict), num_classes)`` array of
class probabilities (all classes, also those absent from ``y_train``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._validation import as_distribution, check_positive_int

__all__ = ["FitPredictProba", "LabelRelease"]

#: ``fit_predict_proba(x_train, y_train, x_eval) -> (n_eval, C)`` class probabilities: the model interface of a release.
FitPredictProba = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class LabelRelease:
    """Output of a label-DP mechanism.

    Attributes:
        mechanism: name of the mechanism.
        epsilon: ε claimed by the mechanism's own analysis (``inf`` for no privacy).
        delta: δ of that claim (0 for pure ε-DP mechanisms).
        labels: released hard labels ``(n,)`` (for ALIBI/AGIBI the argmax of the soft
            labels; for PATE the answered queries' labels, −1 where unanswered).
        soft_labels: ``(n, C)`` soft labels (ALIBI/AGIBI) or ``None``.
        details: mechanism-specific extras (noisy vectors, ``k*``, stage split, votes, …).
    """

    mechanism: str
    epsilon: float
    delta: float
    labels: np.ndarray
    soft_labels: np.ndarray | None = None
    details: dict[str, Any] = field(default_factory=dict)


def _check_epsilon(epsilon) -> float:
    try:
        e = float(epsilon)
    except (TypeError, ValueError):
        raise ValueError(f"epsilon must be a number > 0 (or inf), got {epsilon!r}") from None
    if math.isnan(e) or e <= 0:
        raise ValueError(f"epsilon must be > 0 (or inf), got {epsilon!r}")
    return e


def _check_labels(labels, num_classes: int, name: str = "labels") -> np.ndarray:
    a = np.asarray(labels)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {a.shape}")
    f = a.astype(np.float64)
    if not np.all(np.isfinite(f)) or np.any(f != np.round(f)) or np.any(f < 0) or np.any(f >= num_classes):
        bad = a[~np.isfinite(f) | (f != np.round(f)) | (f < 0) | (f >= num_classes)]
        raise ValueError(f"{name} must be integers in [0, {num_classes - 1}], got {bad[:5]}")
    return a.astype(np.int64)


def _check_num_classes(num_classes) -> int:
    return check_positive_int(num_classes, "num_classes", minimum=2)


def _prior_matrix(prior, n: int, num_classes: int) -> np.ndarray:
    if prior is None:
        return np.full((n, num_classes), 1.0 / num_classes)
    p = as_distribution(prior, "prior", atol=1e-6)
    if p.ndim == 1:
        p = np.broadcast_to(p, (n, p.size))
    if p.shape != (n, num_classes):
        raise ValueError(f"prior must have shape ({num_classes},) or ({n}, {num_classes}), got {np.shape(prior)}")
    return p


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng

