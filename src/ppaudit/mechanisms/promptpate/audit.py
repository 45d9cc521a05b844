"""Audit of PromptPATE's exact neighbouring histograms (Chadha et al. 2024, §5.4, App. E.3)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..._validation import as_orders, check_positive_int, check_probability, check_sigma
from .canaries import ADVERSARIES
from ...audit import RDP_COLUMNS, compose_candidates, summarize_candidates
from ...rng import job_generator
from .neighbours import advq_neighbour, natq_neighbour
from .votes import PromptPateVotes

__all__ = [
    "audit_pair",
    "audit_votes",
]

# ---------------------------------------------------------------------------------------
# Audit
# ---------------------------------------------------------------------------------------


def audit_pair(
    h0,
    h1,
    sigma: float,
    trials: int,
    orders,
    confidence: float = 0.95,
    rng=None,
    selection: str = "split",
    k_cut_method: str = "goodman",
) -> pd.DataFrame:
    """Audit of one query on a fixed neighbouring pair of exact histograms (§4.2, §5.3).

    Counts of ``T`` noisy-argmax runs on each histogram in the exact-count mode
    (``Multinomial(T, p)`` with ``p`` from Eq. (4) — the same law as ``T`` black-box runs,
    §5.3: the histograms are deterministic), then per order: ``two_cut_cp`` (the paper's
    audit), ``k_cut``, ``exact`` (Eq. 4; ``exact_lo = exact_hi = exact``, ``exact_se = 0``),
    ``data_dependent`` (Papernot et al. 2018 at both histograms, the larger) and
    ``data_independent`` (``α/σ²``). Identical histograms give zeros without Monte Carlo.
    The row is computed by the one per-query audit core, :func:`ppaudit.audit.audit_query`
    with a :class:`~ppaudit.audit.HistogramPairSource`. PromptPATE's teachers are fixed
    prompts (deterministic histograms): repeated answers are independent given the fixed
    histogram, so the per-query composition is exact here (issue 13 §1: unaffected).

    Returns:
        One row per order with ``order``, :data:`RDP_COLUMNS`, ``exact_se``, ``trials``,
        ``identical``.
    """
    from ...audit import HistogramPairSource, audit_query

    x0, x1 = np.asarray(h0, dtype=np.float64), np.asarray(h1, dtype=np.float64)
    if x0.shape != x1.shape or x0.ndim != 1:
        raise ValueError(f"h0 and h1 must be 1-D histograms of the same length, got {x0.shape} and {x1.shape}")
    r = audit_query(HistogramPairSource(x0, x1), sigma, trials, orders, confidence, rng, count_mode="exact", exact="enumerate",
                    selection=selection, k_cut_method=k_cut_method)
    return r.frame(RDP_COLUMNS + ("exact_se",), ("trials", "identical"))


def _hist_str(h) -> str:
    return " ".join(str(int(x)) for x in h)


def audit_votes(
    votes: PromptPateVotes,
    sigma: float,
    trials: int,
    orders,
    seed: int,
    experiment: str,
    confidence: float = 0.95,
    delta: float = 1e-6,
    num_repetitions: int | None = None,
    adversaries: Sequence[str] = ADVERSARIES,
    selection: str = "split",
    k_cut_method: str = "goodman",
    worst_by: str = "two_cut_cp",
) -> dict[str, pd.DataFrame]:
    """Audit PromptPATE for every adversary present in ``votes`` (§4.2, §5.3–5.4, App. E.3).

    Per adversary:

    * **Nat-AdvQ / Pois-AdvQ**: candidate = query ``q`` (its canary teacher); the pair
      ``(H_S(q), H_S'(q))`` of :func:`advq_neighbour`, audited once and composed
      ``num_repetitions`` times (default ``n_Q``, the query asked ``n_Q`` times, §5.4).
      Worst case (the candidate whose 2-cut audit leaks most; App. E.3 "Worst case",
      Figs. 17, 19) and average case (mean ε over candidates; Figs. 18, 20).
    * **Pois-NatQ**: one candidate per variant (All same: per target label); the pairs of
      :func:`natq_neighbour` on each natural query, composed over the ``n_Q`` queries
      (Figs. 21–24), and ``variant = "best"``: the variant whose worst candidate leaks most
      (§5.3: "report the leakage due to the best adversary"; Fig. 4).

    Each per-query audit draws from ``job_generator(seed, experiment, adversary, variant,
    candidate, query)``, so the tables do not depend on which adversaries are run together.

    Args:
        votes: the LLM stage's output.
        sigma: noise of the noisy argmax.
        trials: Monte Carlo trials ``T`` per histogram (cost independent of ``T``).
        orders: Rényi orders.
        seed, experiment: root of the randomness.
        confidence: of every per-query lower bound.
        delta: for the ε conversion (Thm 1; the paper plots δ = 1e-6).
        num_repetitions: times an AdvQ query is asked (default ``n_Q``).
        adversaries: which to audit (those with votes).
        selection, k_cut_method: passed to the audits.
        worst_by: the column that defines the worst case.

    Returns:
        ``{"per_query", "rdp", "eps", "summary"}``: the per-query table (with ``adversary``,
        ``variant``, ``candidate``, ``query``, ``repetitions``, the histograms as strings,
        ``replaced``), the composed RDP per order and candidate, ε per candidate, and the
        worst / max / average summary per (adversary, variant).
    """
    s, a = check_sigma(sigma), as_orders(orders)
    t = check_positive_int(trials, "trials")
    d = check_probability(delta, "delta")
    nq = votes.num_queries
    reps = nq if num_repetitions is None else check_positive_int(num_repetitions, "num_repetitions")
    hist = votes.histograms
    y = votes.query_labels
    frames = []

    def run(adv: str, variant: str, cand: int, key: str, canary_index: int, canary_label: int, q: int, r: int, h0, h1, replaced: int):
        df = audit_pair(h0, h1, s, t, a, confidence, rng=job_generator(seed, experiment, adv, variant, cand, q),
                        selection=selection, k_cut_method=k_cut_method)
        meta = dict(adversary=adv, variant=variant, candidate=cand, key=key, canary_index=canary_index, canary_label=canary_label,
                    query=q, repetitions=r, h_s=_hist_str(h0), h_s_prime=_hist_str(h1), replaced=replaced)
        for i, (k_, v_) in enumerate(meta.items()):
            df.insert(i, k_, v_)
        frames.append(df)

    for adv in adversaries:
        if adv not in ADVERSARIES:
            raise ValueError(f"adversaries must be in {list(ADVERSARIES)}, got {adv!r}")
        if adv in ("nat-advq", "pois-advq"):
            cv = votes.nat_advq_votes if adv == "nat-advq" else votes.pois_advq_votes
            if cv.size == 0:
                continue
            labels = y if adv == "nat-advq" else votes.pois_advq_labels
            for q in range(nq):
                h1, v_out = advq_neighbour(hist[q], int(cv[q]), s, a, reps, d)
                run(adv, "-", q, f"{adv}:{q}:{int(labels[q])}", q, int(labels[q]), q, reps, hist[q], h1, v_out)
        else:
            for i in range(votes.natq_variant.size):
                variant = str(votes.natq_variant[i])
                h1, teacher = natq_neighbour(hist, votes.teacher_votes, votes.natq_votes[i], s, a, d)
                key = f"pois-natq:{variant}:{int(votes.natq_canary_index[i])}:{int(votes.natq_canary_label[i])}:{int(votes.natq_target[i])}"
                for q in range(nq):
                    run(adv, variant, i, key, int(votes.natq_canary_index[i]), int(votes.natq_canary_label[i]), q, 1, hist[q], h1[q], teacher)
    if not frames:
        raise ValueError("votes hold no canary votes for the requested adversaries")
    per_query = pd.concat(frames, ignore_index=True)
    rdp_parts, eps_parts, sum_parts = [], [], []
    for (adv, variant), grp in per_query.groupby(["adversary", "variant"], sort=False):
        rdp, eps = compose_candidates(grp, d)
        rdp.insert(0, "variant", variant)
        rdp.insert(0, "adversary", adv)
        eps.insert(0, "variant", variant)
        eps.insert(0, "adversary", adv)
        summ = summarize_candidates(eps, worst_by=worst_by)
        summ.insert(0, "variant", variant)
        summ.insert(0, "adversary", adv)
        rdp_parts.append(rdp)
        eps_parts.append(eps)
        sum_parts.append(summ)
    summary = pd.concat(sum_parts, ignore_index=True)
    natq = summary[(summary["adversary"] == "pois-natq") & (summary["case"] == "worst")]
    if not natq.empty:
        score = natq[natq["column"] == worst_by].set_index("variant")["epsilon"].fillna(-np.inf)
        best = str(score.idxmax())
        rows = summary[(summary["adversary"] == "pois-natq") & (summary["variant"] == best)].copy()
        rows["variant"] = "best"
        rows["best_variant"] = best
        summary = pd.concat([summary, rows], ignore_index=True)
    return {
        "per_query": per_query,
        "rdp": pd.concat(rdp_parts, ignore_index=True),
        "eps": pd.concat(eps_parts, ignore_index=True),
        "summary": summary,
    }
