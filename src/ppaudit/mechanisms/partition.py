"""Partitioning of the training set among teachers, and placement of the canary.

Chadha et al. 2024, Alg. 1 line 5 (``PARTITION(S, m)``), §5.1 and §5.2:

* **PATE** draws ``k`` equal random partitions *afresh in every instantiation of the
  training phase* (the randomness that the parametric model ``Mult(k, P_q)`` captures):
  :func:`random_partition`, :func:`pate_partitions`.
* **CaPC** keeps ``k`` fixed partitions (each party owns its data): :func:`fixed_partition`;
  the only randomness across instantiations is the teachers' training.

A partition is stored as an *assignment*: ``assignment[i] = j`` puts training point ``i``
in the data of teacher ``j`` (sizes differ by at most one when ``k`` does not divide ``n``).

The crafted dataset ``S' = S ∪ {(x', y')}`` (§4, "Crafter"):

* PATE: the canary goes into a partition drawn uniformly at random, independently in
  every instantiation (:func:`pate_canary_slots`). Reading (documented choice): a random
  equal partition of ``S'`` puts the canary in a uniformly random cell together with a
  uniformly random subset of ``S`` of size about ``n/k``; we realise it by adding the
  canary to cell ``j`` of the instantiation's partition of ``S``. This couples ``S`` and
  ``S'`` instantiation by instantiation (common random numbers), which leaves the marginal
  distributions — all the parametric fits use — unchanged; the canary's cell then has one
  point more than the others, as in any partition of ``n + 1`` points.
* CaPC: the canary goes into partition 1 (index 0 here), without loss of generality (§5.2).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_positive_int

__all__ = [
    "random_partition",
    "fixed_partition",
    "pate_partitions",
    "pate_canary_slots",
    "CAPC_CANARY_SLOT",
    "partition_indices",
    "partition_sizes",
    "teacher_training_indices",
]

#: CaPC puts the canary into the first party's data (Chadha et al. 2024, §5.2, WLOG).
CAPC_CANARY_SLOT = 0


def _check_nk(num_points, k) -> tuple[int, int]:
    n = check_positive_int(num_points, "num_points")
    kk = check_positive_int(k, "k")
    if kk > n:
        raise ValueError(f"k (number of teachers) must be <= num_points, got k={k} for {n} points")
    return n, kk


def random_partition(num_points: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """One equal random partition of ``num_points`` points into ``k`` cells (PATE, §5.1).

    Args:
        num_points: ``n = |S|``.
        k: number of teachers.
        rng: a ``numpy.random.Generator``.

    Returns:
        ``(n,)`` int64 assignment; cell sizes are ``⌊n/k⌋`` or ``⌈n/k⌉``, uniformly random
        among all such equal partitions (which cells are the larger ones is random too).
    """
    n, kk = _check_nk(num_points, k)
    assignment = np.empty(n, dtype=np.int64)
    # Which cells get the extra points when k does not divide n is random too, so that the
    # cells are exchangeable: every point lies in every cell with probability 1/k.
    labels = rng.permutation(kk)
    assignment[rng.permutation(n)] = labels[np.arange(n, dtype=np.int64) % kk]
    return assignment


def fixed_partition(num_points: int, k: int, seed: int | None = 0) -> np.ndarray:
    """The fixed partition of CaPC (§5.2): one partition, kept across all instantiations.

    Args:
        num_points: ``n``.
        k: number of teachers (parties).
        seed: the partition is one random equal partition drawn with this seed, so that it
            is fixed but does not follow the order of the data (a dataset may be sorted
            by class); ``None`` gives contiguous blocks in data order.

    Returns:
        ``(n,)`` int64 assignment.
    """
    n, kk = _check_nk(num_points, k)
    if seed is None:
        return (np.arange(n, dtype=np.int64) * kk) // n
    return random_partition(n, kk, np.random.default_rng(np.random.SeedSequence(seed)))


def pate_partitions(num_points: int, k: int, num_instantiations: int, seed: np.random.SeedSequence | int) -> np.ndarray:
    """Fresh random partitions for ``N_g`` instantiations of PATE's training phase (§5.1).

    Instantiation ``g`` uses the ``g``-th child of ``seed``, so it does not depend on how
    many instantiations are drawn.

    Returns:
        ``(N_g, n)`` int64 assignments.
    """
    n, kk = _check_nk(num_points, k)
    ng = check_positive_int(num_instantiations, "num_instantiations")
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return np.stack([random_partition(n, kk, np.random.default_rng(s)) for s in seq.spawn(ng)])


def pate_canary_slots(k: int, num_instantiations: int, num_canaries: int, seed: np.random.SeedSequence | int) -> np.ndarray:
    """The partition that receives the canary, per canary and instantiation (PATE, §5.1).

    Returns:
        ``(num_canaries, N_g)`` int64, uniform on ``0..k-1``, independent across entries.
    """
    kk = check_positive_int(k, "k")
    ng = check_positive_int(num_instantiations, "num_instantiations")
    nc = check_positive_int(num_canaries, "num_canaries", minimum=0)
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return np.random.default_rng(seq).integers(0, kk, size=(nc, ng), dtype=np.int64)


def partition_sizes(assignment: np.ndarray, k: int) -> np.ndarray:
    """Number of points per cell, ``(k,)``."""
    a = np.asarray(assignment)
    return np.bincount(a.ravel(), minlength=check_positive_int(k, "k"))[:k]


def partition_indices(assignment: np.ndarray, k: int) -> list[np.ndarray]:
    """The indices of the points of each cell (sorted), as a list of ``k`` arrays."""
    a = np.asarray(assignment, dtype=np.int64)
    kk = check_positive_int(k, "k")
    if a.ndim != 1 or (a.size and (a.min() < 0 or a.max() >= kk)):
        raise ValueError(f"assignment must be 1-D with values in [0, {kk}), got shape {a.shape}")
    order = np.argsort(a, kind="stable")
    bounds = np.searchsorted(a[order], np.arange(kk + 1))
    return [order[bounds[j] : bounds[j + 1]] for j in range(kk)]


def teacher_training_indices(assignment: np.ndarray, teacher: int) -> np.ndarray:
    """Indices of the training points of one teacher (cell ``teacher`` of ``assignment``)."""
    a = np.asarray(assignment, dtype=np.int64)
    return np.flatnonzero(a == int(teacher))
