"""Transcript-level audit of a repeated-query adversary (one implementation for PATE, CaPC and the caching defence).

The AdvQ adversaries of Chadha et al. 2024 (§4.1, §5.1) ask one query ``n`` times. The
paper audits one answer and composes, ``n · b(α)`` ("paper: per-query composition"). When
the mechanism is trained at random (PATE, random-partition CaPC) the ``n`` answers share
one histogram, so they are not independent and the composed number can exceed a valid
*upper* bound on the transcript's RDP (``D_α(H_S ‖ H_S')``, see
:mod:`ppaudit.vote_models.repeated_query`). This module audits the transcript itself
("sound: transcript", ``procedure = "ours"``):

1. ``T`` transcripts per side; each draws one histogram from the vote model and ``n`` noisy
   answers of it with fresh Gaussian noise (or, with the answer cache of Wang et al. 2022
   §5, the first answer repeated). The answer-count vector is kept (a sufficient statistic
   of the exchangeable transcript): :func:`sample_transcript_counts`, which draws the ``n``
   answers either by simulating the noise or, the same law at ``C`` binomials instead of
   ``n·C`` normals, as ``Multinomial(n, p(H))`` with Eq. (4)'s law ``p(H)`` (its certified
   error charged to the effective confidence; ``answers`` of :func:`transcript_audit`).
2. A scalar statistic of the counts: the transcript's exact log-likelihood ratio
   ``log L_S(N) − log L_S'(N)`` under the fitted model (:class:`ppaudit.vote_models.TranscriptLaw`)
   where the model's base can be enumerated (``statistic="exact"``), else the
   independent-answer log-likelihood ratio ``Σ_j N_j log(p̂_j / p̂'_j)`` with ``p̂``, ``p̂'``
   from a pilot of single answers (``statistic="pilot"``). Any fixed statistic gives a valid
   audit (it is a post-processing of the transcript); the likelihood ratio is the most
   powerful (Neyman–Pearson), so approximations in it cost power, never validity.
3. Bins of the statistic are fixed on independent pilot transcripts
   (:func:`score_bin_edges`); the ``T`` audit transcripts per side are binned, and the binned
   counts go to :func:`ppaudit.audit.two_cut_lower_bound` (Clopper–Pearson, split selection
   of the output set with its Bonferroni correction — the same search as every per-query
   audit) and to :func:`ppaudit.audit.dp_epsilon_lower_bound` (Eq. (1), a valid ε lower
   bound of the transcript at δ). Threshold sets of the likelihood-ratio statistic are the
   candidate output sets ``O``.

A *transcript source* (an object with its own ``sample_transcripts`` and
``transcript_statistic``, e.g. :class:`ppaudit.vote_models.joint.JointNaturalQueryModel`: the
Pois-NatQ transcript of all natural queries on one training draw) replaces steps 1–2; step 3
is the same code.

Each of the two bounds holds at the stated confidence on its own (they use the same counts;
they are not claimed simultaneously).

**Rao–Blackwellised transcript audit** (:func:`rao_blackwell_transcript_audit`, the default of
the PATE/CaPC stage): instead of observing ``T`` sampled transcripts, draw ``M`` training runs
(base histograms) and compute, per draw, the *exact* conditional law of a transcript statistic
(the number of answers equal to one class; the answer itself for ``n = 1``) with the differing
vote summed out (:func:`ppaudit.vote_models.conditional.conditional_transcript_draws`); then the
empirical-Bernstein 2-cut of :func:`ppaudit.audit.rao_blackwell_two_cut` on those draws (sound:
every interval is a confidence bound on the mean of i.i.d. bounded draws, widened by the
certified quadrature error). Its RDP and ε bounds hold *simultaneously* at the confidence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._unique_rows import unique_rows
from .._validation import as_orders, check_positive_int, check_probability, check_sigma
from ..montecarlo import model_noisy_argmax_counts
from ..noisy_argmax import class_probabilities
from .bounds import dp_epsilon_lower_bound, two_cut_lower_bound

__all__ = [
    "TranscriptAudit",
    "answer_total_variation",
    "rao_blackwell_transcript_audit",
    "sample_transcript_counts",
    "score_bin_edges",
    "transcript_audit",
    "transcript_statistic",
]

#: Normal draws per chunk of :func:`sample_transcript_counts` (bounded memory: 8 bytes each).
_CHUNK_ELEMENTS = 4_000_000
#: How :func:`sample_transcript_counts` draws the answers of a histogram.
_ANSWERS = ("simulated", "quadrature")


def answer_total_variation(num_classes: int, num_repeats: int, cache_answers: bool = False, answers: str = "quadrature") -> float:
    """Certified total variation between the counts law of :func:`sample_transcript_counts` and the
    exact one, per transcript, for ``answers="quadrature"``: ``n·τ_q`` without the cache (numpy's
    multinomial sampler counted as exact, as the vote models count its binomials), ``τ_q +
    (C + 1)·2^-53`` with it (one inverse-CDF draw of a float64 uniform on a float64 CDF, as
    :meth:`ppaudit.vote_models.NeighbouringVoteModel.sampler_total_variation` counts its single
    voters), with ``τ_q`` = :func:`ppaudit.quadrature_bound.quadrature_error_bound`'s total
    variation of Eq. (4) for ``C`` classes; 0 for ``"simulated"`` (the mechanism itself).
    """
    if answers not in _ANSWERS:
        raise ValueError(f"answers must be one of {_ANSWERS}, got {answers!r}")
    if answers == "simulated" or num_classes <= 1:
        return 0.0
    from ..quadrature_bound import quadrature_error_bound

    tau = float(quadrature_error_bound(int(num_classes)).total_variation)
    return tau + (num_classes + 1) * 2.0**-53 if cache_answers else int(num_repeats) * tau


def sample_transcript_counts(
    model,
    num_classes: int,
    sigma: float,
    num_repeats: int,
    trials: int,
    rng: np.random.Generator,
    cache_answers: bool = False,
    answers: str = "simulated",
) -> np.ndarray:
    """Answer counts of ``trials`` transcripts of one query asked ``num_repeats`` times.

    One transcript is one training-phase instantiation: its histogram ``H ~ model`` is drawn
    once (the teachers are fixed while the adversary repeats its query — Chadha et al. 2024,
    §5.1) and the ``n`` answers are Gaussian noisy argmaxes of that ``H`` with fresh noise
    each (no cache), or the first answer repeated (cache, Wang et al. 2022 §5). The counts
    vector is a sufficient statistic of an exchangeable transcript.

    Two ways to draw the answers of one histogram ``H`` (the same law):

    * ``answers="simulated"``: the mechanism itself, ``argmax(H + σZ)`` with ``n`` fresh
      normal vectors (``n·C`` normals per transcript; no quadrature).
    * ``answers="quadrature"``: given ``H`` the ``n`` answers are i.i.d. with the law
      ``p(H)`` of Eq. (4) (:func:`ppaudit.noisy_argmax.class_probabilities`, once per distinct
      histogram of a chunk), so their counts are ``Multinomial(n, p(H))`` (one categorical
      draw with the cache). ``C`` binomials instead of ``n·C`` normals. Each answer's law is
      within the certified total variation ``τ_q`` of Eq. (4)
      (:func:`answer_total_variation`), a transcript's counts within ``n·τ_q`` (``τ_q``
      cached); :func:`transcript_audit` charges it to its effective confidence.

    Args:
        model: ``model(rng, m) -> (m, C)`` histogram sampler (e.g.
            :meth:`ppaudit.vote_models.NeighbouringVoteModel.sampler`).
        num_classes: ``C``.
        sigma: noise standard deviation, > 0.
        num_repeats: ``n ≥ 1`` answers per transcript.
        trials: ``T ≥ 1`` transcripts.
        rng: generator.
        cache_answers: answer caching on/off.
        answers: ``"simulated"`` or ``"quadrature"`` (above).

    Returns:
        ``(trials, C)`` int64 answer counts; every row sums to ``n``.

    Raises:
        ValueError: on ``num_repeats < 1``, ``trials < 1``, ``C < 1``, ``sigma <= 0`` or an
            unknown ``answers``.
    """
    c = check_positive_int(num_classes, "num_classes")
    n = check_positive_int(num_repeats, "num_repeats")
    t = check_positive_int(trials, "trials")
    s = check_sigma(sigma)
    if answers not in _ANSWERS:
        raise ValueError(f"answers must be one of {_ANSWERS}, got {answers!r}")
    out = np.zeros((t, c), dtype=np.int64)
    if answers == "quadrature":
        rows = max(1, _CHUNK_ELEMENTS // (4 * c))
        for a in range(0, t, rows):
            b = min(t, a + rows)
            h = np.asarray(model(rng, b - a), dtype=np.float64)
            if h.shape != (b - a, c):
                raise ValueError(f"the histogram model returned shape {h.shape}, expected {(b - a, c)}")
            uniq, inv = unique_rows(h)  # transcripts share few histograms: Eq. (4) once per distinct one
            p = class_probabilities(uniq, s)[inv.reshape(-1)]
            if cache_answers:  # one answer (inverse CDF of a uniform), repeated n times
                u = rng.random(b - a)
                first = np.minimum((np.cumsum(p, axis=1) <= u[:, None]).sum(axis=1), c - 1)
                out[np.arange(a, b), first] = n
            else:
                out[a:b] = rng.multinomial(n, p)
        return out
    per_row = c if cache_answers else n * c
    rows = max(1, _CHUNK_ELEMENTS // per_row)
    for a in range(0, t, rows):
        b = min(t, a + rows)
        h = np.asarray(model(rng, b - a), dtype=np.float64)
        # H + σ·Z formed in the normals' buffer (the same numbers: σ·Z rounded, then the sum rounded)
        if cache_answers:
            z = rng.standard_normal((b - a, c))
            z *= s
            z += h
            out[np.arange(a, b), np.argmax(z, axis=1)] = n
        else:
            z = rng.standard_normal((b - a, n, c))
            z *= s
            z += h[:, None, :]
            ans = np.argmax(z, axis=2)
            flat = ans + (np.arange(b - a) * c)[:, None]
            out[a:b] = np.bincount(flat.ravel(), minlength=(b - a) * c).reshape(b - a, c)
    return out


def score_bin_edges(scores, num_bins: int) -> np.ndarray:
    """Bin edges of transcript scores (fixed on pilot transcripts, independent of the audit).

    Midpoints between the distinct values when there are at most ``num_bins`` (a cached
    transcript has at most ``C``), else quantiles of the distinct values. Quantiles of the
    raw scores would merge every rare value below or above a heavy atom (most transcripts
    answer the top class) into one bin.

    Args:
        scores: 1-D finite scores.
        num_bins: ``≥ 2``.

    Returns:
        Sorted edges (``≤ num_bins − 1`` of them; empty when all scores are equal).

    Raises:
        ValueError: on ``num_bins < 2`` or non-finite scores.
    """
    nb = check_positive_int(num_bins, "num_bins", minimum=2)
    x = np.asarray(scores, dtype=np.float64).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError("scores must be finite")
    u = np.unique(x)
    if u.size <= nb:
        return (u[1:] + u[:-1]) / 2.0
    return np.unique(np.quantile(u, np.linspace(0, 1, nb + 1)[1:-1]))


@dataclass
class _Statistic:
    kind: str
    law: object = None
    weights: np.ndarray | None = None
    num_repeats: int = 1
    cache_answers: bool = False

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        if self.kind == "exact":
            x = counts // self.num_repeats if self.cache_answers else counts
            uniq, inv = unique_rows(x)  # transcripts repeat a lot
            return self.law.log_likelihood_ratio(uniq)[inv.reshape(-1)]
        return counts @ self.weights


def transcript_statistic(
    model,
    sigma: float,
    num_repeats: int,
    rng: np.random.Generator | None = None,
    cache_answers: bool = False,
    statistic: str = "auto",
    pilot_trials: int = 1000,
    max_tail_mass: float = 1e-12,
    max_support: int = 50_000,
    evaluations: int | None = None,
    max_cost: float = 5e8,
):
    """The scalar statistic of a transcript's answer counts (module docstring, step 2).

    Args:
        model: a :class:`ppaudit.vote_models.NeighbouringVoteModel`.
        sigma: noise standard deviation.
        num_repeats: ``n``.
        rng: generator of the pilot (``"pilot"`` only).
        cache_answers: the transcripts repeat the first answer (then the statistic is the
            single-answer log-likelihood ratio of that answer).
        statistic: ``"auto"`` (exact when the base enumerates within ``max_support``, else
            pilot), ``"exact"`` or ``"pilot"``.
        pilot_trials: single answers per side of the pilot.
        max_tail_mass, max_support: enumeration budget of the exact statistic (its accuracy
            only affects power).
        evaluations: how many transcripts the statistic will score (for ``"auto"``'s cost
            estimate ``min(evaluations, #count vectors) × #histograms ≤ max_cost``; beyond it
            ``"auto"`` uses the pilot statistic).
        max_cost: see ``evaluations``.

    Returns:
        ``(f, kind)``: ``f(counts (M, C)) -> (M,)`` and ``"exact"`` or ``"pilot"``.

    Raises:
        ValueError: on an unknown statistic, or ``"exact"`` on a model too large to enumerate.
    """
    from ..vote_models.repeated_query import transcript_law

    if statistic not in ("auto", "exact", "pilot"):
        raise ValueError(f"statistic must be 'auto', 'exact' or 'pilot', got {statistic!r}")
    n = check_positive_int(num_repeats, "num_repeats")
    if statistic in ("auto", "exact"):
        try:
            m = 1 if cache_answers else n
            law = transcript_law(model, sigma, m, max_tail_mass, max_support)
            distinct = math.comb(m + law.num_classes - 1, law.num_classes - 1)
            cost = min(distinct, evaluations if evaluations is not None else distinct) * law.support_size
            if statistic == "exact" or cost <= max_cost:
                return _Statistic("exact", law=law, num_repeats=n, cache_answers=cache_answers), "exact"
        except ValueError:
            if statistic == "exact":
                raise
    gen = np.random.default_rng(rng)
    c = model.num_classes
    t = check_positive_int(pilot_trials, "pilot_trials")
    q0 = model_noisy_argmax_counts(model.sampler("S"), c, sigma, t, rng=gen)
    q1 = model_noisy_argmax_counts(model.sampler("S_prime"), c, sigma, t, rng=gen)
    w = np.log((q0 + 0.5) / (q0.sum() + 0.5 * c)) - np.log((q1 + 0.5) / (q1.sum() + 0.5 * c))
    return _Statistic("pilot", weights=w), "pilot"


@dataclass
class TranscriptAudit:
    """Result of :func:`transcript_audit` (``procedure = "ours"``).

    Attributes:
        orders: the orders α.
        rdp_lower_bound: 2-cut Clopper–Pearson lower bound on the transcript's RDP (both
            directions, the larger), ``(len(orders),)``.
        epsilon_lower_bound: (ε, δ) lower bound of Eq. (1) on the transcript at ``delta``
            (NaN when ``delta`` is None).
        delta: the δ of ``epsilon_lower_bound``.
        confidence: confidence of each bound.
        statistic: ``"exact"`` or ``"pilot"``.
        num_repeats, trials, cache_answers: the experiment.
        counts0, counts1: binned statistic counts of the ``T`` transcripts per side.
        edges: the bin edges.
        procedure: ``"ours"``.
        effective_confidence: the confidence that holds once the certified distance of the
            histogram samplers from their exact laws is charged:
            ``confidence − (draws)·τ`` (:meth:`ppaudit.vote_models.NeighbouringVoteModel.sampler_total_variation`,
            :meth:`~ppaudit.vote_models.NeighbouringVoteModel.base_total_variation`); ``confidence``
            when the draws are exact.
    """

    orders: np.ndarray
    rdp_lower_bound: np.ndarray
    epsilon_lower_bound: float
    delta: float | None
    confidence: float
    statistic: str
    num_repeats: int
    trials: int
    cache_answers: bool
    counts0: np.ndarray
    counts1: np.ndarray
    edges: np.ndarray
    procedure: str = "ours"
    details: dict = field(default_factory=dict)
    effective_confidence: float | None = None

    def __post_init__(self):
        if self.effective_confidence is None:
            self.effective_confidence = float(self.confidence)


def transcript_audit(
    model,
    sigma: float,
    num_repeats: int,
    trials: int,
    orders,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
    *,
    cache_answers: bool = False,
    statistic: str = "auto",
    delta: float | None = None,
    num_bins: int = 64,
    pilot_fraction: float = 0.2,
    selection: str = "split",
    max_support: int = 50_000,
    answers: str = "auto",
) -> TranscriptAudit:
    """Audit the whole transcript of ``n`` repeated answers (module docstring; Chadha et al. 2024 §4.2, App. B, Eq. (1)).

    Args:
        model: a :class:`ppaudit.vote_models.NeighbouringVoteModel` (``H_S``, ``H_S'`` of one
            query; a fixed pair is a model with no random voters), or a *transcript source*:
            an object with ``num_classes``, ``sample_transcripts(which, sigma, num_repeats,
            trials, rng) -> (trials, d)`` and ``transcript_statistic(sigma, num_repeats, rng,
            pilot_trials, statistic, max_support=...) -> (f, kind)`` — e.g. the joint
            Pois-NatQ model :class:`ppaudit.vote_models.joint.JointNaturalQueryModel`, one
            training draw shared by all natural queries. Step 3 (bins, 2-cut, Eq. (1)) is the same.
        sigma: noise standard deviation of the noisy argmax, > 0.
        num_repeats: ``n ≥ 1`` answers per transcript.
        trials: ``T ≥ 1`` audit transcripts per side.
        orders: orders α > 1.
        confidence: confidence of each bound, in (0, 1).
        rng: seed, ``SeedSequence`` or generator.
        cache_answers: audit the cached interface (one answer repeated).
        statistic: ``"auto"``, ``"exact"`` or ``"pilot"`` (:func:`transcript_statistic`).
        delta: δ of the (ε, δ) lower bound (None: not computed).
        num_bins: most bins of the statistic.
        pilot_fraction: pilot transcripts per side (for the bins; and pilot single answers
            for a pilot statistic) as a fraction of ``trials`` (at least 1000).
        selection: output-set search of the 2-cut (``"split"`` or ``"bonferroni"``).
        max_support: enumeration budget of the exact statistic.
        answers: how a vote model's transcripts draw their answers
            (:func:`sample_transcript_counts`): ``"quadrature"`` (``Multinomial(n, p(H))`` with
            Eq. (4)'s law, its certified error charged to ``effective_confidence``),
            ``"simulated"`` (the noise itself: ``n·C`` normals per transcript) or ``"auto"``
            (default: quadrature for ``n ≥ 2`` answers without the cache, else simulated — the
            cheaper of the two). A transcript source draws its own.

    Returns:
        A :class:`TranscriptAudit`.

    Raises:
        ValueError: on bad arguments.
    """
    s = check_sigma(sigma)
    n = check_positive_int(num_repeats, "num_repeats")
    t = check_positive_int(trials, "trials")
    a = as_orders(orders)
    conf = check_probability(confidence, "confidence")
    frac = check_probability(pilot_fraction, "pilot_fraction")
    if answers != "auto" and answers not in _ANSWERS:
        raise ValueError(f"answers must be 'auto' or one of {_ANSWERS}, got {answers!r}")
    if delta is not None and not (0.0 <= float(delta) < 1.0):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    g_pilot, g_bins, g_audit, g_select = gen.spawn(4)
    c = model.num_classes
    pilot = max(1000, round(frac * t))
    if hasattr(model, "sample_transcripts"):  # a transcript source (e.g. the joint Pois-NatQ model): its own draws and statistic
        if cache_answers:
            raise ValueError("cache_answers applies to a vote model's repeated query, not to a transcript source")
        tv = 2.0 * float(model.transcript_total_variation()) if hasattr(model, "transcript_total_variation") else 0.0
        stat, kind = model.transcript_statistic(s, n, g_pilot, pilot, statistic, max_support=max_support)
        draw = lambda which, m, g: model.sample_transcripts(which, s, n, m, g)
    else:
        # one histogram per transcript and side, each within τ of its exact law
        tv = float(model.sampler_total_variation("S") + model.sampler_total_variation("S_prime")) if hasattr(model, "sampler_total_variation") else 0.0
        if answers == "auto":
            answers = "quadrature" if n >= 2 and not cache_answers else "simulated"
        tv += 2.0 * answer_total_variation(c, n, cache_answers, answers)  # both sides' answers
        stat, kind = transcript_statistic(model, s, n, g_pilot, cache_answers, statistic, pilot, max_support=max_support,
                                          evaluations=2 * (t + pilot))
        draw = lambda which, m, g: sample_transcript_counts(model.sampler(which), c, s, n, m, g, cache_answers, answers)
    pilot_scores = np.concatenate([stat(draw(w, pilot, g_bins)) for w in ("S", "S_prime")])
    edges = score_bin_edges(pilot_scores, num_bins)
    counts = [
        np.bincount(np.searchsorted(edges, stat(draw(w, t, g_audit)), side="right"), minlength=edges.size + 1)
        for w in ("S", "S_prime")
    ]
    eps = float("nan")
    if edges.size == 0:  # every pilot score equal: nothing to separate
        bound = np.zeros(a.size)
        eps = 0.0 if delta is not None else eps
    else:
        bound = two_cut_lower_bound(counts[0], counts[1], a, confidence=conf, selection=selection, rng=g_select).lower_bound
        if delta is not None:
            eps = dp_epsilon_lower_bound(counts[0], counts[1], delta=float(delta), confidence=conf, rng=g_select)
    # the T audit transcripts per side are within T·τ of their exact joint law (the pilot only picks the bins)
    return TranscriptAudit(a, bound, eps, None if delta is None else float(delta), conf, kind, n, t, bool(cache_answers),
                           counts[0], counts[1], edges, effective_confidence=max(0.0, conf - t * tv))


def rao_blackwell_transcript_audit(
    model,
    sigma: float,
    num_repeats: int,
    draws: int,
    orders,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
    *,
    delta: float | None = None,
    selection: str = "split",
    max_outputs: int = 128,
) -> TranscriptAudit:
    """Sound transcript audit from Rao–Blackwellised training draws (module docstring; Chadha et al. 2024 §4.2, App. B, Eq. (1)).

    Args:
        model: a :class:`ppaudit.vote_models.NeighbouringVoteModel` of one query (not identical).
        sigma: noise standard deviation of the noisy argmax, > 0.
        num_repeats: ``n ≥ 1`` answers per transcript (one training draw).
        draws: ``M`` base draws (training runs) for the bounds.
        orders: orders α > 1.
        confidence: confidence of the RDP bounds of all orders and the ε bound together.
        rng: seed, ``SeedSequence`` or generator.
        delta: δ of the valid (ε, δ) lower bound of the transcript (None: not computed).
        selection: output-set search (``"split"`` or ``"bonferroni"``) of
            :func:`ppaudit.audit.rao_blackwell_two_cut`.
        max_outputs: most values of the transcript statistic.

    Returns:
        A :class:`TranscriptAudit` with ``statistic`` the statistic used (``"answer"`` or
        ``"count of class j"``), ``trials = M``, ``counts0``/``counts1`` the mean conditional
        laws of the statistic (probabilities, not counts) and ``edges`` the statistic's bins;
        ``details`` holds ``method = "rao-blackwell"``, the difference bound and the bias.

    Raises:
        ValueError: on bad arguments or an identical model.
    """
    from ..vote_models.conditional import conditional_transcript_draws
    from .rao_blackwell import rao_blackwell_two_cut

    a = as_orders(orders)
    conf = check_probability(confidence, "confidence")
    if delta is not None and not (0.0 <= float(delta) < 1.0):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    g_draw, g_select = gen.spawn(2)
    d = conditional_transcript_draws(model, sigma, num_repeats, draws, g_draw, max_outputs=max_outputs)
    res = rao_blackwell_two_cut(d.p, d.q, a, conf, difference_bound=max(d.difference_bound, 1e-300), bias=d.bias,
                                selection=selection, rng=g_select, num_repeats=1 if delta is not None else None, delta=delta)
    return TranscriptAudit(a, res.lower_bound, res.epsilon_lower_bound if delta is not None else float("nan"),
                           None if delta is None else float(delta), conf, d.statistic, d.num_repeats, int(draws), False,
                           d.p.mean(axis=0), d.q.mean(axis=0), d.bin_edges,
                           details={"method": "rao-blackwell", "difference_bound": d.difference_bound, "bias": d.bias,
                                    "evaluation_draws": res.evaluation_draws},
                           # the M base draws are within M·τ_B of their exact joint law
                           effective_confidence=max(0.0, conf - int(draws) * (float(model.base_total_variation()) if hasattr(model, "base_total_variation") else 0.0)))
