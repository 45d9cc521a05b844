"""Exact enumeration of a vote model's output distributions with certified pruning, and certified Rényi bounds."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from .._validation import as_orders, check_positive_int, check_sigma
from ..divergence import renyi_divergence_from_log
from ..montecarlo import DiscreteHistogramModel
from .estimate import _shifted_probabilities
from .model import QUADRATURE_ABS_ERROR, NeighbouringVoteModel


class _TooLarge(Exception):
    pass


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
    uniq, inv = np.unique(h, axis=0, return_inverse=True)
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
class EnumeratedOutput:
    """Certified output distributions of a vote model (see the module docstring).

    Attributes:
        p_lo, q_lo: ``(C,)`` retained mass of ``μ_S``, ``μ_S'`` (lower bounds up to the
            quadrature error).
        tail_mass: ``r``: base mass that was pruned (each true probability lies in
            ``[p_lo − e, p_lo + r + e]`` with ``e = QUADRATURE_ABS_ERROR``).
        support_size: number of base histograms enumerated.
        histograms, weights: the enumerated base (for :meth:`discrete_model`).
        last, last_prime: the differing voter's distributions.
    """

    p_lo: np.ndarray
    q_lo: np.ndarray
    tail_mass: float
    support_size: int
    histograms: np.ndarray
    weights: np.ndarray
    last: np.ndarray
    last_prime: np.ndarray

    @property
    def error_bound(self) -> float:
        """Half-width bound: every probability is within ``[lo − e, lo + r + e]``."""
        return self.tail_mass + QUADRATURE_ABS_ERROR

    @property
    def p(self) -> np.ndarray:
        """Point estimate of ``μ_S`` (the retained mixture, renormalised)."""
        return self.p_lo / self.p_lo.sum()

    @property
    def q(self) -> np.ndarray:
        return self.q_lo / self.q_lo.sum()

    def discrete_model(self, which: str = "S") -> DiscreteHistogramModel:
        """The truncated model as a :class:`DiscreteHistogramModel` (exact-count Monte Carlo).

        Its output distribution is within total variation ``tail_mass + C·e/2`` of the full
        model's, so ``T`` exact-mode trials are within ``T`` times that of ``T`` trials of the
        full model (used by the audit to discount its confidence).
        """
        last = self.last if which == "S" else self.last_prime
        cls = np.flatnonzero(last > 0)
        h = np.repeat(self.histograms[:, None, :], cls.size, axis=1)
        h[:, np.arange(cls.size), cls] += 1
        w = (self.weights[:, None] * last[cls][None, :]).ravel()
        return DiscreteHistogramModel(h.reshape(-1, self.histograms.shape[1]), w / w.sum())


def enumerate_output_distributions(
    model: NeighbouringVoteModel,
    sigma: float,
    max_tail_mass: float = 1e-10,
    max_support: int = 200_000,
) -> EnumeratedOutput | None:
    """Exact output distributions of ``H_S`` and ``H_S'`` by enumeration with a certified tail.

    The base distribution is enumerated with pruning threshold ``θ`` (histograms of mass
    ``< θ`` are dropped, their mass ``r`` accounted exactly); ``θ`` starts at
    ``max_tail_mass`` and shrinks by 100× until ``r ≤ max_tail_mass``. Then
    ``μ̂(c) = Σ_h w_h Σ_v last(v) Pr[c | h + e_v]`` (Eq. (4)) over the retained ``h``.

    Returns:
        An :class:`EnumeratedOutput`, or ``None`` when more than ``max_support`` base
        histograms would be needed (then use :func:`estimate_output_distributions`).
    """
    s = check_sigma(sigma)
    if not (0 < max_tail_mass < 1):
        raise ValueError(f"max_tail_mass must be in (0, 1), got {max_tail_mass!r}")
    ms = check_positive_int(max_support, "max_support")
    theta = float(max_tail_mass)
    while True:
        try:
            hist, logw, dropped = _enumerate_base(model, math.log(theta), ms)
        except _TooLarge:
            return None
        w = np.exp(logw)
        tail = max(dropped, 1.0 - math.fsum(w.tolist()), 0.0)
        if tail <= max_tail_mass:
            break
        theta /= 100.0
        if theta < 1e-300:
            return None
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


def certified_mixture_rdp(enum: EnumeratedOutput, orders) -> dict[str, np.ndarray]:
    """Certified bounds on the Rényi divergences of an enumerated model (both directions).

    With ``p ∈ [p_lo − e, p_lo + r + e]`` (and the same for ``q``) coordinate-wise and
    ``D_α`` increasing in ``p`` and decreasing in ``q`` (``α > 1``), the bounds use the
    corners of the boxes.

    Returns:
        ``{"rdp": point value (renormalised retained mixtures), "rdp_lo", "rdp_hi",
        "forward", "reverse"}``, each ``(len(orders),)``; ``rdp_*`` are for the larger of the
        two directions (``max`` of lower bounds, ``max`` of upper bounds).
    """
    a = as_orders(orders)
    e = QUADRATURE_ABS_ERROR
    r = enum.tail_mass
    with np.errstate(divide="ignore"):
        lp_lo, lq_lo = np.log(np.maximum(enum.p_lo - e, 0.0)), np.log(np.maximum(enum.q_lo - e, 0.0))
        lp_hi, lq_hi = np.log(np.minimum(enum.p_lo + r + e, 1.0)), np.log(np.minimum(enum.q_lo + r + e, 1.0))
        lp, lq = np.log(enum.p), np.log(enum.q)
    fwd = renyi_divergence_from_log(lp, lq, a)
    rev = renyi_divergence_from_log(lq, lp, a)
    fwd_lo = renyi_divergence_from_log(lp_lo, lq_hi, a)
    rev_lo = renyi_divergence_from_log(lq_lo, lp_hi, a)
    fwd_hi = renyi_divergence_from_log(lp_hi, lq_lo, a)
    rev_hi = renyi_divergence_from_log(lq_hi, lp_lo, a)
    return {
        "forward": fwd,
        "reverse": rev,
        "rdp": np.maximum(fwd, rev),
        "rdp_lo": np.maximum(fwd_lo, rev_lo),
        "rdp_hi": np.maximum(fwd_hi, rev_hi),
    }
