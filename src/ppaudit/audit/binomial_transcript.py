"""ε lower bounds of a transcript of ``n`` independent answers (Chadha et al. 2024, §5.4: Private-kNN
draws a fresh subsample per answer), from one output set's per-answer probabilities: the exact
``ε(δ)`` between two binomials (:func:`binomial_transcript_epsilon`), its composition from per-answer
event bounds (:func:`composed_event_epsilon`), and the audit from output counts
(:func:`counts_transcript_epsilon`: the set chosen on a split, Clopper–Pearson corners on the rest).
The Rao–Blackwellised counterpart, with empirical-Bernstein regions, is :mod:`.rao_blackwell`, which
uses these.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_positive_int, check_probability
from .bounds import _lr_prefix_sets

__all__ = ["binomial_transcript_epsilon", "counts_transcript_epsilon", "composed_event_epsilon"]


def binomial_transcript_epsilon(p1, p2, num_repeats: int, delta: float) -> np.ndarray:
    """Exact ``ε(δ)`` between ``Bin(n, p1)`` and ``Bin(n, p2)``, the larger of both directions.

    ``ε(δ) = max(0, max_S log((P(S) − δ)/Q(S)))``; the maximum over sets is attained by the
    likelihood-ratio prefix sets, so it is computed from the cumulative sums of the two
    probability mass functions sorted by the log-likelihood ratio. Broadcast over ``p1, p2``.

    Args:
        p1, p2: success probabilities in ``[0, 1]`` (broadcastable).
        num_repeats: ``n ≥ 1``.
        delta: ``δ ∈ [0, 1)``.

    Returns:
        ``ε ≥ 0`` (``inf`` where one law puts mass ``> δ`` where the other puts none).
    """
    from scipy.stats import binom

    n = check_positive_int(num_repeats, "num_repeats")
    dl = float(delta)
    if not (0.0 <= dl < 1.0):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    a, b = np.broadcast_arrays(np.asarray(p1, dtype=np.float64), np.asarray(p2, dtype=np.float64))
    if np.any((a < 0) | (a > 1) | (b < 0) | (b > 1)):
        raise ValueError("p1 and p2 must lie in [0, 1]")
    k = np.arange(n + 1)
    lp = binom.logpmf(k, n, a[..., None])
    lq = binom.logpmf(k, n, b[..., None])

    def one_way(lp, lq):
        with np.errstate(invalid="ignore"):
            lr = np.where(np.isneginf(lp), -np.inf, lp - lq)
        order = np.argsort(-lr, axis=-1, kind="stable")
        cp = np.cumsum(np.take_along_axis(np.exp(lp), order, -1), axis=-1)
        cq = np.cumsum(np.take_along_axis(np.exp(lq), order, -1), axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            e = np.where(cp > dl, np.log(np.maximum(cp - dl, 1e-300)) - np.log(cq), -np.inf)
        return np.maximum(np.max(e, axis=-1), 0.0)

    return np.maximum(one_way(lp, lq), one_way(lq, lp))


def composed_event_epsilon(p_low, q_high, delta: float) -> float:
    """Valid ε lower bound at ``delta`` of a transcript of independent answers, from per-answer event bounds.

    Answer ``i`` comes with an event ``O_i`` (chosen before looking at the evaluation data) and
    confidence bounds ``μ_S(O_i) ≥ p_low_i`` and ``μ_S'(O_i) ≤ q_high_i``. The count
    ``N = Σ_i 1[a_i ∈ O_i]`` is a post-processing of the transcript, Poisson-binomial on each
    side because the answers are independent; ``Pr[N ≥ t]`` is non-decreasing and
    ``Pr[N ≤ t]`` non-increasing in every success probability (monotone coupling), so on the
    event that all bounds hold, for every ``t``:
    ``Pr_S[N ≥ t] ≥ PB_sf(t; p_low)``, ``Pr_S'[N ≥ t] ≤ PB_sf(t; q_high)``,
    ``Pr_S'[N ≤ t] ≥ PB_cdf(t; q_high)``, ``Pr_S[N ≤ t] ≤ PB_cdf(t; p_low)``, and
    ``ε ≥ log((Pr[E] − δ)/Pr'[E])`` (Chadha et al. 2024, Eq. (1)) for the thresholds in both
    directions. The maximum over ``t`` and the directions is valid on the same event (every
    bound holds there at once). Answers whose bounds do not separate (``p_low ≤ q_high`` or a NaN)
    are left out of ``N`` (a different post-processing, equally valid). With one answer this is
    Eq. (1) on ``O_1`` at the box corner ``(p_low, q_high)``.

    Args:
        p_low, q_high: ``(n,)`` per-answer bounds (repeat an entry for a repeated independent answer).
        delta: ``δ ∈ [0, 1)``.

    Returns:
        ``ε ≥ 0`` (``0`` when no answer separates).
    """
    from ..divergence import poisson_binomial_pmf

    dl = float(delta)
    if not (0.0 <= dl < 1.0):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    lo = np.atleast_1d(np.asarray(p_low, dtype=np.float64))
    hi = np.atleast_1d(np.asarray(q_high, dtype=np.float64))
    if lo.shape != hi.shape or lo.ndim != 1:
        raise ValueError(f"p_low and q_high must be 1-d arrays of the same length, got shapes {lo.shape} and {hi.shape}")
    keep = np.isfinite(lo) & np.isfinite(hi) & (lo > hi)
    if not keep.any():
        return 0.0
    lo, hi = np.clip(lo[keep], 0.0, 1.0), np.clip(hi[keep], 0.0, 1.0)
    pp, qq = poisson_binomial_pmf(lo), poisson_binomial_pmf(hi)
    p_sf, q_sf = np.cumsum(pp[::-1])[::-1], np.cumsum(qq[::-1])[::-1]  # Pr[N ≥ t]
    p_cdf, q_cdf = np.cumsum(pp), np.cumsum(qq)  # Pr[N ≤ t]
    with np.errstate(divide="ignore", invalid="ignore"):
        fwd = np.where(p_sf > dl, np.log(np.maximum(p_sf - dl, 1e-300)) - np.log(np.minimum(q_sf, 1.0)), -np.inf)
        rev = np.where(q_cdf > dl, np.log(np.maximum(q_cdf - dl, 1e-300)) - np.log(np.minimum(p_cdf, 1.0)), -np.inf)
    return float(max(0.0, np.max(fwd), np.max(rev)))


def counts_transcript_epsilon(counts0, counts1, num_repeats: int, delta: float, confidence: float = 0.95,
                              selection_fraction: float = 0.1, rng=None, details: dict | None = None) -> float:
    """Valid ε lower bound at ``delta`` of ``n`` independent answers, from output counts.

    The counts of ``T`` runs per side are split at random (:func:`ppaudit.audit.split_counts`);
    on the selection part the likelihood-ratio set ``O`` maximising the plug-in
    ``ε(Bin(n, p_1) ‖ Bin(n, p_2))`` is chosen; on the evaluation part two-sided
    Clopper–Pearson intervals at ``1 − β/2`` each bound ``p_1 = μ_S(O)``, ``p_2 = μ_S'(O)``, and
    the exact binomial ε at the closest corner of the box (:func:`binomial_transcript_epsilon`;
    monotone by data processing, see the module docstring) is returned. With ``n = 1`` this
    is the (ε, δ) audit of Chadha et al. 2024, Eq. (1), on the best set.

    Args:
        counts0, counts1: output counts on ``S`` and ``S'``.
        num_repeats: ``n ≥ 1`` answers in the transcript.
        delta: ``δ ∈ [0, 1)``.
        confidence: of the bound.
        selection_fraction: share of the trials used to choose ``O``.
        rng: generator / seed of the split.
        details: if given, receives ``epsilon_event``: ``(p_low, q_high)`` of the set (or its
            complement) oriented towards ``S``, NaNs when the intervals do not separate (for
            :func:`composed_event_epsilon`).

    Returns:
        ``ε ≥ 0``.
    """
    from ..intervals import clopper_pearson
    from .bounds import _check_pair, split_counts

    c0, c1 = _check_pair(counts0, counts1)
    n = check_positive_int(num_repeats, "num_repeats")
    beta = 1.0 - check_probability(confidence, "confidence")
    gen = np.random.default_rng(rng)
    s0, e0 = split_counts(c0, selection_fraction, gen)
    s1, e1 = split_counts(c1, selection_fraction, gen)
    sets = _lr_prefix_sets((s0 + 0.5) / (s0.sum() + 0.5 * c0.size), (s1 + 0.5) / (s1.sum() + 0.5 * c1.size)).astype(float)
    pred = binomial_transcript_epsilon(sets @ s0 / s0.sum(), sets @ s1 / s1.sum(), n, delta)
    o = sets[int(np.argmax(pred))]
    lo0, hi0 = clopper_pearson(o @ e0, e0.sum(), 1.0 - beta / 2.0)
    lo1, hi1 = clopper_pearson(o @ e1, e1.sum(), 1.0 - beta / 2.0)
    lo0, hi0, lo1, hi1 = (float(np.asarray(v)) for v in (lo0, hi0, lo1, hi1))
    if details is not None:
        details["epsilon_event"] = (lo0, hi1) if lo0 > hi1 else (1.0 - hi0, 1.0 - lo1) if lo1 > hi0 else (float("nan"), float("nan"))
    if lo0 > hi1:
        return float(binomial_transcript_epsilon(lo0, hi1, n, delta))
    if lo1 > hi0:
        return float(binomial_transcript_epsilon(hi0, lo1, n, delta))
    return 0.0
