"""Composition of per-query audits over queries (Chadha et al. 2024, §4.2)."""

from __future__ import annotations

import numpy as np

__all__ = ["compose_rdp"]


def compose_rdp(per_query_rdp, repetitions: int | np.ndarray | None = None) -> np.ndarray:
    """Compose per-query RDP (bounds) over a query sequence: the order-wise sum (Mironov 2017).

    Args:
        per_query_rdp: ``(Q, A)`` RDP values of ``Q`` queries at ``A`` orders (or ``(A,)``
            for one query).
        repetitions: how many times each query is asked (scalar or ``(Q,)``); the
            adversarial distinguisher asks one query ``n_Q`` times (Chadha et al. 2024, §5.4).

    Returns:
        ``(A,)`` composed RDP.
    """
    r = np.atleast_2d(np.asarray(per_query_rdp, dtype=np.float64))
    if np.any(np.isnan(r)) or np.any(r < 0):
        raise ValueError("per-query RDP values must be >= 0 and not NaN")
    if repetitions is None:
        return r.sum(axis=0)
    reps = np.asarray(repetitions, dtype=np.float64)
    if np.any(reps < 0) or np.any(reps != np.round(reps)):
        raise ValueError(f"repetitions must be non-negative integers, got {repetitions}")
    reps = np.broadcast_to(reps, (r.shape[0],))
    return (r * reps[:, None]).sum(axis=0)
