"""Input checks shared by the public functions.

Every check raises :class:`ValueError` with a message that names the offending
value, as the conventions ask (``f"sigma must be > 0, got {sigma}"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "as_histograms",
    "check_sigma",
    "as_orders",
    "as_distribution",
    "check_probability",
    "check_positive_int",
]


def _short(value: Any) -> str:
    text = np.array2string(np.asarray(value), threshold=12, precision=6) if not np.isscalar(value) else repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def as_histograms(hist: Any, name: str = "hist") -> tuple[np.ndarray, bool]:
    """Return ``hist`` as a float64 array of shape ``(N, C)`` and whether it was 1-D.

    Raises:
        ValueError: if it is not 1-D or 2-D, has no class, or holds a negative or
            non-finite count.
    """
    arr = np.asarray(hist, dtype=np.float64)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape (C,) or (N, C), got shape {arr.shape}")
    if arr.shape[-1] < 1:
        raise ValueError(f"{name} must have at least one class, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must hold finite counts, got {_short(hist)}")
    if np.any(arr < 0):
        raise ValueError(f"{name} must hold non-negative counts, got {_short(hist)}")
    squeeze = arr.ndim == 1
    return np.atleast_2d(arr), squeeze


def check_sigma(sigma: Any, name: str = "sigma") -> float:
    """Return ``sigma`` as a float after checking it is a finite number > 0."""
    try:
        value = float(sigma)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number > 0, got {sigma!r}") from None
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be > 0 and finite, got {sigma!r}")
    return value


def as_orders(orders: Any, name: str = "orders") -> np.ndarray:
    """Return the Rényi orders as a 1-D float array; every order must be > 1.

    ``np.inf`` is accepted (the max-divergence limit).
    """
    arr = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D list of orders, got {_short(orders)}")
    if np.any(np.isnan(arr)) or np.any(arr <= 1):
        bad = arr[np.isnan(arr) | (arr <= 1)]
        raise ValueError(f"every Rényi order must be > 1, got {_short(bad)} in {name}")
    return arr


def as_distribution(p: Any, name: str = "p", atol: float = 1e-9) -> np.ndarray:
    """Return ``p`` as a float array whose last axis is a probability vector."""
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim < 1 or arr.shape[-1] < 1:
        raise ValueError(f"{name} must be a probability vector, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must hold finite non-negative probabilities, got {_short(p)}")
    sums = arr.sum(axis=-1)
    if np.any(np.abs(sums - 1.0) > atol):
        raise ValueError(f"{name} must sum to 1 (tolerance {atol}), got sum {_short(sums)}")
    return arr


def check_probability(value: Any, name: str, *, open_left: bool = True, open_right: bool = True) -> float:
    """Check that ``value`` lies in (0, 1) (or a half-closed variant) and return it."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}") from None
    lo_ok = v > 0 if open_left else v >= 0
    hi_ok = v < 1 if open_right else v <= 1
    if not (np.isfinite(v) and lo_ok and hi_ok):
        lb = "(" if open_left else "["
        rb = ")" if open_right else "]"
        raise ValueError(f"{name} must be in {lb}0, 1{rb}, got {value!r}")
    return v


def check_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    """Check that ``value`` is an integer ``>= minimum`` (floats like 1e8 are accepted if integral)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}") from None
    if not np.isfinite(f) or f != int(f) or int(f) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(f)
