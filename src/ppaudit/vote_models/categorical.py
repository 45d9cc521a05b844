"""The categorical maximum-likelihood fit that every vote-model fit is built from (Chadha et al. 2024, §5.1–5.2).

:func:`fit_categorical` pools integer labels over chosen axes; :mod:`.fit` (the PATE and CaPC
fits) and :mod:`.twin` (the twin-paired fits) both use it, so it sits below both of them.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_positive_int

__all__ = ["fit_categorical"]


def _check_votes(votes, num_classes: int, name: str) -> np.ndarray:
    v = np.asarray(votes)
    if not np.issubdtype(v.dtype, np.integer):
        if not np.all(v == np.round(v)):
            raise ValueError(f"{name} must hold integer class labels, got dtype {v.dtype}")
        v = v.astype(np.int64)
    if v.size and (v.min() < 0 or v.max() >= num_classes):
        raise ValueError(f"{name} must hold labels in [0, {num_classes}), got range [{v.min()}, {v.max()}]")
    return v.astype(np.int64, copy=False)


def fit_categorical(votes, num_classes: int, axis=0, smoothing: float = 0.0) -> np.ndarray:
    """MLE (optionally add-λ) of a categorical distribution from labels, pooled over ``axis``.

    Args:
        votes: integer labels in ``0..C-1``.
        num_classes: ``C``.
        axis: axis or axes pooled (each entry along them is one draw).
        smoothing: ``λ ≥ 0`` pseudo-counts per class (0 = MLE).

    Returns:
        Probabilities with the pooled axes removed and a last axis of length ``C``.
    """
    c = check_positive_int(num_classes, "num_classes", minimum=2)
    lam = float(smoothing)
    if not (lam >= 0 and math.isfinite(lam)):
        raise ValueError(f"smoothing must be a finite number >= 0, got {smoothing!r}")
    v = _check_votes(votes, c, "votes")
    axes = (axis,) if np.isscalar(axis) else tuple(axis)
    axes = tuple(a % v.ndim for a in axes)
    rest = [d for d in range(v.ndim) if d not in axes]
    moved = np.moveaxis(v, axes + tuple(rest), tuple(range(v.ndim)))
    n = int(np.prod([v.shape[a] for a in axes]))
    if n == 0:
        raise ValueError(f"no votes to fit along axis {axis} (shape {v.shape})")
    flat = moved.reshape(n, -1)  # (draws, cells)
    cells = flat.shape[1]
    counts = np.zeros((cells, c), dtype=np.float64)
    np.add.at(counts, (np.broadcast_to(np.arange(cells), flat.shape), flat), 1.0)
    probs = (counts + lam) / (n + lam * c)
    return probs.reshape(tuple(v.shape[d] for d in rest) + (c,))
