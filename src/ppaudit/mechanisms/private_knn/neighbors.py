"""Nearest neighbours of Private-kNN queries in a feature space (exact distances, faiss index, ranks with ties)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import check_positive_int

__all__ = [
    "squared_distances",
    "build_index",
    "Neighbors",
    "nearest_neighbors",
    "training_ranks",
    "point_ranks",
    "duplicate_ranks",
]

# ----------------------------------------------------------------------------- checks




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
