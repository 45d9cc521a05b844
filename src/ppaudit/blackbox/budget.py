"""A search bounded in draws and time, and never silent: :class:`SearchBudget`.

:func:`~ppaudit.blackbox.search_mechanism` spends ``2 · (n_p · P + n_c · K)`` draws of the
mechanism — ``n_p = ⌈f · T⌉`` pilot draws per side on each of the ``P`` pairs, ``n_c = T − n_p``
certification draws per side on each of the ``K`` certified pairs (:func:`planned_draws`). With
``T = 10¹²`` that is silent for ever. This module

* **estimates the cost** from a first batch of draws (:func:`probe`: ``min(n_p, 1000)`` draws on
  the first pair's dataset, from a generator of their own and then discarded, so the search's
  draws and result are those without the probe) and says it before the long part starts;
* **fits the plan to a budget** before any counted draw: the largest ``T' ≤ T`` whose planned
  draws stay within ``max_draws`` (exact, so the same seed gives the same bytes) and whose
  estimated time stays within ``_SAFETY`` of ``time_budget`` (:func:`fit_trials`);
* **stops at the deadline** if the estimate was wrong (:meth:`SearchBudget.expired`): pairs whose
  pilot has not started are left out of the pilot, and a certified pair's draws stop at a chunk
  boundary with as many draws on both sides.

Why the verdict stays valid (``ours``). ``T'`` is a function of ``T``, ``max_draws`` and the
probe's timing, never of a counted draw. Leaving pairs out of the pilot changes only which pairs
can be chosen; the chosen pairs and ``K`` are still fixed before any certification draw (module
docstring of :mod:`ppaudit.blackbox.search`). A certification stopped by the clock has a number
of draws ``n ≤ n_c`` that depends on the time the mechanism takes, not on its outputs (assumed:
the time a draw takes does not depend on the value it returns — true of the vectorised
mechanisms of the catalogue; a mechanism whose running time reveals its output, such as a
sparse vector that halts early, should be bounded with ``max_draws``, which is exact); given
``n``, the counts are binomial and the Clopper–Pearson intervals cover as for a fixed ``n``, so
each certified test keeps its level ``β/K``, and fewer draws only cost power.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SearchBudget", "planned_draws", "fit_trials", "probe"]

_SAFETY = 0.8  # share of the remaining time budget the plan may spend (the rest: classifier fits, audits)
_PROBE = 1000  # draws of the first batch


def planned_draws(trials: int, pilot_fraction: float, n_pairs: int, k: int) -> int:
    """Draws of the mechanism a search of ``trials`` per side per pair plans: ``2 · (n_p · P + n_c · K)``."""
    n_p = int(math.ceil(pilot_fraction * trials))
    return 2 * (n_p * n_pairs + (trials - n_p) * k)


def fit_trials(trials: int, pilot_fraction: float, n_pairs: int, k: int, max_draws: float) -> int:
    """The largest ``T' ≤ trials`` with ``planned_draws(T') ≤ max_draws`` (0 if none): a bisection."""
    if planned_draws(trials, pilot_fraction, n_pairs, k) <= max_draws:
        return int(trials)
    lo, hi = 0, int(trials)  # planned_draws is non-decreasing in T
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if planned_draws(mid, pilot_fraction, n_pairs, k) <= max_draws:
            lo = mid
        else:
            hi = mid
    return lo


def probe(draw, n: int) -> float:
    """Seconds per draw of ``draw(n)`` (one call of the mechanism through the search's own checks)."""
    t0 = time.perf_counter()
    draw(n)
    return max(time.perf_counter() - t0, 1e-9) / n


def _fmt_seconds(s: float) -> str:
    if s < 120:
        return f"{s:.3g} s"
    if s < 7200:
        return f"{s / 60:.3g} min"
    if s < 2 * 86400:
        return f"{s / 3600:.3g} h"
    return f"{s / 86400:.3g} days"


@dataclass
class SearchBudget:
    """The limits of one search and what the first batch of draws predicted.

    Attributes:
        time_budget: seconds the search may take (``None``: no limit).
        max_draws: draws of the mechanism in all, both sides of every pair (``None``: no limit).
        start: ``time.perf_counter()`` at the start of the search.
        seconds_per_draw: from :func:`probe` (``None`` when no probe ran).
        requested_trials, trials: ``T`` asked for and ``T'`` planned.
        notes: what changed the plan (trials lowered, pairs left out, a certification cut at the deadline).
        finished: seconds the search took (set when it returns; not in :meth:`to_dict`).
        estimate: the cost estimated from the first batch, in words (not in :meth:`to_dict`, which
            stays byte-identical for a seed when only ``progress`` asked for the estimate).
    """

    time_budget: float | None = None
    max_draws: int | None = None
    start: float = field(default_factory=time.perf_counter)
    seconds_per_draw: float | None = None
    requested_trials: int | None = None
    trials: int | None = None
    notes: list = field(default_factory=list)
    estimate: str | None = None
    finished: float | None = None

    @classmethod
    def from_args(cls, time_budget, max_draws) -> "SearchBudget":
        """Check ``time_budget`` (seconds > 0 or ``None``) and ``max_draws`` (integer ≥ 1 or ``None``)."""
        if time_budget is not None:
            try:
                tb = float(time_budget)
            except (TypeError, ValueError):
                raise ValueError(f"time_budget must be a number of seconds > 0 or None, got {time_budget!r}") from None
            if not (tb > 0 and math.isfinite(tb)):
                raise ValueError(f"time_budget must be a number of seconds > 0 or None, got {time_budget!r}")
            time_budget = tb
        if max_draws is not None:
            if isinstance(max_draws, bool) or not isinstance(max_draws, (int, np.integer, float)) \
                    or not (max_draws >= 1) or (isinstance(max_draws, float) and max_draws != int(max_draws)):
                raise ValueError(f"max_draws must be an integer >= 1 or None, got {max_draws!r}")
            max_draws = int(max_draws)
        return cls(time_budget=time_budget, max_draws=max_draws)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def expired(self) -> bool:
        """The time budget is spent."""
        return self.time_budget is not None and self.elapsed >= self.time_budget

    def chunk(self, default: int) -> int:
        """Draws per call of the mechanism: about a quarter second each under a time budget."""
        if self.time_budget is None or not self.seconds_per_draw:
            return default
        return int(min(default, max(_PROBE, 0.25 / self.seconds_per_draw)))

    def plan(self, trials: int, pilot_fraction: float, n_pairs: int, k: int, min_trials: int) -> int:
        """``T'``: ``trials`` lowered to fit ``max_draws`` and the time budget; notes say what and why.

        Raises ``ValueError`` when the budget does not allow ``min_trials`` (the smallest valid split).
        """
        self.requested_trials = int(trials)
        t = int(trials)
        total = planned_draws(t, pilot_fraction, n_pairs, k)
        if self.seconds_per_draw is not None:
            self.estimate = (f"estimated cost: {total:,} draws x {self.seconds_per_draw * 1e6:.3g} us/draw "
                             f"(from a first batch) = {_fmt_seconds(total * self.seconds_per_draw)} of drawing")
        why = []
        if self.max_draws is not None and total > self.max_draws:
            t = fit_trials(t, pilot_fraction, n_pairs, k, self.max_draws)
            why.append(f"max_draws={self.max_draws:,}")
        if self.time_budget is not None and self.seconds_per_draw is not None:
            allowed = _SAFETY * max(self.time_budget - self.elapsed, 0.0) / self.seconds_per_draw
            if planned_draws(t, pilot_fraction, n_pairs, k) > allowed:
                t = fit_trials(t, pilot_fraction, n_pairs, k, allowed)
                why.append(f"time_budget={self.time_budget:g} s")
        if why:
            if t < min_trials:
                raise ValueError(f"the budget ({', '.join(why)}) allows {t} draws per side per pair for {n_pairs} pair(s) "
                                 f"(certifying {k}); the search needs at least {min_trials}: raise the budget or give "
                                 "fewer pairs")
            self.notes.append(f"trials lowered from {trials:,} to {t:,} per side per pair to fit {' and '.join(why)} "
                              f"({planned_draws(t, pilot_fraction, n_pairs, k):,} draws)")
        self.trials = t
        return t

    def to_dict(self) -> dict:
        return {"time_budget": self.time_budget, "max_draws": self.max_draws, "requested_trials": self.requested_trials,
                "trials": self.trials, "notes": list(self.notes)}
