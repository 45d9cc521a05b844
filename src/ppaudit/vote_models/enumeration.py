"""Exact enumeration of a vote model's output distributions with certified pruning, and certified Rényi bounds."""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, xlog1py, xlogy

from .._logsumexp import logsumexp  # scipy.special.logsumexp, the same numbers (issue 30 §1)
from .._unique_rows import unique_rows

from .._validation import as_orders, check_positive_int, check_sigma
from ..divergence import renyi_divergence_from_log
from ..montecarlo import DiscreteHistogramModel
from ..noisy_argmax import quadrature_error_bound
from .estimate import _shifted_probabilities
from .model import NeighbouringVoteModel
from .._lazy import LazyImport

binom = LazyImport("scipy.stats", "binom")  # scipy.stats costs ≈ 1 s to import; loaded on first use

__all__ = [
    "CertifiedOutputLaw",
    "EnumeratedOutput",
    "enumerate_output_distributions",
    "certified_mixture_rdp",
    "DEFAULT_MAX_TAIL_MASS",
    "enumerate_base_certified",
    "exact_count_total_variation",
    "effective_confidence",
    "exact_count_tail_budget",
    "MIN_TAIL_BUDGET",
    "count_law_total_variation",
]


class _TooLarge(Exception):
    pass


_LOG_FACTORIAL = np.zeros(1)

#: Evaluate the enumeration's binomial log-pmf grids from a log-factorial table
#: (:func:`_binom_logpmf_grid`, the same numbers as ``scipy.stats.binom.logpmf``); ``False`` is
#: the scipy call (kept for ``bench/bench_audit_algorithms.py``).
_FAST_LOGPMF = True


def _log_factorials(n: int) -> np.ndarray:
    """``log(i!)`` for ``i = 0 … n`` (``scipy.special.gammaln(i + 1)``, the values scipy's
    ``binom.logpmf`` computes per element), grown on demand and shared."""
    global _LOG_FACTORIAL
    if _LOG_FACTORIAL.size <= n:
        table = gammaln(np.arange(max(n + 1, 2 * _LOG_FACTORIAL.size), dtype=np.float64) + 1.0)
        table.setflags(write=False)
        _LOG_FACTORIAL = table
    return _LOG_FACTORIAL


def _binom_logpmf_grid(x: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """``binom.logpmf(x[None, :], n[:, None], p)`` with ``-inf`` where ``x > n``, bit for bit.

    scipy evaluates ``(gammaln(n+1) − (gammaln(x+1) + gammaln(n−x+1))) + xlogy(x, p) +
    xlog1py(n−x, −p)`` per element; here the three ``gammaln`` values are looked up in one table
    (:func:`_log_factorials`) and ``log p``, ``log(1 − p)`` are taken once with the same scipy
    functions, so every element has the same value in the same order of operations (``0 · log p``
    gives ``−0.0`` where ``xlogy`` gives ``0.0``: the sum is the same). About 5× faster on the
    enumeration's grids. ``p`` must be in ``(0, 1)`` (the caller falls back to scipy otherwise).
    """
    n = np.asarray(n, dtype=np.int64)
    x = np.asarray(x, dtype=np.int64)
    lf = _log_factorials(int(max(n.max(initial=0), x.max(initial=0))))
    nk = n[:, None] - x[None, :]
    valid = nk >= 0
    np.maximum(nk, 0, out=nk)
    out = lf[x][None, :] + lf[nk]
    np.subtract(lf[n][:, None], out, out=out)
    out += x.astype(np.float64)[None, :] * float(xlogy(1.0, p))
    out += nk * float(xlog1py(1.0, -p))
    out[~valid] = -np.inf
    return out


def _enumerate_multinomial(n: int, p: np.ndarray, log_threshold: float, max_support: int):
    """Histograms of ``Mult(n, p)`` with mass ≥ exp(log_threshold), and the pruned mass.

    Conditional-binomial tree over the classes of positive probability (ascending, so the
    largest class is determined last): ``x_j | x_<j ~ Bin(rem, p_j / Σ_{l≥j} p_l)``. A child
    whose path mass is below the threshold is pruned and its mass (= the mass of its whole
    subtree) added to ``dropped``; children beyond the cap ``X_j`` (where
    ``P(Bin(n, π_j) > X_j) < threshold``, so none of them could be kept) are pruned in one
    go with the exact binomial tail.
    """
    c = p.size
    support = np.flatnonzero(p > 0)
    support = support[np.argsort(p[support], kind="stable")]
    ps = p[support] / p[support].sum()
    m = support.size
    counts = np.zeros((1, 0), dtype=np.int64)
    rem = np.array([n], dtype=np.int64)
    logw = np.zeros(1)
    dropped = 0.0
    tail = 1.0
    thr = math.exp(log_threshold)
    for j in range(m - 1):
        pi = min(max(ps[j] / tail, 0.0), 1.0) if tail > 0 else 1.0
        tail = max(tail - ps[j], 0.0)
        cap = int(min(n, binom.isf(thr, n, pi) + 1)) if thr > 0 else n
        cap = max(cap, 0)
        x = np.arange(cap + 1)
        beyond = binom.sf(cap, rem, pi)  # mass of x > cap, per node
        dropped += float(np.sum(np.exp(logw) * beyond))
        rows_all, cols_all, lw_all = [], [], []
        kept = 0
        block = max(1, 4_000_000 // (cap + 1))  # bounded memory: nodes × (cap + 1) per block
        for a in range(0, rem.size, block):
            r_blk = rem[a : a + block]
            if _FAST_LOGPMF and 0.0 < pi < 1.0:  # the same numbers as scipy's binom.logpmf, from a log-factorial table
                lpmf = _binom_logpmf_grid(x, r_blk, pi)
            else:
                with np.errstate(divide="ignore"):
                    lpmf = binom.logpmf(x[None, :], r_blk[:, None], pi)
                lpmf = np.where(x[None, :] <= r_blk[:, None], lpmf, -np.inf)
            child = logw[a : a + block, None] + lpmf
            keep = child >= log_threshold
            dropped += float(np.exp(child[np.isfinite(child) & ~keep]).sum())
            rows, cols = np.nonzero(keep)
            kept += rows.size
            if kept > max_support:
                raise _TooLarge
            rows_all.append(rows + a)
            cols_all.append(cols)
            lw_all.append(child[rows, cols])
        rows, cols = np.concatenate(rows_all), np.concatenate(cols_all)
        counts = np.concatenate([counts[rows], x[cols][:, None]], axis=1)
        rem = rem[rows] - x[cols]
        logw = np.concatenate(lw_all)
    counts = np.concatenate([counts, rem[:, None]], axis=1) if m else counts
    hist = np.zeros((counts.shape[0], c), dtype=np.int64)
    hist[:, support] = counts
    return hist, logw, dropped


def _convolve(h1, lw1, h2, lw2, log_threshold: float, max_support: int):
    """Distribution of the sum of two independent histogram distributions, pruned."""
    if h1.shape[0] * h2.shape[0] > 20 * max_support:
        raise _TooLarge
    h = (h1[:, None, :] + h2[None, :, :]).reshape(-1, h1.shape[1])
    lw = (lw1[:, None] + lw2[None, :]).ravel()
    uniq, inv = unique_rows(h)
    inv = inv.reshape(-1)
    top = lw.max()
    w = np.bincount(inv, weights=np.exp(lw - top), minlength=uniq.shape[0])
    with np.errstate(divide="ignore"):
        lwu = np.log(w) + top
    keep = lwu >= log_threshold
    dropped = float(np.exp(lwu[~keep]).sum())
    if keep.sum() > max_support:
        raise _TooLarge
    return uniq[keep], lwu[keep], dropped


def _enumerate_base(model: NeighbouringVoteModel, log_threshold: float, max_support: int):
    c = model.num_classes
    hist = model.constant[None, :].copy()
    logw = np.zeros(1)
    dropped = 0.0
    for cnt, p in zip(model.group_counts, model.group_probs):
        gh, glw, gd = _enumerate_multinomial(int(cnt), p, log_threshold, max_support)
        # mass of the product measure lost: previous dropped stays, the group's is scaled by
        # the kept mass of the previous factors (≤ 1): bounding it by gd is conservative.
        dropped += gd
        hist, logw, cd = _convolve(hist, logw, gh, glw, log_threshold, max_support)
        dropped += cd
    return hist.reshape(-1, c), logw, dropped


@dataclass(frozen=True)
class CertifiedOutputLaw:
    """Certified output distributions ``μ_S``, ``μ_S'`` of a mechanism's vote model, from an
    enumeration with pruning: the one type shared by the PATE/CaPC vote models
    (:class:`EnumeratedOutput`) and Private-kNN
    (:func:`ppaudit.mechanisms.private_knn.enumerate_knn_output_distributions`).

    Each true probability lies in ``[lo − e, lo + r + e]`` (``r = tail_mass``,
    ``e = quadrature_error_bound(C).per_class``, the proven error of Eq. (4),
    :func:`ppaudit.noisy_argmax.quadrature_error_bound`): the boxes that
    :func:`certified_mixture_rdp` turns into certified Rényi bounds.

    Attributes:
        p_lo, q_lo: ``(C,)`` retained mass of ``μ_S``, ``μ_S'`` (lower bounds up to the
            quadrature error).
        tail_mass: ``r``: mass that was pruned.
        support_size: number of histograms enumerated.
    """

    p_lo: np.ndarray
    q_lo: np.ndarray
    tail_mass: float
    support_size: int

    @property
    def error_bound(self) -> float:
        """Half-width bound: every probability is within ``[lo − e, lo + r + e]``."""
        return self.tail_mass + quadrature_error_bound(self.p_lo.size).per_class

    @property
    def p(self) -> np.ndarray:
        """Point estimate of ``μ_S`` (the retained mixture, renormalised): the law of the
        exact-count trials."""
        return self.p_lo / self.p_lo.sum()

    @property
    def q(self) -> np.ndarray:
        return self.q_lo / self.q_lo.sum()

    def total_variation_bound(self) -> float:
        """Total variation between the truncated and the full model's output law per trial
        (:func:`exact_count_total_variation`)."""
        return exact_count_total_variation(self.tail_mass, self.p_lo.size)


@dataclass(frozen=True)
class EnumeratedOutput(CertifiedOutputLaw):
    """Certified output distributions of a PATE/CaPC vote model (see the module docstring),
    with the enumerated base kept for :meth:`discrete_model`.

    Attributes (beyond :class:`CertifiedOutputLaw`):
        histograms, weights: the enumerated base.
        last, last_prime: the differing voter's distributions.
    """

    histograms: np.ndarray
    weights: np.ndarray
    last: np.ndarray
    last_prime: np.ndarray

    def discrete_model(self, which: str = "S") -> DiscreteHistogramModel:
        """The truncated model as a :class:`DiscreteHistogramModel` (exact-count Monte Carlo).

        Its output distribution is within total variation ``tail_mass + τ_q(C)`` of the full
        model's (:func:`exact_count_total_variation`), so ``T`` exact-mode trials are within
        ``T`` times that of ``T`` trials of the full model (used by the audit to discount its
        confidence).
        """
        last = self.last if which == "S" else self.last_prime
        cls = np.flatnonzero(last > 0)
        h = np.repeat(self.histograms[:, None, :], cls.size, axis=1)
        h[:, np.arange(cls.size), cls] += 1
        w = (self.weights[:, None] * last[cls][None, :]).ravel()
        return DiscreteHistogramModel(h.reshape(-1, self.histograms.shape[1]), w / w.sum())


#: Default pruned-mass budget of the enumeration. The exact-count audit draws ``T`` trials
#: per side from the truncated law, whose total variation from the full law is
#: ``τ = tail_mass + τ_q(C)`` (:func:`exact_count_total_variation`; ``τ_q`` the proven
#: quadrature term, 4.7e-13 at C = 10), and reports the confidence ``confidence − 2·T·τ``
#: (:func:`effective_confidence`). At ``T = 1e8`` this default keeps it ≥ 0.9498 for every
#: ``C ≤ 10`` (0.94989 at C = 10) and ≥ 0.949 up to C = 100.
DEFAULT_MAX_TAIL_MASS = 1e-13


def exact_count_total_variation(tail_mass: float, num_classes: int) -> float:
    """Total variation between the truncated and the full output law of a model, per trial.

    The exact-count Monte Carlo draws each trial from the output law of the retained
    (renormalised) base histograms, computed with Eq. (4) (Chadha et al. 2024); it differs
    from the full law by at most the pruned mass ``r`` (renormalising a sub-probability of
    mass ``1 − r`` moves it by ``r`` in total variation) plus the proven total-variation error
    of the quadrature, ``τ_q(C) = quadrature_error_bound(C).total_variation``
    (:func:`ppaudit.noisy_argmax.quadrature_error_bound`; a mixture of laws each within
    ``τ_q`` of its target is within ``τ_q`` of the mixture of the targets).

    Args:
        tail_mass: pruned mass ``r`` (:attr:`EnumeratedOutput.tail_mass`), in ``[0, 1]``.
        num_classes: ``C ≥ 1``.

    Returns:
        ``τ = r + τ_q(C)``.

    Raises:
        ValueError: on a tail mass outside ``[0, 1]`` or ``num_classes < 1``.
    """
    r = float(tail_mass)
    if not (0.0 <= r <= 1.0):
        raise ValueError(f"tail_mass must be in [0, 1], got {tail_mass!r}")
    c = check_positive_int(num_classes, "num_classes")
    return r + quadrature_error_bound(c).total_variation


def count_law_total_variation(tau: float, trials: int, probabilities) -> float:
    """Total variation between the laws of ``T`` i.i.d. outputs drawn from ``μ̂`` and from ``μ`` when ``TV(μ, μ̂) ≤ τ``.

    The exact-count audit draws ``Multinomial(T, μ̂)`` (``μ̂`` the enumerated output law over the
    ``C`` classes) where the mechanism gives ``Multinomial(T, μ)``. Two bounds, the smaller holds:

    * ``T·τ`` — total variation is subadditive over product measures (the bound of
      :func:`exact_count_total_variation`, issue 13 §3);
    * ``τ·√(T/m)`` with ``m = min_i μ̂_i > 0`` — Pinsker, ``TV(μ^T, μ̂^T) ≤ √(T·KL(μ‖μ̂)/2)``, with
      ``KL ≤ log(1 + χ²) ≤ χ²(μ‖μ̂) = Σ_i (μ_i − μ̂_i)²/μ̂_i ≤ max_i|μ_i − μ̂_i|/m · Σ_i|μ_i − μ̂_i| ≤ (τ/m)·2τ``
      (both laws sum to one, so every ``|μ_i − μ̂_i| ≤ τ`` and their sum ``≤ 2τ``).

    For ``T = 1e8`` and class probabilities ≥ 1e-3 the second is ≈ 3000× smaller: the certified
    truncation of an enumerated law then costs ~1e-8 of confidence instead of ~1e-5 (issue 34 §5).

    Args:
        tau: per-trial total variation ``τ`` in ``[0, 1]`` (:func:`exact_count_total_variation`).
        trials: ``T ≥ 1``.
        probabilities: ``μ̂`` (``C`` non-negative values); a zero entry leaves the first bound.

    Returns:
        ``min(1, T·τ, τ·√(T/m))``.

    Raises:
        ValueError: on ``τ`` outside ``[0, 1]``, ``trials < 1`` or a negative or non-finite probability.

    Example:
        >>> round(count_law_total_variation(1e-12, 10**8, [0.5, 0.5]) / 1e-12, 3)
        14142.136
        >>> count_law_total_variation(1e-12, 10**8, [1.0, 0.0]) == 1e-12 * 10**8
        True
    """
    t = check_positive_int(trials, "trials")
    tv = float(tau)
    if not (0.0 <= tv <= 1.0):
        raise ValueError(f"tau must be in [0, 1], got {tau!r}")
    mu = np.asarray(probabilities, dtype=np.float64).ravel()
    if mu.size == 0 or not np.all(np.isfinite(mu)) or (mu < 0).any():
        raise ValueError(f"probabilities must be finite and non-negative, got {mu[:5].tolist()}")
    bound = t * tv
    m = float(mu.min())
    if m > 0.0:
        bound = min(bound, tv * float(np.sqrt(t / m)))
    return min(1.0, bound)


#: Smallest pruning budget :func:`exact_count_tail_budget` asks for: finer pruning grows the
#: enumerated support quickly for little gain (the effective confidence reports the rest).
MIN_TAIL_BUDGET = 1e-12


def exact_count_tail_budget(trials: int, num_classes: int, confidence: float = 0.95, loss_fraction: float = 0.02) -> float:
    """Pruned-mass budget that keeps an exact-count audit's confidence loss small.

    An exact-count audit with ``T`` trials per side holds at ``confidence − 2·T·τ`` with
    ``τ = r + τ_q(C)`` (:func:`exact_count_total_variation`, :func:`effective_confidence`).
    The budget is the largest pruned mass ``r`` that keeps the loss ``2·T·τ`` at most
    ``loss_fraction · (1 − confidence)`` (2 % of the error probability: 1e-3 at 95 %, so
    ``0.95 − 2·T·τ ≥ 0.949`` — issue 13 §3), and at least :data:`MIN_TAIL_BUDGET` (with a
    Bonferroni-corrected confidence and ``T = 1e8`` the quadrature term alone may exceed the
    loss; the reported effective confidence then says what holds).

    Args:
        trials: ``T`` per side, ≥ 1.
        num_classes: ``C ≥ 1``.
        confidence: the audit's nominal confidence in ``(0, 1)``.
        loss_fraction: share of ``1 − confidence`` the truncation may spend, in ``(0, 1)``.

    Returns:
        ``max(MIN_TAIL_BUDGET, loss_fraction·(1 − confidence)/(2T) − τ_q(C))``.

    Raises:
        ValueError: on ``trials < 1``, ``num_classes < 1``, a confidence or ``loss_fraction``
            outside ``(0, 1)``.

    Example:
        >>> r = exact_count_tail_budget(10**8, 10)
        >>> bool(effective_confidence(0.95, 10**8, exact_count_total_variation(r, 10)) >= 0.949)
        True
    """
    t = check_positive_int(trials, "trials")
    c = check_positive_int(num_classes, "num_classes")
    conf = float(confidence)
    if not (0.0 < conf < 1.0):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    frac = float(loss_fraction)
    if not (0.0 < frac < 1.0):
        raise ValueError(f"loss_fraction must be in (0, 1), got {loss_fraction!r}")
    budget = frac * (1.0 - conf) / (2.0 * t) - quadrature_error_bound(c).total_variation
    return max(MIN_TAIL_BUDGET, budget * (1.0 - 1e-9))


def effective_confidence(confidence: float, trials: int, total_variation: float) -> float:
    """Confidence of an audit whose ``T`` trials per side came from a law ``τ``-close in TV.

    ``T`` i.i.d. draws from laws at total variation ``τ`` can be coupled to differ with
    probability ≤ ``T·τ`` (union bound over the trials); the audit uses two such samples
    (``S`` and ``S'``), so its bound holds for the full model with probability
    ``≥ confidence − 2·T·τ`` (clipped at 0).

    Args:
        confidence: nominal confidence in ``(0, 1)``.
        trials: ``T`` per side, ≥ 1.
        total_variation: ``τ ≥ 0`` (:func:`exact_count_total_variation`).

    Returns:
        ``max(0, confidence − 2·T·τ)``.

    Raises:
        ValueError: on a confidence outside (0, 1), ``trials < 1`` or ``τ < 0``.
    """
    conf = float(confidence)
    if not (0.0 < conf < 1.0):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    t = check_positive_int(trials, "trials")
    tv = float(total_variation)
    if not (tv >= 0.0):
        raise ValueError(f"total_variation must be >= 0, got {total_variation!r}")
    return max(0.0, conf - 2.0 * t * tv)


#: Bases enumerated in this process, kept for the next caller that asks the same question
#: (:func:`enumerate_base_certified`): successes by (base, ``max_tail_mass``, ``max_support``),
#: least recently used first out within :data:`_BASE_CACHE_SIZE` entries and :data:`_BASE_CACHE_BYTES`;
#: failures as the (threshold, support cap) pairs that overflowed.
#: ``_BASE_CACHE_SIZE = 0`` turns both off.
_BASE_CACHE: OrderedDict = OrderedDict()
_BASE_CACHE_SIZE = 64
_BASE_CACHE_BYTES = 128 * 2**20
_BASE_TOO_LARGE: dict = {}


def _base_key(model) -> tuple:
    """The base ``B`` of a model (its deterministic votes and groups of random voters): the
    enumeration depends on nothing else, so several queries' or candidates' models share it."""
    const, counts, probs = (np.ascontiguousarray(a) for a in (model.constant, model.group_counts, model.group_probs))
    return (const.shape, counts.shape, probs.shape, const.tobytes(), counts.tobytes(), probs.tobytes())


def _known_too_large(key: tuple, theta: float, max_support: int) -> bool:
    """An attempt at threshold ``θ`` with cap ``S`` overflows when one at ``θ_f ≥ θ`` with cap
    ``S_f ≥ S`` did: lowering the threshold keeps a superset of every level's nodes (each
    kept node's children have the same path masses, the binomial cap only grows) and of the
    convolution's histograms, so every size checked against the cap only grows."""
    return any(theta <= tf and max_support <= sf for tf, sf in _BASE_TOO_LARGE.get(key, ()))


def enumerate_base_certified(model: NeighbouringVoteModel, max_tail_mass: float = DEFAULT_MAX_TAIL_MASS, max_support: int = 200_000):
    """Enumerate the shared base ``B`` of a model with a certified pruned mass.

    The pruning threshold ``θ`` starts at ``max_tail_mass`` and shrinks by 100× until the
    pruned mass ``r`` (accounted exactly, :func:`_enumerate_multinomial`) is ``≤ max_tail_mass``.

    The answers are remembered per base for the rest of the process (the per-query audit, the
    transcript law and the transcript statistic of one pair ask for the same base, and so do
    the pairs of one query across candidates): the same arguments return the same (read-only)
    arrays, and an attempt that is known to overflow (:func:`_known_too_large`: a coarser
    threshold with a larger cap already did) returns ``None`` without enumerating. Both give
    the very result a fresh enumeration would.

    Args:
        model: the neighbouring vote model.
        max_tail_mass: budget of pruned mass, in ``(0, 1)``.
        max_support: most base histograms enumerated.

    Returns:
        ``(histograms (K, C) int64, weights (K,), tail_mass r)``, or ``None`` when more than
        ``max_support`` histograms would be needed.

    Raises:
        ValueError: on ``max_tail_mass`` outside ``(0, 1)`` or ``max_support < 1``.
    """
    if not (0 < max_tail_mass < 1):
        raise ValueError(f"max_tail_mass must be in (0, 1), got {max_tail_mass!r}")
    ms = check_positive_int(max_support, "max_support")
    key = _base_key(model)
    ckey = (key, float(max_tail_mass), ms)
    if _BASE_CACHE_SIZE and ckey in _BASE_CACHE:
        _BASE_CACHE.move_to_end(ckey)
        return _BASE_CACHE[ckey]
    theta = float(max_tail_mass)
    while True:
        if _BASE_CACHE_SIZE and _known_too_large(key, theta, ms):
            return None
        try:
            hist, logw, dropped = _enumerate_base(model, math.log(theta), ms)
        except _TooLarge:
            if len(_BASE_TOO_LARGE) > 10_000:  # bounded memory over a long process
                _BASE_TOO_LARGE.clear()
            _BASE_TOO_LARGE.setdefault(key, []).append((theta, ms))
            return None
        w = np.exp(logw)
        # The pruned mass is accounted exactly in ``dropped``; ``1 − Σ w`` cross-checks it up
        # to the rounding of the sum (1e-12), which would otherwise floor the tail at ~1e-16.
        tail = max(dropped, 1.0 - math.fsum(w.tolist()) - 1e-12, 0.0)
        if tail <= max_tail_mass:
            for a in (hist, w):
                a.setflags(write=False)
            if not _BASE_CACHE_SIZE:  # the cache off (bench/bench_audit_algorithms.py): enumerate every time
                return hist, w, float(tail)
            _BASE_CACHE[ckey] = (hist, w, float(tail))
            while len(_BASE_CACHE) > 1 and (len(_BASE_CACHE) > _BASE_CACHE_SIZE
                                            or sum(h.nbytes + v.nbytes for h, v, _ in _BASE_CACHE.values()) > _BASE_CACHE_BYTES):
                _BASE_CACHE.popitem(last=False)
            return _BASE_CACHE[ckey]
        theta /= 100.0
        if theta < 1e-300:
            return None


def enumerate_output_distributions(
    model: NeighbouringVoteModel,
    sigma: float,
    max_tail_mass: float = DEFAULT_MAX_TAIL_MASS,
    max_support: int = 200_000,
) -> EnumeratedOutput | None:
    """Exact output distributions of ``H_S`` and ``H_S'`` by enumeration with a certified tail.

    The base distribution is enumerated with pruning threshold ``θ`` (histograms of mass
    ``< θ`` are dropped, their mass ``r`` accounted exactly); ``θ`` starts at
    ``max_tail_mass`` and shrinks by 100× until ``r ≤ max_tail_mass``
    (:func:`enumerate_base_certified`). Then
    ``μ̂(c) = Σ_h w_h Σ_v last(v) Pr[c | h + e_v]`` (Eq. (4)) over the retained ``h``.

    Args:
        model: the neighbouring vote model (§5.1–5.2).
        sigma: noise standard deviation, > 0.
        max_tail_mass: budget of pruned mass (default :data:`DEFAULT_MAX_TAIL_MASS`).
        max_support: most base histograms enumerated.

    Returns:
        An :class:`EnumeratedOutput`, or ``None`` when more than ``max_support`` base
        histograms would be needed (then use :func:`estimate_output_distributions`).

    Raises:
        ValueError: on ``sigma <= 0``, ``max_tail_mass`` outside ``(0, 1)``, ``max_support < 1``.
    """
    s = check_sigma(sigma)
    base = enumerate_base_certified(model, max_tail_mass, max_support)
    if base is None:
        return None
    hist, w, tail = base
    classes = np.flatnonzero((model.last > 0) | (model.last_prime > 0))
    c = model.num_classes
    p_lo = np.zeros(c)
    q_lo = np.zeros(c)
    step = max(1, 200_000 // max(classes.size, 1))
    for a in range(0, hist.shape[0], step):
        probs = _shifted_probabilities(hist[a : a + step], classes, s)  # (n, v, C)
        mix = np.einsum("n,nvc->vc", w[a : a + step], probs)
        p_lo += model.last[classes] @ mix
        q_lo += model.last_prime[classes] @ mix
    return EnumeratedOutput(p_lo, q_lo, float(tail), int(hist.shape[0]), hist, w, model.last.copy(), model.last_prime.copy())


def _log_power_sum(logp: np.ndarray, logq: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """``1/(α−1) · log Σ_i p_i^α q_i^{1−α}`` with NO renormalisation of ``p`` or ``q``.

    For ``α = ∞``: ``max_i log(p_i / q_i)`` over ``p_i > 0``. Used on the corners of
    probability boxes, which do not sum to 1; clipped at 0 (a divergence is ≥ 0).
    """
    out = np.empty(orders.size)
    support = np.isfinite(logp)
    if not support.any():
        return np.zeros(orders.size)
    with np.errstate(invalid="ignore"):
        ratio = np.where(support, logp - logq, -np.inf)
    for j, alpha in enumerate(orders):
        if np.isinf(alpha):
            out[j] = np.max(ratio)
            continue
        with np.errstate(invalid="ignore"):
            terms = np.where(support, logp + (alpha - 1.0) * ratio, -np.inf)
        out[j] = logsumexp(terms) / (alpha - 1.0)
    return np.maximum(out, 0.0)


def certified_mixture_rdp(enum: EnumeratedOutput, orders) -> dict[str, np.ndarray]:
    """Certified bounds on the Rényi divergences of an enumerated model (both directions).

    Every true output probability lies in a box: ``p(c) ∈ [p_lo(c) − e, p_lo(c) + r + e]``
    (``r`` = pruned mass, ``e`` = the proven per-class quadrature error
    ``quadrature_error_bound(C).per_class``), and the same for ``q``. For ``α > 1`` the
    summand ``p^α q^{1−α}`` increases in ``p`` and decreases in ``q``, so for *every* pair of
    distributions in the boxes

        ``Σ_c p_lo^α q_hi^{1−α} ≤ Σ_c p^α q^{1−α} ≤ Σ_c p_hi^α q_lo^{1−α}``,

    and ``D_α = log(Σ_c p^α q^{1−α}) / (α − 1)`` (Chadha et al. 2024, §2.1) is bounded by the
    corners. The corner vectors do not sum to 1 and are **not renormalised**: dividing by
    ``Σ p_hi > 1`` (or ``Σ p_lo < 1``) would move the bounds inwards and could exclude the
    true value. The point value uses the retained mixtures renormalised (an estimate, not a
    bound).

    Args:
        enum: an :class:`EnumeratedOutput` (or any object with ``p_lo``, ``q_lo``,
            ``tail_mass``, ``p``, ``q``).
        orders: orders α > 1 (``inf`` allowed).

    Returns:
        ``{"rdp": point value (renormalised retained mixtures), "rdp_lo", "rdp_hi",
        "forward", "reverse", "forward_lo", "forward_hi", "reverse_lo", "reverse_hi"}``, each
        ``(len(orders),)``; ``rdp_*`` are for the larger of the two directions (``max`` of
        lower bounds, ``max`` of upper bounds).

    Raises:
        ValueError: on orders ≤ 1.
    """
    a = as_orders(orders)
    e = quadrature_error_bound(np.asarray(enum.p_lo).size).per_class
    r = float(enum.tail_mass)
    with np.errstate(divide="ignore"):
        lp_lo, lq_lo = np.log(np.maximum(enum.p_lo - e, 0.0)), np.log(np.maximum(enum.q_lo - e, 0.0))
        lp_hi, lq_hi = np.log(np.minimum(enum.p_lo + r + e, 1.0)), np.log(np.minimum(enum.q_lo + r + e, 1.0))
        lp, lq = np.log(enum.p), np.log(enum.q)
    fwd = renyi_divergence_from_log(lp, lq, a)
    rev = renyi_divergence_from_log(lq, lp, a)
    fwd_lo = _log_power_sum(lp_lo, lq_hi, a)
    rev_lo = _log_power_sum(lq_lo, lp_hi, a)
    fwd_hi = _log_power_sum(lp_hi, lq_lo, a)
    rev_hi = _log_power_sum(lq_hi, lp_lo, a)
    return {
        "forward": fwd,
        "reverse": rev,
        "forward_lo": fwd_lo,
        "forward_hi": fwd_hi,
        "reverse_lo": rev_lo,
        "reverse_hi": rev_hi,
        "rdp": np.maximum(fwd, rev),
        "rdp_lo": np.maximum(fwd_lo, rev_lo),
        "rdp_hi": np.maximum(fwd_hi, rev_hi),
    }
