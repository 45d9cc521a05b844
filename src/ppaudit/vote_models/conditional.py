"""Rao–Blackwellised draws of a vote model's repeated-query transcript (sound transcript audits off the floor).

Setting (Chadha et al. 2024, §5.1–5.2, Eq. (4)). :class:`~ppaudit.vote_models.NeighbouringVoteModel`
``H_S = B + e_V`` (``V ~ last``) and ``H_S' = B + e_{V'}`` (``V' ~ last'``) with the shared base
``B``. One transcript of a repeated query is one training draw — ``B`` and the differing vote,
drawn once — and ``n`` noisy answers of that histogram with fresh Gaussian noise each. A
sampled transcript audit (:func:`ppaudit.audit.transcript_audit`) needs rare transcripts to
be *observed*; at ``T = 5e4`` transcripts the PATE audits of the embedded default sat at the
zero-RDP floor although the exact transcript RDP is well above it.

**Conditional laws.** Given ``B`` the transcript law is exact and cheap: given ``(B, v)`` the
answers are i.i.d. with the law ``r_v = Pr[· | B + e_v]`` (Eq. (4),
:func:`ppaudit.noisy_argmax.class_probabilities`, certified error). This module uses the scalar
statistic ``N_j`` — the number of the ``n`` answers equal to class ``j`` — whose conditional law
is a mixture of binomials with the differing vote summed out exactly:

    ``Pr_S[N_j = t | B] = Σ_v last(v) · Bin(t; n, r_v(j))``,  and the same with ``last'`` for ``S'``.

For ``n = 1`` the output is the answer itself, ``Pr_S[c | B] = Σ_v last(v) r_v(c)`` (all ``C``
classes). Rows for i.i.d. draws ``B_1 … B_M`` (the *same* draws on both sides: common random
numbers) are i.i.d. with means the laws of ``N_j`` under ``S`` and ``S'`` — the input of
:func:`ppaudit.audit.rao_blackwell_two_cut`. ``N_j`` is a post-processing of the transcript, so
a lower bound on its divergence is one on the transcript's (data processing); the choice of
``j`` costs power, never validity.

**Constants of the sound bound.**

* paired difference: ``p_m(O) − q_m(O) = Σ_v (last(v) − last'(v))·g_v(O)`` with ``g_v(O) ∈ [0, 1]``,
  hence ``|p_m(O) − q_m(O)| ≤ TV(last, last')`` for every draw and set;
* numerical error: ``|Bin(n, r)(O) − Bin(n, r̃)(O)| ≤ TV(Bin(n, r), Bin(n, r̃)) ≤ n·|r − r̃|``
  (coupling of the ``n`` Bernoulli answers), so ``n·ε_c`` with ``ε_c`` the certified per-class
  error of Eq. (4) (:func:`ppaudit.quadrature_bound.quadrature_error_bound`); for ``n = 1`` the
  total-variation bound of the whole vector.

**Choice of ``j``** (fixed before the audit draws, on an independent pilot of base draws): the
class whose answer frequency the differing vote moves most,
``argmax_j |Σ_v (last'(v) − last(v)) · mean_B r_v(j)|``.

**Large ``n``.** With ``n + 1 > max_outputs`` the values of ``N_j`` are merged into at most
``max_outputs`` contiguous bins of equal width over the range the pilot gives mass to (the two
ends absorb the rest): again a post-processing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._unique_rows import unique_rows
from .._validation import check_positive_int, check_sigma
from ..quadrature_bound import quadrature_error_bound
from .estimate import _shifted_probabilities
from .model import NeighbouringVoteModel
from .._lazy import LazyImport

binom = LazyImport("scipy.stats", "binom")  # scipy.stats costs ≈ 1 s to import; loaded on first use

__all__ = ["ConditionalTranscriptDraws", "conditional_transcript_draws"]


@dataclass(frozen=True)
class ConditionalTranscriptDraws:
    """Rao–Blackwellised draws of the transcript statistic's laws (module docstring).

    Attributes:
        p, q: ``(M, K)`` conditional laws of the statistic on ``S`` and ``S'`` (one row per base draw).
        difference_bound: ``TV(last, last')``: ``|p_m(O) − q_m(O)|`` never exceeds it.
        bias: certified bound on the numerical error of every ``p_m(O)``, ``q_m(O)``.
        statistic: ``"answer"`` (``n = 1``: the class answered) or ``"count of class j"``.
        statistic_class: ``j`` (``-1`` for ``"answer"``).
        bin_edges: ``(K + 1,)`` the ``N_j`` values where the bins start (``[0, 1, …, n + 1]`` unbinned).
        num_repeats: ``n``.
    """

    p: np.ndarray
    q: np.ndarray
    difference_bound: float
    bias: float
    statistic: str
    statistic_class: int
    bin_edges: np.ndarray
    num_repeats: int


def conditional_transcript_draws(
    model: NeighbouringVoteModel,
    sigma: float,
    num_repeats: int,
    draws: int,
    rng=None,
    *,
    pilot_draws: int = 2000,
    max_outputs: int = 128,
    chunk_size: int = 8192,
) -> ConditionalTranscriptDraws:
    """Rao–Blackwellised draws of the ``num_repeats``-answer transcript statistic under ``S`` and ``S'``.

    Args:
        model: the neighbouring vote model of one query (PATE, CaPC, a twin-paired fit).
        sigma: noise standard deviation of the noisy argmax, > 0.
        num_repeats: ``n ≥ 1`` answers per transcript (one training draw).
        draws: ``M ≥ 2`` base draws.
        rng: seed, ``SeedSequence`` or generator (the pilot uses an independent child stream).
        pilot_draws: base draws that choose ``j`` and the bins.
        max_outputs: most values of the statistic (``N_j`` is binned beyond).
        chunk_size: base draws per vectorised evaluation (memory ∝ ``chunk_size·C·(n + 1)``).

    Returns:
        A :class:`ConditionalTranscriptDraws`.

    Raises:
        ValueError: identical models (nothing to audit), or bad arguments.
    """
    s = check_sigma(sigma)
    n = check_positive_int(num_repeats, "num_repeats")
    m = check_positive_int(draws, "draws", minimum=2)
    pil = check_positive_int(pilot_draws, "pilot_draws")
    kmax = check_positive_int(max_outputs, "max_outputs", minimum=2)
    cs = check_positive_int(chunk_size, "chunk_size")
    if model.identical:
        raise ValueError("the two models are identical (last == last_prime): every divergence is 0, nothing to audit")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    g_pilot, g_draw = gen.spawn(2)
    c = model.num_classes
    classes = np.flatnonzero((model.last > 0) | (model.last_prime > 0))
    wl, wp = model.last[classes], model.last_prime[classes]
    tv = float(min(1.0, 0.5 * np.abs(model.last - model.last_prime).sum()))
    qb = quadrature_error_bound(c)
    deterministic = model.group_counts.size == 0

    def shifted(k: int, g) -> np.ndarray:  # (k, |classes|, C), each distinct base evaluated once
        base = model.sample_base(g, 1 if deterministic else k)
        uniq, inv = unique_rows(base)
        probs = _shifted_probabilities(uniq.astype(np.float64), classes, s)
        return probs[np.repeat(0, k) if deterministic else inv.reshape(-1)]

    if n == 1:
        p, q = np.empty((m, c)), np.empty((m, c))
        for a in range(0, m, cs):
            r = shifted(min(cs, m - a), g_draw)
            p[a : a + r.shape[0]] = np.einsum("v,nvc->nc", wl, r)
            q[a : a + r.shape[0]] = np.einsum("v,nvc->nc", wp, r)
        return ConditionalTranscriptDraws(np.clip(p, 0.0, 1.0), np.clip(q, 0.0, 1.0), tv, qb.total_variation, "answer", -1,
                                          np.arange(c + 1), 1)

    pilot = shifted(pil, g_pilot)  # (pil, V, C)
    j = int(np.argmax(np.abs((wp - wl) @ pilot.mean(axis=0))))
    t = np.arange(n + 1)
    if n + 1 <= kmax:
        edges = np.arange(n + 2)
    else:  # equal-width bins over the values the pilot gives mass to; the ends absorb the rest
        mass = np.einsum("v,nvt->t", 0.5 * (wl + wp), binom.pmf(t[None, None, :], n, pilot[:, :, j][:, :, None])) / pil
        live = np.flatnonzero(mass > 1e-300)
        lo, hi = int(live[0]), int(live[-1]) + 1
        inner = np.unique(np.round(np.linspace(lo, hi, kmax - 1)).astype(np.int64))
        edges = np.unique(np.concatenate([[0], inner, [n + 1]]))
    starts = edges[:-1]
    p, q = np.empty((m, starts.size)), np.empty((m, starts.size))
    rows = max(1, min(cs, 4_000_000 // (classes.size * (n + 1))))  # bounded memory of the pmf block
    for a in range(0, m, rows):
        r = shifted(min(rows, m - a), g_draw)[:, :, j]  # (k, V): r_v(j) per draw
        # the draws share few distinct r (each distinct base histogram gives one): each
        # distinct value's pmf evaluated once, the same numbers (binom.pmf is elementwise)
        ur, rinv = np.unique(r, return_inverse=True)
        pmf = binom.pmf(t[None, :], n, ur[:, None])[rinv.reshape(r.shape)]  # (k, V, n + 1)
        binned = np.add.reduceat(pmf, starts, axis=2)
        p[a : a + r.shape[0]] = np.einsum("v,nvt->nt", wl, binned)
        q[a : a + r.shape[0]] = np.einsum("v,nvt->nt", wp, binned)
    return ConditionalTranscriptDraws(np.clip(p, 0.0, 1.0), np.clip(q, 0.0, 1.0), tv, n * qb.per_class, f"count of class {j}", j,
                                      edges, n)
