"""The answer-caching defence of Wang et al. 2022 (§5) measured on fitted PATE/CaPC vote models.

Wang et al. 2022, §5, propose to cache answers: a repeated query then returns the first noisy
answer again, so an adversary who asks the same query ``n_Q`` times learns one answer, not
``n_Q``. Chadha et al. 2024's AdvQ adversaries (§4.1, §5.1) do exactly that — they repeat
one audit query — so their fitted vote models (rule fit_vote_model of the PATE/CaPC stage)
are the natural place to measure the defence:

* :func:`pate_caching_transcripts` audits, per AdvQ adversary and candidate canary, the
  transcript of ``n_Q`` answers without and with the cache and one answer
  (:func:`ppaudit.experiments.wang2022.caching_transcript_audit`), next to the stage's own
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

from ..accounting import rdp_to_dp
from .private_prediction import vote_model_for
from .wang2022 import caching_transcript_audit

__all__ = ["caching_findings", "pate_caching_transcripts"]

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
