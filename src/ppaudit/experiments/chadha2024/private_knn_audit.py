"""Per-query Private-kNN audits, their composition and summaries (Chadha et al. 2024, §4.2, §6, App. E.4).

Steps 4–5 of the pipeline described in :mod:`ppaudit.experiments.chadha2024.private_knn`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..._validation import as_orders, check_positive_int, check_probability
from ...accounting import private_knn_rdp
from ...adversaries.private_knn import KNN_ADVERSARIES, KnnCrafted, KnnSetup, craft_knn
from ...audit import (
    ModelSource,
    audit_query,
    TRUNCATION_RESERVE,
    bonferroni_confidence,
    compose_candidates,
    composed_event_epsilon,
    count_audits,
    counts_transcript_epsilon,
    k_cut_lower_bound,
    paper_counts_from_estimate,
    rao_blackwell_transcript_event,
    rao_blackwell_two_cut,
    simultaneous_confidence,
    summarize_candidates,
    two_cut_lower_bound,
)
from ...mechanisms.private_knn import (
    KnnVoteModel,
    enumerate_knn_output_distributions,
    knn_conditional_output_probabilities,
    knn_difference_bound,
    knn_output_distributions,
)
from ...montecarlo import model_noisy_argmax_counts
from ...rng import job_generator
from ...vote_models import QUADRATURE_ABS_ERROR, certified_mixture_rdp, mixture_rdp_estimate
from .private_prediction import per_query_audit_count

__all__ = ["KNN_RDP_COLUMNS", "KNN_COUNT_BOUNDS", "KnnModelSource", "KNN_AUDIT_META", "audit_knn_model", "audit_knn_crafted", "knn_audit_count",
           "knn_candidate_audits", "compose_knn", "summarize_knn", "run_knn_audits", "knn_audit_provenance"]

#: The per-order columns of the per-query table that are composed over queries.
#: ``two_cut_cp`` is the sound 2-cut audit (``procedure: ours``: Clopper–Pearson on exact or
#: sampled counts, or the Rao–Blackwellised empirical Bernstein bound); ``two_cut_paper`` the
#: paper's procedure (equal to ``two_cut_cp`` except where the law is a Monte Carlo estimate).
KNN_RDP_COLUMNS = ("two_cut_cp", "two_cut_paper", "k_cut", "exact", "exact_lo", "exact_hi", "data_independent")

#: The confidence statements one (candidate, query) pair of :func:`audit_knn_model` makes from its
#: output counts, each at the pair's ``effective_confidence`` (issue 27 §1): the sound 2-cut
#: ``two_cut_cp`` (all orders from one interval), the k-cut ``k_cut`` (its own simultaneous
#: interval) and the per-query valid ε lower bound ``valid_eps_lower`` (its own split and
#: Clopper–Pearson box, :func:`ppaudit.audit.counts_transcript_epsilon`; its event bounds
#: ``event_p_low`` / ``event_q_high`` are the same statement, composed by :func:`compose_knn`).
#: ``two_cut_paper`` is no audit of its own: it is ``two_cut_cp`` itself where the law is enumerated
#: or sampled, and the paper's procedure (a Monte Carlo law taken as exact: no valid bound, no
#: confidence) where it is Rao–Blackwellised. There the sound 2-cut and ε bound hold together and
#: the k-cut is computed on the paper's counts; the count still reserves three shares per pair, so
#: that ``N`` is fixed before any law is enumerated (the union bound stays valid, slightly
#: conservative). Without ``delta`` there is no ε bound: two per pair.
KNN_COUNT_BOUNDS = ("two_cut_cp", "k_cut", "valid_eps_lower")


def _count_bounds(delta: float | None) -> tuple[str, ...]:
    return KNN_COUNT_BOUNDS if delta is not None else KNN_COUNT_BOUNDS[:2]


def knn_candidate_audits(crafted: KnnCrafted, candidates: Sequence[int] | None = None, delta: float | None = None,
                         transcript_event: bool = False, nonenumerable: str = "rao-blackwell") -> list[int]:
    """The candidates whose whole transcript :func:`audit_knn_crafted` audits at once (one audit each).

    A candidate with several single-answer queries (Pois-NatQ), with ``transcript_event``, a
    ``delta`` and ``nonenumerable="rao-blackwell"``; none otherwise (AdvQ: one repeated query).
    """
    rows = range(crafted.num_candidates) if candidates is None else [int(i) for i in candidates]
    if not transcript_event or delta is None or nonenumerable != "rao-blackwell":
        return []
    return [i for i in rows if crafted.audit_queries.shape[1] > 1 and (crafted.repetitions[i] == 1).all()]


def knn_audit_count(crafted: KnnCrafted, candidates: Sequence[int] | None = None, delta: float | None = None,
                    transcript_event: bool = False, nonenumerable: str = "rao-blackwell") -> int:
    """How many audits :func:`audit_knn_crafted` runs: the ``N`` of its Bonferroni correction (issue 27 §1).

    Per (candidate, query) pair the :data:`KNN_COUNT_BOUNDS` (the 2-cut, the k-cut and, with
    ``delta``, the per-query ε bound), counted by the same
    :func:`ppaudit.experiments.chadha2024.private_prediction.per_query_audit_count` as PATE / CaPC (no
    null-canary control is run for Private-kNN), plus one whole-transcript audit per candidate of
    :func:`knn_candidate_audits`.

    Example:
        The paper-scale Rotten Tomatoes Nat-AdvQ (1,000 candidates × 1 repeated query) with δ:
        ``1000 × 3 = 3000`` audits, where counting one per pair gave 1,000.
    """
    per_pair = per_query_audit_count(crafted, candidates=candidates, count_bounds=_count_bounds(delta))
    return per_pair + len(knn_candidate_audits(crafted, candidates, delta, transcript_event, nonenumerable))


def audit_knn_model(
    model: KnnVoteModel,
    sigma: float,
    trials: int,
    orders,
    data_independent,
    confidence: float = 0.95,
    rng=None,
    count_mode: str = "auto",
    sample_trials: int | None = None,
    exact: str = "auto",
    exact_draws: int = 2000,
    max_tail_mass: float = 1e-11,
    max_support: int = 100_000,
    min_nu: float = 0.0,
    k_cut_method: str = "goodman",
    selection: str = "split",
    chunk_size: int | None = None,
    progress: bool = False,
    nonenumerable: str = "rao-blackwell",
    rb_draws: int = 10_000,
    repetitions: int = 1,
    delta: float | None = None,
    rb_displaced: str = "sample",
    laws_out: list | None = None,
) -> pd.DataFrame:
    """Audit, exact RDP and theory for one query under the Private-kNN model (§4.2, §6).

    Three ways to the audit (column ``audit_method``), all at ``confidence``:

    * ``"exact-enumerated"``: the model's output laws are enumerated with a certified tail
      (:func:`ppaudit.mechanisms.private_knn.enumerate_knn_output_distributions`) and the counts of
      ``T = trials`` runs are drawn as ``Multinomial(T, μ̂)`` — the law of ``T`` runs of the
      truncated model, at a cost independent of ``T`` (``T = 1e8`` as in the paper); the
      truncation costs ``2·T·τ`` of confidence (``effective_confidence``). 2-cut
      Clopper–Pearson (App. B). Sound; ``two_cut_paper`` is the same number.
    * ``"rao-blackwellised"`` (``nonenumerable="rao-blackwell"``, the default where the
      enumeration does not fit): ``rb_draws`` common draws of ``Mult(k, P_q)`` with the exact
      conditional output probabilities of both sides
      (:func:`ppaudit.mechanisms.private_knn.knn_conditional_output_probabilities`) and the sound
      empirical Bernstein 2-cut of :func:`ppaudit.audit.rao_blackwell_two_cut`
      (``procedure: ours``, column ``two_cut_cp``). Beside it the paper's procedure
      (``two_cut_paper``): the Monte Carlo mean treated as the exact law and ``T = trials``
      counts drawn from it for the Clopper–Pearson 2-cut — it ignores the estimation error and
      is not a valid bound (``k_cut`` is computed on the same counts). ``exact`` is the
      Rényi divergence of the Monte Carlo means of the same draws (``exact_se``).
    * ``"sampled"`` (``nonenumerable="sample"``, or ``count_mode="sample"``): ``sample_trials``
      simulated runs per side (:func:`ppaudit.montecarlo.model_noisy_argmax_counts`), 2-cut
      Clopper–Pearson; ``two_cut_paper`` is the same number.

    ``valid_eps_lower``: a valid ε lower bound at ``delta`` for the transcript of
    ``repetitions`` independent answers (Private-kNN draws a fresh subsample per answer):
    :func:`ppaudit.audit.rao_blackwell_two_cut` (``num_repeats``) or
    :func:`ppaudit.audit.counts_transcript_epsilon` on the counts (NaN without ``delta``);
    ``event_p_low`` / ``event_q_high``: the bounds on its event's probabilities, for the
    composition over queries in :func:`compose_knn`.

    Args:
        model: :class:`ppaudit.mechanisms.private_knn.KnnVoteModel` of the query and canary.
        sigma: noise standard deviation.
        trials: ``T`` with exact counts and of the paper's procedure on an estimated law.
        orders: Rényi orders α > 1.
        data_independent: ``(len(orders),)`` per-query theory RDP
            (:func:`ppaudit.accounting.private_knn_rdp` with one query).
        confidence: of the lower bounds.
        rng: seed / ``SeedSequence`` / generator.
        count_mode: ``"auto"``, ``"exact"`` (fail if the enumeration is too large) or ``"sample"``.
        sample_trials: ``T`` when sampling (default: ``trials``).
        exact: the ``exact`` column from the certified enumeration (``"enumerate"``, with
            ``exact_lo``/``exact_hi``), the Monte Carlo mixture (``"average"``, with
            ``exact_se``), or ``"auto"`` (enumerate when it fits).
        exact_draws: base draws of the Monte Carlo mixture (counts-based paths).
        max_tail_mass, max_support: budget of the enumeration.
        min_nu: skip the Monte Carlo (audit bounds 0) when ``ν < min_nu``.
        k_cut_method, selection, chunk_size, progress: as :func:`ppaudit.audit.audit_query`.
        nonenumerable: ``"rao-blackwell"`` or ``"sample"``: the audit where the law does not
            enumerate.
        rb_draws: ``M`` Rao–Blackwellised draws.
        rb_displaced: ``"sample"`` (the displaced last vote drawn per draw: two evaluations of
            Eq. (4) per draw) or ``"sum"`` (summed out exactly: ``1 + |supp P^k_q|``), see
            :func:`ppaudit.mechanisms.private_knn.knn_conditional_output_probabilities`.
        repetitions: answers of the query in the transcript (for ``valid_eps_lower``).
        delta: δ of ``valid_eps_lower``.
        laws_out: if given, receives one entry: ``(p, q, tail_mass)`` — the certified enumerated
            output laws (renormalised) and their pruned mass —, ``"identical"`` when the two laws
            are the same, or ``None`` when the law was not enumerated (for the exact ε of
            :func:`audit_knn_crafted`).

    Returns:
        One row per order: ``order``, :data:`KNN_RDP_COLUMNS`, ``exact_se``, and
        :data:`KNN_AUDIT_META` (``trials`` is the ``T`` — or the ``M`` draws — the sound audit
        used; ``paper_trials`` the ``T`` of ``two_cut_paper``).

    Raises:
        ValueError: a bad option (named in the message).
    """
    a = as_orders(orders)
    di = np.asarray(data_independent, dtype=np.float64)
    if di.shape != a.shape:
        raise ValueError(f"data_independent must have one value per order ({a.size}), got shape {di.shape}")
    mn = float(min_nu)
    if not (0.0 <= mn <= 1.0):
        raise ValueError(f"min_nu must be in [0, 1], got {min_nu!r}")
    if rb_displaced not in ("sum", "sample"):
        raise ValueError(f"rb_displaced must be 'sum' or 'sample', got {rb_displaced!r}")
    if nonenumerable not in ("rao-blackwell", "sample"):
        raise ValueError(f"nonenumerable must be 'rao-blackwell' or 'sample', got {nonenumerable!r}")
    m_rb = check_positive_int(rb_draws, "rb_draws")
    reps = check_positive_int(repetitions, "repetitions")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    src = KnnModelSource(model)
    simulate = model.nu >= mn
    if laws_out is not None:
        enum = None if model.identical else src.enumerate(sigma, max_tail_mass, max_support)
        laws_out.append("identical" if model.identical else None if enum is None else (enum.p, enum.q, float(enum.tail_mass)))
    if (simulate and not model.identical and nonenumerable == "rao-blackwell" and count_mode == "auto"
            and src.enumerate(sigma, max_tail_mass, max_support) is None):
        df = _audit_rao_blackwell(model, sigma, trials, a, di, confidence, gen, m_rb, selection, k_cut_method, reps, delta, rb_displaced)
    else:
        # "sample" mode draws sample_trials runs (default trials), as the "auto" fallback does.
        t = check_positive_int(sample_trials, "sample_trials") if (count_mode == "sample" and sample_trials is not None) else trials
        r = audit_query(
            src, sigma, t, a, confidence, gen,
            count_mode=count_mode, sample_trials=sample_trials, exact=exact, exact_draws=exact_draws,
            max_tail_mass=max_tail_mass, max_support=max_support, k_cut_method=k_cut_method, selection=selection,
            simulate=simulate, theory={"data_independent": di}, chunk_size=chunk_size, progress=progress,
        )
        method = {"exact": "exact-enumerated", "sample": "sampled", "none": "none"}[r.meta["count_mode"]]
        r.columns["two_cut_paper"] = r.columns["two_cut_cp"]
        eps = 0.0 if r.counts0 is None else float("nan")
        event: dict = {"epsilon_event": (float("nan"), float("nan"))}
        if r.counts0 is not None and delta is not None:
            # same level as the 2-cut: the truncation of an enumerated law is in effective_confidence
            eps = counts_transcript_epsilon(r.counts0, r.counts1, reps, delta, confidence, rng=gen.spawn(1)[0], details=event)
        r.meta.update(nu=model.nu, audit_method=method, paper_trials=r.meta["trials"], valid_eps_lower=eps,
                      event_p_low=event["epsilon_event"][0], event_q_high=event["epsilon_event"][1])
        df = r.frame(KNN_RDP_COLUMNS + ("exact_se",), KNN_AUDIT_META)
    return df


def _audit_rao_blackwell(model, sigma, trials, a, di, conf, gen, m_rb, selection, k_cut_method, reps, delta, displaced) -> pd.DataFrame:
    """The ``"rao-blackwellised"`` row of :func:`audit_knn_model` (sound 2-cut, paper's procedure, exact)."""
    from ...vote_models.estimate import _StreamingOutputMoments

    g_draw, g_sel, g_paper, g_paper_sel = gen.spawn(4)
    p, q = knn_conditional_output_probabilities(model, sigma, m_rb, g_draw, displaced=displaced)
    c = model.num_classes
    ours = rao_blackwell_two_cut(
        p, q, a, conf, difference_bound=knn_difference_bound(model, sigma), bias=c * QUADRATURE_ABS_ERROR,
        selection=selection, rng=g_sel, num_repeats=reps if delta is not None else None, delta=delta,
    )
    c0, c1 = paper_counts_from_estimate(p, q, trials, g_paper)
    paper = two_cut_lower_bound(c0, c1, a, conf, selection=selection, rng=g_paper_sel).lower_bound
    moments = _StreamingOutputMoments(c)
    moments.add(p, q)
    est = mixture_rdp_estimate(moments.estimate(), a)
    nan = np.full(a.size, np.nan)
    cols = {
        "order": a, "two_cut_cp": ours.lower_bound, "two_cut_paper": paper,
        "k_cut": k_cut_lower_bound(c0, c1, a, conf, method=k_cut_method),
        "exact": est["rdp"], "exact_lo": nan, "exact_hi": nan, "data_independent": di, "exact_se": est["se"],
    }
    meta = {"nu": model.nu, "simulated": True, "count_mode": "rao-blackwell", "trials": m_rb, "effective_confidence": conf,
            "exact_method": "average", "tail_mass": np.nan, "support_size": 0, "audit_method": "rao-blackwellised",
            "paper_trials": int(trials), "valid_eps_lower": ours.epsilon_lower_bound if delta is not None else float("nan")}
    meta["event_p_low"], meta["event_q_high"] = ours.details.get("epsilon_event", (float("nan"), float("nan")))
    df = pd.DataFrame({**cols, **{k: meta[k] for k in KNN_AUDIT_META}})  # one constructor: the meta scalars broadcast
    return df[["order", *KNN_RDP_COLUMNS, "exact_se", *KNN_AUDIT_META]]


#: The metadata columns of :func:`audit_knn_model`, in order: ``audit_method``
#: (``exact-enumerated`` / ``rao-blackwellised`` / ``sampled`` / ``none``) says how the sound
#: audit ``two_cut_cp`` was obtained, ``trials`` its ``T`` (counts per side) or ``M`` (draws),
#: ``paper_trials`` the ``T`` of ``two_cut_paper``; ``valid_eps_lower`` is one number per query;
#: ``event_p_low`` / ``event_q_high`` bound the probabilities of the ε bound's event on the two
#: sides (oriented towards ``S``; NaN when they do not separate), composed over a candidate's
#: independent queries by :func:`compose_knn`.
KNN_AUDIT_META = ("nu", "simulated", "count_mode", "audit_method", "trials", "paper_trials", "effective_confidence",
                  "exact_method", "tail_mass", "support_size", "valid_eps_lower", "event_p_low", "event_q_high")


@dataclass
class KnnModelSource(ModelSource):
    """Private-kNN's outputs for :func:`ppaudit.audit.audit_query` (Chadha et al. 2024, §6).

    Every trial draws ``H_S = Mult(k, P_q)`` (and ``H_S'`` with the poison's Bernoulli
    inclusion) from :class:`ppaudit.mechanisms.private_knn.KnnVoteModel`. The subsample is
    fresh per query, so repeated answers are independent: the per-query composition over
    queries is exact for Private-kNN (unlike PATE's shared histogram).

    Args:
        model: the :class:`~ppaudit.mechanisms.private_knn.KnnVoteModel` of one query and canary.
    """

    model: KnnVoteModel
    _enumerated: dict = field(default_factory=dict, init=False, repr=False)

    def theory(self, sigma, orders):
        raise ValueError("Private-kNN's theory is the subsampled Gaussian of the whole mechanism: pass theory={'data_independent': ...}")

    def enumerate(self, sigma, max_tail_mass, max_support):
        """The certified enumeration (cached per budget: :func:`audit_knn_model` asks first)."""
        key = (float(sigma), float(max_tail_mass), int(max_support))
        if key not in self._enumerated:
            self._enumerated[key] = enumerate_knn_output_distributions(self.model, sigma, max_tail_mass, max_support)
        return self._enumerated[key]

    def exact_rdp(self, enum, sigma, orders):
        return certified_mixture_rdp(enum, orders)

    def mixture_rdp(self, sigma, draws, rng, orders):
        return mixture_rdp_estimate(knn_output_distributions(self.model, sigma, draws, rng), orders)

    def exact_counts(self, enum, sigma, trials, gens):
        """Counts ``Multinomial(T, p̂)``, ``Multinomial(T, q̂)`` from the enumerated laws and ``τ_eff``: the two
        ``T``-trial count laws' total variation from the true ones (:func:`ppaudit.vote_models.count_law_total_variation`,
        per-trial ``τ`` = :meth:`total_variation_bound`) over ``2T`` (issue 34 §5; was ``τ`` itself, i.e. ``T·τ`` per side)."""
        from ...vote_models import count_law_total_variation

        c0 = gens[0].multinomial(trials, enum.p).astype(np.int64)
        c1 = gens[1].multinomial(trials, enum.q).astype(np.int64)
        tv = enum.total_variation_bound()
        return c0, c1, sum(count_law_total_variation(tv, int(trials), law) for law in (enum.p, enum.q)) / (2.0 * int(trials))

    def sample_counts(self, sigma, trials, gens, chunk_size, progress):
        c = self.num_classes
        c0 = model_noisy_argmax_counts(self.model.sampler("S"), c, sigma, trials, gens[0], chunk_size=chunk_size, progress=progress)
        c1 = model_noisy_argmax_counts(self.model.sampler("S_prime"), c, sigma, trials, gens[1], chunk_size=chunk_size, progress=progress)
        return c0, c1


def audit_knn_crafted(
    crafted: KnnCrafted,
    sigma: float,
    trials: int,
    orders,
    seed: int,
    experiment: str,
    gamma: float,
    confidence: float = 0.95,
    candidates: Sequence[int] | None = None,
    bonferroni: bool = True,
    progress: bool = False,
    delta: float | None = None,
    transcript_event: bool = False,
    **audit_kwargs,
) -> pd.DataFrame:
    """Per-query audits of every candidate canary of a Private-kNN adversary.

    Args:
        crafted: :func:`ppaudit.adversaries.private_knn.craft_knn`.
        sigma, trials, orders, confidence: as :func:`audit_knn_model`.
        seed, experiment: root of the randomness (e.g. ``"knn-fashion-mnist"``).
        gamma: the subsampling rate (for the theory column).
        candidates: rows of ``crafted`` to audit (default: all; e.g. one shard per job).
        bonferroni: run every audit at ``1 − (1 − confidence)/N`` with ``N`` = every audit this
            call runs (:func:`knn_audit_count`: per (candidate, query) the 2-cut, the k-cut and,
            with ``delta``, the per-query ε bound — :data:`KNN_COUNT_BOUNDS` — and, with
            ``transcript_event``, one whole-transcript audit per candidate with several
            single-answer queries), so that all of them hold simultaneously — every plotted
            bar, the worst and the average candidate, the composed ε bounds and the Pois-NatQ
            sums then hold at ``confidence`` together (default; ``False`` is the paper's
            uncorrected procedure). Columns ``multiplicity``, ``confidence_per_audit`` (the
            level) and ``bonferroni_audits`` (the ``N``) record it; ``count_audits`` (per pair,
            at ``effective_confidence``), ``transcript_audits`` (0) and ``candidate_audits``
            (per candidate, at ``confidence_per_audit``) say how many audits each row stands for
            (read by :func:`knn_audit_provenance` through :func:`ppaudit.audit.simultaneous_confidence`).
        progress: tqdm bar over the audits.
        delta: δ of the per-query ``valid_eps_lower`` (transcript of the query's repetitions).
        transcript_event: with ``delta`` and ``nonenumerable="rao-blackwell"``, also audit the whole
            transcript of every candidate with several single-answer queries (Pois-NatQ) at once
            (:func:`ppaudit.audit.rao_blackwell_transcript_event`; column
            ``valid_eps_lower_transcript``, NaN elsewhere; fresh draws, so it doubles their cost).
        **audit_kwargs: :func:`audit_knn_model` options (``exact_draws``, ``min_nu``,
            ``nonenumerable``, ``rb_draws``, …).

    Returns:
        Long table: ``adversary``, ``candidate``, ``key``, ``canary_index``, ``canary_label``,
        ``query``, ``repetitions`` + the columns of :func:`audit_knn_model`.
    """
    from tqdm.auto import tqdm

    a = as_orders(orders)
    theory = private_knn_rdp(gamma, sigma, a, 1)
    rows = range(crafted.num_candidates) if candidates is None else [int(i) for i in candidates]
    for i in rows:
        if not 0 <= i < crafted.num_candidates:
            raise ValueError(f"candidates must lie in [0, {crafted.num_candidates}), got {i}")
    pairs = [(i, j) for i in rows for j in range(crafted.audit_queries.shape[1])]
    # the whole-transcript audit of a candidate with several single-answer queries (Pois-NatQ)
    nonenumerable = audit_kwargs.get("nonenumerable", "rao-blackwell")
    whole = knn_candidate_audits(crafted, rows, delta, transcript_event, nonenumerable)
    # one Bonferroni budget over every audit run (issue 27 §1), fixed before any of them runs
    n_audits = knn_audit_count(crafted, rows, delta, transcript_event, nonenumerable)
    conf = check_probability(confidence, "confidence")
    if bonferroni and pairs:
        conf = bonferroni_confidence(conf, n_audits, reserve=TRUNCATION_RESERVE)  # the truncation slack inside the budget
    keys = crafted.keys
    frames, metas = [], []
    laws: dict[int, list] = {}
    for i, j in tqdm(pairs, disable=not progress, desc=f"audit {crafted.adversary}", unit="query", mininterval=2.0):
        q = int(crafted.audit_queries[i, j])
        out: list = []
        df = audit_knn_model(crafted.model(i, j), sigma, trials, a, theory, conf, rng=job_generator(seed, experiment, "audit", keys[i], q),
                             repetitions=int(crafted.repetitions[i, j]), delta=delta, laws_out=out, **audit_kwargs)
        laws.setdefault(i, []).append((out[0], int(crafted.repetitions[i, j])))
        frames.append(df)
        metas.append((crafted.adversary, i, keys[i], int(crafted.canary_index[i]), int(crafted.canary_label[i]), q,
                       int(crafted.repetitions[i, j]), int(i in whole)))
    if not frames:
        return pd.DataFrame()
    # One constructor for the whole table (the per-query meta repeated over its orders): a frame per
    # query cost ~1.5 ms each (issue 35).
    body = pd.concat(frames, ignore_index=True)
    rows = np.array([len(df) for df in frames])
    cols = list(zip(*metas))
    names = ("adversary", "candidate", "key", "canary_index", "canary_label", "query", "repetitions")
    table = pd.DataFrame({
        **{name: np.repeat(np.array(cols[k], dtype=object if name in ("adversary", "key") else np.int64), rows)
           for k, name in enumerate(names)},
        **{c: body[c].to_numpy() for c in body.columns},
        "multiplicity": "bonferroni" if bonferroni else "none (paper)",
        "confidence_per_audit": conf,
        "count_audits": len(_count_bounds(delta)),  # KNN_COUNT_BOUNDS, each at effective_confidence
        "transcript_audits": 0,
        "candidate_audits": np.repeat(np.array(cols[7], dtype=np.int64), rows),  # the candidate's whole-transcript audit, at confidence_per_audit
        "bonferroni_audits": n_audits if bonferroni else 1,
    })
    if whole or (transcript_event and delta is not None):  # NaN for candidates without one (AdvQ: one repeated query)
        table["valid_eps_lower_transcript"] = table["candidate"].map(
            {i: _candidate_transcript_epsilon(crafted, i, sigma, conf, delta, seed, experiment, audit_kwargs) for i in whole}).astype(float)
    if delta is not None:
        table["exact_eps_pld_composed"] = table["candidate"].map({i: _candidate_exact_epsilon(v, delta) for i, v in laws.items()})
    return table


def _candidate_transcript_epsilon(crafted, i: int, sigma: float, conf: float, delta: float, seed: int, experiment: str,
                                  audit_kwargs: Mapping) -> float:
    """Valid ε lower bound of candidate ``i``'s whole transcript (its independent single answers), Rao–Blackwellised
    as a whole (:func:`ppaudit.audit.rao_blackwell_transcript_event`; fresh draws, its own stream)."""
    m = int(audit_kwargs.get("rb_draws", 10_000))
    displaced = audit_kwargs.get("rb_displaced", "sample")
    ps, qs, bs = [], [], []
    for j in range(crafted.audit_queries.shape[1]):
        model, q = crafted.model(i, j), int(crafted.audit_queries[i, j])
        p_, q_ = knn_conditional_output_probabilities(model, sigma, m, job_generator(seed, experiment, "transcript", crafted.keys[i], q),
                                                      displaced=displaced)
        ps.append(p_)
        qs.append(q_)
        bs.append(knn_difference_bound(model, sigma) if model.nu > 0 else 1e-12)
    res = rao_blackwell_transcript_event(ps, qs, delta, conf, difference_bounds=np.maximum(bs, 1e-12),
                                         bias=ps[0].shape[1] * QUADRATURE_ABS_ERROR,
                                         rng=job_generator(seed, experiment, "transcript-pilot", crafted.keys[i]))
    return res.epsilon_lower_bound


def _candidate_exact_epsilon(laws: list, delta: float) -> float:
    """Exact ε at δ of a candidate's whole transcript: the PLDs of its queries' enumerated output
    laws, each self-composed over its repetitions, composed over the queries (Private-kNN's answers
    are independent: a fresh subsample per answer). NaN when a query's law was not enumerated
    (a Monte Carlo estimate of the law is no upper reference). The retained laws are
    renormalised; the pruned mass ``r`` of each moves δ by at most ``r·(1 + e^ε)`` per answer."""
    from ...accounting import composed_exact_epsilon

    if any(law is None for law, _ in laws):
        return float("nan")
    mech = [(law[0], law[1], reps) for law, reps in laws if not isinstance(law, str)]
    return composed_exact_epsilon(mech, delta) if mech else 0.0


def compose_knn(per_query: pd.DataFrame, delta: float = 1e-6) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Compose one adversary's per-query RDP over its queries and convert to ε (§4.2, §5.4).

    :func:`ppaudit.experiments.chadha2024.private_prediction.compose_candidates` on
    :data:`KNN_RDP_COLUMNS`; the ``adversary`` column is carried over.

    The valid ε lower bound of a candidate's whole transcript: Private-kNN draws a fresh
    subsample per answer, so the answers to different queries (and to repetitions of one) are
    independent and the per-query events compose — :func:`ppaudit.audit.composed_event_epsilon`
    on every answer's ``(event_p_low, event_q_high)`` (each query's repeated ``repetitions``
    times) gives ``eps_valid_eps_lower_composed``; ``eps_valid_eps_lower`` is the larger of it
    and the best single query's transcript bound. All per-query bounds hold together at the
    Bonferroni level (:func:`audit_knn_crafted`), so both are valid on the same event.

    Where :func:`audit_knn_crafted` also audited a candidate's whole transcript at once (per-query
    column ``valid_eps_lower_transcript``: several single-answer queries, Rao–Blackwellised with the
    pairing of the two sides kept, :func:`ppaudit.audit.rao_blackwell_transcript_event`), it is
    ``eps_valid_eps_lower_transcript`` and enters the maximum too; its Bonferroni share is counted
    in ``confidence_per_audit``.

    ``eps_exact_eps_pld``: the exact ε of the candidate's transcript (the tight upper
    reference; PLD composition of the enumerated per-query laws, from the per-query column
    ``exact_eps_pld_composed`` of :func:`audit_knn_crafted`; NaN where a law was not enumerated).
    """
    if per_query.empty:
        raise ValueError("per_query is empty: nothing to compose")
    advs = per_query["adversary"].unique() if "adversary" in per_query else []
    if len(advs) > 1:
        raise ValueError(f"compose one adversary at a time, got {list(advs)}")
    rdp, eps = compose_candidates(per_query, delta, columns=KNN_RDP_COLUMNS)
    ids = ["candidate", "key", "canary_index", "canary_label"] + [c for c in ("party", "control") if c in per_query]
    if "exact_eps_pld_composed" in per_query:
        by = per_query.drop_duplicates(ids).set_index(ids)["exact_eps_pld_composed"]
        eps["eps_exact_eps_pld"] = [float(by.loc[tuple(r)]) for r in eps[ids].itertuples(index=False)]
    if {"event_p_low", "event_q_high", "valid_eps_lower"} <= set(per_query.columns):
        one = per_query.drop_duplicates(ids + ["query"])
        composed = {}
        for key_vals, g in one.groupby(ids, sort=True):
            reps = g["repetitions"].to_numpy(dtype=int)
            composed[key_vals] = composed_event_epsilon(np.repeat(g["event_p_low"].to_numpy(), reps),
                                                        np.repeat(g["event_q_high"].to_numpy(), reps), delta)
        single = eps["eps_valid_eps_lower"].to_numpy(dtype=float)
        comp = np.array([composed[tuple(r)] for r in eps[ids].itertuples(index=False)], dtype=float)
        comp[np.isnan(single)] = np.nan  # no per-query bound (no δ, or an unaudited query): nothing composed
        eps["eps_valid_eps_lower_composed"] = comp
        eps["eps_valid_eps_lower"] = np.fmax(single, comp)
        if "valid_eps_lower_transcript" in per_query:  # the whole transcript Rao–Blackwellised (audit_knn_crafted)
            by = per_query.drop_duplicates(ids).set_index(ids)["valid_eps_lower_transcript"]
            whole = np.array([float(by.loc[tuple(r)]) for r in eps[ids].itertuples(index=False)], dtype=float)
            eps["eps_valid_eps_lower_transcript"] = whole
            eps["eps_valid_eps_lower"] = np.fmax(eps["eps_valid_eps_lower"].to_numpy(dtype=float), whole)
    if len(advs):
        rdp.insert(0, "adversary", advs[0])
        eps.insert(0, "adversary", advs[0])
    return rdp, eps


def summarize_knn(eps_by_adversary: Mapping[str, pd.DataFrame], dataset: str, worst_by: str = "two_cut_cp") -> pd.DataFrame:
    """Worst / max / average case per adversary (§5.4, App. E.4), one tidy table.

    Args:
        eps_by_adversary: adversary → ``eps`` table of :func:`compose_knn`.
        dataset: name written into the ``dataset`` column.
        worst_by: the column that picks the worst candidate (the audit, as in Figs. 25–31).

    Returns:
        Columns ``dataset``, ``adversary``, ``case`` (``worst``/``max``/``average``),
        ``column``, ``epsilon``, ``candidate``. ``column`` covers :data:`KNN_RDP_COLUMNS`
        (RDP audits on the ε scale, Thm 1 conversion) and, when the per-query table had it,
        ``valid_eps_lower`` (a valid ε lower bound of the candidate's transcript, :func:`compose_knn`)
        and ``exact_eps_pld`` (its exact ε, PLD over the enumerated laws; NaN where a law was not
        enumerated).
    """
    frames = []
    for adv, eps in eps_by_adversary.items():
        cols = KNN_RDP_COLUMNS + tuple(c for c in ("valid_eps_lower", "exact_eps_pld") if f"eps_{c}" in eps)
        s = summarize_candidates(eps, worst_by=worst_by, columns=cols)
        s.insert(0, "adversary", adv)
        s.insert(0, "dataset", dataset)
        frames.append(s)
    if not frames:
        raise ValueError("eps_by_adversary is empty")
    return pd.concat(frames, ignore_index=True)


def run_knn_audits(
    setup: KnnSetup,
    sigma: float,
    orders,
    seed: int,
    dataset: str,
    trials: int = 10**8,
    sample_trials_advq: int = 10**6,
    sample_trials_natq: int = 10**5,
    advq_candidates: Sequence[int] | None = None,
    num_repetitions: int | None = None,
    adversaries: Sequence[str] = KNN_ADVERSARIES,
    delta: float = 1e-6,
    confidence: float = 0.95,
    natq_candidates: int = 1,
    s_grid=(20, 200, 1000),
    progress: bool = False,
    rb_draws_advq: int = 10_000,
    rb_draws_natq: int = 1_000,
    **audit_kwargs,
) -> dict[str, pd.DataFrame]:
    """All Private-kNN adversaries of one dataset, end to end (craft → audit → compose → summarise).

    The workflow runs these steps as separate jobs; this is the same computation in one
    call (small runs, tests). ``trials`` is ``T`` with exact counts; a query whose model is
    too large to enumerate is audited from ``rb_draws_advq`` / ``rb_draws_natq``
    Rao–Blackwellised draws (default) or, with ``nonenumerable="sample"``, simulated with
    ``sample_trials_advq`` / ``sample_trials_natq`` runs (:func:`audit_knn_model`).

    Returns:
        ``{"per_query", "rdp", "eps", "summary"}`` tidy tables (``adversary`` column in each).
    """
    per_query, rdps, epss = [], [], {}
    for adv in adversaries:
        crafted = craft_knn(adv, setup, num_repetitions, advq_candidates if adv.endswith("advq") else None, natq_candidates, s_grid)
        ts = sample_trials_advq if adv.endswith("advq") else sample_trials_natq
        rb = rb_draws_advq if adv.endswith("advq") else rb_draws_natq
        pq = audit_knn_crafted(crafted, sigma, trials, orders, seed, f"knn-{dataset}", setup.gamma, confidence, progress=progress,
                               sample_trials=ts, rb_draws=rb, delta=delta, **audit_kwargs)
        pq["expected_inclusions"] = pq["candidate"].map(dict(enumerate(crafted.expected_inclusions)))
        rdp, eps = compose_knn(pq, delta)
        eps["expected_inclusions"] = eps["candidate"].map(dict(enumerate(crafted.expected_inclusions)))
        per_query.append(pq)
        rdps.append(rdp)
        epss[adv] = eps
    summary = summarize_knn(epss, dataset)
    return {"per_query": pd.concat(per_query, ignore_index=True), "rdp": pd.concat(rdps, ignore_index=True),
            "eps": pd.concat(list(epss.values()), ignore_index=True), "summary": summary}



def knn_audit_provenance(per_query: pd.DataFrame, confidence: float) -> dict:
    """How one adversary's audits were made and how far they hold together, for ``summary.csv`` (issues 13 §3, 27 §1).

    Args:
        per_query: the table of :func:`audit_knn_crafted` (one adversary).
        confidence: the confidence asked for (before any correction).

    Returns:
        ``audit_method`` (``"method×count; …"`` over the audited (candidate, query) pairs),
        ``trials_used`` (per method the ``T`` counts per side, or the ``M`` Rao–Blackwellised
        draws, min–max), ``paper_trials`` (``T`` of ``two_cut_paper``, min–max),
        ``multiplicity`` (``bonferroni`` / ``none (paper)``), ``confidence_per_audit`` (the level
        of each audit), ``effective_confidence_min`` (the smallest level after the pruning slack),
        ``num_audits`` — the ``N`` audits that were run (:func:`ppaudit.audit.count_audits`: per
        (candidate, query) the 2-cut, the k-cut and the per-query ε bound, and each
        whole-transcript audit) — and ``simultaneous_confidence``, the probability that all of
        them hold together, ``1 − Σ_audits (1 − c_i)`` (:func:`ppaudit.audit.simultaneous_confidence`,
        the union bound with each audit's effective confidence; ``confidence`` less the pruning
        slack with Bonferroni, ``1 − (1 − confidence)·N`` floored at 0 for the paper's uncorrected
        procedure). The paper's procedure ``two_cut_paper`` (where it differs from
        ``two_cut_cp``), the exact values and the theory carry no confidence and are not counted.

    Raises:
        ValueError: a table without the audit metadata.
    """
    need = {"candidate", "query", "audit_method", "trials", "paper_trials", "effective_confidence"}
    if not need <= set(per_query.columns):
        raise ValueError(f"per_query lacks columns {sorted(need - set(per_query.columns))}")
    first = per_query.drop_duplicates(["candidate", "query"])
    unit = {"exact-enumerated": "T", "sampled": "T", "rao-blackwellised": "M", "none": "T"}

    def rng_of(v):
        lo, hi = int(v.min()), int(v.max())
        return f"{lo:.3g}" if lo == hi else f"{lo:.3g}-{hi:.3g}"

    methods = first["audit_method"].value_counts()
    used = "; ".join(f"{m}: {unit.get(m, 'T')}={rng_of(first.loc[first['audit_method'] == m, 'trials'])}" for m in methods.index if m != "none")
    sim = first[first["audit_method"] != "none"]
    paper = rng_of(sim["paper_trials"]) if len(sim) else "0"
    per = float(per_query["confidence_per_audit"].iloc[0]) if "confidence_per_audit" in per_query else float(confidence)
    if "multiplicity" in per_query:
        multiplicity = "; ".join(sorted(set(per_query["multiplicity"].astype(str))))
    else:
        multiplicity = "bonferroni" if per > float(confidence) else "none (paper)"
    t = per_query.assign(confidence_per_audit=per_query.get("confidence_per_audit", per))
    if "count_audits" not in t:  # a table written before issue 27: the 2-cut, the k-cut and, with δ, the ε bound
        with_eps = "valid_eps_lower" in t and t["valid_eps_lower"].notna().any()
        t["count_audits"] = len(KNN_COUNT_BOUNDS) if with_eps else len(KNN_COUNT_BOUNDS) - 1
    candidate_table = _candidate_audit_table(t)
    return {"audit_method": "; ".join(f"{m}×{n}" for m, n in methods.items()), "trials_used": used or "none",
            "paper_trials": paper, "multiplicity": multiplicity, "confidence_per_audit": per,
            "effective_confidence_min": float(first["effective_confidence"].min()),
            "num_audits": count_audits(t, candidate_table), "simultaneous_confidence": simultaneous_confidence(t, candidate_table)}


def _candidate_audit_table(per_query: pd.DataFrame) -> pd.DataFrame:
    """The per-candidate audits of a per-query table (column ``candidate_audits``, the whole-transcript
    audits of :func:`knn_candidate_audits`) as the ``joint`` table of
    :func:`ppaudit.audit.simultaneous_confidence` (one row per candidate, ``num_audits``); empty
    when there are none."""
    if "candidate_audits" not in per_query or not (per_query["candidate_audits"] > 0).any():
        return pd.DataFrame()
    one = per_query.drop_duplicates("candidate")
    return pd.DataFrame({"candidate": one["candidate"].to_numpy(), "num_audits": one["candidate_audits"].to_numpy(dtype=int),
                         "confidence_per_audit": one["confidence_per_audit"].to_numpy(dtype=float)})
