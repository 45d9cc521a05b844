"""Private-kNN: exact nearest neighbours, ranks, and the vote model of Chadha et al. 2024, §6.

Private-kNN (Zhu et al. 2020) treats every training point as a teacher voting for its own
label. For a query ``q`` the training set is Poisson-subsampled (each point kept
independently with probability ``γ``), the ``k`` nearest kept points vote, and the noisy
argmax of their label histogram is released.

**Neighbours and ranks.** :func:`nearest_neighbors` finds the exact ``J`` nearest training
points of every query with a faiss ``IndexFlatL2`` (exhaustive search, squared Euclidean
distance) and then re-sorts them by their float64 squared distance (ties by index), so that
every rank in this module is defined by one distance, :func:`squared_distances` in float64.
One metric serves both encoders: for unit-normalised features (the text encoders)
``‖q − x‖² = 2 − 2⟨q, x⟩``, so L2 and inner-product (cosine) search give the same order;
for the image features (not normalised) L2 is the metric of Zhu et al.

The rank of a point ``x'`` added to the training set ``S`` (the poison) for query ``q`` is
``r_q = 1 + #{x_j ∈ S : ‖q − x_j‖ ≤ ‖q − x'‖}`` — ties are broken *against* the poison (the
careful reading: the poison never gains from a tie; a duplicate of a training point ranks
just behind it). Distances within float64 rounding (:data:`TIE_RTOL` of
``‖q‖² + ‖x‖²``) count as ties, so exact duplicates tie whatever the BLAS rounding.
:func:`point_ranks` computes the rank exactly against all ``n`` training points.

**Inclusion probability** (§6, App. D.3). The ``r``-th nearest point is among the ``k``
nearest of the subsample iff it is kept and at most ``k − 1`` of the ``r − 1`` closer points
are kept:

    ``ν(r) = γ·P(Bin(r − 1, γ) ≤ k − 1)``
    ``     = γ`` if ``r ≤ k``, else ``Σ_{i=0}^{k−1} C(r−1, i) γ^{i+1} (1−γ)^{r−i−1}``,

and it is the ``k``-th nearest of the subsample with probability
``λ(r) = γ·P(Bin(r − 1, γ) = k − 1)``. Both are evaluated in log space
(:func:`log_inclusion_probability`, :func:`log_last_probability`) with
``scipy.stats.binom.logcdf`` / ``logpmf``; where ``logcdf`` underflows (below ``e^-600``,
ranks far beyond ``k/γ``) the lower tail is summed exactly as
``pmf(k−1)·Σ_t Π ratios`` (no cancellation), so ``log ν`` stays finite and accurate for
ranks up to any dataset size.

**Vote distributions** (§6, "Parametric Assumption"). With the training labels sorted by
distance to ``q``, ``y_(1), y_(2), …``:

    ``P_q(c)     = Σ_j ν(j)·1{y_(j) = c} / Σ_j ν(j)``   (label of a top-k vote),
    ``P^k_q(c)   = Σ_j λ(j)·1{y_(j) = c} / Σ_j λ(j)``   (label of the k-th neighbour).

``Σ_j ν(j) = E[min(k, Bin(n, γ))]`` and ``Σ_j λ(j) = P(Bin(n, γ) ≥ k)``, both ``≈ k`` and
``≈ 1`` when ``nγ ≫ k`` (:func:`short_subsample_probability` measures the difference). Only
the first ``J`` neighbours are needed: ``ν`` decreases in ``j`` and :func:`num_neighbors_needed`
picks the smallest ``J`` with ``(n − J)·ν(J + 1) ≤ tail_tol``, a bound on the neglected mass of
both sums. :func:`simulate_vote_distributions` estimates the same two distributions by
drawing the subsample (tests check that the two agree).

**Model** (§6). :class:`KnnVoteModel`:

    ``H_S  = Mult(k, P_q)``,
    ``H_S' = Mult(k, P_q) + Ber(ν)·(1{y'} − Mult(1, P^k_q))``,

with ``ν = ν(r_q)`` of the poison ``(x', y')``. We implement the paper's model literally; the
three draws are independent, so ``H_S'`` can hold a count of ``−1`` (probability
``ν·Σ_c P^k_q(c)·P(Mult(k, P_q)_c = 0)``), which is harmless: the noisy argmax is invariant
to adding a constant to every count, and :func:`knn_output_distributions` shifts the
histograms by one before :func:`ppaudit.noisy_argmax.class_probabilities`.

**Output laws.** :func:`enumerate_knn_output_distributions` gives the model's two output
distributions exactly, with a certified pruned tail (the enumeration of
:mod:`ppaudit.vote_models`), when ``Mult(k, P_q)`` has a modest support (two classes:
``k + 1`` histograms; confident queries); the audit then draws exact counts for ``T = 1e8``
trials at no cost. :func:`knn_output_distributions` is the Monte Carlo fallback for votes
spread over many classes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.stats import binom

from ._validation import as_distribution, check_positive_int, check_probability, check_sigma
from .noisy_argmax import class_probabilities
from .vote_models import QUADRATURE_ABS_ERROR, OutputEstimate
from .vote_models.enumeration import _enumerate_multinomial, _TooLarge
from .vote_models.estimate import _StreamingOutputMoments

__all__ = [
    "squared_distances",
    "build_index",
    "Neighbors",
    "nearest_neighbors",
    "training_ranks",
    "point_ranks",
    "duplicate_ranks",
    "log_inclusion_probability",
    "inclusion_probability",
    "log_last_probability",
    "short_subsample_probability",
    "num_neighbors_needed",
    "vote_distributions",
    "simulate_vote_distributions",
    "expected_inclusions_train",
    "expected_inclusions_points",
    "KnnVoteModel",
    "knn_output_distributions",
    "KnnEnumeration",
    "support_estimate",
    "enumerate_knn_output_distributions",
]

#: Below ``exp(LOGCDF_FLOOR)`` scipy's ``binom.logcdf`` (= log of the cdf) loses precision.
LOGCDF_FLOOR = -600.0


# ----------------------------------------------------------------------------- checks


def _check_k_gamma(k, gamma) -> tuple[int, float]:
    kk = check_positive_int(k, "k")
    g = check_probability(gamma, "gamma", open_right=False)
    return kk, g


def _as_features(x, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must have shape (n, d) with n, d >= 1, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.number) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must hold finite numbers")
    return arr


def _as_ranks(ranks, name: str = "ranks") -> np.ndarray:
    r = np.asarray(ranks)
    if r.size and (not np.issubdtype(r.dtype, np.integer) and not np.all(r == np.round(r))):
        raise ValueError(f"{name} must be integers >= 1, got {r.ravel()[:5]}")
    r = r.astype(np.int64)
    if r.size and r.min() < 1:
        raise ValueError(f"{name} must be integers >= 1, got minimum {r.min()}")
    return r


def _as_labels(labels, num_classes: int, name: str = "labels") -> np.ndarray:
    y = np.asarray(labels)
    if y.size and (not np.issubdtype(y.dtype, np.integer) or y.min() < 0 or y.max() >= num_classes):
        raise ValueError(f"{name} must be integers in [0, {num_classes}), got range [{y.min()}, {y.max()}]")
    return y.astype(np.int64)


# ----------------------------------------------------------------------------- distances


def squared_distances(queries, points) -> np.ndarray:
    """``‖q_i − x_j‖²`` in float64, ``(n_q, n_x)`` (clipped at 0)."""
    q = np.asarray(queries, dtype=np.float64)
    x = np.asarray(points, dtype=np.float64)
    d = np.einsum("ij,ij->i", q, q)[:, None] + np.einsum("ij,ij->i", x, x)[None, :] - 2.0 * (q @ x.T)
    return np.maximum(d, 0.0)


#: Relative tolerance under which two squared distances count as a tie (float64 rounding of
#: ``‖q‖² + ‖x‖² − 2⟨q, x⟩`` is ~1e-15 relative; exact duplicates must tie whatever BLAS does).
TIE_RTOL = 1e-12


def _tie_tolerance(queries, points) -> np.ndarray:
    """``TIE_RTOL·(‖q‖² + ‖x‖²)``, ``(n_q, n_x)``: the rounding scale of :func:`squared_distances`."""
    q = np.asarray(queries, dtype=np.float64)
    x = np.asarray(points, dtype=np.float64)
    return TIE_RTOL * (np.einsum("ij,ij->i", q, q)[:, None] + np.einsum("ij,ij->i", x, x)[None, :])


def build_index(train_features):
    """Exact faiss index of the training features: ``IndexFlatL2`` (squared L2, exhaustive)."""
    import faiss

    x = np.ascontiguousarray(_as_features(train_features, "train_features"), dtype=np.float32)
    index = faiss.IndexFlatL2(x.shape[1])
    index.add(x)
    return index


@dataclass(frozen=True)
class Neighbors:
    """The ``J`` nearest training points of every query, nearest first.

    Attributes:
        indices: ``(n_q, J)`` int64 training indices.
        sq_distances: ``(n_q, J)`` float64 squared distances (non-decreasing per row).
        num_train: ``n``, the training set size.
    """

    indices: np.ndarray
    sq_distances: np.ndarray
    num_train: int

    @property
    def num_neighbors(self) -> int:
        return int(self.indices.shape[1])

    def labels(self, train_labels) -> np.ndarray:
        """Labels of the neighbours, ``(n_q, J)``."""
        return np.asarray(train_labels, dtype=np.int64)[self.indices]


def nearest_neighbors(train_features, query_features, num_neighbors: int, index=None, chunk_size: int = 256) -> Neighbors:
    """Exact ``J`` nearest neighbours with faiss, re-sorted by float64 distance.

    faiss searches in float32; the ``J`` returned points are re-scored with
    :func:`squared_distances` in float64 and sorted by (distance, index), the order every
    other function here uses. (At an exact float32 tie at the ``J``-th place faiss may pick
    either point; ``J`` is chosen so that the ``J``-th neighbour carries negligible mass.)

    Args:
        train_features: ``(n, d)``.
        query_features: ``(n_q, d)``.
        num_neighbors: ``J`` (capped at ``n``).
        index: a prebuilt :func:`build_index` of ``train_features`` (optional).
        chunk_size: queries per faiss call / re-scoring block (capped so that a block holds
            at most 2^24 float64 distances).

    Returns:
        :class:`Neighbors`.
    """
    x = _as_features(train_features, "train_features")
    q = _as_features(query_features, "query_features")
    if q.shape[1] != x.shape[1]:
        raise ValueError(f"query_features have dimension {q.shape[1]} but train_features {x.shape[1]}")
    j = min(check_positive_int(num_neighbors, "num_neighbors"), x.shape[0])
    cs = check_positive_int(chunk_size, "chunk_size")
    if index is None:
        index = build_index(x)
    # float64 re-scoring block: at most ~2^24 distances (128 MiB) at a time
    cs = max(1, min(cs, (1 << 24) // x.shape[0]))
    out_i = np.empty((q.shape[0], j), dtype=np.int64)
    out_d = np.empty((q.shape[0], j), dtype=np.float64)
    for start in range(0, q.shape[0], cs):
        qc = np.ascontiguousarray(q[start : start + cs], dtype=np.float32)
        _, idx = index.search(qc, j)
        idx = idx.astype(np.int64)
        # float64 re-scoring of the J candidates with the same distance as every other rank
        d = np.take_along_axis(squared_distances(q[start : start + cs], x), idx, axis=1)
        order = np.lexsort((idx, d), axis=1)
        out_i[start : start + cs] = np.take_along_axis(idx, order, axis=1)
        out_d[start : start + cs] = np.take_along_axis(d, order, axis=1)
    return Neighbors(out_i, out_d, int(x.shape[0]))


def training_ranks(train_features, query_features, chunk_size: int = 128) -> np.ndarray:
    """Rank (1 = nearest) of every training point for every query, ``(n_q, n)`` int32.

    Full float64 sort (ties by index); memory ``O(n_q·n)`` for the result. Use
    :func:`nearest_neighbors` when only the first ``J`` ranks matter.
    """
    x = _as_features(train_features, "train_features")
    q = _as_features(query_features, "query_features")
    cs = check_positive_int(chunk_size, "chunk_size")
    n = x.shape[0]
    out = np.empty((q.shape[0], n), dtype=np.int32)
    idx = np.arange(n)
    for start in range(0, q.shape[0], cs):
        d = squared_distances(q[start : start + cs], x)
        order = np.lexsort((np.broadcast_to(idx, d.shape), d), axis=1)
        ranks = np.empty_like(order, dtype=np.int32)
        np.put_along_axis(ranks, order, np.arange(1, n + 1, dtype=np.int32)[None, :].repeat(d.shape[0], 0), axis=1)
        out[start : start + cs] = ranks
    return out


def point_ranks(train_features, query_features, points, chunk_size: int = 128) -> np.ndarray:
    """Rank ``r_q(x')`` of each point if it were added to the training set, ``(n_q, m)``.

    ``r_q = 1 + #{j : ‖q − x_j‖² ≤ ‖q − x'‖²}`` over all ``n`` training points, float64
    distances, ties (up to :data:`TIE_RTOL`) against the point (module docstring). A point equal to the query has
    rank 1 unless a training point coincides with the query too.

    Args:
        train_features: ``(n, d)``.
        query_features: ``(n_q, d)``.
        points: ``(m, d)`` candidate points (e.g. the poison).
        chunk_size: queries per block (memory ``O(chunk·n)``).

    Returns:
        ``(n_q, m)`` int64 ranks in ``[1, n + 1]``.
    """
    x = _as_features(train_features, "train_features")
    q = _as_features(query_features, "query_features")
    p = _as_features(points, "points")
    cs = check_positive_int(chunk_size, "chunk_size")
    out = np.empty((q.shape[0], p.shape[0]), dtype=np.int64)
    for start in range(0, q.shape[0], cs):
        qc = q[start : start + cs]
        dx = np.sort(squared_distances(qc, x), axis=1)
        dp = squared_distances(qc, p)
        tol = _tie_tolerance(qc, p)
        for r in range(dx.shape[0]):
            out[start + r] = 1 + np.searchsorted(dx[r], dp[r] + tol[r], side="right")
    return out


def duplicate_ranks(train_features, query_features, train_indices, chunk_size: int = 128) -> np.ndarray:
    """Rank of a copy of training point ``x_j`` added to the training set, ``(n_q, m)``.

    ``r_q = 1 + #{i : ‖q − x_i‖² ≤ ‖q − x_j‖²}`` where both sides come from the same float64
    distance row, so the tie with ``x_j`` itself is always counted: the copy ranks just behind
    the original (ties against the poison), consistently with
    :func:`expected_inclusions_train`.
    """
    x = _as_features(train_features, "train_features")
    q = _as_features(query_features, "query_features")
    idx = np.asarray(train_indices, dtype=np.int64).reshape(-1)
    if idx.size == 0 or idx.min() < 0 or idx.max() >= x.shape[0]:
        raise ValueError(f"train_indices must lie in [0, {x.shape[0]}), got {idx}")
    cs = check_positive_int(chunk_size, "chunk_size")
    out = np.empty((q.shape[0], idx.size), dtype=np.int64)
    for start in range(0, q.shape[0], cs):
        d = squared_distances(q[start : start + cs], x)
        ds = np.sort(d, axis=1)
        for r in range(d.shape[0]):
            out[start + r] = 1 + np.searchsorted(ds[r], d[r, idx], side="right")
    return out


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


# ----------------------------------------------------------------------------- model


@dataclass(frozen=True)
class KnnVoteModel:
    """The Private-kNN histogram model of one query and one poison (Chadha et al. 2024, §6).

    ``H_S = Mult(k, P)``; ``H_S' = Mult(k, P) + Ber(ν)·(e_{label} − Mult(1, P_last))``.

    Attributes:
        P: ``(C,)`` distribution of a top-``k`` vote, ``P_q``.
        P_last: ``(C,)`` distribution of the ``k``-th neighbour's label, ``P^k_q``.
        nu: inclusion probability ``ν`` of the poison, in ``[0, 1]``.
        label: the poison's label ``y'``.
        k: number of votes.
    """

    P: np.ndarray
    P_last: np.ndarray
    nu: float
    label: int
    k: int

    def __post_init__(self):
        P = as_distribution(self.P, "P", atol=1e-6)
        L = as_distribution(self.P_last, "P_last", atol=1e-6)
        if P.ndim != 1 or L.shape != P.shape:
            raise ValueError(f"P and P_last must be probability vectors of the same length, got shapes {P.shape} and {L.shape}")
        nu = float(self.nu)
        if not (0.0 <= nu <= 1.0):
            raise ValueError(f"nu must be in [0, 1], got {self.nu!r}")
        lab = int(self.label)
        if not 0 <= lab < P.size:
            raise ValueError(f"label must be in [0, {P.size}), got {self.label!r}")
        object.__setattr__(self, "P", P / P.sum())
        object.__setattr__(self, "P_last", L / L.sum())
        object.__setattr__(self, "nu", nu)
        object.__setattr__(self, "label", lab)
        object.__setattr__(self, "k", check_positive_int(self.k, "k"))

    @property
    def num_classes(self) -> int:
        return int(self.P.size)

    @property
    def identical(self) -> bool:
        """``H_S`` and ``H_S'`` have the same law: ``ν = 0`` or the displaced vote is always ``y'``."""
        return self.nu == 0.0 or self.P_last[self.label] == 1.0

    def mean(self, which: str = "S") -> np.ndarray:
        """``E[H_S] = kP``; ``E[H_S'] = kP + ν(e_{y'} − P_last)``."""
        m = self.k * self.P
        if which == "S":
            return m
        if which == "S_prime":
            e = np.zeros_like(m)
            e[self.label] = 1.0
            return m + self.nu * (e - self.P_last)
        raise ValueError(f"which must be 'S' or 'S_prime', got {which!r}")

    def sample(self, rng: np.random.Generator, n: int, which: str = "S") -> np.ndarray:
        """``n`` histograms ``(n, C)`` (float64) of ``H_S`` or ``H_S'``."""
        if which not in ("S", "S_prime"):
            raise ValueError(f"which must be 'S' or 'S_prime', got {which!r}")
        h = rng.multinomial(self.k, self.P, size=n).astype(np.float64)
        if which == "S_prime" and self.nu > 0:
            inc = np.flatnonzero(rng.random(n) < self.nu)
            if inc.size:
                cdf = np.cumsum(self.P_last)
                last = np.minimum(np.searchsorted(cdf, rng.random(inc.size) * cdf[-1], side="right"), self.num_classes - 1)
                h[inc, self.label] += 1.0
                np.subtract.at(h, (inc, last), 1.0)
        return h

    def sampler(self, which: str = "S") -> Callable[[np.random.Generator, int], np.ndarray]:
        """``model(rng, n) -> (n, C)`` for :func:`ppaudit.montecarlo.model_noisy_argmax_counts`."""
        if which not in ("S", "S_prime"):
            raise ValueError(f"which must be 'S' or 'S_prime', got {which!r}")
        return lambda rng, n: self.sample(rng, n, which)


def knn_output_distributions(model: KnnVoteModel, sigma: float, draws: int, rng=None, chunk_size: int = 4096) -> OutputEstimate:
    """Monte Carlo output distributions ``μ_S``, ``μ_S'`` of the noisy argmax under the model.

    For each draw ``B_m ~ Mult(k, P)``: ``p_m = Pr[· | B_m]`` (Eq. (4),
    :func:`class_probabilities`) and, summing the Bernoulli and the displaced vote out
    exactly, ``q_m = (1 − ν)·p_m + ν·Σ_c P_last(c)·Pr[· | B_m + e_{y'} − e_c]``. The common
    draws make ``p − q`` precise; :func:`ppaudit.vote_models.mixture_rdp_estimate` turns the
    result into the "exact" Rényi divergence of the model with a delta-method standard error.

    Returns:
        :class:`ppaudit.vote_models.OutputEstimate`.
    """
    s = check_sigma(sigma)
    m = check_positive_int(draws, "draws")
    cs = check_positive_int(chunk_size, "chunk_size")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    c = model.num_classes
    classes = np.flatnonzero(model.P_last > 0)
    w = model.P_last[classes]
    moments = _StreamingOutputMoments(c)
    done = 0
    while done < m:
        n = min(cs, m - done)
        draws_ = gen.multinomial(model.k, model.P, size=n)
        # Eq. (4) once per distinct histogram (confident queries repeat a few histograms)
        uniq, inv = np.unique(draws_, axis=0, return_inverse=True)
        base = uniq.astype(np.float64) + 1.0  # +1: shift-invariant, no −1 counts
        pu = class_probabilities(base, s)
        pm = pu[inv.reshape(-1)]
        if model.nu > 0 and classes.size:
            moved = np.repeat(base[:, None, :], classes.size, axis=1)
            moved[:, :, model.label] += 1.0
            moved[:, np.arange(classes.size), classes] -= 1.0
            pr = class_probabilities(moved.reshape(-1, c), s).reshape(uniq.shape[0], classes.size, c)
            qu = (1.0 - model.nu) * pu + model.nu * np.einsum("v,nvc->nc", w, pr)
            qm = qu[inv.reshape(-1)]
        else:
            qm = pm
        moments.add(pm, qm)
        done += n
    return moments.estimate()


def support_estimate(k: int, P) -> float:
    """Rough number of histograms of ``Mult(k, P)`` that carry the mass (a guard, not a bound).

    ``Π_c (1 + 14·sd_c)`` over the classes but the largest, ``sd_c = sqrt(k p_c (1 − p_c))``
    (a ±7 sd box per free coordinate, capped at ``k + 1``): within a small factor of the
    pruned enumeration at ``1e-12`` (4,638 histograms for ``Mult(200, (.5, .3, .2))``, estimate
    5,500), and astronomically large for votes spread over ten classes.
    """
    p = np.sort(np.asarray(P, dtype=np.float64))[:-1]
    sd = np.sqrt(k * p * (1.0 - p))
    return float(np.exp(np.sum(np.log(np.minimum(1.0 + 14.0 * sd, k + 1.0)))))


@dataclass(frozen=True)
class KnnEnumeration:
    """Certified output distributions of a :class:`KnnVoteModel` by enumeration.

    ``Mult(k, P)`` is enumerated with pruning (the conditional-binomial tree of
    :mod:`ppaudit.vote_models`, whose pruned mass ``r`` is accounted exactly); then

        ``μ̂_S  = Σ_h w_h Pr[· | h]``,
        ``μ̂_S' = (1 − ν)·μ̂_S + ν·Σ_c P_last(c) Σ_h w_h Pr[· | h + e_{y'} − e_c]``

    with Eq. (4). Each true probability lies in ``[lo − e, lo + r + e]`` (``e`` = the
    quadrature error of :func:`class_probabilities`), the box that
    :func:`ppaudit.vote_models.certified_mixture_rdp` turns into certified Rényi bounds (it
    reads ``p_lo``, ``q_lo``, ``tail_mass``, ``p``, ``q``, which this class provides).

    Attributes:
        p_lo, q_lo: ``(C,)`` retained mass of ``μ_S`` and ``μ_S'``.
        tail_mass: ``r``, the pruned mass of ``Mult(k, P)``.
        support_size: histograms enumerated.
    """

    p_lo: np.ndarray
    q_lo: np.ndarray
    tail_mass: float
    support_size: int

    @property
    def error_bound(self) -> float:
        return self.tail_mass + QUADRATURE_ABS_ERROR

    @property
    def p(self) -> np.ndarray:
        """``μ_S`` of the truncated model (renormalised): the law of exact-count trials."""
        return self.p_lo / self.p_lo.sum()

    @property
    def q(self) -> np.ndarray:
        return self.q_lo / self.q_lo.sum()

    def total_variation_bound(self) -> float:
        """Bound on the total variation between the truncated and the full model's output law
        per trial: ``tail_mass + C·e/2`` (as :func:`ppaudit.experiments.private_prediction.audit_vote_model`)."""
        return self.tail_mass + self.p_lo.size * QUADRATURE_ABS_ERROR / 2.0


def enumerate_knn_output_distributions(
    model: KnnVoteModel,
    sigma: float,
    max_tail_mass: float = 1e-11,
    max_support: int = 100_000,
) -> KnnEnumeration | None:
    """Exact (certified) ``μ_S``, ``μ_S'`` of the Private-kNN model, or ``None`` if too large.

    The pruning threshold starts at ``max_tail_mass`` and shrinks 100× until the pruned mass
    is ``≤ max_tail_mass``; more than ``max_support`` histograms gives up (``None``; use
    :func:`knn_output_distributions`). Cheap for two classes (``k + 1`` histograms) and for
    confident queries; spread votes over many classes exceed the budget.
    """
    s = check_sigma(sigma)
    if not (0 < float(max_tail_mass) < 1):
        raise ValueError(f"max_tail_mass must be in (0, 1), got {max_tail_mass!r}")
    ms = check_positive_int(max_support, "max_support")
    if support_estimate(model.k, model.P) > 20.0 * ms:  # clearly too large: do not try
        return None
    theta = float(max_tail_mass)
    while True:
        try:
            hist, logw, dropped = _enumerate_multinomial(model.k, model.P, math.log(theta), ms)
        except _TooLarge:
            return None
        w = np.exp(logw)
        tail = max(dropped, 1.0 - math.fsum(w.tolist()), 0.0)
        if tail <= max_tail_mass:
            break
        theta /= 100.0
        if theta < 1e-300:
            return None
    c = model.num_classes
    classes = np.flatnonzero(model.P_last > 0)
    base = hist.astype(np.float64) + 1.0  # +1: shift-invariant, no −1 counts after the move
    p_lo = np.zeros(c)
    moved_lo = np.zeros(c)
    step = max(1, 200_000 // max(classes.size + 1, 1))
    for a in range(0, base.shape[0], step):
        b = base[a : a + step]
        wb = w[a : a + step]
        p_lo += wb @ class_probabilities(b, s)
        if model.nu > 0 and classes.size:
            moved = np.repeat(b[:, None, :], classes.size, axis=1)
            moved[:, :, model.label] += 1.0
            moved[:, np.arange(classes.size), classes] -= 1.0
            pr = class_probabilities(moved.reshape(-1, c), s).reshape(b.shape[0], classes.size, c)
            moved_lo += np.einsum("n,v,nvc->c", wb, model.P_last[classes], pr)
    q_lo = (1.0 - model.nu) * p_lo + model.nu * moved_lo if model.nu > 0 and classes.size else p_lo.copy()
    return KnnEnumeration(p_lo, q_lo, float(tail), int(hist.shape[0]))
