"""Rényi divergences of discrete distributions, their 2-cut and k-cut, and the exact RDP
of the Gaussian noisy argmax between two histograms.

All sums are taken in log space. Conventions (for orders α > 1):

* terms with ``p_i = 0`` contribute nothing;
* ``p_i > 0`` where ``q_i = 0`` makes the divergence ``+inf``;
* ``α = inf`` gives the max-divergence ``log max_i p_i / q_i`` over the support of ``p``.
"""

from __future__ import annotations

import numpy as np
from ._logsumexp import logsumexp  # scipy.special.logsumexp, the same numbers (issue 30 §1)

from ._validation import as_distribution, as_orders, check_positive_int, check_sigma, as_histograms
from .noisy_argmax import log_class_probabilities

__all__ = [
    "renyi_divergence",
    "renyi_divergence_from_log",
    "renyi_divergence_from_llr_samples",
    "bernoulli_renyi_divergence",
    "two_cut",
    "k_cut",
    "exact_rdp",
    "poisson_binomial_pmf",
]


def renyi_divergence_from_log(logp: np.ndarray, logq: np.ndarray, orders) -> np.ndarray:
    """Rényi divergence ``D_α(P||Q)`` from log-probabilities (last axis = outcomes).

    ``D_α(P||Q) = 1/(α−1) · log Σ_i p_i^α q_i^{1−α}`` (Chadha et al. 2024, §2.1).

    Args:
        logp, logq: arrays of log-probabilities, broadcastable, outcomes on the last axis
            (``-inf`` for a zero probability).
        orders: orders α > 1 (``np.inf`` allowed).

    Returns:
        Array of shape ``broadcast(logp, logq).shape[:-1] + (len(orders),)``; never below 0
        (rounding below zero is clipped).
    """
    a = as_orders(orders)
    logp = np.asarray(logp, dtype=np.float64)
    logq = np.asarray(logq, dtype=np.float64)
    logp, logq = np.broadcast_arrays(logp, logq)
    support = np.isfinite(logp)
    # log-ratio on the support of p; +inf where q vanishes there.
    with np.errstate(invalid="ignore"):
        ratio = np.where(support, logp - logq, -np.inf)
    out = np.empty(logp.shape[:-1] + (a.size,))
    # D_α = 1/(α−1) log E_P[(p/q)^(α−1)]; dividing by Σ p removes the rounding of the
    # normalisation, so that identical inputs give exactly 0.
    log_mass = logsumexp(np.where(support, logp, -np.inf), axis=-1)
    for j, alpha in enumerate(a):
        if np.isinf(alpha):
            val = np.max(ratio, axis=-1)
        else:
            with np.errstate(invalid="ignore"):
                terms = np.where(support, logp + (alpha - 1.0) * ratio, -np.inf)
            val = (logsumexp(terms, axis=-1) - log_mass) / (alpha - 1.0)
        out[..., j] = val
    return np.maximum(out, 0.0)


def renyi_divergence(p, q, orders) -> np.ndarray:
    """Rényi divergence ``D_α(P||Q)`` of discrete distributions for an array of orders.

    Args:
        p, q: probability vectors on the last axis (each sums to 1 within 1e-9), same shape
            or broadcastable.
        orders: orders α > 1 (``np.inf`` allowed).

    Returns:
        Array ``(..., len(orders))``.

    Raises:
        ValueError: if an order is ≤ 1, an entry is negative or non-finite, a vector does
            not sum to 1, or the shapes differ on the last axis.

    Example:
        >>> float(renyi_divergence([0.5, 0.5], [0.5, 0.5], [2.0])[0])
        0.0
    """
    p = as_distribution(p, "p")
    q = as_distribution(q, "q")
    if p.shape[-1] != q.shape[-1]:
        raise ValueError(f"p and q must have the same number of outcomes, got {p.shape[-1]} and {q.shape[-1]}")
    with np.errstate(divide="ignore"):
        return renyi_divergence_from_log(np.log(p), np.log(q), orders)


def renyi_divergence_from_llr_samples(llr, orders) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo ``D_α(P‖Q)`` from log-likelihood ratios ``log P(x)/Q(x)`` of draws ``x ~ P``.

    ``D_α = log E_P[exp((α − 1)·LLR)] / (α − 1)`` (Rényi 1961; the moment form), the mean taken
    over the draws in log space, clipped at 0, with a delta-method standard error
    ``sd(e) / (sqrt(n)·mean(e)·(α − 1))`` of ``e = exp((α − 1)·LLR − max)``. An estimate, not a
    bound: the heavy right tail of ``e`` makes it biased low at large orders.

    Args:
        llr: ``(n,)`` log-likelihood ratios, ``n ≥ 2`` draws from ``P``.
        orders: orders ``α > 1``.

    Returns:
        ``(estimate, standard_error)``, each of shape ``(len(orders),)``.

    Raises:
        ValueError: fewer than two draws, or bad orders.
    """
    x = np.asarray(llr, dtype=np.float64).reshape(-1)
    if x.size < 2:
        raise ValueError(f"llr needs at least 2 draws, got {x.size}")
    a = as_orders(orders)
    est = np.empty(a.size)
    se = np.empty(a.size)
    for j, alpha in enumerate(a):
        z = (alpha - 1.0) * x
        top = z.max()
        e = np.exp(z - top)
        mean = e.mean()
        est[j] = max((top + np.log(mean)) / (alpha - 1.0), 0.0)
        se[j] = e.std(ddof=1) / np.sqrt(x.size) / mean / (alpha - 1.0)
    return est, se


def bernoulli_renyi_divergence(p1, p2, orders) -> np.ndarray:
    """``D_α(Bern(p1) || Bern(p2))`` broadcast over ``p1, p2`` (last axis: orders).

    This is the quantity inside the sup of the 2-cut (Chadha et al. 2024, Eq. (3)).
    """
    p1 = np.asarray(p1, dtype=np.float64)[..., None]
    p2 = np.asarray(p2, dtype=np.float64)[..., None]
    with np.errstate(divide="ignore"):
        logp = np.log(np.concatenate([p1, 1.0 - p1], axis=-1))
        logq = np.log(np.concatenate([p2, 1.0 - p2], axis=-1))
    return renyi_divergence_from_log(logp, logq, orders)


def _lr_order(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        lr = np.where(p > 0, np.log(p) - np.log(q), -np.inf)
    return np.argsort(-lr, kind="stable")


def two_cut(p, q, orders, return_sets: bool = False):
    """The 2-cut ``sup_O D_α(Bern(P(O)) || Bern(Q(O)))`` of two discrete distributions.

    Chadha et al. 2024, Eq. (3) (after Balle et al. 2020). The supremum over all subsets is
    attained by a likelihood-ratio set ``O = {i : p_i/q_i > t}`` (Tsitsiklis 1993: likelihood
    ratio quantizers are optimal for every f-divergence, and ``Σ p^α q^{1−α}`` is one), so
    the search runs over the ``C − 1`` prefixes of the outcomes sorted by ``p_i/q_i``.

    Args:
        p, q: probability vectors of the same length ``C ≥ 2``.
        orders: orders α > 1.
        return_sets: also return, per order, the best set as a boolean mask.

    Returns:
        ``(len(orders),)`` array, and with ``return_sets`` a ``(len(orders), C)`` mask.
    """
    p = as_distribution(p, "p")
    q = as_distribution(q, "q")
    if p.ndim != 1 or p.shape != q.shape:
        raise ValueError(f"p and q must be 1-D of the same length, got shapes {p.shape} and {q.shape}")
    a = as_orders(orders)
    order = _lr_order(p, q)
    cp = np.cumsum(p[order])[:-1]
    cq = np.cumsum(q[order])[:-1]
    if cp.size == 0:
        vals = np.zeros((1, a.size))
    else:
        vals = bernoulli_renyi_divergence(np.clip(cp, 0, 1), np.clip(cq, 0, 1), a)  # (C-1, A)
    best = np.argmax(vals, axis=0)
    out = vals[best, np.arange(a.size)]
    if not return_sets:
        return out
    masks = np.zeros((a.size, p.size), dtype=bool)
    for j, b in enumerate(best):
        masks[j, order[: b + 1]] = True
    return out, masks


def k_cut(p, q, orders, k: int) -> np.ndarray:
    """The k-cut of the Rényi divergence (Chadha et al. 2024, App. B, Eq. (5)).

    ``sup over partitions O_1..O_k of (1/(α−1)) log Σ_i P(O_i)^α Q(O_i)^{1−α}``. As for the
    2-cut, an optimal partition is a likelihood-ratio quantizer (Tsitsiklis 1993): cells are
    contiguous in the likelihood-ratio order, found by dynamic programming per order. With
    ``k ≥ C`` (the number of outcomes) it equals the Rényi divergence.

    Args:
        p, q: probability vectors of the same length.
        orders: orders α > 1 (finite).
        k: number of cells, ≥ 2.
    """
    p = as_distribution(p, "p")
    q = as_distribution(q, "q")
    if p.ndim != 1 or p.shape != q.shape:
        raise ValueError(f"p and q must be 1-D of the same length, got shapes {p.shape} and {q.shape}")
    a = as_orders(orders)
    k = check_positive_int(k, "k", minimum=2)
    c = p.size
    if k >= c:
        return renyi_divergence(p, q, a)
    if np.any(np.isinf(a)):
        raise ValueError("k_cut needs finite orders; the max-divergence has no k-cut form here")
    order = _lr_order(p, q)
    P = np.concatenate([[0.0], np.cumsum(p[order])])
    Q = np.concatenate([[0.0], np.cumsum(q[order])])
    out = np.empty(a.size)
    ii, jj = np.triu_indices(c + 1, k=1)  # segment [i, j)
    seg_p = np.clip(P[jj] - P[ii], 0.0, 1.0)
    seg_q = np.clip(Q[jj] - Q[ii], 0.0, 1.0)
    for t, alpha in enumerate(a):
        with np.errstate(divide="ignore", invalid="ignore"):
            logterm = np.where(seg_p > 0, alpha * np.log(seg_p) + (1 - alpha) * np.log(seg_q), -np.inf)
        W = np.full((c + 1, c + 1), -np.inf)
        W[ii, jj] = logterm
        # best[m][j]: best log-sum covering outcomes [0, j) with m cells.
        best = W[0].copy()
        for _ in range(k - 1):
            best = np.maximum(best, logsumexp_pairs(best, W))
        out[t] = best[c] / (alpha - 1.0)
    return np.maximum(out, 0.0)


def logsumexp_pairs(best: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``max_i log(exp(best[i]) + exp(W[i, j]))`` over split points ``i``, for every ``j``."""
    comb = np.logaddexp(best[:, None], W)
    comb[~np.isfinite(W)] = -np.inf
    return comb.max(axis=0)


def exact_rdp(h0, h1, sigma, orders) -> np.ndarray:
    """Exact RDP of the Gaussian noisy argmax between two histograms.

    ``max(D_α(M(H_0) || M(H_1)), D_α(M(H_1) || M(H_0)))`` where ``M(H)`` is the output
    distribution of ``argmax(H + N(0, σ² I))`` computed exactly with Chadha et al. 2024,
    Eq. (4) (:func:`ppaudit.noisy_argmax.log_class_probabilities`). The larger direction is
    taken because RDP must hold for both orderings of a neighbouring pair (Chadha §4.2).

    Args:
        h0, h1: histograms of shape ``(C,)`` or ``(N, C)`` (pairs row by row).
        sigma: noise standard deviation, > 0.
        orders: orders α > 1.

    Returns:
        ``(len(orders),)`` or ``(N, len(orders))``.

    Example:
        >>> r = exact_rdp([14, 12, 10, 8, 6], [13, 13, 10, 8, 6], 2.0, [2.0, 10.0])
        >>> bool(r[1] > r[0] > 0)
        True
    """
    s = check_sigma(sigma)
    a = as_orders(orders)
    x0, squeeze0 = as_histograms(h0, "h0")
    x1, squeeze1 = as_histograms(h1, "h1")
    if x0.shape != x1.shape:
        raise ValueError(f"h0 and h1 must have the same shape, got {np.shape(h0)} and {np.shape(h1)}")
    l0 = log_class_probabilities(x0, s)
    l1 = log_class_probabilities(x1, s)
    out = np.maximum(renyi_divergence_from_log(l0, l1, a), renyi_divergence_from_log(l1, l0, a))
    return out[0] if (squeeze0 and squeeze1) else out


def poisson_binomial_pmf(probs) -> np.ndarray:
    """Laws of the number of successes of independent Bernoullis, row-wise (Poisson-binomial).

    Exact recursion over the Bernoullis (one convolution with ``(1 − p_j, p_j)`` each). For one
    law whose ``Q`` probabilities take few distinct values (a repeated answer's bound repeated,
    as :func:`ppaudit.audit.binomial_transcript.composed_event_epsilon` passes them), the same law
    as the convolution of one binomial ``Bin(m_v, p_v)`` per distinct value (scipy's ``binom.pmf``):
    ``O(Q·u)`` operations for ``u`` distinct values instead of ``O(Q²)``, equal up to rounding
    (a test checks it against the recursion).

    Args:
        probs: ``(k, Q)`` success probabilities in ``[0, 1]`` (``(Q,)`` for one law).

    Returns:
        ``(k, Q + 1)`` probability mass functions over ``0 … Q`` (``(Q + 1,)`` for one law).
    """
    p = np.asarray(probs, dtype=np.float64)
    one = p.ndim == 1
    p = np.atleast_2d(p)
    if p.ndim != 2 or np.any(~((p >= 0) & (p <= 1))):
        raise ValueError("probs must be a (k, Q) array of probabilities in [0, 1]")
    k, nq = p.shape
    if one and nq > 64:
        values, mult = np.unique(p[0], return_counts=True)
        if values.size * 8 <= nq:  # few distinct values: a product of binomials
            from scipy.stats import binom

            out = np.ones(1)
            for v, m in zip(values, mult):
                out = np.convolve(out, binom.pmf(np.arange(m + 1), m, v))
            return np.clip(out, 0.0, 1.0)
    pmf = np.zeros((k, nq + 1))
    pmf[:, 0] = 1.0
    for j in range(nq):
        pj = p[:, j : j + 1]
        pmf[:, 1 : j + 2] = pmf[:, 1 : j + 2] * (1.0 - pj) + pmf[:, : j + 1] * pj
        pmf[:, 0] *= 1.0 - pj[:, 0]
    return pmf[0] if one else pmf
