"""Confidence intervals for proportions, from scipy/statsmodels (not re-derived).

* Clopper–Pearson (exact binomial): what ``statsmodels.stats.proportion.proportion_confint``
  computes with ``method="beta"`` — ``beta.ppf(α/2, k, n − k + 1)`` and
  ``beta.isf(α/2, k + 1, n − k)`` — evaluated with the scipy.special functions that
  scipy.stats' ``beta.ppf`` / ``beta.isf`` call (``betaincinv``, ``betainccinv``), so the bits
  are statsmodels' (tests/unit/intervals/test_intervals_special.py checks bit identity) without
  importing statsmodels and scipy.stats (≈ 1.5 s per workflow job, issue 30). Identical to
  ``scipy.stats.binomtest(k, n).proportion_ci(method="exact")``, which the tests check.
* Simultaneous multinomial intervals: ``multinomial_proportions_confint`` with
  ``method="goodman"`` (Goodman 1965; its formula evaluated here the same way, the χ²
  quantile as ``2·gammaincinv(1/2, ·)`` like ``scipy.stats.chi2.ppf``) or ``"sison-glaz"``
  (Sison & Glaz 1995; statsmodels itself, imported when used).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import betainccinv, betaincinv, gammaincinv

from ._validation import check_probability

__all__ = ["clopper_pearson", "multinomial_simultaneous", "as_counts"]


def as_counts(counts, name: str = "counts") -> np.ndarray:
    """Return ``counts`` as a 1-D int64 array of non-negative integers (at least 2 classes)."""
    arr = np.asarray(counts)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"{name} must be a 1-D array of at least 2 output counts, got shape {arr.shape}")
    f = arr.astype(np.float64)
    if not np.all(np.isfinite(f)) or np.any(f < 0) or np.any(f != np.round(f)):
        raise ValueError(f"{name} must hold non-negative integer counts, got {arr[:10]}")
    if f.sum() <= 0:
        raise ValueError(f"{name} must hold at least one trial, got all zeros")
    return f.astype(np.int64)


def clopper_pearson(successes, trials, confidence: float = 0.95, *, miscoverage: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Clopper–Pearson interval at level ``confidence`` (vectorised).

    Args:
        successes: number of successes (array-like of integers ≥ 0).
        trials: number of trials (≥ successes).
        confidence: two-sided level in (0, 1); each tail has ``(1 − confidence)/2``.
        miscoverage: ``1 − confidence`` given directly, in ``[0, 1)`` (then ``confidence`` is
            ignored): for levels so close to 1 that ``1 − miscoverage`` rounds to 1.0 in
            float64 (a Bonferroni family of ``2^(C−1)`` sets, C ≥ 55). 0 (underflow) gives
            the trivial interval ``[0, 1]``.

    Returns:
        ``(lower, upper)`` arrays.

    Raises:
        ValueError: a level outside its range, or counts that are not ``0 ≤ successes ≤ trials``.
    """
    if miscoverage is None:
        beta = 1.0 - check_probability(confidence, "confidence")
    else:
        beta = float(miscoverage)
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"miscoverage must lie in [0, 1), got {miscoverage}")
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    if np.any(k < 0) or np.any(k > n) or np.any(n <= 0):
        raise ValueError(f"need 0 <= successes <= trials and trials > 0, got successes={successes}, trials={trials}")
    if beta == 0.0:
        return np.zeros(np.broadcast(k, n).shape), np.ones(np.broadcast(k, n).shape)
    lo, hi = _proportion_confint_beta(k, n, beta)
    lo = np.where(k == 0, 0.0, np.nan_to_num(lo, nan=0.0))
    hi = np.where(k == n, 1.0, np.nan_to_num(hi, nan=1.0))
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


def multinomial_simultaneous(counts, confidence: float = 0.95, method: str = "goodman") -> tuple[np.ndarray, np.ndarray]:
    """Simultaneous intervals for all cell probabilities of a multinomial.

    Args:
        counts: 1-D output counts (≥ 2 cells).
        confidence: simultaneous level in (0, 1).
        method: ``"goodman"`` or ``"sison-glaz"``.

    Returns:
        ``(lower, upper)`` arrays of the length of ``counts``.

    Raises:
        ValueError: on a bad method, bad counts, or if statsmodels returns a non-finite
            interval (Sison–Glaz's Edgeworth expansion can fail for degenerate counts).
    """
    conf = check_probability(confidence, "confidence")
    c = as_counts(counts)
    if method not in ("goodman", "sison-glaz"):
        raise ValueError(f"method must be 'goodman' or 'sison-glaz', got {method!r}")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if method == "goodman":
            ci = _goodman_confint(c, 1.0 - conf)
        else:
            from statsmodels.stats.proportion import multinomial_proportions_confint

            ci = multinomial_proportions_confint(c, alpha=1.0 - conf, method=method)
    ci = np.asarray(ci, dtype=np.float64)
    if not np.all(np.isfinite(ci)):
        raise ValueError(f"{method} interval is not finite for counts {c[:10]}")
    return np.clip(ci[:, 0], 0.0, 1.0), np.clip(ci[:, 1], 0.0, 1.0)


def _proportion_confint_beta(k: np.ndarray, n: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """statsmodels' ``proportion_confint(k, n, alpha, method="beta")`` (0.15), step by step.

    statsmodels: ``beta.ppf(α/2, k, n − k + 1)`` and ``beta.isf(α/2, k + 1, n − k)``, then 0 where
    ``k = 0`` and 1 where ``k = n``. scipy.stats' ``beta.ppf(q, a, b)`` is ``betaincinv(a, b, q)``
    (the same Boost ``ibeta_inv``) and ``beta.isf`` is ``betainccinv(a, b, q)`` where
    ``a, b > 0`` and ``0 < q < 1``, each ``· 1 + 0`` (scale and loc), NaN elsewhere.
    """
    a = alpha / 2.0
    with np.errstate(all="ignore"):
        lo = np.where(k > 0, betaincinv(np.where(k > 0, k, 1.0), n - k + 1, a) * 1.0 + 0.0, np.nan)
        hi = np.where(n - k > 0, betainccinv(k + 1, np.where(n - k > 0, n - k, 1.0), a) * 1.0 + 0.0, np.nan)
    q = k / n
    if np.ndim(lo) > 0:
        lo.flat[q.flat == 0] = 0
        hi.flat[q.flat == 1] = 1
    else:
        lo = 0 if q == 0 else lo
        hi = 1 if q == 1 else hi
    return lo, hi


def _goodman_confint(counts: np.ndarray, alpha: float) -> np.ndarray:
    """statsmodels' ``multinomial_proportions_confint(counts, alpha, method="goodman")`` (0.15).

    Its formula verbatim, with ``scipy.stats.chi2.ppf(p, 1)`` evaluated as scipy.stats does,
    ``2·gammaincinv(1/2, p) · 1 + 0``.
    """
    counts = np.array(counts, dtype=float)
    n = counts.sum()
    k = len(counts)
    proportions = counts / n
    chi2 = (2 * gammaincinv(np.asarray(1) / 2, np.asarray([1 - alpha / k])) * 1.0 + 0.0)[0]
    delta = chi2**2 + (4 * n * proportions * chi2 * (1 - proportions))
    return ((2 * n * proportions + chi2 + np.array([-np.sqrt(delta), np.sqrt(delta)])) / (2 * (chi2 + n))).T
