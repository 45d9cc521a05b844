"""Sound 2-cut audits from Rao–Blackwellised Monte Carlo of a random-histogram model (``procedure: ours``).

Setting (Chadha et al. 2024, §4.2, §5–§6, App. B). A vote model draws a random histogram
``B`` and the noisy argmax answers from it; the output laws ``μ_S = E_B[Pr[· | B]]`` and
``μ_S' = E_B[Pr'[· | B]]`` cannot be enumerated when the votes spread over many classes
(Private-kNN ``Mult(200, P_q)`` over ten classes). Rao–Blackwellised Monte Carlo draws
``B_1 … B_M`` and, per draw, computes the *exact conditional* output probabilities
``p_m = Pr[· | B_m]`` and ``q_m = Pr'[· | B_m]`` (Eq. (4)) with the *same* draw on both sides
(common random numbers). For an output set ``O``:

* ``X_m = p_m(O) ∈ [0, 1]`` are i.i.d. with mean ``p_1 = μ_S(O)``;
* ``D_m = p_m(O) − q_m(O)`` are i.i.d. with mean ``d = p_1 − p_2`` and ``|D_m| ≤ b``, where
  ``b`` is a model-specific bound (Private-kNN: ``ν`` times the total variation between two
  Gaussians whose means differ by one displaced vote). The paired differences make ``d``
  orders of magnitude more precise than two separate estimates.

**Confidence bounds.** Each of ``p_1`` (both sides) and ``d`` (both sides) gets the one-sided
*empirical Bernstein* bound of Maurer & Pontil (2009, Thm 4): for i.i.d. ``Z_i ∈ [a, a + R]``
and ``δ ∈ (0, 1)``, with probability ``≥ 1 − δ``

    ``E Z ≥ Z̄ − sqrt(2 V_n ln(2/δ) / n) − 7 R ln(2/δ) / (3 (n − 1))``

(``V_n`` the unbiased sample variance), and symmetrically for the upper side. The four
bounds of a set hold together with probability ``≥ 1 − β`` at ``δ = β/4`` each (union bound).
A deterministic numerical error of the conditional probabilities (quadrature) widens every
interval by ``bias``. Neither scipy nor statsmodels provides an empirical Bernstein bound
(``scipy.stats`` has binomial / bootstrap intervals only), so it is implemented here and
tested for coverage.

**From the confidence region to the 2-cut.** The region is ``p_1 ∈ [L_1, U_1]``,
``d ∈ [L_d, U_d]``. If ``0 ∈ [L_d, U_d]`` the bound is 0. Otherwise let ``g > 0`` be the
smallest ``|d|`` in the region. For a fixed ``p_1``, ``D_α(Ber(p_1) ‖ Ber(p_2))`` and its
reverse do not increase as ``p_2`` moves towards ``p_1`` (a binary channel maps the farther
pair onto the nearer one, and Rényi and hockey-stick divergences obey data processing), so the
minimum over the region lies on the line ``p_2 = p_1 ∓ g``. Along that line the 2-cut sum
``p_1^α p_2^{1−α} + (1−p_1)^α (1−p_2)^{1−α}`` (and its reverse) is convex in ``p_1`` (``x^α y^{1−α}``
is jointly convex for ``α > 1``, and the line is affine), so the minimum over ``p_1`` of the
larger direction is found by bisection on a subgradient and bounded below rigorously by the
tangent at the bracket (:func:`_min_convex_excess`). It is valid for every order at once and
replaces the Clopper–Pearson intervals of :func:`ppaudit.audit.two_cut_lower_bound` (App. B,
first display; that display evaluates the two terms at different corners of the box and is
looser).

**(ε, δ) lower bound of a transcript.** With ``n`` independent answers (Private-kNN draws a
fresh subsample per answer) the number of answers in ``O`` is ``Bin(n, p_1)`` vs
``Bin(n, p_2)``: a post-processing of the transcript. The interval of ``p_1`` is cut into cells
narrower than ``g/8``; over a cell ``[a, a + w]`` with ``p_2 ≤ p_1 − g`` the binomial ``ε(δ)``
is at least its value at the closest corner ``(a, a + w − g)`` (the same monotonicity, applied
coordinate-wise to ``n`` answers), and the minimum over cells is a valid lower bound on the ε
of the mechanism at ``δ``.

**Choice of ``O``** — as :func:`ppaudit.audit.two_cut_lower_bound`: ``selection="split"``
chooses, per order, one of the likelihood-ratio prefix sets of the estimated laws on a random
fraction of the draws (the prediction at the evaluation size), and bounds on the rest with a
Bonferroni correction over the distinct sets chosen; ``selection="bonferroni"`` uses all draws
with a correction over all ``2^(C−1) − 1`` sets.

**The paper's procedure** (:func:`paper_counts_from_estimate`): the estimated law is treated
as exact and ``T`` counts are drawn from it (``T = 1e8`` in the paper) for the Clopper–Pearson
2-cut. It ignores the estimation error of the law and is not a valid bound; it is kept,
labelled ``procedure: paper``, for comparison.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validation import as_orders, check_positive_int, check_probability
from .binomial_transcript import binomial_transcript_epsilon
from .bounds import _lr_prefix_sets

__all__ = [
    "empirical_bernstein_bounds",
    "RaoBlackwellAudit",
    "rao_blackwell_two_cut",
    "paper_counts_from_estimate",
    "rao_blackwell_transcript_event",
]


def empirical_bernstein_bounds(values, delta: float, value_range: float, bias: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One-sided empirical Bernstein bounds on a mean (Maurer & Pontil 2009, Thm 4).

    For i.i.d. ``Z_1 … Z_n`` with values in an interval of length ``R`` (``value_range``), each of
    ``E Z ≥ lo`` and ``E Z ≤ hi`` holds with probability ``≥ 1 − δ``, where
    ``lo, hi = Z̄ ∓ (sqrt(2 V_n ln(2/δ)/n) + 7 R ln(2/δ)/(3(n − 1)) + bias)``.

    Args:
        values: ``(n, ...)`` samples (axis 0), ``n ≥ 2``.
        delta: the error probability of EACH side, in ``(0, 1)``.
        value_range: ``R > 0``, the length of an interval that holds every sample (a bound
            known before sampling, not the observed range).
        bias: ``≥ 0``; a bound on a deterministic error of every sample (e.g. quadrature),
            added to the radius.

    Returns:
        ``(mean, lo, hi)`` with the shape of ``values[0]``.

    Raises:
        ValueError: fewer than 2 samples, ``delta`` not in ``(0, 1)``, ``value_range ≤ 0``,
            ``bias < 0``, or samples spread wider than ``value_range``.
    """
    z = np.asarray(values, dtype=np.float64)
    if z.ndim == 0 or z.shape[0] < 2:
        raise ValueError(f"values must hold at least 2 samples along axis 0, got shape {z.shape}")
    d = float(delta)
    if not (0.0 < d < 1.0):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    r = float(value_range)
    if not (r > 0.0 and math.isfinite(r)):
        raise ValueError(f"value_range must be a finite number > 0, got {value_range!r}")
    if not (float(bias) >= 0.0):
        raise ValueError(f"bias must be >= 0, got {bias!r}")
    spread = float(np.max(z.max(axis=0) - z.min(axis=0)))
    if spread > r * (1.0 + 1e-9) + 1e-15:
        raise ValueError(f"the samples spread over {spread:.6g} > value_range={r:.6g}: the range bound is wrong")
    n = z.shape[0]
    mean = z.mean(axis=0)
    var = z.var(axis=0, ddof=1)
    rad = _eb_radius(var, n, d, r) + float(bias)
    return mean, mean - rad, mean + rad


def _eb_radius(var, n: int, delta: float, value_range: float):
    """Maurer & Pontil (2009), Thm 4 radius for one side at level ``delta``."""
    log_term = math.log(2.0 / delta)
    return np.sqrt(2.0 * np.asarray(var) * log_term / n) + 7.0 * value_range * log_term / (3.0 * (n - 1))




def rao_blackwell_transcript_event(
    p_draws,
    q_draws,
    delta: float,
    confidence: float = 0.95,
    *,
    difference_bounds=1.0,
    bias: float = 0.0,
    rng=None,
    pilot_fraction: float = 0.2,
    min_event_mass: float = 0.05,
) -> RaoBlackwellAudit:
    """Valid ε lower bound of a transcript of independent answers, Rao–Blackwellised as a whole (``procedure: ours``).

    :func:`~ppaudit.audit.binomial_transcript.composed_event_epsilon` composes per-answer *interval corners* ``(p_low, q_high)``;
    when each answer's shift ``μ_S(O_i) − μ_S'(O_i)`` is smaller than its interval, no corner
    separates and the bound is 0, however many answers there are. This audit keeps the pairing.

    Answer ``i`` (of ``n`` independent answers, e.g. Private-kNN's natural queries, each with a
    fresh subsample) comes with ``M`` Rao–Blackwellised draws ``p_i,m``, ``q_i,m`` of its
    conditional output law (common random numbers on both sides, as for
    :func:`rao_blackwell_two_cut`). On a pilot share of the draws, choose ``O_i`` (the classes the
    pilot means make likelier under ``S'``), the answers ``K`` that enter the count (the ``|K|``
    with the largest pilot signal-to-noise of their paired shift; ``|K|`` from a doubling grid,
    the one whose audit on the pilot draws is largest — many answers with no shift only add
    noise) and a count threshold ``t`` (the largest pilot ``log((Pr'[N ≥ t] − δ)/Pr[N ≥ t])`` with
    ``Pr'[N ≥ t] ≥ min_event_mass``), where ``N = Σ_{i ∈ K} 1[a_i ∈ O_i]``. On the other draws, ``X_m = PB_sf(t; (p_i,m(O_i))_i)`` and
    ``Y_m = PB_sf(t; (q_i,m(O_i))_i)``, with the ``m``-th draw of every answer (draws of
    different answers are independent). ``PB_sf`` is multilinear in the success probabilities, so
    ``E X_m = Pr_S[N ≥ t]`` and ``E Y_m = Pr_S'[N ≥ t]`` exactly. It is 1-Lipschitz in each of
    them (its partial derivative is a probability), so ``|X_m − Y_m| ≤ Σ_i b_i`` and the numerical
    error is at most ``n · bias``. :func:`rao_blackwell_two_cut` on the binary output
    ``(X_m, 1 − X_m)`` vs ``(Y_m, 1 − Y_m)`` (one set: no selection cost) then bounds the RDP and,
    with ``num_repeats = 1``, the ε at ``delta`` of the event ``N ≥ t`` — a post-processing of the
    whole transcript, so a valid ε lower bound of the transcript.

    Args:
        p_draws, q_draws: sequences of ``n`` arrays ``(M, C_i)`` (the same ``M``).
        delta: ``δ ∈ [0, 1)``.
        confidence: confidence of the bound.
        difference_bounds: ``b_i`` (scalar or ``(n,)``) with ``|p_i,m(O) − q_i,m(O)| ≤ b_i``.
        bias: bound on the absolute numerical error of each ``p_i,m(O)``, ``q_i,m(O)``.
        rng: generator / seed of the pilot split.
        pilot_fraction: share of the draws that choose ``O_i`` and ``t``.
        min_event_mass: the smallest pilot ``Pr'[N ≥ t]`` a threshold may have.

    Returns:
        A :class:`RaoBlackwellAudit` at order 2 (``epsilon_lower_bound`` is the point); ``details``
        holds ``threshold``, ``pilot_draws``, ``answers`` and ``answers_counted`` (``|K|``).

    Raises:
        ValueError: no answers, shapes that differ, too few draws, bad options.
    """
    from ..divergence import poisson_binomial_pmf

    ps = [np.asarray(x, dtype=np.float64) for x in p_draws]
    qs = [np.asarray(x, dtype=np.float64) for x in q_draws]
    if not ps or len(ps) != len(qs):
        raise ValueError(f"p_draws and q_draws must list the same number (>= 1) of answers, got {len(ps)} and {len(qs)}")
    m = ps[0].shape[0]
    for i, (a_, b_) in enumerate(zip(ps, qs)):
        if a_.ndim != 2 or a_.shape != b_.shape or a_.shape[0] != m:
            raise ValueError(f"answer {i}: p and q draws must be (M, C) arrays with M = {m}, got {a_.shape} and {b_.shape}")
    dl = float(delta)
    if not (0.0 <= dl < 1.0):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    frac = check_probability(pilot_fraction, "pilot_fraction")
    n = len(ps)
    bounds = np.broadcast_to(np.asarray(difference_bounds, dtype=np.float64), (n,))
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    k = int(round(frac * m))
    if k < 2 or m - k < 4:
        raise ValueError(f"need at least 2 pilot and 4 evaluation draws, got M = {m} with pilot_fraction {pilot_fraction!r}")
    perm = gen.permutation(m)
    pilot, rest = perm[:k], perm[k:]
    sets = [q[pilot].mean(axis=0) > p[pilot].mean(axis=0) for p, q in zip(ps, qs)]
    x = np.stack([p[:, o].sum(axis=1) for p, o in zip(ps, sets)], axis=1).clip(0.0, 1.0)  # (M, n)
    y = np.stack([q[:, o].sum(axis=1) for q, o in zip(qs, sets)], axis=1).clip(0.0, 1.0)
    sf = lambda pmf: np.cumsum(pmf[..., ::-1], axis=-1)[..., ::-1]  # noqa: E731  Pr[N ≥ t], t = 0 … |K|
    two = lambda v: np.stack([v, 1.0 - v], axis=1).clip(0.0, 1.0)  # noqa: E731

    def threshold(idx):
        p_sf, q_sf = sf(poisson_binomial_pmf(x[pilot][:, idx].mean(axis=0))), sf(poisson_binomial_pmf(y[pilot][:, idx].mean(axis=0)))
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(q_sf[1:] >= max(min_event_mass, dl), np.log(np.maximum(q_sf[1:] - dl, 1e-300)) - np.log(p_sf[1:]), -np.inf)
        return 1 + int(np.argmax(score))

    def audit(rows, idx, t):
        """The 2-cut on ``N ≥ t`` from the draws ``rows``, and the paired z-score of its shift (a tie-break)."""
        xs, ys = sf(poisson_binomial_pmf(x[rows][:, idx]))[:, t], sf(poisson_binomial_pmf(y[rows][:, idx]))[:, t]
        res = rao_blackwell_two_cut(
            two(xs), two(ys), [2.0], confidence, difference_bound=float(min(1.0, max(bounds[idx].sum(), 1e-12))),
            bias=float(min(1.0, idx.size * bias)), selection="bonferroni", num_repeats=1, delta=dl,
        )
        dd = ys - xs
        return res, float(dd.mean() / (dd.std() + 1e-12) * math.sqrt(dd.size))

    shift = (y[pilot] - x[pilot]).mean(axis=0)
    noise = (y[pilot] - x[pilot]).std(axis=0) + (x[pilot].std(axis=0) + 1e-9)
    order = np.argsort(-(shift / noise), kind="stable")
    best = None
    for size in sorted({min(n, 2**j) for j in range(int(math.ceil(math.log2(n))) + 1)}):
        idx = np.sort(order[:size])
        t = threshold(idx)
        res, z = audit(pilot, idx, t)
        score = (res.epsilon_lower_bound, z)  # the pilot audit, then its paired z where the pilot audits are 0
        if best is None or score > best[0]:
            best = (score, idx, t)
    _, idx, t = best
    res, _ = audit(rest, idx, t)
    res.details.update(threshold=t, pilot_draws=k, answers=n, answers_counted=int(idx.size))
    return res


def _oriented_event(l1, u1, ld, ud) -> tuple[float, float]:
    """``(p_low, q_high)`` of the event (``O`` or its complement) that ``S`` makes likelier, from the
    region ``p_1 ∈ [l1, u1]``, ``d = p_1 − p_2 ∈ [ld, ud]``; NaNs when the region does not separate."""
    if ld > 0:  # μ_S(O) ≥ l1, μ_S'(O) = p_1 − d ≤ u1 − ld
        return float(l1), float(min(1.0, u1 - ld))
    if ud < 0:  # complement: μ_S(O^c) ≥ 1 − u1, μ_S'(O^c) = 1 − p_1 + d ≤ 1 − l1 + ud
        return float(1.0 - u1), float(min(1.0, 1.0 - l1 + ud))
    return float("nan"), float("nan")


@dataclass
class RaoBlackwellAudit:
    """Result of :func:`rao_blackwell_two_cut`.

    Attributes:
        orders: the orders α.
        lower_bound: ``(A,)`` RDP lower bound per order (larger direction, ``≥ 0``).
        output_sets: ``(A, C)`` the set ``O`` used per order.
        confidence: the overall confidence (all orders and the ε bound together).
        evaluation_draws: draws the confidence bounds used.
        epsilon_lower_bound: valid ε lower bound at ``delta`` of ``num_repeats`` independent
            answers (``nan`` when not asked for).
        details: ``selection``, number of distinct sets, per-set intervals, and
            ``epsilon_event``: ``(p_low, q_high)`` of the ε bound's set oriented towards ``S``
            (:func:`~ppaudit.audit.binomial_transcript.composed_event_epsilon` composes them over independent queries; NaNs when
            the set does not separate).
    """

    orders: np.ndarray
    lower_bound: np.ndarray
    output_sets: np.ndarray
    confidence: float
    evaluation_draws: int
    epsilon_lower_bound: float = float("nan")
    details: dict = field(default_factory=dict)


def _region(p_draws, q_draws, sets, beta_each, diff_bound, bias):
    """Per set: ``(L1, U1, Ld, Ud)`` of ``p_1 = μ_S(O)`` and ``d = μ_S(O) − μ_S'(O)``."""
    x = p_draws @ sets.T.astype(np.float64)  # (M, S)
    y = q_draws @ sets.T.astype(np.float64)
    _, l1, u1 = empirical_bernstein_bounds(x, beta_each, 1.0, bias)
    _, ld, ud = empirical_bernstein_bounds(x - y, beta_each, 2.0 * diff_bound + 4.0 * bias, 2.0 * bias)
    return np.clip(l1, 0.0, 1.0), np.clip(u1, 0.0, 1.0), ld, ud


def _corners(l1, u1, ld, ud, max_cells: int):
    """Closest corners ``(p1, p2)`` of the grid cells, shape ``(S, cells)`` (NaN: no cell).

    Returns also ``zero``: ``(S,)`` sets whose region contains ``d = 0``.
    """
    s = l1.size
    zero = (ld <= 0.0) & (ud >= 0.0)
    sign = np.where(ld > 0.0, 1.0, -1.0)
    g = np.where(ld > 0.0, ld, -ud)  # smallest |d| in the region
    # p_2 = p_1 − sign·g must lie in [0, 1]: restrict p_1 accordingly
    lo = np.where(sign > 0, np.maximum(l1, g), l1)
    hi = np.where(sign > 0, u1, np.minimum(u1, 1.0 - g))
    width = np.maximum(hi - lo, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ncell = np.where(zero | (g <= 0), 1, np.clip(np.ceil(8.0 * width / np.where(g > 0, g, 1.0)), 1, max_cells)).astype(int)
    m = int(ncell.max()) if s else 1
    j = np.arange(m)[None, :]
    w = width[:, None] / ncell[:, None]
    a = lo[:, None] + j * w
    b = a + w
    valid = (j < ncell[:, None]) & ~zero[:, None] & (hi[:, None] >= lo[:, None])
    # d > 0: corner (a, b − g); d < 0: corner (b, a + g)
    p1 = np.where(sign[:, None] > 0, a, b)
    p2 = np.where(sign[:, None] > 0, b - g[:, None], a + g[:, None])
    p2 = np.clip(p2, 0.0, 1.0)
    p1 = np.where(valid, p1, np.nan)
    p2 = np.where(valid, p2, np.nan)
    # a corner whose p_2 is on the wrong side of p_1 (cell wider than g) bounds nothing
    wrong = np.where(sign[:, None] > 0, p2 >= p1, p2 <= p1)
    p2 = np.where(wrong, p1, p2)
    return p1, p2, zero


def _excess_and_slope(p, s, g, alpha, reverse):
    """``f − 1`` and ``f'`` of ``f(p) = Σ`` of the 2-cut sum along ``p_2 = p − s·g``.

    Forward: ``f = p^α p_2^{1−α} + (1−p)^α (1−p_2)^{1−α}``; reverse: the roles of ``p`` and
    ``p_2`` swapped. ``f − 1`` is computed with ``expm1``/``log1p`` (it is ``O(g²)``). At the
    ends where ``p_2 ∈ {0, 1}`` the limits are used: forward ``f = +∞`` with
    ``f' = ∓∞``; reverse, the vanishing term and its derivative are 0 (``α > 1``).
    """
    p2 = p - s * g
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if not reverse:
            a1 = -(alpha - 1.0) * np.log1p(-s * g / p)  # log(p^α p2^{1−α} / p)
            a2 = -(alpha - 1.0) * np.log1p(s * g / (1.0 - p))
            t1, t2 = p * np.exp(a1), (1.0 - p) * np.exp(a2)
            slope = t1 * (alpha / p + (1.0 - alpha) / p2) + t2 * (-alpha / (1.0 - p) - (1.0 - alpha) / (1.0 - p2))
            excess = p * np.expm1(a1) + (1.0 - p) * np.expm1(a2)
            excess = np.where(np.isnan(excess), np.inf, excess)
            slope = np.where(np.isnan(slope), -np.inf * s, slope)
        else:
            a1 = (alpha - 1.0) * np.log1p(-s * g / p)  # log(p2^α p^{1−α} / p2)
            a2 = (alpha - 1.0) * np.log1p(s * g / (1.0 - p))
            t1, t2 = p2 * np.exp(a1), (1.0 - p2) * np.exp(a2)
            d1 = np.nan_to_num(t1 * (alpha / p2 + (1.0 - alpha) / p), nan=0.0)
            d2 = np.nan_to_num(t2 * (-alpha / (1.0 - p2) - (1.0 - alpha) / (1.0 - p)), nan=0.0)
            slope = d1 + d2
            excess = p2 * np.expm1(a1) + (1.0 - p2) * np.expm1(a2)
    return excess, slope


def _larger_direction(p, s, g, alpha):
    """``max`` of the forward and reverse ``f − 1`` and a subgradient of that maximum."""
    ef, sf = _excess_and_slope(p, s, g, alpha, False)
    er, sr = _excess_and_slope(p, s, g, alpha, True)
    fwd = ef >= er
    return np.where(fwd, ef, er), np.where(fwd, sf, sr)


def _min_convex_excess(lo, hi, s, g, alpha, iters: int = 56):
    """A rigorous lower bound on ``min_{p ∈ [lo, hi]} h(p)``, ``h = max(f_fwd, f_rev) − 1``.

    ``x^α y^{1−α}`` is jointly convex for ``α > 1`` (the perspective of ``t^α``); each ``f`` is a
    sum of two such terms along an affine line, hence convex, and so is their maximum ``h``.
    Bisection on the sign of a subgradient brackets the minimiser in ``[x_l, x_r]``;
    convexity gives ``h ≥ h(x_l) + h'(x_l)(x_r − x_l)`` there, and ``h`` is larger outside.
    Ends where the subgradient does not change sign are exact.
    """
    xl, xr = lo.copy(), hi.copy()
    el, sl = _larger_direction(xl, s, g, alpha)
    er, sr = _larger_direction(xr, s, g, alpha)
    left = sl >= 0.0  # non-decreasing on the interval: min at lo
    right = ~left & (sr <= 0.0)  # non-increasing: min at hi
    inner = ~(left | right)
    e_lo = el.copy()
    for _ in range(iters):
        if not inner.any():
            break
        mid = 0.5 * (xl + xr)
        _, sm = _larger_direction(mid, s, g, alpha)
        xl = np.where(inner & (sm < 0.0), mid, xl)
        xr = np.where(inner & (sm >= 0.0), mid, xr)
    el, sl = _larger_direction(xl, s, g, alpha)
    with np.errstate(invalid="ignore"):
        tangent = el + np.minimum(sl, 0.0) * (xr - xl)
    return np.where(left, e_lo, np.where(right, er, np.nan_to_num(tangent, nan=0.0, neginf=0.0)))


def _bound_from_region(l1, u1, ld, ud, orders, max_cells=None):
    """``(S, A)`` RDP lower bounds: the exact minimum over the region of the larger direction's
    Bernoulli Rényi divergence, bounded below rigorously (:func:`_min_convex_excess`).

    For each set, ``d`` sits at its value nearest 0 (``g``) and ``p_1`` ranges over
    ``[max(L_1, g), U_1]`` (``d > 0``) or ``[L_1, min(U_1, 1 − g)]`` (``d < 0``). A small
    relative safety margin (``1e-12``) absorbs floating-point rounding.
    """
    zero = (ld <= 0.0) & (ud >= 0.0)
    s = np.where(ld > 0.0, 1.0, -1.0)
    g = np.where(zero, 0.0, np.where(ld > 0.0, ld, -ud))
    lo = np.where(s > 0, np.maximum(l1, g), l1)
    hi = np.where(s > 0, u1, np.minimum(u1, 1.0 - g))
    ok = ~zero & (hi >= lo) & (g > 0) & (lo > 0) & (hi < 1)
    out = np.zeros((l1.size, orders.size))
    if not ok.any():
        return out
    lo_, hi_, s_, g_ = lo[ok], hi[ok], s[ok], g[ok]
    fin = np.isfinite(orders)
    if fin.any():  # all sets × finite orders in one bisection
        af = orders[fin][None, :]
        col = lambda v: np.broadcast_to(v[:, None], (v.size, af.shape[1])).copy()  # noqa: E731
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            d = np.log1p(np.maximum(_min_convex_excess(col(lo_), col(hi_), col(s_), col(g_), af), 0.0)) / (af - 1.0)
        sub = np.where(np.isfinite(d), d * (1.0 - 1e-12), 0.0)
        out[np.ix_(np.flatnonzero(ok), np.flatnonzero(fin))] = sub
    if (~fin).any():  # D_∞ = max log-ratio: monotone in p along the line
        fwd = np.where(s_ > 0, np.log(hi_ / (hi_ - g_)), np.log((1.0 - lo_) / (1.0 - lo_ - g_)))
        rev = np.where(s_ > 0, np.log((1.0 - lo_ + g_) / (1.0 - lo_)), np.log((hi_ + g_) / hi_))
        out[np.ix_(np.flatnonzero(ok), np.flatnonzero(~fin))] = np.maximum(fwd, rev)[:, None]
    return np.maximum(out, 0.0)


def _epsilon_from_region(l1, u1, ld, ud, num_repeats, delta, max_cells):
    p1, p2, zero = _corners(l1, u1, ld, ud, max_cells)
    out = np.zeros(l1.size)
    for i in range(l1.size):
        ok = np.isfinite(p1[i])
        if zero[i] or not ok.any():
            continue
        out[i] = float(np.min(binomial_transcript_epsilon(p1[i][ok], p2[i][ok], num_repeats, delta)))
    return out


def rao_blackwell_two_cut(
    p_draws,
    q_draws,
    orders,
    confidence: float = 0.95,
    *,
    difference_bound: float = 1.0,
    bias: float = 0.0,
    selection: str = "split",
    selection_fraction: float = 0.1,
    rng=None,
    num_repeats: int | None = None,
    delta: float | None = None,
    max_cells: int = 4096,
) -> RaoBlackwellAudit:
    """Sound 2-cut RDP lower bound (and ε lower bound) from Rao–Blackwellised draws (``procedure: ours``).

    Chadha et al. 2024, Eq. (3) and App. B (2-cut), with the Clopper–Pearson intervals of the
    sampled counts replaced by empirical Bernstein bounds (Maurer & Pontil 2009, Thm 4) on the
    Rao–Blackwellised means and their paired differences; see the module docstring.

    Args:
        p_draws, q_draws: ``(M, C)`` conditional output probabilities on ``S`` and ``S'``, row
            ``m`` for the ``m``-th common draw of the model's randomness (i.i.d. rows).
        orders: Rényi orders α > 1.
        confidence: overall confidence of the bounds of all orders and of the ε bound.
        difference_bound: ``b`` with ``|p_m(O) − q_m(O)| ≤ b`` for every draw and set
            (model-specific; 1 is always true).
        bias: bound on the absolute numerical error of every ``p_m(O)``, ``q_m(O)``.
        selection: ``"split"`` or ``"bonferroni"`` (module docstring).
        selection_fraction: share of the draws used to choose ``O`` with ``"split"``.
        rng: generator / seed of the random split.
        num_repeats, delta: with both, also the valid ε lower bound at ``delta`` of
            ``num_repeats`` independent answers.
        max_cells: grid cells per set of the ε bound's minimisation (cost and tightness).

    Returns:
        A :class:`RaoBlackwellAudit`.

    Raises:
        ValueError: shapes differ, rows outside ``[0, 1]``, too few draws, a bad option, or
            paired differences larger than ``difference_bound``.
    """
    p = np.asarray(p_draws, dtype=np.float64)
    q = np.asarray(q_draws, dtype=np.float64)
    if p.ndim != 2 or p.shape != q.shape or p.shape[1] < 2:
        raise ValueError(f"p_draws and q_draws must be (M, C) arrays of the same shape with C >= 2, got {p.shape} and {q.shape}")
    if np.any(p < -1e-9) or np.any(p > 1 + 1e-9) or np.any(q < -1e-9) or np.any(q > 1 + 1e-9):
        raise ValueError("p_draws and q_draws must hold probabilities in [0, 1]")
    a = as_orders(orders)
    conf = check_probability(confidence, "confidence")
    beta = 1.0 - conf
    b = float(difference_bound)
    if not (0.0 < b <= 1.0):
        raise ValueError(f"difference_bound must be in (0, 1], got {difference_bound!r}")
    mc = check_positive_int(max_cells, "max_cells")
    want_eps = num_repeats is not None and delta is not None
    if want_eps:
        check_positive_int(num_repeats, "num_repeats")
    m, c = p.shape
    if selection == "split":
        f = check_probability(selection_fraction, "selection_fraction")
        gen = np.random.default_rng(rng)
        perm = gen.permutation(m)
        ns = int(round(f * m))
        if ns < 2 or m - ns < 2:
            raise ValueError(f"{m} draws with selection_fraction={selection_fraction} leave a part with < 2 draws; use more draws")
        sel, ev = perm[:ns], perm[ns:]
        sets = _lr_prefix_sets(np.clip(p[sel].mean(0), 1e-300, None), np.clip(q[sel].mean(0), 1e-300, None))
        ne = ev.size
        # predicted bound at the evaluation size from the selection part's moments
        xs, ys = p[sel] @ sets.T.astype(float), q[sel] @ sets.T.astype(float)
        pl1, pu1, pld, pud = _predicted_region(xs, xs - ys, ne, beta / 4.0, b, bias)
        pred = _bound_from_region(pl1, pu1, pld, pud, a)
        chosen = np.argmax(pred, axis=0)
        eps_set = None
        if want_eps:
            pe = _epsilon_from_region(pl1, pu1, pld, pud, int(num_repeats), float(delta), min(mc, 64))
            eps_set = int(np.argmax(pe))
        distinct = np.unique(np.concatenate([chosen, [eps_set]]) if eps_set is not None else chosen)
        per = beta / (4.0 * distinct.size)
        l1, u1, ld, ud = _region(p[ev], q[ev], sets[distinct], per, b, bias)
        bd = _bound_from_region(l1, u1, ld, ud, a)
        pos = np.searchsorted(distinct, chosen)
        lb = bd[pos, np.arange(a.size)]
        out_sets = sets[chosen]
        eps = float("nan")
        if want_eps:
            k = int(np.searchsorted(distinct, eps_set))
            eps = float(_epsilon_from_region(l1[k : k + 1], u1[k : k + 1], ld[k : k + 1], ud[k : k + 1], int(num_repeats), float(delta), min(mc, 128))[0])
        det = {"selection": "split", "distinct_sets": int(distinct.size), "p1_interval": (l1, u1), "difference_interval": (ld, ud)}
        if want_eps:
            det["epsilon_event"] = _oriented_event(l1[k], u1[k], ld[k], ud[k])
        return RaoBlackwellAudit(a, lb, out_sets, conf, int(ne), eps, det)
    if selection == "bonferroni":
        family = 2.0 ** (c - 1) - 1.0
        per = beta / (4.0 * family)
        sets = _lr_prefix_sets(np.clip(p.mean(0), 1e-300, None), np.clip(q.mean(0), 1e-300, None))
        l1, u1, ld, ud = _region(p, q, sets, per, b, bias)
        bd = _bound_from_region(l1, u1, ld, ud, a)
        best = np.argmax(bd, axis=0)
        lb = bd[best, np.arange(a.size)]
        eps = float("nan")
        if want_eps:
            per_set = _epsilon_from_region(l1, u1, ld, ud, int(num_repeats), float(delta), min(mc, 128))
            eps, k = float(np.max(per_set)), int(np.argmax(per_set))
        det = {"selection": "bonferroni", "family_size": family, "p1_interval": (l1, u1), "difference_interval": (ld, ud)}
        if want_eps:
            det["epsilon_event"] = _oriented_event(l1[k], u1[k], ld[k], ud[k])
        return RaoBlackwellAudit(a, lb, sets[best], conf, int(m), eps, det)
    raise ValueError(f"selection must be 'split' or 'bonferroni', got {selection!r}")


def _predicted_region(x, d, n_eval, beta_each, diff_bound, bias):
    """The region the evaluation part would give if its moments were those of the selection part."""
    mx, md = x.mean(0), d.mean(0)
    rx = _eb_radius(x.var(0, ddof=1), n_eval, beta_each, 1.0) + bias
    rd = _eb_radius(d.var(0, ddof=1), n_eval, beta_each, 2.0 * diff_bound + 4.0 * bias) + 2.0 * bias
    return np.clip(mx - rx, 0, 1), np.clip(mx + rx, 0, 1), md - rd, md + rd


def paper_counts_from_estimate(p_draws, q_draws, trials: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """The paper's procedure for an estimated law: ``T`` counts per side from the Monte Carlo
    mean, treated as exact runs of the mechanism (``procedure: paper``; NOT a valid bound).

    Chadha et al. 2024 draw their 1e8 counts from the model's output law; where that law is
    itself a Monte Carlo estimate (``μ̂_S = mean_m p_m``), the Clopper–Pearson intervals on
    these counts ignore the estimation error of ``μ̂``.

    Args:
        p_draws, q_draws: ``(M, C)`` Rao–Blackwellised conditional output probabilities.
        trials: ``T`` per side.
        rng: generator / seed.

    Returns:
        ``(counts0, counts1)`` int64 ``(C,)``.
    """
    t = check_positive_int(trials, "trials")
    gen = np.random.default_rng(rng)
    mp = np.clip(np.asarray(p_draws, dtype=np.float64).mean(0), 0.0, None)
    mq = np.clip(np.asarray(q_draws, dtype=np.float64).mean(0), 0.0, None)
    return gen.multinomial(t, mp / mp.sum()).astype(np.int64), gen.multinomial(t, mq / mq.sum()).astype(np.int64)
