"""Inclusion laws of Private-kNN's subsampled top-k (Chadha et al. 2024, §5.3 and §6): ν(r), λ(r), vote distributions and E(x)."""

from __future__ import annotations

import math

import numpy as np

from ..._validation import check_positive_int, check_probability
from .neighbors import Neighbors, _as_features, _as_labels, _as_ranks, _tie_tolerance, squared_distances
from ..._lazy import LazyImport

binom = LazyImport("scipy.stats", "binom")  # scipy.stats costs ≈ 1 s to import; loaded on first use

__all__ = [
    "log_inclusion_probability",
    "inclusion_probability",
    "log_last_probability",
    "short_subsample_probability",
    "num_neighbors_needed",
    "vote_distributions",
    "simulate_vote_distributions",
    "expected_inclusions_train",
    "expected_inclusions_points",
]

#: Below ``exp(LOGCDF_FLOOR)`` scipy's ``binom.logcdf`` (= log of the cdf) loses precision.
LOGCDF_FLOOR = -600.0


def _check_k_gamma(k, gamma) -> tuple[int, float]:
    kk = check_positive_int(k, "k")
    g = check_probability(gamma, "gamma", open_right=False)
    return kk, g


# ----------------------------------------------------------------------------- ν(r) and λ(r)


def _lower_tail_logcdf(x: int, n: np.ndarray, p: float, chunk: int = 4096) -> np.ndarray:
    """``log P(Bin(n, p) ≤ x)`` for ``x < n·p`` deep in the lower tail.

    ``cdf(x) = pmf(x)·(1 + Σ_{t=1}^{x} Π_{l=1}^{t} ρ_l)``, ``ρ_l = pmf(x−l)/pmf(x−l+1) =
    (x−l+1)/(n−x+l)·(1−p)/p < 1`` there: a sum of positive terms, no cancellation.
    """
    n = np.asarray(n, dtype=np.float64)
    logpmf = binom.logpmf(x, n, p)
    if x == 0:
        return logpmf
    ll = np.arange(1, x + 1, dtype=np.float64)
    odds = (1.0 - p) / p
    out = np.empty(n.size)
    for s in range(0, n.size, chunk):
        nn = n[s : s + chunk, None]
        ratios = (x - ll + 1.0)[None, :] / (nn - x + ll[None, :]) * odds
        out[s : s + chunk] = np.log1p(np.cumprod(ratios, axis=1).sum(axis=1))
    return logpmf + out


def _binom_logcdf(x: int, n: np.ndarray, p: float) -> np.ndarray:
    """``log P(Bin(n, p) ≤ x)`` for integer arrays ``n ≥ 0``, accurate at any depth."""
    n = np.asarray(n, dtype=np.int64)
    out = np.minimum(np.asarray(binom.logcdf(x, n, p), dtype=np.float64), 0.0)
    out[n <= x] = 0.0
    deep = ~(out > LOGCDF_FLOOR)
    if np.any(deep):
        out[deep] = _lower_tail_logcdf(x, n[deep], p)
    return out


def log_inclusion_probability(ranks, k: int, gamma: float) -> np.ndarray:
    """``log ν(r) = log γ + log P(Bin(r − 1, γ) ≤ k − 1)`` (Chadha et al. 2024, §6, App. D.3).

    The probability that the ``r``-th nearest training point is among the ``k`` nearest of a
    Poisson(``γ``) subsample; equals ``log γ`` for ``r ≤ k``. Evaluated once per distinct
    rank (a dense table up to the largest rank when that is cheaper), stable for ranks up
    to any dataset size (module docstring).

    Args:
        ranks: integer array of ranks ``≥ 1`` (any shape).
        k: number of neighbours.
        gamma: subsampling rate in ``(0, 1]``.

    Returns:
        float64 array of the shape of ``ranks``.

    Example:
        >>> import numpy as np
        >>> bool(np.isclose(np.exp(log_inclusion_probability([1, 3], 3, 0.5)), 0.5).all())
        True
    """
    kk, g = _check_k_gamma(k, gamma)
    r = _as_ranks(ranks)
    if r.size == 0:
        return np.zeros(r.shape)
    hi = int(r.max())
    if hi <= max(1 << 16, r.size):  # dense table over 1..max rank: one lookup, no sort
        table = math.log(g) + _binom_logcdf(kk - 1, np.arange(hi, dtype=np.int64), g)
        return table[r - 1]
    uniq, inv = np.unique(r, return_inverse=True)
    vals = math.log(g) + _binom_logcdf(kk - 1, uniq - 1, g)
    return vals[inv].reshape(r.shape)


def inclusion_probability(ranks, k: int, gamma: float) -> np.ndarray:
    """``ν(r)`` (Chadha et al. 2024, §6): ``exp`` of :func:`log_inclusion_probability`."""
    return np.exp(log_inclusion_probability(ranks, k, gamma))


def log_last_probability(ranks, k: int, gamma: float) -> np.ndarray:
    """``log λ(r) = log γ + log P(Bin(r − 1, γ) = k − 1)``: the ``r``-th nearest point is the
    ``k``-th nearest of the subsample (the displaced vote of §6). ``−inf`` for ``r < k``."""
    kk, g = _check_k_gamma(k, gamma)
    r = _as_ranks(ranks)
    if r.size == 0:
        return np.zeros(r.shape)
    hi = int(r.max())
    if hi <= max(1 << 16, r.size):
        with np.errstate(divide="ignore"):
            table = math.log(g) + np.asarray(binom.logpmf(kk - 1, np.arange(hi), g), dtype=np.float64)
        return table[r - 1]
    uniq, inv = np.unique(r, return_inverse=True)
    with np.errstate(divide="ignore"):
        vals = math.log(g) + np.asarray(binom.logpmf(kk - 1, uniq - 1, g), dtype=np.float64)
    return vals[inv].reshape(r.shape)


def short_subsample_probability(num_train: int, k: int, gamma: float) -> float:
    """``P(Bin(n, γ) < k)``: the subsample holds fewer than ``k`` points.

    The model ``Mult(k, P_q)`` assumes ``k`` votes; this is the probability that the real
    mechanism has fewer. Negligible when ``nγ ≫ k``.
    """
    n = check_positive_int(num_train, "num_train")
    kk, g = _check_k_gamma(k, gamma)
    return float(binom.cdf(kk - 1, n, g))


def num_neighbors_needed(num_train: int, k: int, gamma: float, tail_tol: float = 1e-12) -> int:
    """Smallest ``J`` with ``(n − J)·ν(J + 1) ≤ tail_tol`` (or ``n``).

    Since ``ν`` decreases in the rank, ``(n − J)·ν(J + 1)`` bounds ``Σ_{j>J} ν(j)`` and
    ``Σ_{j>J} λ(j)``: the mass of ``P_q`` and ``P^k_q`` beyond the ``J``-th neighbour, and the
    contribution of ranks beyond ``J`` to ``E(x)`` per query. For ``k = 200``, ``γ = 0.2``
    this is ~1,600 whatever ``n``.
    """
    n = check_positive_int(num_train, "num_train")
    kk, g = _check_k_gamma(k, gamma)
    tol = float(tail_tol)
    if not (tol > 0 and np.isfinite(tol)):
        raise ValueError(f"tail_tol must be > 0, got {tail_tol!r}")
    j = np.arange(1, n + 1)
    lnu_next = log_inclusion_probability(np.minimum(j + 1, n + 1), kk, g)
    with np.errstate(divide="ignore"):
        bound = np.log(np.maximum(n - j, 0)) + lnu_next
    ok = np.flatnonzero(bound <= math.log(tol))
    return int(j[ok[0]]) if ok.size else n


def vote_distributions(neighbor_labels, k: int, gamma: float, num_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``P_q`` and ``P^k_q`` from the labels of the sorted neighbours (§6).

    ``P_q(c) ∝ Σ_{j≤J} ν(j)·1{y_(j) = c}``, ``P^k_q(c) ∝ Σ_{j≤J} λ(j)·1{y_(j) = c}``
    (module docstring), normalised over the ``J`` columns given. With ``J`` from
    :func:`num_neighbors_needed` (or all ``n``) the neglected mass is ≤ ``tail_tol``.

    Args:
        neighbor_labels: ``(n_q, J)`` labels of each query's neighbours, nearest first.
        k: number of neighbours.
        gamma: subsampling rate.
        num_classes: ``C``.

    Returns:
        ``(P, P_last)``, each ``(n_q, C)`` with rows summing to 1.

    Raises:
        ValueError: if ``J < k`` (the ``k``-th neighbour is never reached) or on bad labels.
    """
    kk, g = _check_k_gamma(k, gamma)
    c = check_positive_int(num_classes, "num_classes")
    y = _as_labels(np.atleast_2d(neighbor_labels), c, "neighbor_labels")
    nq, j = y.shape
    if j < kk:
        raise ValueError(f"need at least k = {kk} neighbours per query, got J = {j}")
    pos = np.arange(1, j + 1)
    w_in = np.exp(log_inclusion_probability(pos, kk, g))
    w_last = np.exp(log_last_probability(pos, kk, g))
    cell = (np.arange(nq)[:, None] * c + y).ravel()  # (query, class) bins
    P = np.bincount(cell, weights=np.tile(w_in, nq), minlength=nq * c).reshape(nq, c)
    L = np.bincount(cell, weights=np.tile(w_last, nq), minlength=nq * c).reshape(nq, c)
    return P / w_in.sum(), L / w_last.sum()


def simulate_vote_distributions(
    neighbor_labels,
    k: int,
    gamma: float,
    num_classes: int,
    draws: int,
    rng=None,
    chunk_size: int = 2048,
) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo ``P_q`` and ``P^k_q``: draw the Poisson subsample of the sorted neighbours.

    Per draw, each of the ``J`` neighbours is kept with probability ``γ``; the first ``k``
    kept ones are the top-``k`` and the ``k``-th kept one is the last neighbour. ``P_q`` =
    label frequencies over all top-``k`` members of all draws; ``P^k_q`` = label frequencies
    of the ``k``-th members (draws with fewer than ``k`` kept points have none). This is the
    definition that :func:`vote_distributions` computes exactly.

    Returns:
        ``(P, P_last)``, each ``(n_q, C)``.
    """
    kk, g = _check_k_gamma(k, gamma)
    c = check_positive_int(num_classes, "num_classes")
    m = check_positive_int(draws, "draws")
    cs = check_positive_int(chunk_size, "chunk_size")
    y = _as_labels(np.atleast_2d(neighbor_labels), c, "neighbor_labels")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    nq, j = y.shape
    P = np.zeros((nq, c))
    L = np.zeros((nq, c))
    eye = np.eye(c)
    for qi in range(nq):
        onehot = eye[y[qi]]  # (J, C)
        done = 0
        while done < m:
            n = min(cs, m - done)
            kept = gen.random((n, j)) < g
            rank_in_sample = np.cumsum(kept, axis=1)
            top = kept & (rank_in_sample <= kk)
            last = kept & (rank_in_sample == kk)
            P[qi] += top.sum(axis=0) @ onehot
            L[qi] += last.sum(axis=0) @ onehot
            done += n
    with np.errstate(invalid="ignore"):
        return P / P.sum(axis=1, keepdims=True), L / L.sum(axis=1, keepdims=True)


# ----------------------------------------------------------------------------- E(x)


def expected_inclusions_train(neighbors: Neighbors, k: int, gamma: float, duplicate: bool = True) -> np.ndarray:
    """``E(x_j) = Σ_q P(x' in top-k for q)`` for a poison copying training point ``x_j`` (App. D.3).

    A copy of ``x_j`` ties with ``x_j`` and ranks just behind it (ties against the poison):
    ``r_q = pos_q(j) + 1`` (``duplicate=True``); ``duplicate=False`` uses ``r_q = pos_q(j)``,
    the contribution of ``x_j`` itself. Computed in one ``bincount`` over the ``J`` nearest
    neighbours of every query; ranks beyond ``J`` add at most ``n_Q·(n − J)·ν(J+1)`` in total
    (see :func:`num_neighbors_needed`).

    Returns:
        ``(n,)`` expected number of queries whose top-``k`` contains the poison.
    """
    kk, g = _check_k_gamma(k, gamma)
    nq, j = neighbors.indices.shape
    pos = np.arange(1, j + 1) + (1 if duplicate else 0)
    w = np.exp(log_inclusion_probability(pos, kk, g))
    return np.bincount(neighbors.indices.ravel(), weights=np.tile(w, nq), minlength=neighbors.num_train)


def expected_inclusions_points(neighbors: Neighbors, query_features, points, k: int, gamma: float, chunk_size: int = 256) -> np.ndarray:
    """``E(x)`` for points outside the training set (test points, crafted embeddings; App. D.3).

    ``E(x) = Σ_q ν(r_q(x))`` with ``r_q(x) = 1 + #{j ≤ J : d_q(j) ≤ ‖q − x‖²}`` found by
    binary search in the sorted neighbour distances; a point beyond the ``J``-th neighbour
    contributes ``ν(r) ≤ ν(J+1)`` (≤ ``tail_tol/(n−J)``), which is dropped.

    Args:
        neighbors: :func:`nearest_neighbors` of the queries.
        query_features: ``(n_Q, d)`` the same queries.
        points: ``(m, d)`` candidates.
        k, gamma: as everywhere.
        chunk_size: queries per distance block.

    Returns:
        ``(m,)``.
    """
    kk, g = _check_k_gamma(k, gamma)
    q = _as_features(query_features, "query_features")
    p = _as_features(points, "points")
    nq, j = neighbors.indices.shape
    if q.shape[0] != nq:
        raise ValueError(f"query_features has {q.shape[0]} rows but neighbors has {nq} queries")
    cs = check_positive_int(chunk_size, "chunk_size")
    table = np.exp(log_inclusion_probability(np.arange(1, j + 2), kk, g))
    table[j] = 0.0  # beyond the J-th neighbour: dropped (≤ tail_tol)
    total = np.zeros(p.shape[0])
    for start in range(0, nq, cs):
        dp = squared_distances(q[start : start + cs], p) + _tie_tolerance(q[start : start + cs], p)
        for r in range(dp.shape[0]):
            rank = 1 + np.searchsorted(neighbors.sq_distances[start + r], dp[r], side="right")
            total += table[rank - 1]
    return total
