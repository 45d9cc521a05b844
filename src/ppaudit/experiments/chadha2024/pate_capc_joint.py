"""Joint Pois-NatQ audit of PATE / CaPC: all natural queries on one training draw (issue 13 §1).

The paper's Pois-NatQ value (Chadha et al. 2024, §5.1, §5.4, Fig. 4) is the per-query audit
summed over the ``n_Q`` natural queries ("paper: per-query composition"). That sum is the RDP
of the transcript only when each query has its own independent training run. With random
partitions (PATE), or a randomised learner (CaPC trained with seeds), one training run answers
every query, so the canary-holding teacher's votes are dependent across the queries and the
sum assumes an independence that does not hold (it is neither a valid upper nor a valid lower
bound of the transcript's divergence in general).

:func:`joint_natq_audit` audits the whole transcript instead ("sound: joint transcript",
``procedure = "ours"``), through the one transcript audit :func:`ppaudit.audit.transcript_audit`
with the joint model :class:`ppaudit.vote_models.joint.JointNaturalQueryModel` as its source:
each transcript is one draw of the twin-paired instantiations' **joint vote vectors** of the
canary teacher (S') and its twin (S), the other teachers per the fitted model (independently
per query: their own dependence across queries is not modelled — see the model's docstring for
what the data can and cannot pin down). Per candidate and order it reports

* ``two_cut_joint`` — the 2-cut lower bound on the joint transcript's RDP: Rao–Blackwellised
  by default (exact conditional laws of a count statistic given the other teachers' draws,
  empirical-Bernstein bounds), else Clopper–Pearson on sampled transcripts;
* ``valid_eps_lower_joint`` — a valid ε lower bound at δ of the joint transcript (Rao–Blackwellised,
  or Eq. (1) on the sampled transcripts), at ``confidence_per_audit`` (Bonferroni over the candidates);
* ``exact_joint`` — the joint transcript's RDP (exact by enumeration of the answer vectors
  when ``C^Q ≤ max_outputs``, else a Monte Carlo estimate, ``exact_joint_se``), and
  ``exact_eps_pld_joint`` its exact ε (PLD; enumerated only);
* ``joint_cap`` — a certified upper bound (joint quasi-convexity; NaN when a base does not
  enumerate).

:func:`joint_summary_rows` turns them into summary rows (worst / max / average over the
candidates, ε at δ with Thm 1 for the RDP columns) beside the per-query composition.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._validation import check_probability
from ...audit import TRUNCATION_RESERVE, bonferroni_confidence, rao_blackwell_two_cut, transcript_audit
from ...rng import job_generator
from ...vote_models.joint import joint_natural_query_model, joint_transcript_rdp

__all__ = ["JOINT_EPS_COLUMNS", "JOINT_LABEL", "JOINT_RDP_COLUMNS", "joint_audit_count", "joint_natq_audit", "joint_summary_rows"]

#: Per-order columns of :func:`joint_natq_audit` (RDP of the joint transcript).
JOINT_RDP_COLUMNS = ("two_cut_joint", "exact_joint", "joint_cap")
#: Per-candidate ε columns (already ε at δ, no Thm 1 conversion).
JOINT_EPS_COLUMNS = ("valid_eps_lower_joint", "exact_eps_pld_joint")
#: Label of the joint values in summaries, findings and figures.
JOINT_LABEL = "sound: joint transcript"


def joint_audit_count(crafted, audit_method: str = "rao-blackwell") -> int:
    """How many audits :func:`joint_natq_audit` runs: one per candidate Rao–Blackwellised (its RDP
    and ε bounds hold together), two sampled (Clopper–Pearson 2-cut and Eq. (1) each on its own).

    Raises:
        ValueError: an unknown ``audit_method``.
    """
    if audit_method not in ("rao-blackwell", "sampled"):
        raise ValueError(f"audit_method must be 'rao-blackwell' or 'sampled', got {audit_method!r}")
    return int(crafted.num_candidates) * (1 if audit_method == "rao-blackwell" else 2)


def joint_natq_audit(
    fit,
    crafted,
    votes_twin,
    votes_canary,
    sigma: float,
    orders,
    seed: int,
    experiment: str,
    trials: int = 50_000,
    confidence: float = 0.95,
    bonferroni: bool = True,
    delta: float = 1e-6,
    max_outputs: int = 1_000_000,
    mc_draws: int = 20_000,
    max_support: int = 50_000,
    audit_method: str = "rao-blackwell",
    draws: int = 100_000,
    other_audits: int = 0,
) -> pd.DataFrame:
    """Joint transcript audit of every Pois-NatQ candidate (module docstring).

    Args:
        fit: the :class:`~ppaudit.vote_models.twin.TwinFit` of the adversary.
        crafted: its :class:`~ppaudit.adversaries.CraftedCanaries` (Pois-NatQ: one answer per
            natural query).
        votes_twin, votes_canary: ``(n_canaries, N_g', n_queries)`` the twins' and the canary
            teachers' votes (``votes_twin`` / ``votes_S_prime`` of rule train_canary_teachers).
        sigma: noise standard deviation.
        orders: orders α > 1 (finite).
        seed, experiment: root of the randomness (``job_generator(seed, experiment, "joint", key)``).
        trials: transcripts per side ``T``.
        confidence: simultaneous confidence over the candidates.
        bonferroni: per-audit confidence ``1 − (1 − confidence)/N`` (default), ``N`` = the
            :func:`joint_audit_count` audits of this call plus ``other_audits``, or ``confidence``
            each (``"none (paper)"``).
        delta: δ of the ε values.
        max_outputs, mc_draws, max_support: budgets of :func:`~ppaudit.vote_models.joint.joint_transcript_rdp`.
        audit_method: ``"rao-blackwell"`` (default) — ``draws`` draws of the other teachers' bases,
            each with the exact conditional law of the number of queries answered in a
            canary-favoured class (:meth:`~ppaudit.vote_models.joint.JointNaturalQueryModel.conditional_statistic_draws`),
            empirical-Bernstein 2-cut and ε bound of :func:`ppaudit.audit.rao_blackwell_two_cut`
            (the two hold together); ``"sampled"`` — ``trials`` sampled transcripts per side through
            :func:`ppaudit.audit.transcript_audit` (Clopper–Pearson 2-cut and Eq. (1)).
        draws: ``M`` of the Rao–Blackwellised audit.
        other_audits: audits run outside this call that share the simultaneous ``confidence`` (the
            per-query audits of the same adversary, :func:`ppaudit.experiments.chadha2024.private_prediction.per_query_audit_count`).

    Returns:
        Long table: ``candidate, key, canary_index, canary_label, party, order`` +
        :data:`JOINT_RDP_COLUMNS`, ``exact_joint_se`` + :data:`JOINT_EPS_COLUMNS` +
        ``joint_statistic``, ``joint_method``, ``num_informative_queries``,
        ``num_dropped_queries``, ``transcript_trials``, ``confidence_per_audit``, ``effective_confidence``
        (``confidence_per_audit`` less the certified distance of the samplers from their exact laws),
        ``multiplicity``, ``procedure``.

    Raises:
        ValueError: a candidate that repeats a query (not Pois-NatQ), mismatched vote arrays.
    """
    vt = np.asarray(votes_twin, dtype=np.int64)
    vc = np.asarray(votes_canary, dtype=np.int64)
    if vt.ndim != 3 or vt.shape != vc.shape or vt.shape[0] != crafted.num_candidates:
        raise ValueError(f"votes_twin and votes_canary must both be ({crafted.num_candidates}, N_g', n_queries), got {vt.shape} and {vc.shape}")
    if np.any(np.asarray(crafted.repetitions) > 1):
        raise ValueError("the joint natural-query audit asks each query once (Pois-NatQ); got repeated queries")
    if audit_method not in ("rao-blackwell", "sampled"):
        raise ValueError(f"audit_method must be 'rao-blackwell' or 'sampled', got {audit_method!r}")
    a = np.asarray(orders, dtype=np.float64)
    conf = check_probability(confidence, "confidence")
    if int(other_audits) < 0:
        raise ValueError(f"other_audits must be >= 0, got {other_audits}")
    n_each = 1 if audit_method == "rao-blackwell" else 2  # audits per candidate (joint_audit_count)
    if bonferroni and crafted.num_candidates:
        conf = bonferroni_confidence(conf, joint_audit_count(crafted, audit_method) + int(other_audits), reserve=TRUNCATION_RESERVE)
    frames = []
    for i in range(crafted.num_candidates):
        key = crafted.keys[i]
        model = joint_natural_query_model(fit, i, vt[i], vc[i], crafted.audit_queries[i])
        ex = joint_transcript_rdp(model, sigma, a, delta=delta, max_outputs=max_outputs, mc_draws=mc_draws,
                                  rng=job_generator(seed, experiment, "joint-exact", key), max_support=max_support)
        eff = conf  # less the certified distance of the base samplers from their exact laws (M or T draws)
        if model.identical:
            lower, eps_lower, stat, t = np.zeros(a.size), 0.0, "identical", 0
        elif audit_method == "rao-blackwell":
            g = job_generator(seed, experiment, "joint-rb", key)
            g_draw, g_sel = g.spawn(2)
            p, q, tv, bias = model.conditional_statistic_draws(sigma, draws, g_draw)
            rb = rao_blackwell_two_cut(p, q, a, conf, difference_bound=tv, bias=bias, rng=g_sel, num_repeats=1, delta=delta)
            lower, eps_lower, stat, t = rb.lower_bound, rb.epsilon_lower_bound, "rao-blackwell: answers in the canary-favoured classes", int(draws)
            eff = max(0.0, conf - int(draws) * model.transcript_total_variation())
        else:
            ta = transcript_audit(model, sigma, 1, trials, a, conf, rng=job_generator(seed, experiment, "joint", key), delta=delta,
                                  max_support=max_support)
            lower, eps_lower, stat, t = ta.rdp_lower_bound, ta.epsilon_lower_bound, ta.statistic, int(trials)
            eff = ta.effective_confidence
        frames.append(pd.DataFrame({
            "candidate": i, "key": key, "canary_index": int(crafted.canary_index[i]), "canary_label": int(crafted.canary_label[i]),
            "party": int(crafted.party[i]), "order": a, "two_cut_joint": lower, "exact_joint": ex.rdp, "exact_joint_se": ex.rdp_se,
            "joint_cap": ex.cap, "valid_eps_lower_joint": eps_lower, "exact_eps_pld_joint": ex.exact_eps, "joint_statistic": stat,
            "joint_method": ex.method, "num_informative_queries": ex.num_queries, "num_dropped_queries": ex.num_dropped,
            "transcript_trials": t, "confidence_per_audit": conf, "effective_confidence": eff, "num_audits": n_each, "multiplicity": "bonferroni" if bonferroni else "none (paper)",
            "procedure": "ours",
        }))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def joint_summary_rows(joint: pd.DataFrame, delta: float, worst_candidate: int | None = None) -> pd.DataFrame:
    """Summary rows of the joint audit: ``case`` worst / max / average, ``column``, ``epsilon``, ``candidate``.

    RDP columns (:data:`JOINT_RDP_COLUMNS`) are converted with Thm 1 (Balle et al. 2020) at
    ``delta`` ("RDP audit on the ε scale"); :data:`JOINT_EPS_COLUMNS` are ε values already.
    ``worst`` is ``worst_candidate`` (the candidate the per-query summary reports as worst, so
    that the paper's and the joint bars describe the same canary), else the candidate with
    the largest ``two_cut_joint`` ε.

    Args:
        joint: the table of :func:`joint_natq_audit` (may be empty: no rows returned).
        delta: δ of the conversion.
        worst_candidate: the candidate of the ``worst`` case.

    Returns:
        Columns ``case, column, epsilon, candidate`` (``candidate = -1`` for max / average).
    """
    from ...accounting import rdp_to_dp

    if joint is None or joint.empty:
        return pd.DataFrame(columns=["case", "column", "epsilon", "candidate"])
    d = check_probability(delta, "delta")
    per = []
    for cand, g in joint.groupby("candidate", sort=True):
        g = g.sort_values("order")
        row = {"candidate": int(cand)}
        for col in JOINT_RDP_COLUMNS:
            v = g[col].to_numpy(dtype=float)
            row[col] = np.nan if np.any(np.isnan(v)) else float(rdp_to_dp(v, g["order"].to_numpy(dtype=float), d))
        for col in JOINT_EPS_COLUMNS:
            row[col] = float(g[col].iloc[0])
        per.append(row)
    per = pd.DataFrame(per)
    if worst_candidate is None or int(worst_candidate) not in set(per["candidate"]):
        best = int(per["two_cut_joint"].fillna(-np.inf).to_numpy().argmax())
    else:
        best = int(np.flatnonzero(per["candidate"].to_numpy() == int(worst_candidate))[0])
    rows = []
    for col in JOINT_RDP_COLUMNS + JOINT_EPS_COLUMNS:
        vals = per[col]
        rows.append({"case": "worst", "column": col, "epsilon": float(vals.iloc[best]), "candidate": int(per["candidate"].iloc[best])})
        rows.append({"case": "max", "column": col, "epsilon": float(vals.max()), "candidate": -1})
        rows.append({"case": "average", "column": col, "epsilon": float(vals.mean()), "candidate": -1})
    return pd.DataFrame(rows)
