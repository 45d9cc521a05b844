"""The Private-kNN vote model and its output laws (Monte Carlo and certified enumeration)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..._unique_rows import unique_rows
from ..._validation import as_distribution, check_positive_int, check_sigma
from ...noisy_argmax import class_probabilities
from ...vote_models import OutputEstimate
from ...vote_models.enumeration import CertifiedOutputLaw, _enumerate_multinomial, _TooLarge
from ...vote_models.estimate import _StreamingOutputMoments

__all__ = [
    "KnnVoteModel",
    "knn_output_distributions",
    "support_estimate",
    "enumerate_knn_output_distributions",
    "knn_conditional_output_probabilities",
    "knn_difference_bound",
]

# ----------------------------------------------------------------------------- model


@dataclass(frozen=True)
class KnnVoteModel:
    """The Private-kNN histogram model of one query and one poison (Chadha et al. 2024, §6).

    ``H_S = Mult(k, P)``; ``H_S' = Mult(k, P) + Ber(ν)·(e_{label} − Mult(1, P_last))``.

    Attributes:
        P: ``(C,)`` distribution of a top-``k`` vote, ``P_q``.
        P_last: ``(C,)`` distribution of the ``k``-th neighbour's label, ``P^k_q``.
        nu: inclusion probability ``ν`` of the poison, in ``[0, 1]``.
        label: the poison's label ``y'``.
        k: number of votes.
    """

    P: np.ndarray
    P_last: np.ndarray
    nu: float
    label: int
    k: int

    def __post_init__(self):
        P = as_distribution(self.P, "P", atol=1e-6)
        L = as_distribution(self.P_last, "P_last", atol=1e-6)
        if P.ndim != 1 or L.shape != P.shape:
            raise ValueError(f"P and P_last must be probability vectors of the same length, got shapes {P.shape} and {L.shape}")
        nu = float(self.nu)
        if not (0.0 <= nu <= 1.0):
            raise ValueError(f"nu must be in [0, 1], got {self.nu!r}")
        lab = int(self.label)
        if not 0 <= lab < P.size:
            raise ValueError(f"label must be in [0, {P.size}), got {self.label!r}")
        object.__setattr__(self, "P", P / P.sum())
        object.__setattr__(self, "P_last", L / L.sum())
        object.__setattr__(self, "nu", nu)
        object.__setattr__(self, "label", lab)
        object.__setattr__(self, "k", check_positive_int(self.k, "k"))

    @property
    def num_classes(self) -> int:
        return int(self.P.size)

    @property
    def identical(self) -> bool:
        """``H_S`` and ``H_S'`` have the same law: ``ν = 0`` or the displaced vote is always ``y'``."""
        return self.nu == 0.0 or self.P_last[self.label] == 1.0

    def mean(self, which: str = "S") -> np.ndarray:
        """``E[H_S] = kP``; ``E[H_S'] = kP + ν(e_{y'} − P_last)``."""
        m = self.k * self.P
        if which == "S":
            return m
        if which == "S_prime":
            e = np.zeros_like(m)
            e[self.label] = 1.0
            return m + self.nu * (e - self.P_last)
        raise ValueError(f"which must be 'S' or 'S_prime', got {which!r}")

    def sample(self, rng: np.random.Generator, n: int, which: str = "S") -> np.ndarray:
        """``n`` histograms ``(n, C)`` (float64) of ``H_S`` or ``H_S'``."""
        if which not in ("S", "S_prime"):
            raise ValueError(f"which must be 'S' or 'S_prime', got {which!r}")
        h = rng.multinomial(self.k, self.P, size=n).astype(np.float64)
        if which == "S_prime" and self.nu > 0:
            inc = np.flatnonzero(rng.random(n) < self.nu)
            if inc.size:
                cdf = np.cumsum(self.P_last)
                last = np.minimum(np.searchsorted(cdf, rng.random(inc.size) * cdf[-1], side="right"), self.num_classes - 1)
                h[inc, self.label] += 1.0
                np.subtract.at(h, (inc, last), 1.0)
        return h

    def sampler(self, which: str = "S") -> Callable[[np.random.Generator, int], np.ndarray]:
        """``model(rng, n) -> (n, C)`` for :func:`ppaudit.montecarlo.model_noisy_argmax_counts`."""
        if which not in ("S", "S_prime"):
            raise ValueError(f"which must be 'S' or 'S_prime', got {which!r}")
        return lambda rng, n: self.sample(rng, n, which)


def knn_output_distributions(model: KnnVoteModel, sigma: float, draws: int, rng=None, chunk_size: int = 4096) -> OutputEstimate:
    """Monte Carlo output distributions ``μ_S``, ``μ_S'`` of the noisy argmax under the model.

    For each draw ``B_m ~ Mult(k, P)``: ``p_m = Pr[· | B_m]`` (Eq. (4),
    :func:`class_probabilities`) and, summing the Bernoulli and the displaced vote out
    exactly, ``q_m = (1 − ν)·p_m + ν·Σ_c P_last(c)·Pr[· | B_m + e_{y'} − e_c]``. The common
    draws make ``p − q`` precise; :func:`ppaudit.vote_models.mixture_rdp_estimate` turns the
    result into the "exact" Rényi divergence of the model with a delta-method standard error.

    Returns:
        :class:`ppaudit.vote_models.OutputEstimate`.
    """
    s = check_sigma(sigma)
    m = check_positive_int(draws, "draws")
    cs = check_positive_int(chunk_size, "chunk_size")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    c = model.num_classes
    classes = np.flatnonzero(model.P_last > 0)
    w = model.P_last[classes]
    moments = _StreamingOutputMoments(c)
    done = 0
    while done < m:
        n = min(cs, m - done)
        draws_ = gen.multinomial(model.k, model.P, size=n)
        # Eq. (4) once per distinct histogram (confident queries repeat a few histograms)
        uniq, inv = unique_rows(draws_)
        base = uniq.astype(np.float64) + 1.0  # +1: shift-invariant, no −1 counts
        pu = class_probabilities(base, s)
        pm = pu[inv.reshape(-1)]
        if model.nu > 0 and classes.size:
            moved = np.repeat(base[:, None, :], classes.size, axis=1)
            moved[:, :, model.label] += 1.0
            moved[:, np.arange(classes.size), classes] -= 1.0
            pr = class_probabilities(moved.reshape(-1, c), s).reshape(uniq.shape[0], classes.size, c)
            qu = (1.0 - model.nu) * pu + model.nu * np.einsum("v,nvc->nc", w, pr)
            qm = qu[inv.reshape(-1)]
        else:
            qm = pm
        moments.add(pm, qm)
        done += n
    return moments.estimate()


def knn_conditional_output_probabilities(
    model: KnnVoteModel, sigma: float, draws: int, rng=None, chunk_size: int = 4096, displaced: str = "sum"
) -> tuple[np.ndarray, np.ndarray]:
    """Rao–Blackwellised draws of the Private-kNN output laws: ``(p, q)``, each ``(M, C)``.

    Row ``m`` holds, for one draw ``B_m ~ Mult(k, P_q)`` shared by both sides (common random
    numbers), the exact conditional output probabilities (Chadha et al. 2024, Eq. (4), §6)

        ``p_m = Pr[· | B_m]``,
        ``q_m = (1 − ν)·p_m + ν·Σ_c P^k_q(c)·Pr[· | B_m + e_{y'} − e_c]``

    (the poison's Bernoulli inclusion and the displaced last vote summed out exactly,
    ``displaced="sum"``: ``1 + |supp P^k_q|`` evaluations of Eq. (4) per draw). With
    ``displaced="sample"`` the displaced vote ``c_m ~ P^k_q`` is drawn with the histogram and
    ``q_m = (1 − ν)·p_m + ν·Pr[· | B_m + e_{y'} − e_{c_m}]`` (two evaluations per draw: more draws
    for the same cost; the paired difference keeps the same bound :func:`knn_difference_bound`).
    Either way the rows are i.i.d. with means ``μ_S`` and ``μ_S'``: the input of
    :func:`ppaudit.audit.rao_blackwell_two_cut`. Each distinct histogram of a chunk is
    evaluated once.

    Args:
        model: the :class:`KnnVoteModel`.
        sigma: noise standard deviation.
        draws: ``M``.
        rng: generator / seed.
        chunk_size: histograms per vectorised evaluation.
        displaced: ``"sum"`` or ``"sample"`` (above).

    Returns:
        ``(p, q)`` float64 arrays ``(M, C)``.

    Raises:
        ValueError: a bad ``displaced`` (or sigma, draws, chunk_size).
    """
    if displaced not in ("sum", "sample"):
        raise ValueError(f"displaced must be 'sum' or 'sample', got {displaced!r}")
    s = check_sigma(sigma)
    m = check_positive_int(draws, "draws")
    cs = check_positive_int(chunk_size, "chunk_size")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    c = model.num_classes
    classes = np.flatnonzero(model.P_last > 0)
    w = model.P_last[classes]
    p_out = np.empty((m, c))
    q_out = np.empty((m, c))
    done = 0
    while done < m:
        n = min(cs, m - done)
        draws_ = gen.multinomial(model.k, model.P, size=n)
        if displaced == "sample" and model.nu > 0 and classes.size:
            cdf = np.cumsum(w)
            moved_c = classes[np.minimum(np.searchsorted(cdf, gen.random(n) * cdf[-1], side="right"), classes.size - 1)]
            base = draws_.astype(np.float64) + 1.0
            moved = base.copy()
            moved[:, model.label] += 1.0
            moved[np.arange(n), moved_c] -= 1.0
            pu = class_probabilities(base, s)
            p_out[done : done + n] = pu
            q_out[done : done + n] = (1.0 - model.nu) * pu + model.nu * class_probabilities(moved, s)
            done += n
            continue
        uniq, inv = unique_rows(draws_)
        base = uniq.astype(np.float64) + 1.0  # +1: shift-invariant, no −1 counts after the move
        pu = class_probabilities(base, s)
        if model.nu > 0 and classes.size:
            moved = np.repeat(base[:, None, :], classes.size, axis=1)
            moved[:, :, model.label] += 1.0
            moved[:, np.arange(classes.size), classes] -= 1.0
            pr = class_probabilities(moved.reshape(-1, c), s).reshape(uniq.shape[0], classes.size, c)
            qu = (1.0 - model.nu) * pu + model.nu * np.einsum("v,nvc->nc", w, pr)
        else:
            qu = pu
        inv = inv.reshape(-1)
        p_out[done : done + n] = pu[inv]
        q_out[done : done + n] = qu[inv]
        done += n
    return p_out, q_out


def knn_difference_bound(model: KnnVoteModel, sigma: float) -> float:
    """``b`` with ``|p_m(O) − q_m(O)| ≤ b`` for every draw and output set ``O``.

    ``q_m − p_m = ν·Σ_c P^k_q(c)·(Pr[· | B + e_{y'} − e_c] − Pr[· | B])``, and the noisy argmax
    is a post-processing of ``B + N(0, σ²I)``: two histograms at Euclidean distance ``√2``
    give outputs within the total variation of two Gaussians whose means are ``√2`` apart,
    ``2Φ(√2/(2σ)) − 1``. Hence ``b = ν·(2Φ(1/(√2σ)) − 1)`` (at least ``1e-300``).

    Args:
        model: the :class:`KnnVoteModel`.
        sigma: noise standard deviation.

    Returns:
        ``b ∈ (0, 1]``.
    """
    from scipy.special import ndtr

    s = check_sigma(sigma)
    tv = 2.0 * float(ndtr(1.0 / (math.sqrt(2.0) * s))) - 1.0
    return float(min(1.0, max(model.nu * tv, 1e-300)))


def support_estimate(k: int, P) -> float:
    """Rough number of histograms of ``Mult(k, P)`` that carry the mass (a guard, not a bound).

    ``Π_c (1 + 14·sd_c)`` over the classes but the largest, ``sd_c = sqrt(k p_c (1 − p_c))``
    (a ±7 sd box per free coordinate, capped at ``k + 1``): within a small factor of the
    pruned enumeration at ``1e-12`` (4,638 histograms for ``Mult(200, (.5, .3, .2))``, estimate
    5,500), and astronomically large for votes spread over ten classes.
    """
    p = np.sort(np.asarray(P, dtype=np.float64))[:-1]
    sd = np.sqrt(k * p * (1.0 - p))
    return float(np.exp(np.sum(np.log(np.minimum(1.0 + 14.0 * sd, k + 1.0)))))


def enumerate_knn_output_distributions(
    model: KnnVoteModel,
    sigma: float,
    max_tail_mass: float = 1e-11,
    max_support: int = 100_000,
) -> CertifiedOutputLaw | None:
    """Exact (certified) ``μ_S``, ``μ_S'`` of the Private-kNN model, or ``None`` if too large.

    ``Mult(k, P)`` is enumerated with pruning (the conditional-binomial tree of
    :mod:`ppaudit.vote_models`, whose pruned mass ``r`` is accounted exactly); then

        ``μ̂_S  = Σ_h w_h Pr[· | h]``,
        ``μ̂_S' = (1 − ν)·μ̂_S + ν·Σ_c P_last(c) Σ_h w_h Pr[· | h + e_{y'} − e_c]``

    with Eq. (4), returned as the shared :class:`ppaudit.vote_models.CertifiedOutputLaw`.

    The pruning threshold starts at ``max_tail_mass`` and shrinks 100× until the pruned mass
    is ``≤ max_tail_mass``; more than ``max_support`` histograms gives up (``None``; use
    :func:`knn_output_distributions`). Cheap for two classes (``k + 1`` histograms) and for
    confident queries; spread votes over many classes exceed the budget.
    """
    s = check_sigma(sigma)
    if not (0 < float(max_tail_mass) < 1):
        raise ValueError(f"max_tail_mass must be in (0, 1), got {max_tail_mass!r}")
    ms = check_positive_int(max_support, "max_support")
    if support_estimate(model.k, model.P) > 20.0 * ms:  # clearly too large: do not try
        return None
    theta = float(max_tail_mass)
    while True:
        try:
            hist, logw, dropped = _enumerate_multinomial(model.k, model.P, math.log(theta), ms)
        except _TooLarge:
            return None
        w = np.exp(logw)
        tail = max(dropped, 1.0 - math.fsum(w.tolist()), 0.0)
        if tail <= max_tail_mass:
            break
        theta /= 100.0
        if theta < 1e-300:
            return None
    c = model.num_classes
    classes = np.flatnonzero(model.P_last > 0)
    base = hist.astype(np.float64) + 1.0  # +1: shift-invariant, no −1 counts after the move
    p_lo = np.zeros(c)
    moved_lo = np.zeros(c)
    step = max(1, 200_000 // max(classes.size + 1, 1))
    for a in range(0, base.shape[0], step):
        b = base[a : a + step]
        wb = w[a : a + step]
        p_lo += wb @ class_probabilities(b, s)
        if model.nu > 0 and classes.size:
            moved = np.repeat(b[:, None, :], classes.size, axis=1)
            moved[:, :, model.label] += 1.0
            moved[:, np.arange(classes.size), classes] -= 1.0
            pr = class_probabilities(moved.reshape(-1, c), s).reshape(b.shape[0], classes.size, c)
            moved_lo += np.einsum("n,v,nvc->c", wb, model.P_last[classes], pr)
    q_lo = (1.0 - model.nu) * p_lo + model.nu * moved_lo if model.nu > 0 and classes.size else p_lo.copy()
    return CertifiedOutputLaw(p_lo, q_lo, float(tail), int(hist.shape[0]))
