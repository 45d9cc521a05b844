"""Audit stage of PATE and CaPC (Chadha et al. 2024, §4.2, §5.1–5.2, §5.4; App. E.1–E.2).

Given the fitted vote models (:mod:`ppaudit.vote_models`) and the crafted canaries
(:mod:`ppaudit.adversaries`):

1. :func:`audit_vote_model` audits one query of one candidate ``S'``: ``T`` Monte Carlo
   trials of the noisy argmax on ``H_S`` and on ``H_S'`` (each trial draws a fresh
   histogram from the model, :func:`ppaudit.montecarlo.model_noisy_argmax_counts`,
   chunked so that ``T = 1e8`` runs in fixed memory), then per Rényi order

   * ``two_cut_cp`` — the 2-cut Clopper–Pearson lower bound (§4.2, App. B), the paper's audit;
   * ``k_cut`` — the k-cut lower bound with simultaneous intervals (App. B);
   * ``exact`` — the Rényi divergence between the model's two output distributions (both
     directions, the larger): exact enumeration with a certified interval
     ``[exact_lo, exact_hi]`` when cheap, otherwise a Monte Carlo mixture with standard
     error ``exact_se`` (:mod:`ppaudit.vote_models`);
   * ``data_dependent`` — Papernot et al. (2018), Prop. 7 + Thm 6. The bound is stated for a
     fixed histogram; for the random histograms of the model we evaluate it at the expected
     histograms ``E[H_S]`` (``k·P_q`` for PATE, ``Σ_i P^i_q`` for CaPC) and ``E[H_S']`` and
     keep the larger (each covers the divergence out of its own dataset, as in
     :func:`ppaudit.experiments.chadha2024.synthetic.audit_histogram_pair`). This is our reading of
     "the data dependent theoretical upper bound" of §5.4 for a training-phase model;
   * ``data_independent`` — ``α/σ²`` (Papernot et al. 2018, Prop. 8).

2. :func:`audit_crafted` runs it for every (candidate canary, asked query) pair.
3. :func:`compose_candidates` composes the per-query RDP over the distinguisher's query
   sequence (order-wise sum, §4.2): Pois-NatQ sums over the ``n_Q`` natural queries, the
   AdvQ adversaries ask their one query ``n_Q`` times; then ε at ``δ = 1e-6`` with
   :func:`ppaudit.accounting.rdp_to_dp` (Thm 1). As the paper says (§5.4) the conversion is
   an illustration for the lower bounds, not a valid (ε, δ) audit.
4. :func:`summarize_candidates`: the worst case over the candidates (the candidate whose
   audit leaks most, §5.4: "the queries leaking most privacy") and the average case
   (mean ε over candidates; App. E "Average case" figures).

Shortcut (documented): when a candidate's ``P'_q`` equals ``P_q`` (resp. ``P^{1'}_q =
P^1_q``) the two models are identical, every divergence is exactly 0, and the Monte Carlo
is skipped (all lower bounds are 0). Under Pois-NatQ this is most queries for PATE.

Confidence (issue 13 §3, issue 27 §1): by default (``bonferroni=True``) :func:`audit_crafted` runs
every audit at ``1 − (1 − confidence)/N`` with ``N`` = every audit that is run for one adversary
(:func:`per_query_audit_count`: pairs × (2-cut, k-cut, transcript) × (canary, null-canary control),
plus the joint audits), so that all of them — hence their sums over queries, the worst candidate
and every plotted comparison — hold simultaneously with probability ≥ ``confidence``
(:func:`ppaudit.audit.simultaneous_confidence` is that union bound); ``bonferroni=False`` is the paper's
uncorrected procedure (each per-query bound at ``confidence``), labelled
``multiplicity = "none (paper)"``.

Paper vs sound (issue 13 §1): the per-query row is one answer; the paper composes it over the
``n_Q`` repetitions of an AdvQ query (``procedure: paper``). PATE's (and random-partition
CaPC's) repeated answers share one training run's histogram, so with ``transcript=True`` the
stage adds the sound transcript-level values (``procedure: ours``): the exact RDP of the
``n_Q``-answer transcript, its histogram cap, its exact ε (PLD), the transcript-level 2-cut
audit and a valid ε lower bound (Eq. (1)). Deterministic CaPC, PromptPATE and Private-kNN
(fresh subsample per query) have independent answers: their per-query composition is exact.
Pois-NatQ sums the per-query values over the ``n_Q`` natural queries, which assumes an
independent training run per query; with random partitions one run answers them all. The joint
audit of the whole natural-query transcript (one training draw, the canary teacher's joint vote
vectors) is :func:`ppaudit.experiments.chadha2024.pate_capc_joint.joint_natq_audit` ("sound: joint
transcript"), through the same :func:`ppaudit.audit.transcript_audit`.
The twin-paired fit and the null-canary control are :mod:`ppaudit.vote_models.twin`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..._validation import check_probability
from ...adversaries import CraftedCanaries
from ...audit import (
    RDP_COLUMNS,
    VoteModelSource,
    audit_query,
    TRUNCATION_RESERVE,
    bonferroni_confidence,
    compose_candidates,
    summarize_candidates,
)
from ...audit.composition import TRANSCRIPT_COLUMNS as _ALL_TRANSCRIPT_COLUMNS
from ...audit.transcript import rao_blackwell_transcript_audit, transcript_audit
from ...rng import job_generator
from ...vote_models import (
    CapcFit,
    NeighbouringVoteModel,
    PateFit,
    capc_vote_model,
    pate_vote_model,
)
from ...vote_models.twin import TwinFit

__all__ = [
    "RDP_COLUMNS",
    "audit_vote_model",
    "vote_model_for",
    "audit_crafted",
    "per_query_audit_count",
    "transcript_audits_per_pair",
    "COUNT_LOWER_BOUNDS",
    "transcript_columns",
    "TRANSCRIPT_COLUMNS",
    "compose_candidates",
    "summarize_candidates",
]


def audit_vote_model(
    model: NeighbouringVoteModel,
    sigma: float,
    trials: int,
    orders,
    confidence: float = 0.95,
    rng=None,
    count_mode: str = "sample",
    exact: str = "auto",
    exact_draws: int = 20_000,
    max_tail_mass: float = 1e-10,
    max_support: int = 200_000,
    k_cut_method: str = "goodman",
    selection: str = "split",
    chunk_size: int | None = None,
    progress: bool = False,
    sample_trials: int | None = None,
) -> pd.DataFrame:
    """Audit, exact RDP and theory for one query under a fitted vote model (§4.2, §5.1–5.2).

    Args:
        model: the model of ``(H_S, H_S')`` (:func:`ppaudit.vote_models.pate_vote_model`,
            :func:`~ppaudit.vote_models.capc_vote_model`).
        sigma: noise standard deviation of the noisy argmax.
        trials: Monte Carlo trials ``T`` per dataset (the paper uses ~1e8).
        orders: Rényi orders α > 1.
        confidence: confidence of the lower bounds (0.95 in the paper).
        rng: seed, ``SeedSequence`` or generator (split into independent streams).
        count_mode: ``"sample"`` — draw a histogram per trial (the paper's procedure);
            ``"exact"`` — counts from ``Multinomial(T, μ̂)`` with ``μ̂`` the output
            distribution of the certified enumeration (needs it to succeed). The counts then
            follow the truncated model, whose output law is within total variation
            ``τ = tail_mass + τ_q(C)`` (proven quadrature error) of the full one per trial; the reported
            ``effective_confidence`` is ``confidence − 2·T·τ`` (both datasets);
            ``"auto"`` — ``"exact"`` when the enumeration succeeds (then ``T = trials`` costs
            nothing, so the paper's 1e8 is affordable), else ``"sample"`` with
            ``T = sample_trials``. Both draw every trial's output from the same law (the
            mixture over histograms of the noisy argmax), so they are the same experiment;
            the ``trials`` column says which ``T`` was used.
        exact: ``"auto"`` (enumerate when cheap, else Monte Carlo mixture), ``"enumerate"``
            (fail if not cheap), or ``"average"``.
        exact_draws: base draws of the Monte Carlo mixture.
        max_tail_mass, max_support: budget of the enumeration.
        k_cut_method: ``"goodman"`` or ``"sison-glaz"``.
        selection: output-set search of the 2-cut (``"split"`` or ``"bonferroni"``).
        chunk_size: histograms per Monte Carlo chunk.
        progress: tqdm bars for the Monte Carlo.
        sample_trials: ``T`` of the sampled fallback of ``count_mode="auto"`` (default
            ``trials``).

    Returns:
        One row per order with the columns ``order``, :data:`RDP_COLUMNS`, ``exact_se``,
        and the metadata ``exact_method`` (``"enumerate"``, ``"average"`` or
        ``"identical"``), ``tail_mass``, ``support_size``, ``trials`` (the ``T`` actually
        used), ``effective_confidence``, ``count_mode`` (``"exact"``, ``"sample"`` or
        ``"none"``).
    """
    r = audit_query(
        VoteModelSource(model), sigma, trials, orders, confidence, rng,
        count_mode=count_mode, sample_trials=sample_trials, exact=exact, exact_draws=exact_draws,
        max_tail_mass=max_tail_mass, max_support=max_support, k_cut_method=k_cut_method,
        selection=selection, chunk_size=chunk_size, progress=progress,
    )
    if r.meta["identical"]:
        r.meta["exact_method"] = "identical"
    nan = np.full(r.orders.size, np.nan)
    for col in DD_RANDOM_COLUMNS:  # E_H[dd(H)] and max_H dd(H): only where the model was enumerated
        r.columns.setdefault(col, r.columns["data_dependent"] if r.meta["identical"] else nan)
    return r.frame(RDP_COLUMNS + ("exact_se",) + DD_RANDOM_COLUMNS, AUDIT_META)


#: Data-dependent theory of the random histograms (issue 13 §3): ``E_H[dd(H)]`` and ``max_H dd(H)``
#: over the enumerated support (NaN where the model was not enumerated). ``data_dependent``
#: stays ``dd(E[H])``, which the figures use.
DD_RANDOM_COLUMNS = ("data_dependent_expected", "data_dependent_max")


#: The metadata columns of :func:`audit_vote_model`, in order.
AUDIT_META = ("tail_mass", "support_size", "trials", "effective_confidence", "exact_method", "count_mode")


def vote_model_for(fit: PateFit | CapcFit | TwinFit, candidate: int, query: int, control: bool = False) -> NeighbouringVoteModel:
    """The vote model of one query for one candidate canary (row ``candidate`` of the fit).

    ``control=True`` (twin fits only): the candidate's null canary (:mod:`ppaudit.vote_models.twin`).
    """
    if isinstance(fit, TwinFit):
        return fit.model(candidate, query, control)
    if control:
        raise ValueError("the null-canary control needs a twin fit (ppaudit.vote_models.twin.fit_twin)")
    if isinstance(fit, PateFit):
        return pate_vote_model(fit.P[query], fit.P_prime[candidate, query], fit.k)
    if isinstance(fit, CapcFit):
        return capc_vote_model(fit.P_teachers[query], fit.P1_prime[candidate, query])
    raise ValueError(f"fit must be a PateFit, CapcFit or TwinFit, got {type(fit).__name__}")


#: Columns of the transcript-level analysis of a repeated query (one value per transcript of
#: ``repetitions`` answers: composed over queries *without* multiplying by the repetitions).
TRANSCRIPT_COLUMNS = tuple(c for c in _ALL_TRANSCRIPT_COLUMNS if c != "two_cut_transcript")


def transcript_columns(model: NeighbouringVoteModel, sigma: float, repetitions: int, orders, max_work: float = 2e8,
                       mc_draws: int = 20_000, rng=None, delta: float | None = None, sampled_base_draws: int = 1000) -> dict:
    """Sound reference values for the transcript of ``repetitions`` answers to one query (issue 13 §1).

    The answers share the histogram of one training run, so the transcript's RDP is at most
    the histogram cap ``D_α(H_S ‖ H_S')`` (data processing), while the paper composes
    ``repetitions ×`` the single-answer RDP. Computed with
    :func:`ppaudit.vote_models.repeated_query.transcript_rdp`: exact by enumeration of the
    answer counts when ``#count vectors × #histograms ≤ max_work``, else a Monte Carlo
    estimate (``exact_transcript_lo/hi`` NaN, ``transcript_method = "monte_carlo"``) when
    ``mc_draws × #histograms ≤ max_work``, else only the histogram cap
    (``"histogram cap only"``, exact NaN). When the
    histogram base cannot be enumerated even at tail mass 1e-12 the cap is the vote cap
    ``D_α(last ‖ last')`` and ``exact_transcript`` is a Monte Carlo *estimate* on
    ``sampled_base_draws`` sampled bases (:func:`ppaudit.vote_models.repeated_query.sampled_transcript_law`;
    ``transcript_method = "monte_carlo (sampled base, M=…)"``, lo/hi NaN, errs upwards on average;
    on the default's Fashion-MNIST PATE candidate 0, whose base does enumerate: 0.389 at M = 1000 and
    0.334 at M = 5000 against 0.362 on the ε scale) when ``2·mc_draws·M·|votes| ≤ max_work`` and the
    transcript has more than one answer (else NaN, ``"vote cap only"``).

    With ``delta``, also ``exact_eps_pld``: the exact ε at δ of the transcript (the tight upper
    reference, dp-accounting PLD on the answer-count laws; NaN when not enumerated).

    Returns:
        ``{column: (A,) array}`` for :data:`TRANSCRIPT_COLUMNS`, ``transcript_se``, the
        scalar ``transcript_method`` (and ``exact_eps_pld``).
    """
    from ...vote_models.repeated_query import sampled_transcript_law, transcript_law, transcript_rdp

    a = np.asarray(orders, dtype=np.float64)
    if model.identical:
        z = np.zeros(a.size)
        out = {"exact_transcript": z, "exact_transcript_lo": z, "exact_transcript_hi": z, "transcript_cap": z, "transcript_se": z,
               "transcript_method": "identical"}
        if delta is not None:
            out["exact_eps_pld"] = 0.0
        return out
    law = None
    for tail in (None, 1e-12):  # the certified default first, then a coarser (still certified) pruning
        try:
            law = transcript_law(model, sigma, int(repetitions)) if tail is None else transcript_law(model, sigma, int(repetitions), max_tail_mass=tail)
            break
        except ValueError:
            continue
    if law is None:  # base too large to enumerate: the vote cap D_α(last ‖ last') and an estimate on sampled bases
        nan = np.full(a.size, np.nan)
        out = {"exact_transcript": nan, "exact_transcript_lo": nan, "exact_transcript_hi": nan,
               "transcript_cap": _vote_cap(model.last, model.last_prime, a), "transcript_se": nan, "transcript_method": "vote cap only"}
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        votes = int(np.count_nonzero((model.last > 0) | (model.last_prime > 0)))
        base_draws = int(min(sampled_base_draws, max_work // (2 * max(int(mc_draws), 1) * votes)))
        if int(repetitions) > 1 and base_draws >= 100:  # one answer: the per-query ``exact`` column is its RDP
            est = sampled_transcript_law(model, sigma, int(repetitions), base_draws, gen)
            r = transcript_rdp(est, a, method="monte_carlo", mc_draws=mc_draws, rng=gen)
            out.update(exact_transcript=r.rdp, transcript_se=r.rdp_se, transcript_method=f"monte_carlo (sampled base, M={base_draws})")
        if delta is not None:
            out["exact_eps_pld"] = float("nan")
        return out
    import math

    m, k = math.comb(int(repetitions) + law.num_classes - 1, law.num_classes - 1), law.support_size
    if m * k <= max_work:  # enumerate the answer counts: exact (certified interval)
        r = transcript_rdp(law, a, method="enumerate", rng=rng)
    elif mc_draws * k <= max_work:  # Monte Carlo over transcripts, exact likelihoods
        r = transcript_rdp(law, a, method="monte_carlo", mc_draws=mc_draws, rng=rng)
    else:  # too large: the histogram cap only (two draws: its cap does not depend on them)
        r = transcript_rdp(law, a, method="monte_carlo", mc_draws=2, rng=rng)
        nan = np.full(a.size, np.nan)
        out = {"exact_transcript": nan, "exact_transcript_lo": nan, "exact_transcript_hi": nan,
               "transcript_cap": r.histogram_cap, "transcript_se": nan, "transcript_method": "histogram cap only"}
        if delta is not None:
            out["exact_eps_pld"] = float("nan")
        return out
    out = {"exact_transcript": r.rdp, "exact_transcript_lo": r.rdp_lo, "exact_transcript_hi": r.rdp_hi,
           "transcript_cap": r.histogram_cap, "transcript_se": r.rdp_se, "transcript_method": r.method}
    if delta is not None:
        out["exact_eps_pld"] = _transcript_exact_epsilon(law, float(delta)) if r.method == "enumerate" else float("nan")
    return out


def _transcript_exact_epsilon(law, delta: float) -> float:
    """Exact ε at δ of the transcript law (dp-accounting PLD on the enumerated answer-count laws,
    :func:`ppaudit.accounting.pld.exact_epsilon`)."""
    from ...accounting.pld import exact_epsilon
    from ...vote_models.repeated_query import count_vectors

    n, c = law.num_repeats, law.num_classes
    ll = law.log_likelihoods(count_vectors(n, c))
    l0, l1 = ll[:, 0] - np.logaddexp.reduce(ll[:, 0]), ll[:, 1] - np.logaddexp.reduce(ll[:, 1])
    return float(exact_epsilon(l0, l1, delta, log_pmf=True))


def _vote_cap(last, last_prime, orders) -> np.ndarray:
    """``max(D_α(last ‖ last'), D_α(last' ‖ last))``: the transcript's RDP cap by data processing."""
    from ...divergence import renyi_divergence

    return np.maximum(renyi_divergence(last, last_prime, orders), renyi_divergence(last_prime, last, orders))


#: The lower bounds :func:`audit_vote_model` computes from one pair's counts: two audits, each at
#: its effective confidence.
COUNT_LOWER_BOUNDS = ("two_cut_cp", "k_cut")


def transcript_audits_per_pair(transcript_audit_method: str) -> int:
    """Confidence statements of one transcript audit: 1 Rao–Blackwellised (its RDP and ε bounds
    hold together), 2 sampled (Clopper–Pearson 2-cut and Eq. (1), each on its own).

    Raises:
        ValueError: an unknown method.
    """
    if transcript_audit_method not in ("rao-blackwell", "sampled"):
        raise ValueError(f"transcript_audit_method must be 'rao-blackwell' or 'sampled', got {transcript_audit_method!r}")
    return 1 if transcript_audit_method == "rao-blackwell" else 2


def per_query_audit_count(crafted, transcript: bool = False, transcript_audit_method: str = "rao-blackwell",
                          control: bool = False, candidates: Sequence[int] | None = None,
                          count_bounds: Sequence[str] = COUNT_LOWER_BOUNDS) -> int:
    """How many audits :func:`audit_crafted` runs: the ``N`` of its Bonferroni correction.

    Per (candidate, query) pair: the confidence statements computed from its output counts
    (``count_bounds``; PATE / CaPC: the 2-cut and the k-cut, :data:`COUNT_LOWER_BOUNDS`), plus the
    transcript audit (:func:`transcript_audits_per_pair`) with ``transcript``; twice that with
    the null-canary ``control``. The same count serves Private-kNN
    (:func:`ppaudit.experiments.chadha2024.private_knn.knn_audit_count`: ``count_bounds`` = the 2-cut, the
    k-cut and the per-query ε bound, :data:`~ppaudit.experiments.chadha2024.private_knn.KNN_COUNT_BOUNDS`).

    Args:
        crafted: the candidates and their query sequences (:class:`~ppaudit.adversaries.CraftedCanaries`
            or :class:`~ppaudit.adversaries.private_knn.KnnCrafted`: ``num_candidates`` and one
            row of ``audit_queries`` per candidate).
        transcript, transcript_audit_method, control, candidates: as :func:`audit_crafted`.
        count_bounds: the names of the confidence statements each pair's counts give.

    Returns:
        ``pairs × (len(count_bounds) + transcript audits) × (1 + control)``.

    Raises:
        ValueError: ``count_bounds`` empty, or an unknown ``transcript_audit_method``.

    Example:
        40 pairs with transcripts (Rao–Blackwellised) and controls: ``40 × 3 × 2 = 240`` audits.
    """
    if not len(count_bounds):
        raise ValueError("count_bounds must name at least one bound, got none")
    rows = range(crafted.num_candidates) if candidates is None else [int(i) for i in candidates]
    pairs = sum(len(crafted.audit_queries[i]) for i in rows)
    per_pair = len(count_bounds) + (transcript_audits_per_pair(transcript_audit_method) if transcript else 0)
    return pairs * per_pair * (2 if control else 1)


def audit_crafted(
    fit: PateFit | CapcFit | TwinFit,
    crafted: CraftedCanaries,
    sigma: float,
    trials: int,
    orders,
    seed: int,
    experiment: str,
    confidence: float = 0.95,
    candidates: Sequence[int] | None = None,
    bonferroni: bool = True,
    progress: bool = False,
    transcript: bool = False,
    control: bool = False,
    transcript_max_work: float = 2e8,
    transcript_mc_draws: int = 20_000,
    transcript_trials: int = 50_000,
    delta: float = 1e-6,
    transcript_audit_method: str = "rao-blackwell",
    transcript_draws: int = 100_000,
    other_audits: int = 0,
    **audit_kwargs,
) -> pd.DataFrame:
    """Per-query audits of every candidate canary of an adversary.

    Row ``i`` of the fit must belong to candidate ``i`` of ``crafted`` (the canary teachers
    were trained in that order). Each (candidate, query) audit draws from
    ``job_generator(seed, experiment, "audit", key, query)``, so a subset of candidates
    (``candidates``, e.g. one Snakemake job per shard) gives the same rows.

    Args:
        fit: the fitted model (PATE, CaPC, or a twin-paired :class:`~ppaudit.vote_models.twin.TwinFit`).
        crafted: the candidates and their query sequences.
        sigma, trials, orders, confidence: as :func:`audit_vote_model`.
        seed, experiment: root of the randomness.
        candidates: rows of ``crafted`` to audit (default: all).
        bonferroni: run every audit at ``1 − (1 − confidence)/N`` (:func:`ppaudit.audit.bonferroni_confidence`),
            ``N`` = every audit this call runs (:func:`per_query_audit_count`: per (candidate,
            query) the 2-cut and the k-cut, the transcript audit(s), and all of them again for
            the null-canary control) plus ``other_audits``, so that all of them — hence their
            sums over queries, the worst candidate and every plotted comparison — hold
            simultaneously with probability ``≥ confidence`` (default; the paper's uncorrected
            procedure is ``bonferroni=False``). The ``multiplicity`` column says which
            (``"bonferroni"`` / ``"none (paper)"``), ``confidence_per_audit`` the level used,
            ``bonferroni_audits`` the ``N``; ``count_audits`` and ``transcript_audits`` how many
            audits each row stands for (read by :func:`ppaudit.audit.simultaneous_confidence`).
        progress: tqdm bar over the audits.
        transcript: add the sound transcript-level values of each asked query
            (:data:`TRANSCRIPT_COLUMNS`, :func:`transcript_columns`): the exact transcript RDP and
            its histogram cap, the exact ε at ``delta`` of the transcript (``exact_eps_pld``,
            dp-accounting PLD), and the transcript-level audit of ``transcript_trials``
            transcripts per side (:func:`ppaudit.audit.transcript.transcript_audit`):
            ``two_cut_transcript`` (RDP lower bound of the transcript) and ``valid_eps_lower``
            (the (ε, δ) audit of Eq. (1) on the transcript: a valid ε lower bound at ``delta``).
        control: add the null-canary control of each (candidate, query) (twin fits only) as
            rows with ``control = True`` (module :mod:`ppaudit.vote_models.twin`).
        transcript_max_work, transcript_mc_draws: budget of :func:`transcript_columns`.
        transcript_audit_method: how ``two_cut_transcript`` and ``valid_eps_lower`` are obtained:
            ``"rao-blackwell"`` (default) — ``transcript_draws`` training draws with the exact
            conditional law of the transcript statistic (:func:`ppaudit.audit.rao_blackwell_transcript_audit`;
            the two bounds hold together); ``"sampled"`` — ``transcript_trials`` simulated
            transcripts per side (:func:`ppaudit.audit.transcript.transcript_audit`). Both are
            sound (``procedure: ours``); the column ``transcript_audit_method`` records which, and
            ``transcript_trials`` the ``M`` or ``T`` used.
        transcript_draws: ``M`` of the Rao–Blackwellised transcript audit.
        other_audits: audits run outside this call that share the simultaneous ``confidence``
            (the joint Pois-NatQ audits, :func:`ppaudit.experiments.chadha2024.pate_capc_joint.joint_audit_count`).
        **audit_kwargs: passed to :func:`audit_vote_model`.

    Returns:
        Long table: ``candidate``, ``key``, ``canary_index``, ``canary_label``, ``party``,
        ``control``, ``query``, ``repetitions`` + the columns of :func:`audit_vote_model`
        (+ :data:`TRANSCRIPT_COLUMNS`, ``transcript_se``, ``transcript_method``),
        ``multiplicity``, ``confidence_per_audit``, ``fit_procedure``, ``num_instantiations``,
        ``num_canary_instantiations``.
    """
    from tqdm.auto import tqdm

    n_fit = {PateFit: lambda f: f.P_prime.shape[0], CapcFit: lambda f: f.P1_prime.shape[0], TwinFit: lambda f: f.num_canaries}
    kind = next((t for t in n_fit if isinstance(fit, t)), None)
    if kind is None:
        raise ValueError(f"fit must be a PateFit, CapcFit or TwinFit, got {type(fit).__name__}")
    if n_fit[kind](fit) != crafted.num_candidates:
        raise ValueError(f"the fit has {n_fit[kind](fit)} canaries but crafted has {crafted.num_candidates} candidates")
    if transcript_audit_method not in ("rao-blackwell", "sampled"):
        raise ValueError(f"transcript_audit_method must be 'rao-blackwell' or 'sampled', got {transcript_audit_method!r}")
    if control and kind is not TwinFit:
        raise ValueError("control=True needs a twin fit (ppaudit.vote_models.twin.fit_twin)")
    rows = range(crafted.num_candidates) if candidates is None else [int(i) for i in candidates]
    pairs = [(i, int(q), int(r)) for i in rows for q, r in zip(crafted.audit_queries[i], crafted.repetitions[i])]
    conf = check_probability(confidence, "confidence")
    if int(other_audits) < 0:
        raise ValueError(f"other_audits must be >= 0, got {other_audits}")
    n_transcript = transcript_audits_per_pair(transcript_audit_method) if transcript else 0
    n_audits = per_query_audit_count(crafted, transcript, transcript_audit_method, control, candidates)
    if bonferroni and pairs:
        conf = bonferroni_confidence(conf, n_audits + int(other_audits), reserve=TRUNCATION_RESERVE)  # slack inside the budget
    a = np.asarray(orders, dtype=np.float64)
    keys = crafted.keys
    ng = getattr(fit, "num_instantiations", np.nan)
    ngp = fit.num_canary_instantiations if kind is TwinFit else np.nan
    frames = []
    for i, q, r in tqdm(pairs, disable=not progress, desc=f"audit {crafted.adversary}", unit="query", mininterval=2.0):
        for ctl in ((False, True) if control else (False,)):
            model = vote_model_for(fit, i, q, ctl)
            key = keys[i] if not ctl else f"control:{keys[i]}"
            df = audit_vote_model(model, sigma, trials, a, conf, rng=job_generator(seed, experiment, "audit", key, q), **audit_kwargs)
            if transcript:
                tc = transcript_columns(model, sigma, r, a, transcript_max_work, transcript_mc_draws,
                                        rng=job_generator(seed, experiment, "transcript", key, q), delta=delta)
                for col in TRANSCRIPT_COLUMNS + ("transcript_se", "transcript_method", "exact_eps_pld"):
                    df[col] = tc[col]
                if model.identical:
                    df["two_cut_transcript"], df["valid_eps_lower"] = 0.0, 0.0
                elif transcript_audit_method == "rao-blackwell":
                    ta = rao_blackwell_transcript_audit(model, sigma, r, transcript_draws, a, conf,
                                                        rng=job_generator(seed, experiment, "transcript-audit-rb", key, q), delta=delta)
                    df["two_cut_transcript"], df["valid_eps_lower"] = ta.rdp_lower_bound, ta.epsilon_lower_bound
                    df["transcript_effective_confidence"] = ta.effective_confidence
                else:
                    # the exact likelihood-ratio statistic costs trials × histograms: within the budget
                    support = max(1, int(min(50_000, transcript_max_work // max(int(transcript_trials), 1))))
                    ta = transcript_audit(model, sigma, r, transcript_trials, a, conf, rng=job_generator(seed, experiment, "transcript-audit", key, q),
                                          delta=delta, max_support=support)
                    df["two_cut_transcript"], df["valid_eps_lower"] = ta.rdp_lower_bound, ta.epsilon_lower_bound
                    df["transcript_effective_confidence"] = ta.effective_confidence
                rb = transcript_audit_method == "rao-blackwell"
                df["transcript_trials"] = 0 if model.identical else int(transcript_draws if rb else transcript_trials)
                df["transcript_audit_method"] = "none" if model.identical else ("rao-blackwell" if rb else "sampled")
            df.insert(0, "repetitions", r)
            df.insert(0, "query", q)
            df.insert(0, "control", ctl)
            df.insert(0, "party", int(crafted.party[i]))
            df.insert(0, "canary_label", int(crafted.canary_label[i]))
            df.insert(0, "canary_index", int(crafted.canary_index[i]))
            df.insert(0, "key", keys[i])
            df.insert(0, "candidate", i)
            df["multiplicity"] = "bonferroni" if bonferroni else "none (paper)"
            df["confidence_per_audit"] = conf
            df["count_audits"] = len(COUNT_LOWER_BOUNDS)  # the 2-cut and the k-cut, each at effective_confidence
            df["transcript_audits"] = n_transcript
            df["bonferroni_audits"] = n_audits + int(other_audits) if bonferroni else 1
            df["fit_procedure"] = fit.procedure if kind is TwinFit else "paper"
            df["num_instantiations"] = ng
            df["num_canary_instantiations"] = ngp
            frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
