"""How many Monte Carlo trials an audit needs to resolve an effect (planning, no sampling).

The 2-cut Clopper–Pearson bound (:func:`ppaudit.audit.bounds.two_cut_lower_bound`) of a pair
whose output distributions ``p`` and ``q`` are known can be predicted before any draw: put the
counts at their expectations, take the intervals the audit would take, and evaluate the bound.
:func:`two_cut_trials_needed` searches the smallest number of trials for which that predicted
bound reaches a given fraction of the most a 2-cut of the pair can show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_orders, check_probability
from ..divergence import two_cut
from ..intervals import clopper_pearson
from .bounds import two_cut_bound_from_intervals

__all__ = ["SAFETY_FACTOR", "TrialsNeeded", "two_cut_trials_needed"]

#: Multiply :func:`two_cut_trials_needed`'s lower estimate by this for a run that resolves the
#: effect in most seeds despite the split's own choice of the output set (simulated; see there).
SAFETY_FACTOR = 4


@dataclass(frozen=True)
class TrialsNeeded:
    """Result of :func:`two_cut_trials_needed`.

    Attributes:
        trials: draws per side (``None`` if more than ``max_trials`` would be needed).
        order: the order at which that many trials reach the target.
        attainable: the ideal 2-cut divergence at that order (the most a 2-cut can show).
        fraction: the fraction of ``attainable`` the bound reaches at ``trials``.
    """

    trials: int | None
    order: float
    attainable: float
    fraction: float

    def to_dict(self) -> dict:
        return {"trials": self.trials, "order": self.order, "attainable_two_cut": self.attainable, "fraction": self.fraction}


def two_cut_trials_needed(
    p,
    q,
    orders,
    *,
    fraction: float = 0.5,
    confidence: float = 0.95,
    tests: int = 1,
    selection_fraction: float = 0.1,
    max_trials: float = 1e12,
) -> TrialsNeeded:
    """Draws per side for the 2-cut bound to reach ``fraction`` of the ideal 2-cut divergence.

    For each order α the ideal 2-cut ``D_O(α) = max over both directions of
    sup_O D_α(Bern(P(O)) ‖ Bern(Q(O)))`` (:func:`ppaudit.divergence.two_cut`) and its best set
    ``O`` are computed from the exact distributions. With ``T`` draws per side the audit spends
    ``n = (1 − selection_fraction)·T`` of them on Clopper–Pearson intervals at the two-sided
    level ``1 − β/(2·tests·m)`` (``β = 1 − confidence``; ``tests`` is the audit's Bonferroni count
    over its tests, ``m`` the number of distinct ideal sets over the orders, as the audit corrects
    over the distinct sets it chooses). The predicted bound is the 2-cut of those intervals
    (:func:`ppaudit.audit.bounds.two_cut_bound_from_intervals`) at the expected counts
    ``n·P(O)`` and ``n·Q(O)`` — the bound a run whose counts land on their means gets. The answer
    is the smallest ``T`` (bisection in ``log T``, per order) whose predicted bound reaches
    ``fraction · D_O(α)`` at some order.

    Why so many: write ``w`` for the half-width ``z·√(π(1−π)/n)`` of an interval around
    ``π ≈ P(O) ≈ Q(O)`` (``z`` the normal quantile of one tail, ``β/(4·tests)``). The bound's
    argument ``(P(O)−w)^α (Q(O)+w)^{1−α} + (1−P(O)−w)^α (1−Q(O)+w)^{1−α}`` loses
    ``≈ 2(2α−1)·w`` against its ideal value ``e^{(α−1)D_O}`` — first order in ``w`` — while
    ``D_O`` itself is second order in the effect ``P(O) − Q(O)``. So the bound is
    ``≈ D_O − 2(2α−1)w/(α−1)``, and reaching ``r·D_O`` takes

        n ≈ z²·π(1−π)·(2(2α−1) / ((1−r)(α−1)·D_O))²   evaluation draws,  T = n/(1 − selection_fraction):

    the draws grow as ``1/D_O²`` (ten times less divergence, a hundred times more draws). The
    search evaluates the exact 2-cut of the Clopper–Pearson intervals rather than this
    expansion (the tests check both, and a simulation at the returned ``T``); it assumes the
    predicted bound grows with ``T``.

    A lower estimate: it assumes the audit picks the ideal set, whereas the ``split`` audit picks
    it from the ``selection_fraction`` share of its draws, and a close runner-up set (or a noisy
    likelihood-ratio order) costs more draws. Simulated with the audit itself
    (``tests/unit/audit/test_planning.py``): at the returned ``T`` the median bound is about
    ``fraction · D_O`` for a 3-class pair with a clear best set, and for query #69 of the audit
    guide's example votes (docs/audit_your_mechanism.md; σ = 40, 10 classes, sets that are close
    runners-up; returned ``T`` ≈ 0.93 M) 3.2 M
    draws gave a median of 0.6 of ``D_O`` over 6 seeds and 0.8 M draws at most 0.36.
    :data:`SAFETY_FACTOR` (4) turns the estimate into a suggestion.

    Args:
        p, q: the exact output distributions on ``S`` and ``S'`` (same length ``C ≥ 2``).
        orders: orders α > 1.
        fraction: target share ``r`` of ``D_O`` in (0, 1).
        confidence, tests, selection_fraction: as the audit uses them
            (:func:`ppaudit.blackbox.audit_counts`: ``tests`` is its ``details["tests"]``).
        max_trials: give up above this many draws per side.

    Returns:
        :class:`TrialsNeeded` (``trials=None`` if even ``max_trials`` are not enough, e.g. when
        ``p == q``).

    Raises:
        ValueError: on bad distributions, orders or levels.

    Example:
        >>> from ppaudit.noisy_argmax import class_probabilities
        >>> p = class_probabilities([6, 4, 0], 8.0); q = class_probabilities([5, 5, 0], 8.0)
        >>> two_cut_trials_needed(p, q, [2.0, 8.0]).trials > 1000
        True
    """
    a = as_orders(orders)
    r = check_probability(fraction, "fraction")
    conf = check_probability(confidence, "confidence")
    sel = float(selection_fraction)
    if not 0.0 <= sel < 1.0:
        raise ValueError(f"selection_fraction must be in [0, 1), got {selection_fraction!r}")
    if int(tests) < 1:
        raise ValueError(f"tests must be >= 1, got {tests!r}")
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    fwd, fwd_sets = two_cut(p, q, a, return_sets=True)
    rev, rev_sets = two_cut(q, p, a, return_sets=True)
    use_rev = rev > fwd
    ideal = np.where(use_rev, rev, fwd)
    sets = np.where(use_rev[:, None], rev_sets, fwd_sets)
    distinct = len({(bool(u), m.tobytes()) for u, m in zip(use_rev, sets)})
    per_interval = 1.0 - (1.0 - conf) / float(tests) / (2.0 * distinct)
    px = np.where(use_rev, sets @ q, sets @ p)  # P(O) on the side the divergence starts from
    py = np.where(use_rev, sets @ p, sets @ q)

    def reaches(log_t: np.ndarray) -> np.ndarray:
        n = np.maximum(np.floor((1.0 - sel) * np.exp(log_t)), 1.0)
        lo_x, hi_x = clopper_pearson(np.round(px * n), n, per_interval)
        lo_y, hi_y = clopper_pearson(np.round(py * n), n, per_interval)
        bound = np.array([two_cut_bound_from_intervals(lo_x[j], hi_x[j], lo_y[j], hi_y[j], [a[j]])[0]
                          for j in range(a.size)])
        return bound >= r * ideal

    # Bisection in log T, all orders at once (the predicted bound grows with T).
    lo = np.full(a.size, math.log(10.0))
    hi = np.full(a.size, math.log(max_trials))
    feasible = (ideal > 0) & reaches(hi)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        ok = reaches(mid)
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    if not feasible.any():
        j = int(np.argmax(ideal))
        return TrialsNeeded(None, float(a[j]), float(ideal[j]), r)
    t = np.where(feasible, np.exp(hi), np.inf)
    j = int(np.argmin(t))
    return TrialsNeeded(int(math.ceil(t[j])), float(a[j]), float(ideal[j]), r)
