"""The canonical neighbouring vote histograms of GNMax (Chadha et al. 2024, §4.2 / §7): up to
class permutations and the order of the pair, every pair of neighbouring histograms ``h``,
``h' = h − e_i + e_j`` of ``k`` teachers over ``C`` classes is one canonical row
``h = (a, b, r_1 ≥ … ≥ r_{C−2})`` with ``h' = (a − 1, b + 1, r)`` (the symmetry argument of
:mod:`.worst_case`, item 1). :func:`canonical_pairs` lists them, :func:`count_canonical_pairs`
counts them (partitions into at most ``C − 2`` parts), so the worst-case search of
:func:`~ppaudit.accounting.gnmax_rdp_worst_case` can say how many it covered.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_positive_int

__all__ = ["canonical_pairs", "count_canonical_pairs"]


def _partition_counts(total: int, parts: int) -> np.ndarray:
    """``p[s]`` = number of partitions of ``s`` into at most ``parts`` parts, s = 0..total."""
    p = np.zeros(total + 1, dtype=object)
    p[0] = 1
    for size in range(1, parts + 1):  # partitions into parts of size ≤ `parts` (conjugate)
        for s in range(size, total + 1):
            p[s] += p[s - size]
    return p


def count_canonical_pairs(num_teachers: int, num_classes: int) -> int:
    """Number of canonical neighbouring pairs ``(a, b, r) → (a − 1, b + 1, r)``.

    ``Σ_{s=0}^{k−1} (k − s) · p(s, ≤ C − 2)`` with ``p(s, ≤ m)`` the partitions of ``s`` into
    at most ``m`` parts (for ``C = 2``: ``k``).

    Args:
        num_teachers: ``k ≥ 1``.
        num_classes: ``C ≥ 2``.

    Returns:
        The count (a Python int; it can be astronomically large).
    """
    k = check_positive_int(num_teachers, "num_teachers")
    c = check_positive_int(num_classes, "num_classes", minimum=2)
    if c == 2:
        return k
    p = _partition_counts(k - 1, c - 2)
    return int(sum((k - s) * p[s] for s in range(k)))


def _partitions(total: int, parts: int, cap: int | None = None):
    """Non-increasing tuples of length ``parts`` of non-negative ints summing to ``total``."""
    if parts == 0:
        if total == 0:
            yield ()
        return
    cap = total if cap is None else min(cap, total)
    lo = -(-total // parts)  # the largest part is at least ceil(total / parts)
    for first in range(cap, lo - 1, -1):
        for tail in _partitions(total - first, parts - 1, first):
            yield (first,) + tail


def canonical_pairs(num_teachers: int, num_classes: int) -> np.ndarray:
    """All canonical histograms ``h = (a, b, r_1 ≥ … ≥ r_{C−2})``, ``a ≥ 1``, ``Σ h = k``.

    The neighbour of each row is ``h − e_0 + e_1``. Up to class permutations and the order
    of the pair, these are all neighbouring pairs (module docstring, item 1).

    Args:
        num_teachers: ``k ≥ 1``.
        num_classes: ``C ≥ 2``.

    Returns:
        ``(N, C)`` int64 array, ``N =`` :func:`count_canonical_pairs`.
    """
    k = check_positive_int(num_teachers, "num_teachers")
    c = check_positive_int(num_classes, "num_classes", minimum=2)
    rows = []
    for s in range(k):
        rests = list(_partitions(s, c - 2)) if c > 2 else ([()] if s == 0 else [])
        if not rests:
            continue
        rest = np.asarray(rests, dtype=np.int64).reshape(len(rests), c - 2)
        a = np.arange(1, k - s + 1)
        ab = np.stack([a, k - s - a], axis=1)
        block = np.concatenate(
            [np.repeat(ab, len(rests), axis=0), np.tile(rest, (ab.shape[0], 1))], axis=1
        )
        rows.append(block)
    return np.concatenate(rows, axis=0)


def _neighbour(h: np.ndarray) -> np.ndarray:
    hp = h.copy()
    hp[:, 0] -= 1
    hp[:, 1] += 1
    return hp
