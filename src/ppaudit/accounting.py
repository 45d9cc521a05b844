"""Theoretical RDP of the Gaussian noisy argmax (GNMax) and the RDP → (ε, δ) conversion.

* Data-independent: GNMax adds ``N(0, σ²)`` to every count; one teacher changing its vote
  moves two counts by one (ℓ2-sensitivity √2), so it is ``(α, α/σ²)``-RDP
  (Papernot et al. 2018, Prop. 8).
* Data-dependent: Papernot et al. 2018, Prop. 7 (union bound on ``q = Pr[output ≠ i*]``)
  and Thm 6 with the higher orders of Prop. 10, as in the authors' reference implementation
  (``pate_2018/core.py``: ``compute_logq_gaussian`` and ``rdp_gaussian``).
* Conversion: Chadha et al. 2024, Thm 1 = Balle et al. 2020, Thm 20, minimised over the
  orders; the classic ``ε = ε_α + log(1/δ)/(α−1)`` (Mironov 2017, Prop. 3) on request.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm

from ._validation import as_histograms, as_orders, check_probability, check_sigma

__all__ = [
    "gnmax_rdp_data_independent",
    "gnmax_log_q",
    "gnmax_rdp_data_dependent",
    "rdp_to_dp",
]


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
    logsf = norm.logsf(gaps, scale=math.sqrt(2.0) * s)
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


def rdp_to_dp(rdp, orders, delta, method: str = "balle2020", return_order: bool = False):
    """Convert an RDP curve to ``(ε, δ)``-DP, minimised over the orders.

    ``method="balle2020"`` (default): Chadha et al. 2024, Thm 1 (Balle et al. 2020, Thm 20)
    ``ε = ε_α + log((α−1)/α) − (log δ + log α)/(α − 1)``.
    ``method="classic"``: ``ε = ε_α + log(1/δ)/(α − 1)`` (Mironov 2017, Prop. 3).
    The result is clipped at 0. Orders equal to ``inf`` are ignored.

    Args:
        rdp: RDP values, last axis aligned with ``orders`` (may be batched).
        orders: orders α > 1.
        delta: target δ in (0, 1).
        method: ``"balle2020"`` or ``"classic"``.
        return_order: also return the minimising order.

    Returns:
        ε (array of ``rdp.shape[:-1]``, a float for 1-D input), and optionally the order.
    """
    a = as_orders(orders)
    d = check_probability(delta, "delta")
    r = np.asarray(rdp, dtype=np.float64)
    if r.shape[-1:] != a.shape:
        raise ValueError(f"rdp must have one value per order on its last axis: {r.shape} vs {a.size} orders")
    if np.any(np.isnan(r)) or np.any(r < 0):
        raise ValueError(f"rdp values must be >= 0, got {r[np.isnan(r) | (r < 0)][:5]}")
    finite = np.isfinite(a)
    af, rf = a[finite], r[..., finite]
    if method == "balle2020":
        eps = rf + np.log1p(-1.0 / af) - (math.log(d) + np.log(af)) / (af - 1.0)
    elif method == "classic":
        eps = rf + math.log(1.0 / d) / (af - 1.0)
    else:
        raise ValueError(f"method must be 'balle2020' or 'classic', got {method!r}")
    idx = np.argmin(eps, axis=-1)
    best = np.maximum(np.take_along_axis(eps, idx[..., None], axis=-1)[..., 0], 0.0)
    best_order = af[idx]
    if best.ndim == 0:
        best, best_order = float(best), float(best_order)
    return (best, best_order) if return_order else best
