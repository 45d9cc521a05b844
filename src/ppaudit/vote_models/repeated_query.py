"""Exact Rényi divergence of the transcript of ``n`` repeated queries of a randomly trained mechanism.

Setting (Chadha et al. 2024, §4.1 AdvQ adversaries, §5.1 PATE model): one training run
produces one vote histogram ``H`` (``H_S ~ Mult(k, P_q)`` or
``H_S' ~ Mult(k−1, P_q) + Mult(1, P'_q)``); the adversary asks its query ``n`` times and
receives ``n`` Gaussian noisy argmaxes of that **same** ``H`` with fresh noise each. Given
``H`` the answers are i.i.d. ``p(H) = Pr[argmax(H + N(0, σ²I)) = ·]`` (Eq. (4)), so the
answer-count vector ``N`` is a sufficient statistic of the (exchangeable) transcript and

    ``L_S(N) = E_{H ~ H_S}[ Multinomial(N; n, p(H)) ]``   (and ``L_S'`` the same under ``H_S'``).

The paper composes the single-answer RDP over the ``n`` answers (``n · D_α(μ_S ‖ μ_S')``),
which treats the answers as independent; they are not (the histogram is shared). By data
processing the transcript's divergence is at most ``D_α(H_S ‖ H_S')`` (the *histogram cap*),
itself at most ``D_α(P_q ‖ P'_q)`` (the *vote cap*: the histograms are a post-processing of
the differing voter's vote). The caps are the upper bounds certified here: the transcript is **not**
bounded by ``n · D_α(μ_S ‖ μ_S')`` (issue 27 §2). The composition theorem needs independent
answers; with a shared histogram a rare mixture component whose likelihood ratio is diluted in
one answer builds up over ``n`` answers. E.g. ``k = 5``, ``σ = 4``, ``P_q = (0.1, 0.9)``,
``P'_q = (0, 1)``, ``n = 10``: at ``α = 24`` the transcript RDP is 0.367 against
``n ×`` single = 0.110, and the exact ε at ``δ = 1e-6`` (PLD) 0.764 against 0.388 for ten
independent answers; ``k = 20``, ``σ = 4``, ``P_q = (0.05, 0.45, 0.5)``,
``P'_q = (0, 0.45, 0.55)``, ``n = 5``, ``α = 64``: 0.0641 against 0.0223 (ratio 2.88) — both
checked by brute force over every answer sequence (tests/unit/vote_models/test_repeated_query.py).

How the numbers are computed (``method``):

* ``"enumerate"`` — exact up to a certified interval. The base ``B`` (the ``k − 1`` shared
  votes) is enumerated with certified pruning (:func:`enumerate_base_certified`; pruned mass
  ``r``), the histograms ``H = B + e_v`` get their exact log-probabilities
  (:func:`ppaudit.noisy_argmax.log_class_probabilities`), and every count vector ``N``
  (``C(n + C − 1, C − 1)`` of them: 1-D for ``C = 2``, ~5e5 for ``C = 3, n = 1000``) gets
  ``log L(N) = log n! − Σ log N_c! + logsumexp_H(log w(H) + N · log p(H))`` — a matrix
  product over ``log p(H)`` and a log-sum-exp over ``H``, chunked in bounded memory. The
  pruned mass is accounted as an interval: writing ``f(x, y) = x^α y^{1−α}`` (jointly convex
  and 1-homogeneous, hence subadditive), the pruned part adds at most
  ``r · exp((α−1) D_α(last ‖ last'))`` to ``Σ_N f(L_S, L_S')`` (the pruned histograms are a
  post-processing of the differing vote) and the lower bound uses ``L_S'(N) ≤ L̂_S'(N) + r``.
  With the default ``max_tail_mass = 1e-40`` (:data:`TRANSCRIPT_MAX_TAIL_MASS`) the interval
  is invisible at printed precision up to ``α ≈ 64`` for ``D_α(last ‖ last') ≈ 0.7``; at
  higher orders the pruned term ``r·e^{(α−1)D}`` widens ``rdp_hi`` (the point value is
  unaffected). "Exact" is up to the quadrature error of Eq. (4) in ``log p(H)`` (relative
  ≤ 1e-10, :func:`ppaudit.noisy_argmax.log_class_probabilities`), which the interval does
  not include.
  Cost: ``C = 2`` is instant (k = 250, n = 1000: 0.1 s); ``C = 3, k = 250, n = 1000``
  (5e5 count vectors × 2e4 histograms, pruned per box of count vectors) takes ~16 s of CPU
  on one core (69 s wall-clock on a loaded 2-core machine).
* ``"monte_carlo"`` — when there are more than ``max_count_vectors`` count vectors: ``D_α`` is estimated as ``log mean exp((α−1)(log L_S(N) − log L_S'(N)))/(α−1)``
  over ``N`` drawn from ``L_S`` (and the reverse), with the log-likelihoods still exact over
  the enumerated histograms. The standard error (delta method) is returned in ``rdp_se``; it
  is an estimate, not a bound (high orders weigh rare transcripts: check ``rdp_se``).

If the base cannot be enumerated within ``max_support`` histograms the functions raise
``ValueError`` (no silent approximation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .._logsumexp import logsumexp, logsumexp_rows  # scipy.special.logsumexp, the same numbers (issue 30 §1)
from .._unique_rows import unique_rows
from .._validation import as_orders, check_positive_int, check_sigma
from ..divergence import renyi_divergence_from_llr_samples
from ..noisy_argmax import log_class_probabilities
from .enumeration import enumerate_base_certified
from .model import NeighbouringVoteModel, pate_vote_model

__all__ = [
    "TRANSCRIPT_MAX_TAIL_MASS",

    "RepeatedQueryRDP",
    "TranscriptLaw",
    "count_vectors",
    "fixed_pair_transcript_law",
    "repeated_query_analysis",
    "repeated_query_rdp",
    "sampled_transcript_law",
    "transcript_exact_epsilon",
    "transcript_law",
    "transcript_rdp",
]

#: Elements of the (count vectors × histograms) matrix held in memory at once.
_CHUNK_ELEMENTS = 1 << 22
#: Side of the boxes of count vectors that share a histogram selection.
_BLOCK = 8
#: Log-gap below the box's best term beyond which a histogram's term is skipped.
_MARGIN = 40.0
#: Default pruned-mass budget of the transcript laws: the certified upper bound adds
#: ``r·exp((α−1)·D_α(last ‖ last'))``, which must stay negligible at high orders.
TRANSCRIPT_MAX_TAIL_MASS = 1e-40


def count_vectors(num_repeats: int, num_classes: int) -> np.ndarray:
    """All answer-count vectors ``N ∈ ℕ^C`` with ``Σ N = n`` (stars and bars).

    Args:
        num_repeats: ``n ≥ 0``.
        num_classes: ``C ≥ 1``.

    Returns:
        ``(C(n + C − 1, C − 1), C)`` int64 array.

    Raises:
        ValueError: on ``n < 0`` or ``C < 1``.
    """
    n = check_positive_int(num_repeats, "num_repeats", minimum=0)
    c = check_positive_int(num_classes, "num_classes")
    if c == 1:
        return np.array([[n]], dtype=np.int64)
    # rows of the (c−1)-class compositions of every m ≤ n, built up class by class
    prev = [np.array([[m]], dtype=np.int64) for m in range(n + 1)]  # 1 class: N = (m,)
    for _ in range(c - 2):
        cur = []
        for m in range(n + 1):
            cur.append(np.concatenate([np.concatenate([np.full((prev[m - f].shape[0], 1), f), prev[m - f]], axis=1) for f in range(m + 1)]))
        prev = cur
    return np.concatenate([np.concatenate([np.full((prev[n - f].shape[0], 1), f), prev[n - f]], axis=1) for f in range(n + 1)])


def _multinomial_log_coefficient(counts: np.ndarray) -> np.ndarray:
    n = counts.sum(axis=1)
    return gammaln(n + 1.0) - gammaln(counts + 1.0).sum(axis=1)


@dataclass(frozen=True)
class TranscriptLaw:
    """Laws ``L_S``, ``L_S'`` of the answer counts of ``n`` repeated noisy-argmax queries.

    ``L(N) = Σ_H w(H) · Multinomial(N; n, p(H))`` over the enumerated histograms (the pruned
    part, of mass ``tail_mass``, is left out: the retained laws are sub-probabilities).

    Attributes:
        histograms: ``(K, C)`` the enumerated histograms (support of ``H_S`` ∪ ``H_S'``).
        log_weights: ``(2, K)`` ``log w_S(H)``, ``log w_S'(H)`` (``-inf`` off a law's support).
        log_probs: ``(K, C)`` ``log p(H)`` (Eq. (4), relative accuracy).
        num_repeats: ``n``.
        sigma: noise standard deviation.
        tail_mass: pruned mass ``r`` of each histogram law.
        last, last_prime: the differing voter's laws (``None`` for a fixed pair: no pruning).
    """

    histograms: np.ndarray
    log_weights: np.ndarray
    log_probs: np.ndarray
    num_repeats: int
    sigma: float
    tail_mass: float
    last: np.ndarray | None = None
    last_prime: np.ndarray | None = None

    @property
    def num_classes(self) -> int:
        return int(self.histograms.shape[1])

    @property
    def support_size(self) -> int:
        return int(self.histograms.shape[0])

    def log_likelihoods(self, counts) -> np.ndarray:
        """``(log L̂_S(N), log L̂_S'(N))`` for each row of ``counts``: ``(M, 2)``.

        ``log L̂(N) = log n! − Σ_c log N_c! + logsumexp_H(log w(H) + N · log p(H))`` over the
        retained histograms. The count vectors are grouped in boxes of side
        :data:`_BLOCK` in their first ``C − 1`` coordinates; ``N · log p(H)`` is linear in
        ``N``, so its maximum and minimum over a box are separable over the coordinates, and
        a histogram whose maximum over the box is more than :data:`_MARGIN` below the best
        minimum is skipped for the whole box. Each skipped term is below
        ``e^{−MARGIN}`` times the largest one, so the retained sum is exact within the
        relative error :attr:`relative_error` (≤ ``K·e^{−40}``, ~1e-13 at K = 2e4), which
        :func:`transcript_rdp` carries into its certified interval.

        Args:
            counts: ``(M, C)`` or ``(C,)`` non-negative integer counts summing to ``n``.

        Raises:
            ValueError: on a wrong shape, negative counts or rows not summing to ``n``.
        """
        x = np.asarray(counts)
        x2 = np.atleast_2d(x).astype(np.float64)
        if x2.ndim != 2 or x2.shape[1] != self.num_classes:
            raise ValueError(f"counts must have shape (M, {self.num_classes}), got {x.shape}")
        if np.any(x2 < 0) or np.any(x2 != np.round(x2)) or np.any(x2.sum(axis=1) != self.num_repeats):
            raise ValueError(f"counts must be non-negative integers summing to num_repeats={self.num_repeats}")
        c, n = self.num_classes, self.num_repeats
        coef = _multinomial_log_coefficient(x2)
        out = np.full((x2.shape[0], 2), -np.inf)
        lp = self.log_probs
        d = lp[:, : c - 1] - lp[:, c - 1 :]  # (K, C−1)
        base = n * lp[:, c - 1]  # (K,)
        coords = x2[:, : c - 1]
        blocks, inv = unique_rows((coords // _BLOCK).astype(np.int64))  # np.unique(axis=0)'s result, one 1-D sort
        inv = inv.reshape(-1)
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(blocks.shape[0] + 1))
        if c > 3 or blocks.shape[0] * 16 > x2.shape[0]:  # boxes do not pay: plain chunked sums
            rows_per = max(1, _CHUNK_ELEMENTS // max(self.support_size, 1))
            for a in range(0, x2.shape[0], rows_per):
                t = x2[a : a + rows_per] @ lp.T
                for s in range(2):
                    out[a : a + rows_per, s] = logsumexp_rows(t + self.log_weights[s][None, :], overwrite=True)  # = scipy's logsumexp(·, axis=1)
            out += coef[:, None]
            return out
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = np.where(x2 > 0, x2 * np.log(x2 / n), 0.0).sum(axis=1)  # max_p N·log p (≤ 0)
        nb = blocks.shape[0]
        lo = np.minimum.reduceat(coords[order], bounds[:-1], axis=0)
        hi = np.maximum.reduceat(coords[order], bounds[:-1], axis=0)
        cap = np.maximum.reduceat(ent[order], bounds[:-1])
        lw_all = [np.where(np.isfinite(self.log_weights[s]), self.log_weights[s], -np.inf) for s in range(2)]
        fins = [np.isfinite(w).any() for w in lw_all]
        group = max(1, (1 << 21) // max(self.support_size, 1))
        for g in range(0, nb, group):
            gb = np.arange(g, min(nb, g + group))
            # (blocks, K): the largest N·log p(H) over each box (separable over coordinates),
            # capped by max_p N·log p, and the term at the box centre
            hi_t = base[None, :] + np.maximum(lo[gb][:, None, :] * d[None], hi[gb][:, None, :] * d[None]).sum(axis=2)
            np.minimum(hi_t, cap[gb][:, None], out=hi_t)
            centre = np.round((lo[gb] + hi[gb]) / 2.0)
            centre = np.concatenate([centre, n - centre.sum(axis=1, keepdims=True)], axis=1)
            t_centre = centre @ lp.T
            for i, b in enumerate(gb):
                rows = order[bounds[b] : bounds[b + 1]]
                xs = x2[rows]
                for s in range(2):
                    if not fins[s]:
                        continue
                    lw = lw_all[s]
                    # a lower bound on every row's best term: the term of the histogram that
                    # is best at the box centre, evaluated exactly at every row of the box
                    h_star = int(np.argmax(lw + t_centre[i]))
                    floor = float(np.min(xs @ lp[h_star])) + lw[h_star]
                    keep = np.flatnonzero(lw + hi_t[i] >= floor - _MARGIN)
                    t = xs @ lp[keep].T
                    t += lw[keep]
                    top = t.max(axis=1, keepdims=True)
                    out[rows, s] = top[:, 0] + np.log(np.exp(t - top).sum(axis=1))
        out += coef[:, None]
        return out

    @property
    def relative_error(self) -> float:
        """Bound ``η`` on the relative error of :meth:`log_likelihoods` from skipped terms."""
        return self.support_size * math.exp(-_MARGIN)

    def log_likelihood_ratio(self, counts) -> np.ndarray:
        """``log L̂_S(N) − log L̂_S'(N)`` per row: the transcript's exact log-likelihood ratio."""
        ll = self.log_likelihoods(counts)
        return ll[:, 0] - ll[:, 1]


def _histogram_law(hist: np.ndarray, w: np.ndarray, last: np.ndarray, last_prime: np.ndarray):
    """Union support of ``B + e_v`` with the weights of ``H_S`` and ``H_S'``."""
    c = hist.shape[1]
    cls = np.flatnonzero((last > 0) | (last_prime > 0))
    h = np.repeat(hist[:, None, :], cls.size, axis=1)
    h[:, np.arange(cls.size), cls] += 1
    h = h.reshape(-1, c)
    ws = (w[:, None] * last[cls][None, :]).ravel()
    wp = (w[:, None] * last_prime[cls][None, :]).ravel()
    uniq, inv = unique_rows(h)
    inv = inv.reshape(-1)
    ws = np.bincount(inv, weights=ws, minlength=uniq.shape[0])
    wp = np.bincount(inv, weights=wp, minlength=uniq.shape[0])
    with np.errstate(divide="ignore"):
        return uniq, np.log(np.stack([ws, wp]))


def transcript_law(
    model: NeighbouringVoteModel,
    sigma: float,
    num_repeats: int,
    max_tail_mass: float = TRANSCRIPT_MAX_TAIL_MASS,
    max_support: int = 200_000,
) -> TranscriptLaw:
    """Exact (certified) transcript laws of a neighbouring vote model (PATE or CaPC, §5.1–5.2).

    Args:
        model: the model of ``(H_S, H_S')`` (:func:`ppaudit.vote_models.pate_vote_model`,
            :func:`~ppaudit.vote_models.capc_vote_model`).
        sigma: noise standard deviation, > 0.
        num_repeats: ``n ≥ 1`` answers per transcript.
        max_tail_mass: budget of pruned base mass.
        max_support: most base histograms enumerated.

    Returns:
        A :class:`TranscriptLaw`.

    Raises:
        ValueError: on bad arguments, or when the base needs more than ``max_support``
            histograms.
    """
    s = check_sigma(sigma)
    n = check_positive_int(num_repeats, "num_repeats")
    base = enumerate_base_certified(model, max_tail_mass, max_support)
    if base is None:
        raise ValueError(
            f"the model's base needs more than max_support={max_support} histograms at max_tail_mass={max_tail_mass}; "
            "raise max_support or use the pilot statistic / Monte Carlo audit"
        )
    hist, w, tail = base
    uniq, logw = _histogram_law(hist, w, model.last, model.last_prime)
    lp = log_class_probabilities(uniq.astype(np.float64), s)
    return TranscriptLaw(uniq, logw, np.atleast_2d(lp), n, s, float(tail), model.last.copy(), model.last_prime.copy())


def sampled_transcript_law(model: NeighbouringVoteModel, sigma: float, num_repeats: int, draws: int, rng=None) -> TranscriptLaw:
    """Transcript laws of the model with its base replaced by ``draws`` sampled bases (an *estimate*).

    For models whose base cannot be enumerated (votes spread over many classes): the base law
    is the empirical law of ``draws`` i.i.d. draws ``B_1 … B_M`` (shared by both sides; the
    differing vote summed out exactly), so :func:`transcript_rdp` ``(method="monte_carlo")`` on it
    estimates the transcript RDP. Not certified: the empirical mixture is a random model whose
    expected laws are the true ones, and by joint convexity of the Rényi moment
    ``E[Σ p̂^α q̂^{1−α}] ≥ Σ p^α q^{1−α}``, so the plug-in estimate errs upwards on average (an
    upper reference in expectation, never a bound). ``tail_mass`` is 0 (no pruned mass is accounted).

    Args:
        model: the neighbouring vote model.
        sigma: noise standard deviation, > 0.
        num_repeats: ``n ≥ 1`` answers per transcript.
        draws: ``M ≥ 1`` base draws.
        rng: seed, ``SeedSequence`` or generator.

    Returns:
        A :class:`TranscriptLaw` over the distinct sampled histograms.
    """
    s = check_sigma(sigma)
    n = check_positive_int(num_repeats, "num_repeats")
    m = check_positive_int(draws, "draws")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    base, inv = unique_rows(model.sample_base(gen, m))  # np.unique(axis=0, return_counts=True)'s result
    counts = np.bincount(inv, minlength=base.shape[0])
    uniq, logw = _histogram_law(base, counts / m, model.last, model.last_prime)
    lp = log_class_probabilities(uniq.astype(np.float64), s)
    return TranscriptLaw(uniq, logw, np.atleast_2d(lp), n, s, 0.0, model.last.copy(), model.last_prime.copy())


def fixed_pair_transcript_law(h0, h1, sigma: float, num_repeats: int) -> TranscriptLaw:
    """Transcript laws of ``n`` answers on two *fixed* histograms (independent answers).

    ``L_S = Mult(n, p(h0))``, ``L_S' = Mult(n, p(h1))`` (Chadha et al. 2024, Fig. 2/6 pairs;
    deterministic CaPC, where the RDP composes exactly over the answers).

    Raises:
        ValueError: on histograms of different lengths, ``sigma <= 0`` or ``n < 1``.
    """
    s = check_sigma(sigma)
    n = check_positive_int(num_repeats, "num_repeats")
    a, b = np.asarray(h0, dtype=np.float64), np.asarray(h1, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"h0 and h1 must be 1-D histograms of the same length, got {a.shape} and {b.shape}")
    hist = np.stack([a, b])
    logw = np.array([[0.0, -np.inf], [-np.inf, 0.0]])
    return TranscriptLaw(hist, logw, np.atleast_2d(log_class_probabilities(hist, s)), n, s, 0.0)


@dataclass(frozen=True)
class RepeatedQueryRDP:
    """RDP of the ``n``-answer transcript next to its caps (all ``(len(orders),)``).

    Attributes:
        orders: the orders α.
        rdp: the transcript RDP, larger of the two directions (point value).
        rdp_lo, rdp_hi: certified bounds (``"enumerate"``; NaN for ``"monte_carlo"``).
        rdp_se: Monte Carlo standard error (0 for ``"enumerate"``).
        forward, reverse: ``D_α(L_S ‖ L_S')`` and ``D_α(L_S' ‖ L_S)`` (point values).
        histogram_cap, histogram_cap_hi: ``max`` of both directions of ``D_α(H_S ‖ H_S')``
            (point value and certified upper bound) — the data-processing cap.
        vote_cap: ``max(D_α(last ‖ last'), D_α(last' ‖ last))`` (for PATE,
            ``D_α(P_q ‖ P'_q)``) — the looser cap (NaN for a fixed pair).
        method: ``"enumerate"`` or ``"monte_carlo"``.
        num_repeats, tail_mass, support_size, num_count_vectors: bookkeeping.
    """

    orders: np.ndarray
    rdp: np.ndarray
    rdp_lo: np.ndarray
    rdp_hi: np.ndarray
    rdp_se: np.ndarray
    forward: np.ndarray
    reverse: np.ndarray
    histogram_cap: np.ndarray
    histogram_cap_hi: np.ndarray
    vote_cap: np.ndarray
    method: str
    num_repeats: int
    tail_mass: float
    support_size: int
    num_count_vectors: int


def _log_moment(lp: np.ndarray, lq: np.ndarray, alpha: float) -> float:
    """``log Σ exp(α lp + (1−α) lq)`` over the support of ``lp`` (``α = ∞``: ``max(lp − lq)``)."""
    sup = np.isfinite(lp)
    if not sup.any():
        return -np.inf
    if np.isinf(alpha):
        return float(np.max(lp[sup] - lq[sup]))
    return float(logsumexp(alpha * lp[sup] + (1.0 - alpha) * lq[sup]))


def _vote_log_moment(last: np.ndarray, last_prime: np.ndarray, alpha: float) -> float:
    with np.errstate(divide="ignore"):
        return _log_moment(np.log(last), np.log(last_prime), alpha)


def _divergence_with_interval(lp, lq, r, vote_moment, alpha, eta=0.0):
    """(point, lower, upper) of ``D_α`` for retained sub-probability laws plus a pruned mass ``r``.

    point: retained laws renormalised; upper: ``Σ f(L̂_S, L̂_S') + r·exp((α−1) D_α(last‖last'))``
    (subadditivity of ``f(x, y) = x^α y^{1−α}``); lower: ``Σ L̂_S^α (L̂_S' + r)^{1−α}``.
    ``eta``: relative error of the retained likelihoods (true ``∈ [L̂, L̂·(1 + η)]``).
    """
    le = math.log1p(eta)
    np_, nq = logsumexp(lp), logsumexp(lq)
    if np.isinf(alpha):
        point = _log_moment(lp - np_, lq - nq, alpha)
        lqu = lq + le
        lo = _log_moment(lp, np.logaddexp(lqu, math.log(r)) if r > 0 else lqu, alpha)
        hi = _log_moment(lp + le, lq, alpha)
        hi = max(hi, vote_moment) if r > 0 else hi
        return max(point, 0.0), max(lo, 0.0), max(hi, 0.0)
    point = _log_moment(lp - np_, lq - nq, alpha) / (alpha - 1.0)
    lqu = lq + le
    lo = _log_moment(lp, np.logaddexp(lqu, math.log(r)) if r > 0 else lqu, alpha) / (alpha - 1.0)
    hi_m = _log_moment(lp, lq, alpha) + alpha * le
    if r > 0:
        hi_m = float(np.logaddexp(hi_m, math.log(r) + vote_moment))
    return max(point, 0.0), max(lo, 0.0), max(hi_m / (alpha - 1.0), 0.0)


def _both_directions(l0, l1, r, last, last_prime, orders, eta=0.0):
    fwd, rev, lo, hi = (np.empty(orders.size) for _ in range(4))
    for j, alpha in enumerate(orders):
        if r > 0:
            vf = _vote_log_moment(last, last_prime, alpha)
            vr = _vote_log_moment(last_prime, last, alpha)
        else:
            vf = vr = -np.inf
        pf, lf, hf = _divergence_with_interval(l0, l1, r, vf, alpha, eta)
        pr, lr, hr = _divergence_with_interval(l1, l0, r, vr, alpha, eta)
        fwd[j], rev[j], lo[j], hi[j] = pf, pr, max(lf, lr), max(hf, hr)
    return fwd, rev, lo, hi


def _sample_histograms(law: TranscriptLaw, rng: np.random.Generator, size: int, which: int) -> np.ndarray:
    w = np.exp(law.log_weights[which] - logsumexp(law.log_weights[which]))
    return rng.choice(law.support_size, size=size, p=w / w.sum())


def transcript_rdp(
    law: TranscriptLaw,
    orders,
    method: str = "auto",
    max_count_vectors: int = 2_000_000,
    mc_draws: int = 50_000,
    rng: np.random.Generator | int | None = 0,
) -> RepeatedQueryRDP:
    """RDP of the transcript laws (both directions, larger kept) and the data-processing caps.

    Args:
        law: a :class:`TranscriptLaw` (:func:`transcript_law`, :func:`fixed_pair_transcript_law`).
        orders: orders α > 1 (``inf`` allowed with ``"enumerate"``).
        method: ``"auto"`` (enumerate when there are at most ``max_count_vectors`` count
            vectors ``C(n + C − 1, C − 1)``), ``"enumerate"`` or ``"monte_carlo"`` (see the
            module docstring).
        max_count_vectors: budget of ``"auto"``.
        mc_draws: transcripts per direction of ``"monte_carlo"``.
        rng: generator or seed of ``"monte_carlo"``.

    Returns:
        A :class:`RepeatedQueryRDP`.

    Raises:
        ValueError: on orders ≤ 1, an unknown method, or ``α = ∞`` with ``"monte_carlo"``.
    """
    a = as_orders(orders)
    if method not in ("auto", "enumerate", "monte_carlo"):
        raise ValueError(f"method must be 'auto', 'enumerate' or 'monte_carlo', got {method!r}")
    n, c, k = law.num_repeats, law.num_classes, law.support_size
    m = math.comb(n + c - 1, c - 1)
    if method == "auto":
        method = "enumerate" if m <= max_count_vectors else "monte_carlo"
    r = law.tail_mass
    fixed = law.last is None
    last = law.last if not fixed else np.ones(1)
    last_prime = law.last_prime if not fixed else np.ones(1)
    # histogram cap: the histogram itself as the "transcript"
    hf, hr, _, hhi = _both_directions(law.log_weights[0], law.log_weights[1], r, last, last_prime, a)
    hist_cap = np.maximum(hf, hr)
    if fixed:
        vote_cap = np.full(a.size, np.nan)
    else:
        with np.errstate(divide="ignore"):
            lv, lvp = np.log(law.last), np.log(law.last_prime)
        vote_cap = np.maximum(_log_power_vec(lv, lvp, a), _log_power_vec(lvp, lv, a))
    if method == "enumerate":
        ll = law.log_likelihoods(count_vectors(n, c))
        fwd, rev, lo, hi = _both_directions(ll[:, 0], ll[:, 1], r, last, last_prime, a, law.relative_error)
        return RepeatedQueryRDP(a, np.maximum(fwd, rev), lo, hi, np.zeros(a.size), fwd, rev, hist_cap, hhi, vote_cap,
                                "enumerate", n, r, k, m)
    if np.any(np.isinf(a)):
        raise ValueError("orders must be finite with method='monte_carlo'")
    gen = np.random.default_rng(rng)
    draws = check_positive_int(mc_draws, "mc_draws", minimum=2)
    est = np.empty((2, a.size))
    se = np.empty((2, a.size))
    probs = np.exp(law.log_probs)
    probs /= probs.sum(axis=1, keepdims=True)
    for d in range(2):
        idx = _sample_histograms(law, gen, draws, d)
        counts = gen.multinomial(n, probs[idx])
        if c > 3:  # transcripts repeat a lot: score each distinct count vector once (row by row the same numbers)
            uniq, inv = unique_rows(counts)
            ll = law.log_likelihoods(uniq)[inv.reshape(-1)]
        else:  # (C ≤ 3 groups the rows in boxes: keep the rows as drawn)
            ll = law.log_likelihoods(counts)
        llr = (ll[:, 0] - ll[:, 1]) * (1 if d == 0 else -1)
        est[d], se[d] = renyi_divergence_from_llr_samples(llr, a)
    pick = np.argmax(est, axis=0)
    cols = np.arange(a.size)
    nan = np.full(a.size, np.nan)
    return RepeatedQueryRDP(a, est[pick, cols], nan, nan, se[pick, cols], est[0], est[1], hist_cap, hhi, vote_cap,
                            "monte_carlo", n, r, k, m)


def _log_power_vec(lp, lq, orders):
    out = np.empty(orders.size)
    for j, alpha in enumerate(orders):
        v = _log_moment(lp, lq, alpha)
        out[j] = max(v if np.isinf(alpha) else v / (alpha - 1.0), 0.0)
    return out


def repeated_query_analysis(
    p_q,
    p_q_prime,
    num_teachers: int,
    sigma: float,
    num_repeats: int,
    orders,
    *,
    max_tail_mass: float = TRANSCRIPT_MAX_TAIL_MASS,
    max_support: int = 200_000,
    method: str = "auto",
    max_count_vectors: int = 2_000_000,
    mc_draws: int = 50_000,
    rng: np.random.Generator | int | None = 0,
) -> RepeatedQueryRDP:
    """Transcript RDP of ``n`` repeated PATE answers with its caps (see :func:`repeated_query_rdp`).

    Returns:
        A :class:`RepeatedQueryRDP` (``rdp``, certified ``rdp_lo``/``rdp_hi``,
        ``histogram_cap``, ``vote_cap`` = ``D_α(P_q ‖ P'_q)`` both directions, method).

    Raises:
        ValueError: on bad probability vectors, ``num_teachers < 2``, ``sigma <= 0``,
            ``num_repeats < 1``, orders ≤ 1, or a base too large to enumerate.
    """
    model = pate_vote_model(p_q, p_q_prime, num_teachers)
    law = transcript_law(model, sigma, num_repeats, max_tail_mass, max_support)
    return transcript_rdp(law, orders, method=method, max_count_vectors=max_count_vectors, mc_draws=mc_draws, rng=rng)


def repeated_query_rdp(p_q, p_q_prime, num_teachers: int, sigma: float, num_repeats: int, orders, **kwargs) -> np.ndarray:
    """Exact RDP of the transcript of ``num_repeats`` answers to one query under PATE's model.

    ``H_S ~ Mult(k, P_q)``, ``H_S' = Mult(k−1, P_q) + Mult(1, P'_q)`` (Chadha et al. 2024,
    §5.1), one histogram per training run, ``n`` Gaussian noisy argmaxes (Eq. (4)) of it with
    fresh noise. Returns ``max(D_α(L_S ‖ L_S'), D_α(L_S' ‖ L_S))`` of the answer-count laws
    (a sufficient statistic of the transcript). It equals the single-answer mixture RDP at
    ``n = 1`` and never exceeds ``D_α(H_S ‖ H_S') ≤ D_α(P_q ‖ P'_q)``; it can exceed ``n ×``
    the single-answer value (the answers share one histogram; module docstring). Exact by enumeration (certified interval in
    :func:`repeated_query_analysis`) when there are at most ``max_count_vectors`` count
    vectors (``C = 2``: instant; ``C = 3, k = 250, n = 1000``: ~16 s CPU), else a Monte Carlo
    estimate with a standard error (module docstring).

    Args:
        p_q: ``(C,)`` vote law of the canary-free teachers ``P_q``.
        p_q_prime: ``(C,)`` vote law of the canary-holding teacher ``P'_q``.
        num_teachers: ``k ≥ 2``.
        sigma: noise standard deviation, > 0.
        num_repeats: ``n ≥ 1``.
        orders: orders α > 1.
        **kwargs: ``max_tail_mass``, ``max_support``, ``method``, ``max_count_vectors``,
            ``mc_draws``, ``rng`` of :func:`repeated_query_analysis`.

    Returns:
        ``(len(orders),)`` RDP of the transcript.

    Raises:
        ValueError: as :func:`repeated_query_analysis`.

    Example:
        >>> import numpy as np
        >>> r = repeated_query_rdp([0.5, 0.5], [0.75, 0.25], 250, 40.0, 1000, [64.0])
        >>> bool(r[0] < 0.682)
        True
    """
    return repeated_query_analysis(p_q, p_q_prime, num_teachers, sigma, num_repeats, orders, **kwargs).rdp


def transcript_exact_epsilon(law: TranscriptLaw, delta: float, value_discretization_interval: float = 1e-4) -> float:
    """Exact ε at δ of the ``n``-answer transcript (both directions), from its count laws.

    The hockey-stick divergence of ``L_S`` and ``L_S'`` over all count vectors, through
    :func:`ppaudit.accounting.exact_epsilon` (dp-accounting PLD, pessimistic). For a random
    histogram this is the tight reference that per-answer PLD composition (which assumes
    independent answers) is not; for a fixed pair it equals the ``n``-fold composition.
    The retained laws miss the pruned mass ``r`` (≤ 1e-40 by default), which moves δ by at
    most ``r·(1 + e^ε)``.

    Args:
        law: a :class:`TranscriptLaw`.
        delta: δ in ``[0, 1)``.
        value_discretization_interval: PLD grid.

    Returns:
        ε ≥ 0.

    Raises:
        ValueError: on a δ outside ``[0, 1)``.
    """
    from ..accounting import exact_epsilon

    ll = law.log_likelihoods(count_vectors(law.num_repeats, law.num_classes))
    return exact_epsilon(ll[:, 0], ll[:, 1], delta, value_discretization_interval=value_discretization_interval, log_pmf=True)
