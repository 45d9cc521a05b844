"""The answer-caching defence of Wang et al. 2022 (§5): against the reconstruction attack, against the AdvQ audits of Chadha et al. 2024, and on fitted PATE/CaPC vote models.

Wang et al. 2022, §5, propose to cache answers: a repeated query then returns the first noisy
answer again, so an adversary who asks the same query ``n_Q`` times learns one answer, not
``n_Q``.

On fixed histograms (rule audit_wang_caching):

* :func:`caching_reconstruction` — the reconstruction attack's error against the number of
  queries, with and without the cache, next to the error of an attacker holding one answer;
* :func:`caching_audits` — the AdvQ audits of Chadha et al. 2024 on a neighbouring pair
  (:func:`neighbouring_pair`), with and without the cache.

On a fitted vote model: :func:`repeated_query_counts` draws the adversary's answer counts and
:func:`caching_transcript_audit` audits the whole transcript of ``n_Q`` repeated answers, with
and without the cache, next to the single-answer audit. Chadha et al. 2024's AdvQ adversaries
(§4.1, §5.1) repeat one audit query, so their fitted vote models (rule fit_vote_model of the
PATE/CaPC stage) are the natural place to measure the defence (rule audit_wang_caching_pate):

* :func:`pate_caching_transcripts` audits, per AdvQ adversary and candidate canary, the
  transcript of ``n_Q`` answers without and with the cache and one answer
  (:func:`caching_transcript_audit`), next to the stage's own
  numbers for that candidate (its composed per-answer audit ``n_Q · b(α)`` and exact RDP,
  from its ``rdp.csv``), with ε at δ per view (Balle et al. 2020 conversion,
  :func:`ppaudit.accounting.rdp_to_dp`).
* :func:`caching_findings` turns those rows into the findings table's checks: with the cache
  the audit drops to at most the exact leakage of one answer; without it, it exceeds it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from ...accounting import rdp_to_dp
from ...attacks.histogram import NoisyArgmaxInterface, normalised_l1_error, reconstruct_histogram
from ...audit import compose_rdp, sample_transcript_counts, transcript_audit, two_cut_lower_bound
from ...divergence import exact_rdp
from ...montecarlo import noisy_argmax_counts
from ...noisy_argmax import class_probabilities
from ..chadha2024.private_prediction import vote_model_for

__all__ = [
    "caching_audits",
    "caching_findings",
    "caching_reconstruction",
    "caching_transcript_audit",
    "neighbouring_pair",
    "pate_caching_transcripts",
    "repeated_query_counts",
]

log = logging.getLogger(__name__)


def pate_caching_transcripts(
    runs: Iterable[tuple],
    *,
    algo: str,
    dataset: str,
    sigma: float,
    orders: Sequence[float],
    delta: float,
    confidence: float,
    trials: int,
    num_bins: int,
    candidates: str,
    rng_for: Callable[[str, str], np.random.Generator],
) -> pd.DataFrame:
    """Caching audits of repeated-query transcripts on fitted vote models (Wang et al. 2022, §5).

    Args:
        runs: per adversary ``(adversary, fit, crafted, stage_rdp)``: its name, its fitted vote
            model (:class:`ppaudit.vote_models.PateFit` / ``CapcFit`` / ``TwinFit``), its
            :class:`ppaudit.adversaries.CraftedCanaries` (each candidate asks one query
            ``repetitions`` times) and the stage's composed ``rdp.csv`` (columns
            ``candidate``, ``order``, ``two_cut_cp``, ``exact``; optional ``control`` rows are
            dropped).
        algo: ``pate`` or ``capc`` (a column of the output).
        dataset: the PATE/CaPC panel dataset (a column of the output).
        sigma: the noisy argmax's σ.
        orders: Rényi orders of the audits (those of the stage's ``rdp.csv``).
        delta: δ of the ε conversion.
        confidence: confidence of the 2-cut Clopper–Pearson bounds.
        trials: Monte Carlo transcripts per histogram.
        num_bins: bins of the transcript statistic of the audit (wang2022.defence.pate.num_bins).
        candidates: ``worst`` (the candidate whose stage exact composed ε is largest) or ``all``.
        rng_for: ``(adversary, canary key) -> Generator``, one independent stream per audit.

    Returns:
        One row per adversary, candidate, view (``single_answer``, ``cache``, ``no_cache``)
        and order: the columns of ``caching_transcript_audit`` plus ``algo``, ``dataset``,
        ``adversary``, ``candidate``, ``query`` first and ``stage_composed_audit``,
        ``stage_exact_composed``, ``stage_exact_single`` (= composed / n_Q),
        ``stage_cached_audit`` (= composed audit / n_Q: with the cache the stage's audit
        composes over one fresh answer), ``epsilon`` (ε at δ of the view's audit) and ``delta``.

    Raises:
        ValueError: if ``candidates`` is neither ``worst`` nor ``all``, no run is given, or a
            candidate asks more than one distinct query (the cache only merges repeats).
    """
    if candidates not in ("worst", "all"):
        raise ValueError(f"candidates must be 'worst' or 'all', got {candidates!r}")
    orders = np.asarray(orders, dtype=float)
    frames = []
    for adv, fit, crafted, stage in runs:
        if "control" in stage:  # the stage also audits control (non-member) runs: keep the canary rows
            stage = stage[~stage["control"].astype(bool)]
        exact_eps = {int(c): float(rdp_to_dp(g["exact"].to_numpy(), g["order"].to_numpy(), delta)) for c, g in stage.groupby("candidate")}
        chosen = range(crafted.num_candidates) if candidates == "all" else [max(exact_eps, key=exact_eps.get)]
        log.info("%s: exact composed ε per candidate %s; auditing %s", adv, exact_eps, list(chosen))
        for i in chosen:
            if len(crafted.audit_queries[i]) != 1:
                raise ValueError(f"{adv} candidate {i} asks {len(crafted.audit_queries[i])} distinct queries; the caching audit needs one repeated query")
            q, reps = int(crafted.audit_queries[i][0]), int(crafted.repetitions[i][0])
            model = vote_model_for(fit, i, q)
            df = caching_transcript_audit(model, sigma, reps, trials, orders, confidence, rng_for(adv, crafted.keys[i]), num_bins=num_bins)
            own = stage[stage["candidate"] == i].set_index("order")
            df["stage_composed_audit"] = own.loc[df["order"], "two_cut_cp"].to_numpy()
            df["stage_exact_composed"] = own.loc[df["order"], "exact"].to_numpy()
            df["stage_exact_single"] = df["stage_exact_composed"] / reps
            df["stage_cached_audit"] = df["stage_composed_audit"] / reps
            eps = {view: float(rdp_to_dp(g["audit"].to_numpy(), g["order"].to_numpy(), delta)) for view, g in df.groupby("view")}
            df["epsilon"] = df["view"].map(eps)
            df.insert(0, "query", q)
            df.insert(0, "candidate", i)
            df.insert(0, "adversary", adv)
            df.insert(0, "dataset", dataset)
            df.insert(0, "algo", algo)
            df["delta"] = delta
            log.info("%s candidate %d (query %d, n_Q = %d): ε at δ = %g: %s", adv, i, q, reps, delta, eps)
            frames.append(df)
    if not frames:
        raise ValueError("pate_caching_transcripts needs at least one (adversary, fit, canaries, rdp) run, got none")
    return pd.concat(frames, ignore_index=True)


def caching_findings(epsilons: pd.DataFrame) -> pd.DataFrame:
    """The findings table's rows on the answer cache (Wang et al. 2022, §5), per adversary.

    Args:
        epsilons: :func:`ppaudit.plots.wang.pate_caching_epsilons` of the
            :func:`pate_caching_transcripts` table (one row per adversary and view, for the
            adversary's worst candidate; columns ``adversary``, ``candidate``, ``view``,
            ``epsilon``, ``num_repetitions``).

    Returns:
        Two rows per adversary (dataset ``pate_fitted_model``):
        ``<adv>_cached_audit_at_most_exact_single_answer`` (audit ε of the cached transcript ≤
        exact ε of one answer, + 1e-12) and ``<adv>_uncached_audit_above_exact_single_answer``
        (audit ε of the uncached transcript > exact ε of one answer); ``holds`` says whether
        each check holds (a failing check is reported, not hidden).

    Raises:
        ValueError: if ``epsilons`` is empty or a view ``cache``, ``no_cache`` or
            ``stage_exact_single`` is missing.
    """
    if epsilons.empty:
        raise ValueError("caching_findings needs the caching epsilons of at least one adversary, got an empty table")
    frames = []
    for adv, e in epsilons.groupby("adversary", sort=False):
        missing = {"cache", "no_cache", "stage_exact_single"} - set(e["view"])
        if missing:
            raise ValueError(f"caching epsilons of {adv!r} lack view(s) {sorted(missing)}")
        eps = {view: float(e.loc[e["view"] == view, "epsilon"].iloc[0]) for view in ("cache", "no_cache", "stage_exact_single")}
        n, cand = int(e["num_repetitions"].iloc[0]), int(e["candidate"].iloc[0])
        where = f"{adv} candidate {cand}, {n} repeated queries"
        frames.append(pd.DataFrame([
            {"dataset": "pate_fitted_model", "finding": "with the answer cache, the AdvQ audit drops to the single-answer leakage (Wang 2022, Sec. 5)",
             "check": f"{adv}_cached_audit_at_most_exact_single_answer", "description": f"{where}: audit ε of the cached transcript vs exact ε of one answer",
             "value": eps["cache"], "reference": eps["stage_exact_single"], "holds": bool(eps["cache"] <= eps["stage_exact_single"] + 1e-12)},
            {"dataset": "pate_fitted_model", "finding": "without the cache, repeated queries leak more than one answer (Wang 2022, Sec. 5)",
             "check": f"{adv}_uncached_audit_above_exact_single_answer", "description": f"{where}: audit ε of the uncached transcript vs exact ε of one answer",
             "value": eps["no_cache"], "reference": eps["stage_exact_single"], "holds": bool(eps["no_cache"] > eps["stage_exact_single"])},
        ]))
    return pd.concat(frames, ignore_index=True)


def _single_answer_error(h: np.ndarray, sigma: float) -> float:
    """Expected error of the one-answer attacker: estimate = all N votes on the answer."""
    p = class_probabilities(h, sigma)
    n = h.sum()
    errs = np.array([normalised_l1_error(h, np.eye(len(h))[k] * n) for k in range(len(h))])
    return float(np.sum(p * errs))


def caching_reconstruction(histograms, sigma: float, query_counts, repeats: int, rng: np.random.Generator) -> pd.DataFrame:
    """Reconstruction error vs number of queries, with and without the answer cache (§5).

    For each histogram, each ``M`` and each repeat, a fresh :class:`NoisyArgmaxInterface`
    (``cache_answers`` off / on) is queried ``M`` times with the same query; the answer
    counts are inverted with :func:`reconstruct_histogram`. Also returns the expected error
    of an attacker holding one answer (``single_answer_error``, the no-information level:
    all ``N`` votes on the answered class).
    """
    rows = []
    for hi, h in enumerate(np.asarray(histograms, dtype=float)):
        base = _single_answer_error(h, sigma)
        n = int(round(h.sum()))
        for m in query_counts:
            for cache in (False, True):
                errs, fresh = [], []
                for _ in range(repeats):
                    api = NoisyArgmaxInterface(h, sigma, rng=rng, cache_answers=cache)
                    answers = np.array([api.query(0) for _ in range(int(m))])
                    counts = np.bincount(answers, minlength=len(h))
                    errs.append(float(normalised_l1_error(h, reconstruct_histogram(counts, sigma, n))))
                    fresh.append(api.fresh_answers)
                rows.append(
                    {
                        "histogram": hi,
                        "true": " ".join(f"{v:g}" for v in h),
                        "sigma": sigma,
                        "num_queries": int(m),
                        "cache_answers": cache,
                        "mean_error": float(np.mean(errs)),
                        "std_error": float(np.std(errs, ddof=1)) if repeats > 1 else 0.0,
                        "fresh_answers": float(np.mean(fresh)),
                        "single_answer_error": base,
                        "repeats": repeats,
                    }
                )
    return pd.DataFrame(rows)


def neighbouring_pair(hist, adversary: str) -> tuple[np.ndarray, np.ndarray]:
    """``(H_S, H_S')`` of one AdvQ adversary on a synthetic histogram (one teacher's vote moves).

    Nat-AdvQ: the canary (the query with its true label, taken as the top class) makes the
    canary teacher vote for the top class instead of the second — one vote moves from the
    second class to the top class. Pois-AdvQ: the canary is labelled with the second most
    common label, so one vote moves from the top class to the second.
    """
    h = np.asarray(hist, dtype=float)
    order = np.argsort(-h, kind="stable")
    top, second = order[0], order[1]
    h2 = h.copy()
    if adversary == "nat_advq":
        if h2[second] < 1:
            raise ValueError("Nat-AdvQ needs a vote on the second class to move")
        h2[second] -= 1
        h2[top] += 1
    elif adversary == "pois_advq":
        h2[top] -= 1
        h2[second] += 1
    else:
        raise ValueError(f"unknown adversary {adversary!r}; use nat_advq or pois_advq")
    return h, h2


def caching_audits(hist, sigma: float, trials: int, orders, num_repetitions: int, confidence: float, rng: np.random.Generator) -> pd.DataFrame:
    """2-cut audits of the AdvQ adversaries with and without the answer cache (§5).

    Per adversary: ``T = trials`` noisy-argmax answers on ``H_S`` and on ``H_S'`` give the
    single-query 2-cut Clopper–Pearson lower bound ``b(α)``. Without caching the adversary
    receives ``n_Q`` independent answers: Rényi divergence is additive over independent
    answers, so ``compose_rdp(b, n_Q) = n_Q · b(α)`` is a lower bound on the RDP of its view
    (same confidence). With caching its view is one answer repeated ``n_Q`` times — a
    function of the first answer — so its divergence is the single-answer one and the audit
    is ``b(α)``. Exact RDP (Chadha Eq. 4) per query and composed is given for reference.
    """
    orders = np.asarray(orders, dtype=float)
    rows = []
    for adversary in ("nat_advq", "pois_advq"):
        h0, h1 = neighbouring_pair(hist, adversary)
        c0 = noisy_argmax_counts(h0, sigma, trials, rng=rng, mode="exact")
        c1 = noisy_argmax_counts(h1, sigma, trials, rng=rng, mode="exact")
        single = two_cut_lower_bound(c0, c1, orders, confidence=confidence, rng=rng).lower_bound
        exact = exact_rdp(h0, h1, sigma, orders)
        no_cache = compose_rdp(single, num_repetitions)
        for i, a in enumerate(orders):
            rows.append(
                {
                    "adversary": adversary,
                    "order": float(a),
                    "h_s": " ".join(f"{v:g}" for v in h0),
                    "h_s_prime": " ".join(f"{v:g}" for v in h1),
                    "sigma": sigma,
                    "trials": int(trials),
                    "num_repetitions": int(num_repetitions),
                    "audit_single_query": float(single[i]),
                    "audit_no_cache": float(no_cache[i]),
                    "audit_cache": float(single[i]),
                    "exact_single_query": float(exact[i]),
                    "exact_no_cache": float(num_repetitions * exact[i]),
                    "exact_cache": float(exact[i]),
                }
            )
    return pd.DataFrame(rows)


def repeated_query_counts(model, num_classes: int, sigma: float, num_repetitions: int, trials: int, rng: np.random.Generator, cache_answers: bool) -> np.ndarray:
    """Answer counts of ``trials`` transcripts of one query asked ``num_repetitions`` times.

    Thin alias of :func:`ppaudit.audit.sample_transcript_counts` (one implementation; see
    there for the model: one histogram per transcript, fresh noise per answer or the first
    answer repeated with the cache of Wang et al. 2022 §5).

    Returns:
        ``(trials, C)`` int64 answer counts; every row sums to ``n_Q``.

    Raises:
        ValueError: on ``num_repetitions < 1`` or ``trials < 1``.
    """
    return sample_transcript_counts(model, num_classes, sigma, num_repetitions, trials, rng, cache_answers)


def caching_transcript_audit(
    model,
    sigma: float,
    num_repetitions: int,
    trials: int,
    orders,
    confidence: float,
    rng: np.random.Generator,
    num_bins: int = 64,
    pilot_fraction: float = 0.2,
    statistic: str = "auto",
) -> pd.DataFrame:
    """2-cut audits of a repeated-query (AdvQ) adversary's transcript, with and without caching.

    The AdvQ adversaries of Chadha et al. 2024 (§5.1) ask their canary query ``n_Q`` times;
    the PATE/CaPC stage audits one answer and composes (``n_Q · b(α)``). Here the whole
    transcript is audited on the fitted vote model with :func:`ppaudit.audit.transcript_audit`
    (one implementation: ``T`` transcripts per side, the transcript's log-likelihood ratio
    — exact under the model where its base enumerates, else from a pilot of single answers —
    binned on pilot transcripts, 2-cut Clopper–Pearson with split selection), for the
    uncached interface (``no_cache``) and the cached one (``cache``: one answer repeated, so
    it can show no more than the single-answer leakage), next to the single-answer audit
    (``single_answer``: the cached transcript's counts divided by ``n_Q`` are one answer).

    Returns:
        Rows ``(view, order, audit)`` with ``view`` in ``single_answer``, ``no_cache``,
        ``cache``, plus ``trials``, ``num_repetitions``, ``sigma``, ``confidence``,
        ``statistic`` and ``procedure`` (``"ours"``).
    """
    orders = np.asarray(orders, dtype=float)
    g_single, g_free, g_cache = rng.spawn(3)
    runs = {
        "single_answer": transcript_audit(model, sigma, 1, trials, orders, confidence, g_single, statistic=statistic,
                                          num_bins=num_bins, pilot_fraction=pilot_fraction),
        "no_cache": transcript_audit(model, sigma, num_repetitions, trials, orders, confidence, g_free, statistic=statistic,
                                     num_bins=num_bins, pilot_fraction=pilot_fraction),
        "cache": transcript_audit(model, sigma, num_repetitions, trials, orders, confidence, g_cache, cache_answers=True,
                                  statistic=statistic, num_bins=num_bins, pilot_fraction=pilot_fraction),
    }
    return pd.DataFrame(
        [
            {"view": view, "order": float(a), "audit": float(res.rdp_lower_bound[i]), "trials": int(trials),
             "num_repetitions": int(num_repetitions), "sigma": float(sigma), "confidence": float(confidence),
             "statistic": res.statistic, "procedure": res.procedure}
            for view, res in runs.items()
            for i, a in enumerate(orders)
        ]
    )
