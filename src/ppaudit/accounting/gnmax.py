"""Theoretical RDP of the Gaussian noisy argmax (GNMax) (Papernot et al. 2018).

* Data-independent: GNMax adds ``N(0, σ²)`` to every count; one teacher changing its vote
  moves two counts by one (ℓ2-sensitivity √2), so it is ``(α, α/σ²)``-RDP
  (Papernot et al. 2018, Prop. 8).
* Data-dependent: Papernot et al. 2018, Prop. 7 (union bound on ``q = Pr[output ≠ i*]``)
  and Thm 6 with the higher orders of Prop. 10, as in the authors' reference implementation
  (``pate_2018/core.py``: ``compute_logq_gaussian`` and ``rdp_gaussian``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from .._logsumexp import logsumexp  # scipy.special.logsumexp, the same numbers (issue 30 §1)

from .._validation import as_histograms, as_orders, check_sigma

__all__ = [
    "gnmax_rdp_data_independent",
    "gnmax_log_q",
    "gnmax_rdp_data_dependent",
]


def _norm_logsf(x, scale: float):
    """``scipy.stats.norm.logsf(x, scale=scale)`` for a scale > 0, bit for bit, from scipy.special.

    scipy.stats computes ``log_ndtr(-(x - 0)/scale)`` on the finite points and fills ``-inf`` at
    ``+inf``, ``+0.0`` at ``-inf``, ``nan`` at ``nan`` — the values ``log_ndtr`` takes there too
    but for the sign of the zero, set here; the same ufunc on the same float64 array gives the same bits (tests/unit/accounting/
    test_norm_logsf.py). Importing scipy.stats costs ≈ 1 s per process, scipy.special is loaded anyway.
    """
    x = np.asarray(x)
    loc, scale = np.asarray(0), np.asarray(scale)  # as arrays, as scipy.stats has them (type promotion)
    z = np.asarray((x - loc) / scale, dtype=np.promote_types(x.dtype, np.float64))
    out = np.where(z == -np.inf, 0.0, log_ndtr(-z))  # scipy.stats puts +0.0 there, log_ndtr(inf) is -0.0
    return out[()] if out.ndim == 0 else out


def gnmax_rdp_data_independent(sigma, orders) -> np.ndarray:
    """Data-independent RDP of GNMax: ``ε(α) = α / σ²`` (Papernot et al. 2018, Prop. 8).

    Args:
        sigma: noise standard deviation per count, > 0.
        orders: orders α > 1.

    Returns:
        ``(len(orders),)`` array.
    """
    s = check_sigma(sigma)
    a = as_orders(orders)
    return a / (s * s)


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 − exp(x))`` for ``x ≤ 0``, stable on both sides of −log 2."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(x < -math.log(2.0), np.log1p(-np.exp(x)), np.log(-np.expm1(x)))


def gnmax_log_q(counts, sigma) -> np.ndarray:
    """``log q̃``: union bound on ``log Pr[GNMax output ≠ argmax]`` (Papernot et al. 2018, Prop. 7).

    ``q̃ = Σ_{i ≠ i*} Pr[N(0, 2σ²) ≥ n_{i*} − n_i]``, capped at ``1 − 1/C`` as in the
    reference implementation (the data-dependent bound needs ``q̃ < 1``).

    Args:
        counts: histogram(s) ``(C,)`` or ``(N, C)``.
        sigma: noise standard deviation, > 0.

    Returns:
        Scalar array or ``(N,)``.
    """
    s = check_sigma(sigma)
    h, squeeze = as_histograms(counts, "counts")
    n, c = h.shape
    if c == 1:
        out = np.full(n, -np.inf)
        return out[0] if squeeze else out
    top = np.argmax(h, axis=1)
    gaps = h[np.arange(n), top][:, None] - h
    logsf = _norm_logsf(gaps, math.sqrt(2.0) * s)
    logsf[np.arange(n), top] = -np.inf
    logq = np.minimum(logsumexp(logsf, axis=1), math.log(1.0 - 1.0 / c))
    return logq[0] if squeeze else logq


def _rdp_from_log_q(logq: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """Papernot et al. 2018, Thm 6 with μ2 = sqrt(σ² log(1/q̃)), μ1 = μ2 + 1 (Prop. 10)."""
    variance = sigma * sigma
    ret = orders / variance
    if np.isneginf(logq):
        return np.zeros_like(orders)
    mu_hi2 = math.sqrt(variance * -logq)
    mu_hi1 = mu_hi2 + 1.0
    mask = (mu_hi1 > orders) & (mu_hi2 > 1.0)
    rdp_hi1 = mu_hi1 / variance
    rdp_hi2 = mu_hi2 / variance
    log_a2 = (mu_hi2 - 1.0) * rdp_hi2
    if not np.any(mask):
        return ret
    if logq <= log_a2 - mu_hi2 * (math.log(1 + 1 / (mu_hi1 - 1)) + math.log(1 + 1 / (mu_hi2 - 1))) and -logq > rdp_hi2:
        log1q = float(_log1mexp(logq))
        log_a = (orders - 1.0) * (log1q - _log1mexp((logq + rdp_hi2) * (1.0 - 1.0 / mu_hi2)))
        log_b = (orders - 1.0) * (rdp_hi1 - logq / (mu_hi1 - 1.0))
        log_s = np.logaddexp(log1q + log_a, logq + log_b)
        with np.errstate(invalid="ignore", divide="ignore"):
            dd = log_s / (orders - 1.0)
        ret = np.where(mask, np.minimum(ret, dd), ret)
    return ret


def gnmax_rdp_data_dependent(counts, sigma, orders) -> np.ndarray:
    """Data-dependent RDP of GNMax at a histogram (Papernot et al. 2018, Prop. 7 + Thm 6).

    Bounds ``D_α(M(D) || M(D'))`` for every neighbour ``D'`` of the dataset ``D`` whose vote
    histogram is ``counts``; never larger than the data-independent ``α/σ²``.

    Args:
        counts: histogram(s) ``(C,)`` or ``(N, C)``.
        sigma: noise standard deviation, > 0.
        orders: orders α > 1.

    Returns:
        ``(len(orders),)`` or ``(N, len(orders))``.

    Example:
        >>> import numpy as np
        >>> dd = gnmax_rdp_data_dependent([240, 5, 5], 40.0, [2.0, 8.0])
        >>> bool(np.all(dd <= gnmax_rdp_data_independent(40.0, [2.0, 8.0])))
        True
    """
    s = check_sigma(sigma)
    a = as_orders(orders)
    h, squeeze = as_histograms(counts, "counts")
    logq = np.atleast_1d(gnmax_log_q(h, s))
    out = np.stack([_rdp_from_log_q(float(lq), s, a) for lq in logq])
    return out[0] if squeeze else out
