"""Monte Carlo estimate of a vote model's exact output distributions (last vote summed out) and of their Rényi divergence."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from .._logsumexp import logsumexp  # scipy.special.logsumexp, the same numbers (issue 30 §1)

from .._validation import as_orders, check_positive_int, check_sigma
from ..noisy_argmax import class_probabilities
from .model import NeighbouringVoteModel

__all__ = [
    "OutputEstimate",
    "estimate_output_distributions",
    "mixture_rdp_estimate",
]


@dataclass(frozen=True)
class OutputEstimate:
    """Monte Carlo estimate of the output distributions of the noisy argmax under a model.

    Attributes:
        p: ``(C,)`` estimate of ``μ_S``.
        q: ``(C,)`` estimate of ``μ_S'``.
        cov: ``(2C, 2C)`` covariance of the per-draw pair ``(p_m, q_m)`` (divide by
            ``draws`` for the covariance of the means).
        draws: number of base draws ``M``.
    """

    p: np.ndarray
    q: np.ndarray
    cov: np.ndarray
    draws: int

    @property
    def se_p(self) -> np.ndarray:
        c = self.p.size
        return np.sqrt(np.maximum(np.diag(self.cov)[:c], 0.0) / self.draws)

    @property
    def se_q(self) -> np.ndarray:
        c = self.p.size
        return np.sqrt(np.maximum(np.diag(self.cov)[c:], 0.0) / self.draws)


def _shifted_probabilities(base: np.ndarray, classes: np.ndarray, sigma: float) -> np.ndarray:
    """``Pr[· | base + e_v]`` for every ``v`` in ``classes``: ``(n, len(classes), C)``."""
    n, c = base.shape
    hist = np.repeat(base[:, None, :], classes.size, axis=1)
    hist[:, np.arange(classes.size), classes] += 1
    return class_probabilities(hist.reshape(-1, c), sigma).reshape(n, classes.size, c)


class _StreamingOutputMoments:
    """Mean and covariance of ``(μ_S, μ_S')`` rows added chunk by chunk, as an :class:`OutputEstimate`.

    Moments are taken about the first chunk's mean, so the covariance has no cancellation.
    """

    def __init__(self, num_classes: int):
        self.c = num_classes
        self.total = np.zeros(2 * num_classes)
        self.outer = np.zeros((2 * num_classes, 2 * num_classes))
        self.shift = None
        self.count = 0

    def add(self, pm: np.ndarray, qm: np.ndarray) -> None:
        pq = np.concatenate([pm, qm], axis=1)
        if self.shift is None:
            self.shift = pq.mean(axis=0)
        d = pq - self.shift
        self.total += d.sum(axis=0)
        self.outer += d.T @ d
        self.count += pq.shape[0]

    def estimate(self) -> "OutputEstimate":
        m = self.count
        dmean = self.total / m
        mean = self.shift + dmean
        cov = self.outer / m - np.outer(dmean, dmean)
        if m > 1:
            cov *= m / (m - 1)
        return OutputEstimate(mean[: self.c], mean[self.c :], cov, m)


def estimate_output_distributions(
    model: NeighbouringVoteModel,
    sigma: float,
    draws: int,
    rng: np.random.Generator | int | None = None,
    chunk_size: int = 20_000,
) -> OutputEstimate:
    """Monte Carlo estimate of ``μ_S`` and ``μ_S'`` with the differing vote summed out.

    For each base draw ``B_m``: ``p_m = Σ_v last(v) Pr[· | B_m + e_v]`` and
    ``q_m = Σ_v last'(v) Pr[· | B_m + e_v]`` with Eq. (4) (:func:`class_probabilities`);
    ``p = mean p_m``, ``q = mean q_m``. Sharing ``B_m`` between ``S`` and ``S'`` makes the
    difference ``p − q`` far more precise than two independent averages. When the base is
    deterministic (e.g. CaPC with deterministic teachers) the result is exact.

    Args:
        model: the vote model.
        sigma: noise standard deviation.
        draws: number ``M`` of base draws.
        rng: generator or seed.
        chunk_size: base draws per chunk (memory).

    Returns:
        An :class:`OutputEstimate`.
    """
    s = check_sigma(sigma)
    m = check_positive_int(draws, "draws")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    c = model.num_classes
    classes = np.flatnonzero((model.last > 0) | (model.last_prime > 0))
    wl, wp = model.last[classes], model.last_prime[classes]
    deterministic_base = model.group_counts.size == 0
    moments = _StreamingOutputMoments(c)
    done = 0
    while done < m:
        n = min(chunk_size, m - done)
        base = model.sample_base(gen, 1 if deterministic_base else n)
        probs = _shifted_probabilities(base, classes, s)
        pm = np.einsum("v,nvc->nc", wl, probs)
        qm = np.einsum("v,nvc->nc", wp, probs)
        if deterministic_base:
            pm, qm = np.repeat(pm, n, axis=0), np.repeat(qm, n, axis=0)
        moments.add(pm, qm)
        done += n
    return moments.estimate()


def _renyi_and_grad(p: np.ndarray, q: np.ndarray, alpha: float):
    """``D_α(p||q)`` and its gradient w.r.t. ``(p, q)`` (zeros of ``p`` skipped)."""
    sup = p > 0
    grad = np.zeros(2 * p.size)
    if np.any(sup & (q <= 0)):
        return math.inf, grad
    lp, lq = np.log(p[sup]), np.log(q[sup])
    idx = np.flatnonzero(sup)
    if math.isinf(alpha):
        r = lp - lq
        j = int(np.argmax(r))
        grad[idx[j]] = 1.0 / p[idx[j]]
        grad[p.size + idx[j]] = -1.0 / q[idx[j]]
        return max(float(r[j]), 0.0), grad
    lt = alpha * lp + (1 - alpha) * lq
    ls = logsumexp(lt)
    w = np.exp(lt - ls)  # t_i / S
    grad[idx] = alpha / (alpha - 1.0) * w / p[idx]
    grad[p.size + idx] = -w / q[idx]
    return max(float(ls / (alpha - 1.0)), 0.0), grad


def mixture_rdp_estimate(estimate: OutputEstimate, orders) -> dict[str, np.ndarray]:
    """Rényi divergences between the estimated mixtures, with delta-method standard errors.

    This is the "exact RDP" of the fitted model (Chadha et al. 2024, §4.2, applied to the
    model's output distributions), up to Monte Carlo error.

    Returns:
        ``{"forward": D_α(μ_S||μ_S'), "reverse": D_α(μ_S'||μ_S), "rdp": max of the two,
        "se_forward", "se_reverse", "se": standard error of the larger direction}``, each
        ``(len(orders),)``.
    """
    a = as_orders(orders)
    c = estimate.p.size
    cov = estimate.cov / estimate.draws
    swap = np.r_[np.arange(c, 2 * c), np.arange(c)]
    out = {k: np.empty(a.size) for k in ("forward", "reverse", "se_forward", "se_reverse")}
    for j, alpha in enumerate(a):
        d, g = _renyi_and_grad(estimate.p, estimate.q, float(alpha))
        out["forward"][j], out["se_forward"][j] = d, math.sqrt(max(float(g @ cov @ g), 0.0))
        d, g = _renyi_and_grad(estimate.q, estimate.p, float(alpha))
        gs = g[np.argsort(swap)]  # gradient w.r.t. (p, q) order
        out["reverse"][j], out["se_reverse"][j] = d, math.sqrt(max(float(gs @ cov @ gs), 0.0))
    rev = out["reverse"] > out["forward"]
    out["rdp"] = np.where(rev, out["reverse"], out["forward"])
    out["se"] = np.where(rev, out["se_reverse"], out["se_forward"])
    return out
