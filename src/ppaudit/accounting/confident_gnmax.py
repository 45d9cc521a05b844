"""Data-dependent RDP of Confident-GNMax (Papernot et al. 2018, Alg. 1, §4 and App. B–C).

Confident-GNMax answers a query with histogram ``n`` in two steps:

1. **threshold check** — release whether ``max_j n_j + N(0, σ₁²) ≥ T``; if not, the query is
   *not answered* (PATE returns no label, ⊥);
2. **GNMax** — if the check passed, release ``argmax_j (n_j + N(0, σ₂²))``.

PATE's accountant charges, per query, the data-dependent RDP of the check (its input
``max_j n_j`` has sensitivity 1, so it is a Gaussian mechanism with ``√2·σ₁`` in GNMax's
units; Papernot et al. 2018, §4.2 and Thm 6 with ``q = min(Pr[answered], Pr[not answered])``)
plus, in expectation over the check, ``Pr[answered] ·`` the data-dependent RDP of GNMax
(Prop. 7 + Thm 6) — the "expected cost" of the authors' ``analysis.py``
(``rdp_cum += rdp_step1 + rdp_step2 * q_step1``). This is the accounting behind the budgets
Wang et al. 2022 attack (§4.1: 1.97 at δ = 1e-5 for MNIST with T = 200, σ₁ = 150,
σ₂ = 40; 4.96 at δ = 1e-6 for SVHN with T = 300, σ₁ = 200, σ₂ = 40), converted to
``(ε, δ)`` with the improved conversion (:func:`ppaudit.accounting.rdp_to_dp`,
``method="balle2020"``).

Reference implementation: tensorflow/privacy ``research/pate_2018/core.py``
(``compute_logpr_answered``, ``compute_rdp_threshold``, ``compute_logq_gaussian``,
``rdp_gaussian``); tested against that code's outputs, recorded with their inputs in
``tests/reference/pate2018_reference_values.json``.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import as_histograms, as_orders, check_sigma
from .gnmax import _log1mexp, _norm_logsf, _rdp_from_log_q, gnmax_rdp_data_dependent

__all__ = [
    "confident_gnmax_log_pr_answered",
    "confident_gnmax_threshold_rdp",
    "confident_gnmax_rdp",
]


def _check_threshold(threshold) -> float:
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}") from None
    if not math.isfinite(t):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    return t


def confident_gnmax_log_pr_answered(counts, threshold, sigma_threshold) -> np.ndarray:
    """``log Pr[max_j n_j + N(0, σ₁²) ≥ T]``: the query is answered (Papernot et al. 2018, Alg. 1).

    The reference implementation (``compute_logpr_answered``) rounds ``max_j n_j`` to an
    integer (for its smooth-sensitivity analysis of non-integer votes); we use the maximum
    as it is, which is the same for integer vote histograms.

    Args:
        counts: histogram(s) ``(C,)`` or ``(N, C)``.
        threshold: the threshold ``T`` (any finite number).
        sigma_threshold: ``σ₁`` > 0, the noise of the check.

    Returns:
        Scalar array or ``(N,)`` of log-probabilities ``≤ 0``.

    Raises:
        ValueError: on a bad histogram, threshold or σ₁.
    """
    t = _check_threshold(threshold)
    s1 = check_sigma(sigma_threshold, "sigma_threshold")
    h, squeeze = as_histograms(counts, "counts")
    out = _norm_logsf(t - h.max(axis=1), s1)
    return out[0] if squeeze else out


def confident_gnmax_threshold_rdp(counts, threshold, sigma_threshold, orders) -> np.ndarray:
    """Data-dependent RDP of the threshold check alone (Papernot et al. 2018, §4.2 + Thm 6).

    The check is a Gaussian mechanism on ``max_j n_j`` (sensitivity 1) with two outcomes;
    Thm 6 applies with ``q = min(Pr[answered], Pr[not answered])`` and noise ``√2·σ₁``
    (the ``√2`` converts from GNMax's sensitivity-2 normalisation), never above the
    data-independent ``α / (2σ₁²)``.

    Args:
        counts: histogram(s) ``(C,)`` or ``(N, C)``.
        threshold: ``T``.
        sigma_threshold: ``σ₁`` > 0.
        orders: orders α > 1.

    Returns:
        ``(len(orders),)`` or ``(N, len(orders))``.

    Raises:
        ValueError: on a bad histogram, threshold, σ₁ or orders.
    """
    a = as_orders(orders)
    s1 = check_sigma(sigma_threshold, "sigma_threshold")
    h, squeeze = as_histograms(counts, "counts")
    logpr = confident_gnmax_log_pr_answered(h, threshold, s1)
    logq = np.minimum(logpr, _log1mexp(logpr))
    out = np.stack([_rdp_from_log_q(float(lq), math.sqrt(2.0) * s1, a) for lq in logq])
    return out[0] if squeeze else out


def confident_gnmax_rdp(counts, threshold, sigma_threshold, sigma, orders) -> np.ndarray:
    """Expected per-query data-dependent RDP of Confident-GNMax (Papernot et al. 2018, §4, App.).

    ``ε(α) = ε_check(α) + Pr[answered] · ε_GNMax(α)`` where ``ε_check`` is
    :func:`confident_gnmax_threshold_rdp` (every query pays for the check) and ``ε_GNMax`` is
    the data-dependent GNMax RDP at ``σ₂`` (:func:`ppaudit.accounting.gnmax_rdp_data_dependent`,
    Prop. 7 + Thm 6), weighted by the probability that the check passes — the expected cost
    PATE's accountant composes over queries (the authors' ``analysis.py``; Papernot et al.
    2018 report the expected ε of their students this way). Compose ``M`` queries by
    summing (``M · ε(α)`` for one repeated query) and convert with
    :func:`ppaudit.accounting.rdp_to_dp`.

    Unanswered queries: a query that fails the check returns *no label* (⊥). An attacker
    repeating one query ``M`` times (Wang et al. 2022, §3.2) therefore receives
    ``Binomial(M, Pr[answered])`` GNMax labels — each distributed as the GNMax output
    ``Q(n)`` at ``σ₂``, because the check's noise is independent of GNMax's — and learns
    nothing beyond ``max_j n_j`` from the ⊥ answers, which our attack ignores; every
    submitted query, answered or not, is charged ``ε_check``.

    Args:
        counts: vote histogram(s) ``(C,)`` or ``(N, C)``.
        threshold: the threshold ``T`` of the check (200 for MNIST, 300 for SVHN in
            Papernot et al. 2018, Table 2, with 250 teachers).
        sigma_threshold: ``σ₁`` > 0 (150 for MNIST, 200 for SVHN).
        sigma: ``σ₂`` > 0, the GNMax noise (40 for both).
        orders: Rényi orders α > 1 (the authors use orders up to several hundred; use ≥ 1000
            for histograms with a tiny data-dependent cost).

    Returns:
        ``(len(orders),)`` for one histogram, ``(N, len(orders))`` for several.

    Raises:
        ValueError: on a bad histogram, threshold, σ₁, σ₂ or orders.

    Example:
        >>> import numpy as np
        >>> rdp = confident_gnmax_rdp([250, 0, 0, 0, 0, 0, 0, 0, 0, 0], 200, 150, 40, [2.0, 32.0])
        >>> bool(np.all(rdp > 0) and np.all(rdp <= np.array([2.0, 32.0]) * (1 / (2 * 150**2) + 1 / 40**2)))
        True
    """
    a = as_orders(orders)
    s2 = check_sigma(sigma, "sigma")
    h, squeeze = as_histograms(counts, "counts")
    check = np.atleast_2d(confident_gnmax_threshold_rdp(h, threshold, sigma_threshold, a))
    pr = np.exp(np.atleast_1d(confident_gnmax_log_pr_answered(h, threshold, sigma_threshold)))
    gnmax = np.atleast_2d(gnmax_rdp_data_dependent(h, s2, a))
    out = check + pr[:, None] * gnmax
    return out[0] if squeeze else out
