"""Reconstruction error and the attack's privacy cost under PATE's accountants (Wang et al. 2022, §4; Papernot et al. 2018)."""

from __future__ import annotations

import math

import numpy as np

from ..._validation import as_histograms, as_orders, check_positive_int, check_probability, check_sigma
from ...accounting import confident_gnmax_rdp, gnmax_rdp_data_dependent, rdp_to_dp
from ...audit import compose_rdp

__all__ = [
    "DEFAULT_ORDERS",
    "HARD_QUERY_LIMIT",
    "DEFAULT_CONVERSION",
    "ACCOUNTANTS",
    "ACCOUNTANT_CONVERSION",
    "normalised_l1_error",
    "attack_privacy_cost",
    "queries_within_budget",
    "per_query_rdp",
]

#: Rényi orders of PATE's accountant: the "long list" of Papernot et al.'s reference
#: implementation ``pate_2018`` (2, 2.5, …, 100) continued by 200 log-spaced orders up to
#: 1000 (issue 14: orders up to ≥ 1000, for near-unanimous histograms whose data-dependent
#: cost is optimised at high orders).
DEFAULT_ORDERS: np.ndarray = np.concatenate((np.arange(2.0, 100.0 + 1.0, 0.5), np.logspace(2.0, 3.0, num=200)))
DEFAULT_ORDERS.setflags(write=False)

#: The hard query limit of the second attacker of Wang et al. 2022, §4.1.
HARD_QUERY_LIMIT = 10_000

#: PATE accountants of :func:`attack_privacy_cost` (see the module docstring).
ACCOUNTANTS = ("confident_gnmax", "gnmax")
#: The RDP → (ε, δ) conversion of each accountant (``method=None``).
ACCOUNTANT_CONVERSION = {"confident_gnmax": "balle2020", "gnmax": "classic"}
#: Conversion of the plain-GNMax accountant (kept for callers of the old default).
DEFAULT_CONVERSION = "classic"
#: Reconstruction solvers of :func:`reconstruct_with_solver`.

# --------------------------------------------------------------------------------------
# Metrics and privacy cost
# --------------------------------------------------------------------------------------


def normalised_l1_error(true, estimate) -> np.ndarray | float:
    """Error rate of Wang et al. 2022, §4.1: ``Σ_i |H_i − Ĥ_i| / (2 Σ_i |H_i|)``.

    The share of miscounted votes: 0 for a perfect estimate, 1 when the estimate puts all
    ``N`` votes on classes with no true vote. Vectorised over rows.

    Args:
        true: true histogram(s) ``(C,)`` or ``(K, C)`` (non-negative, positive total).
        estimate: estimate(s) of the same shape (any finite reals).

    Returns:
        A float, or ``(K,)`` array.

    Raises:
        ValueError: on shape mismatch, non-finite values or a zero true total.
    """
    h, squeeze = as_histograms(true, "true")
    e = np.atleast_2d(np.asarray(estimate, dtype=np.float64))
    if e.shape != h.shape:
        raise ValueError(f"estimate must have the shape of true {h.shape[1:] if squeeze else h.shape}, got {np.shape(estimate)}")
    if not np.all(np.isfinite(e)):
        raise ValueError(f"estimate must be finite, got {estimate!r}")
    total = h.sum(axis=1)
    if np.any(total <= 0):
        raise ValueError(f"true histogram must have a positive total, got totals {total}")
    err = np.abs(h - e).sum(axis=1) / (2.0 * total)
    return float(err[0]) if squeeze else err


def _check_method(method: str | None, accountant: str) -> str:
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
    if method is None:
        return ACCOUNTANT_CONVERSION[accountant]
    if method not in ("classic", "balle2020"):
        raise ValueError(f"method must be 'classic' or 'balle2020', got {method!r}")
    return method


def per_query_rdp(hist, sigma: float, orders, accountant: str = "gnmax", threshold=None, sigma_threshold=None) -> np.ndarray:
    """Per-query data-dependent RDP of one histogram under a PATE accountant.

    ``"gnmax"``: :func:`ppaudit.accounting.gnmax_rdp_data_dependent` at ``σ``;
    ``"confident_gnmax"``: :func:`ppaudit.accounting.confident_gnmax_rdp` with
    ``(threshold, sigma_threshold, σ)`` (both required).

    Raises:
        ValueError: on an unknown accountant or missing threshold parameters.
    """
    if accountant == "gnmax":
        return gnmax_rdp_data_dependent(hist, sigma, orders)
    if accountant == "confident_gnmax":
        if threshold is None or sigma_threshold is None:
            raise ValueError(
                f"accountant 'confident_gnmax' needs threshold and sigma_threshold, got {threshold!r} and {sigma_threshold!r}"
            )
        return confident_gnmax_rdp(hist, threshold, sigma_threshold, sigma, orders)
    raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")


def attack_privacy_cost(
    hist,
    sigma: float,
    num_queries,
    delta: float,
    orders=DEFAULT_ORDERS,
    method: str | None = None,
    *,
    accountant: str = "gnmax",
    threshold: float | None = None,
    sigma_threshold: float | None = None,
):
    """Privacy cost ``ε`` of ``M`` queries of one histogram (Wang et al. 2022, §4.1 "privacy cost").

    The per-query data-dependent RDP at the true histogram (:func:`per_query_rdp`: plain
    GNMax, Papernot et al. 2018 Prop. 7 + Thm 6, or Confident-GNMax's expected cost, threshold
    check + Pr[answered] · GNMax) is composed ``M`` times (:func:`ppaudit.audit.compose_rdp`)
    and converted to ``(ε, δ)``-DP, minimised over the orders
    (:func:`ppaudit.accounting.rdp_to_dp`). This is PATE's own accounting of the attacker's
    queries, i.e. the quantity PATE's budget monitor compares to its budget. Under
    Confident-GNMax ``M`` counts *submitted* queries (answered or not).

    Args:
        hist: the true histogram ``(C,)``.
        sigma: noise standard deviation, > 0.
        num_queries: ``M`` (int ≥ 0) or a 1-D array of them.
        delta: δ in (0, 1) (1e-5 for MNIST, 1e-6 for SVHN in Wang §4.1).
        orders: Rényi orders (default: Papernot et al.'s list, :data:`DEFAULT_ORDERS`).
        method: ``"classic"`` (Mironov 2017, Prop. 3) or ``"balle2020"`` (Balle et al.
            2020, Thm 20); ``None``: the accountant's own (:data:`ACCOUNTANT_CONVERSION`).
        accountant: ``"gnmax"`` (default, for backward compatibility) or
            ``"confident_gnmax"`` (the paper's; needs ``threshold`` and ``sigma_threshold``).
        threshold: Confident-GNMax's ``T``.
        sigma_threshold: Confident-GNMax's ``σ₁``.

    Returns:
        ``ε`` (float) or an array for an array of ``M``; ``M = 0`` costs 0.

    Raises:
        ValueError: on a bad histogram, σ, ``M``, δ, orders, method or accountant.
    """
    h, squeeze = as_histograms(hist)
    if not squeeze:
        raise ValueError(f"hist must have shape (C,), got shape {h.shape}")
    s = check_sigma(sigma)
    a = as_orders(orders)
    d = check_probability(delta, "delta")
    meth = _check_method(method, accountant)
    try:
        m = np.asarray(num_queries, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"num_queries must be non-negative integers, got {num_queries!r}") from None
    if m.ndim > 1 or not np.all(np.isfinite(m)) or np.any(m < 0) or np.any(np.round(m) != m):
        raise ValueError(f"num_queries must be non-negative integers, got {num_queries!r}")
    per_query = per_query_rdp(h[0], s, a, accountant, threshold, sigma_threshold)
    out = np.array([
        0.0 if int(k) == 0 else rdp_to_dp(compose_rdp(per_query, repetitions=int(k)), a, d, method=meth)
        for k in np.atleast_1d(m)
    ])
    return float(out[0]) if m.ndim == 0 else out


def queries_within_budget(
    hist,
    sigma: float,
    budget: float,
    delta: float,
    max_queries: int | None = HARD_QUERY_LIMIT,
    orders=DEFAULT_ORDERS,
    method: str | None = None,
    *,
    accountant: str = "gnmax",
    threshold: float | None = None,
    sigma_threshold: float | None = None,
) -> int:
    """Number of answers an attacker gets before PATE's privacy budget is spent (Wang §4.1).

    Returns the largest ``M`` with ``attack_privacy_cost(hist, σ, M) ≤ budget`` (the query
    whose answer would push the cost past the budget is refused), capped at
    ``max_queries``. The cost is non-decreasing in ``M`` (a minimum over orders of
    non-decreasing functions), so an exponential then binary search finds ``M`` exactly.
    The two attackers of §4.1: ``budget=1.97, δ=1e-5`` (MNIST) or ``4.96, 1e-6`` (SVHN)
    with ``σ = 40`` and ``max_queries=None`` (no hard limit), and the hard limit
    ``budget=inf, max_queries=10**4``.

    Args:
        hist: the true histogram ``(C,)``.
        sigma: noise standard deviation.
        budget: privacy budget ``ε`` > 0 (``math.inf`` for none).
        delta: δ in (0, 1).
        max_queries: hard query limit (default 10^4), or ``None`` for none — the search then
            stops at 10^15 answers, returned if even those stay within the budget (a
            histogram so consensual that its data-dependent cost vanishes).
        orders: Rényi orders.
        method: ``"classic"``, ``"balle2020"`` or ``None`` (the accountant's own).
        accountant, threshold, sigma_threshold: as in :func:`attack_privacy_cost`. With
            ``"confident_gnmax"`` the budget counts submitted queries; about
            ``M · Pr[answered]`` of them return a label (:func:`answered_queries`).

    Returns:
        ``M`` ≥ 0.

    Raises:
        ValueError: on a bad budget, limit, or any input :func:`attack_privacy_cost` rejects.
    """
    b = float(budget)
    if math.isnan(b) or b <= 0:
        raise ValueError(f"budget must be > 0, got {budget!r}")
    cap = 10**15 if max_queries is None else check_positive_int(max_queries, "max_queries")

    def cost(k: int) -> float:
        return attack_privacy_cost(
            hist, sigma, k, delta, orders, method, accountant=accountant, threshold=threshold, sigma_threshold=sigma_threshold
        )

    if math.isinf(b) or cost(cap) <= b:
        cost(1)  # validate the inputs even when the budget cannot bind
        return int(cap)
    lo, hi = 0, 1  # invariant: cost(lo) <= b < cost(hi)
    while cost(hi) <= b:
        lo, hi = hi, min(2 * hi, cap)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if cost(mid) <= b:
            lo = mid
        else:
            hi = mid
    return int(lo)
