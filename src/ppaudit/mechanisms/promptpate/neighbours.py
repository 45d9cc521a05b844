"""Neighbouring PromptPATE histograms: which teacher the canary replaces (worst case over the exact histograms)."""

from __future__ import annotations

import numpy as np

from ..._validation import as_orders, check_positive_int, check_sigma
from ...accounting import rdp_to_dp
from ...divergence import exact_rdp

__all__ = [
    "swap_vote",
    "advq_neighbour",
    "natq_neighbour",
]

# ---------------------------------------------------------------------------------------
# Neighbouring histograms
# ---------------------------------------------------------------------------------------


def swap_vote(hist, vote_out: int, vote_in: int) -> np.ndarray:
    """``H − e_{vote_out} + e_{vote_in}``: one teacher's vote replaced (the swap of §5.3).

    Raises:
        ValueError: if no teacher votes ``vote_out`` or a class is out of range.
    """
    h = np.asarray(hist, dtype=np.int64).copy()
    c = h.shape[-1]
    if not (0 <= vote_out < c and 0 <= vote_in < c):
        raise ValueError(f"vote_out and vote_in must lie in [0, {c}), got {vote_out} and {vote_in}")
    if h[vote_out] < 1:
        raise ValueError(f"no teacher votes {vote_out} in {h.tolist()}")
    h[vote_out] -= 1
    h[vote_in] += 1
    return h


def _eps_of_rdp(rdp: np.ndarray, orders: np.ndarray, delta: float) -> np.ndarray:
    return np.asarray(rdp_to_dp(np.maximum(rdp, 0.0), orders, delta))


def advq_neighbour(hist, canary_vote: int, sigma: float, orders, repetitions: int, delta: float = 1e-6) -> tuple[np.ndarray, int]:
    """``H_S'`` of an AdvQ canary: the replaced vote class ``v ≠ canary_vote`` maximising ε of
    the ``repetitions``-fold composed exact RDP (ties → smaller ``v``).

    Returns:
        ``(H_S', v)``; ``(H_S, -1)`` when every vote already equals ``canary_vote``.
    """
    h = np.asarray(hist, dtype=np.int64)
    s, a = check_sigma(sigma), as_orders(orders)
    reps = check_positive_int(repetitions, "repetitions")
    options = [v for v in range(h.size) if v != canary_vote and h[v] > 0]
    if not options:
        return h.copy(), -1
    cands = np.stack([swap_vote(h, v, int(canary_vote)) for v in options])
    rdp = exact_rdp(np.broadcast_to(h, cands.shape), cands, s, a)
    eps = _eps_of_rdp(reps * rdp, a, delta)
    best = int(np.argmax(eps))
    return cands[best], int(options[best])


def natq_neighbour(hist, teacher_votes, canary_votes, sigma: float, orders, delta: float = 1e-6) -> tuple[np.ndarray, int]:
    """``H_S'`` over the natural queries: the replaced teacher maximising ε of the exact RDP
    composed over the queries (ties → smaller teacher index).

    ``H_S'(q) = H_S(q) − e_{v_t(q)} + e_{v'(q)}``. The exact RDP of every ``(q, v_t(q))``
    pair is computed once (at most ``C`` per query), then summed per teacher.

    Returns:
        ``(H_S' (n_Q, C), t)``.
    """
    h = np.asarray(hist, dtype=np.int64)
    v = np.asarray(teacher_votes, dtype=np.int64)
    vin = np.asarray(canary_votes, dtype=np.int64).reshape(-1)
    s, a = check_sigma(sigma), as_orders(orders)
    nq, c = h.shape
    if v.shape[1] != nq or vin.size != nq:
        raise ValueError(f"teacher_votes (k, n_Q) and canary_votes (n_Q,) must match hist {h.shape}, got {v.shape} and {vin.shape}")
    table = np.zeros((nq, c, a.size))
    qs, outs = np.nonzero(h > 0)
    keep = outs != vin[qs]
    qs, outs = qs[keep], outs[keep]
    if qs.size:
        h0 = h[qs]
        h1 = h0.copy()
        h1[np.arange(qs.size), outs] -= 1
        h1[np.arange(qs.size), vin[qs]] += 1
        table[qs, outs] = exact_rdp(h0, h1, s, a)
    composed = table[np.arange(nq)[None, :], v].sum(axis=1)  # (k, A)
    eps = _eps_of_rdp(composed, a, delta)
    t = int(np.argmax(eps))
    h_prime = h.copy()
    h_prime[np.arange(nq), v[t]] -= 1
    h_prime[np.arange(nq), vin] += 1
    return h_prime, t
