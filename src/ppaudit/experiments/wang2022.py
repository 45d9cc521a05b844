"""Experiments of Wang et al. 2022, "In Differential Privacy, There is Truth" (§2, §4, §5).

* :func:`vote_histograms` — teachers' votes ``(k, n)`` → vote histograms ``(n, C)``.
* :func:`attack_selected_histograms` — the two attackers of §4.1 on the L/M/H histograms:
  the hard query limit (``M`` = 10^4 answers for every σ) and the privacy-budget limit
  (answers until PATE's own data-dependent accounting reaches the budget, σ = 40). Every
  row holds the number of answers, the reconstruction error (:func:`normalised_l1_error`)
  and the privacy cost (:func:`attack_privacy_cost`, classic RDP→DP conversion).
* :func:`sigma_findings` — the finding "error falls as σ grows" (§4.2) as numbers + booleans.
* :func:`reconstruct_consensus` — the end-to-end PhD attack (App. E): reconstruct each
  2-class histogram from noisy answers, then take its consensus.
* :func:`caching_reconstruction` and :func:`caching_audits` — the answer-caching defence
  (§5) against the reconstruction attack and against the AdvQ audits of Chadha et al. 2024.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..attacks.histogram import (
    NoisyArgmaxInterface,
    attack_privacy_cost,
    max_vote_share,
    normalised_l1_error,
    queries_within_budget,
    reconstruct_histogram,
    sample_answer_counts,
)
from ..audit import compose_rdp, two_cut_lower_bound
from ..divergence import exact_rdp
from ..montecarlo import noisy_argmax_counts
from ..noisy_argmax import class_probabilities

__all__ = [
    "vote_histograms",
    "attack_selected_histograms",
    "sigma_findings",
    "reconstruct_consensus",
    "caching_reconstruction",
    "caching_audits",
    "neighbouring_pair",
]

#: Answers above which the answer counts are drawn as Multinomial(M, Q(H)) (same law).
EXACT_SAMPLING_ABOVE = 1_000_000


def vote_histograms(votes: np.ndarray, num_classes: int) -> np.ndarray:
    """``(k, n)`` teacher labels → ``(n, C)`` int64 vote histograms."""
    votes = np.asarray(votes)
    if votes.ndim != 2:
        raise ValueError(f"votes must be (teachers, queries), got shape {votes.shape}")
    out = np.zeros((votes.shape[1], num_classes), dtype=np.int64)
    for c in range(num_classes):
        out[:, c] = (votes == c).sum(axis=0)
    return out


def _counts(hist, sigma, m, rng):
    mode = "exact" if m > EXACT_SAMPLING_ABOVE else "sample"
    return sample_answer_counts(hist, sigma, m, rng, mode=mode)


def attack_selected_histograms(
    histograms: np.ndarray,
    selection: pd.DataFrame,
    sigmas,
    num_queries: int,
    delta: float,
    budget: float,
    budget_sigma: float,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Both attackers of Wang §4.1 on the selected histograms (one row per attack).

    Columns: ``attack`` (``query_limit`` / ``budget``), ``label``, ``level``, ``index``,
    ``max_vote_share``, ``sigma``, ``num_queries``, ``error``, ``privacy_cost``, ``budget``,
    ``delta``, ``true`` and ``estimate`` (histograms as space-separated numbers).
    """
    histograms = np.asarray(histograms, dtype=float)
    num_teachers = int(round(histograms[0].sum()))
    rows = []
    for _, sel in selection.iterrows():
        h = histograms[int(sel["index"])]
        plans = [("query_limit", float(s), int(num_queries), math.inf) for s in sigmas]
        m_budget = queries_within_budget(h, budget_sigma, budget, delta, max_queries=None)
        plans.append(("budget", float(budget_sigma), int(m_budget), float(budget)))
        for attack, sigma, m, b in plans:
            if m >= 1:
                counts = _counts(h, sigma, m, rng)
                est = reconstruct_histogram(counts, sigma, num_teachers)
                err = float(normalised_l1_error(h, est))
            else:  # not even one answer within the budget: the attacker knows nothing
                est = np.full_like(h, num_teachers / len(h))
                err = float(normalised_l1_error(h, est))
            rows.append(
                {
                    "attack": attack,
                    "label": sel["label"],
                    "level": sel["level"],
                    "index": int(sel["index"]),
                    "max_vote_share": float(sel["max_vote_share"]),
                    "sigma": sigma,
                    "num_queries": m,
                    "error": err,
                    "privacy_cost": float(attack_privacy_cost(h, sigma, m, delta)),
                    "budget": b,
                    "delta": delta,
                    "true": " ".join(f"{v:g}" for v in h),
                    "estimate": " ".join(f"{v:.4f}" for v in est),
                }
            )
    return pd.DataFrame(rows)


def sigma_findings(attacks: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """"Error falls as σ grows" (Wang §4.2) on the hard-query-limit attacks of one dataset.

    Checks: (1) the mean error at the largest σ is below the mean error at the smallest σ;
    (2) the Spearman correlation between σ and error (over histograms × σ) is negative;
    (3) the mean error decreases monotonically over the σ grid; (4) the share of histograms
    whose error at the largest σ is below their error at the smallest σ is > 1/2; (5) per
    consensus level (when the rows carry ``level``), check (1) within the level.
    """
    q = attacks[attacks["attack"] == "query_limit"]
    sig = sorted(q["sigma"].unique())
    means = q.groupby("sigma")["error"].mean().reindex(sig)
    lo, hi = sig[0], sig[-1]
    per = q.pivot_table(index="label", columns="sigma", values="error")
    share = float(np.mean(per[hi] < per[lo]))
    rho = float(pd.Series(q["sigma"].to_numpy()).corr(pd.Series(q["error"].to_numpy()), method="spearman"))
    mono = bool(np.all(np.diff(means.to_numpy()) < 0))
    rows = [
        ("mean_error_at_max_sigma_below_min_sigma", f"mean error σ={hi:g} vs σ={lo:g}", float(means[hi]), float(means[lo]), bool(means[hi] < means[lo])),
        ("spearman_sigma_error_negative", "Spearman ρ(σ, error)", rho, 0.0, bool(rho < 0)),
        ("mean_error_monotone_decreasing", "mean error per σ " + ", ".join(f"{v:.4f}" for v in means), float(means.iloc[-1]), float(means.iloc[0]), mono),
        ("share_histograms_improving", f"share of histograms with error(σ={hi:g}) < error(σ={lo:g})", share, 0.5, bool(share > 0.5)),
    ]
    if "level" in q:
        for level in ("low", "medium", "high"):
            lq = q[q["level"] == level]
            if lq.empty:
                continue
            m = lq.groupby("sigma")["error"].mean()
            rows.append((f"mean_error_falls_{level}_consensus", f"{level}-consensus histograms: mean error σ={hi:g} vs σ={lo:g}", float(m[hi]), float(m[lo]), bool(m[hi] < m[lo])))
    out = pd.DataFrame(rows, columns=["check", "description", "value", "reference", "holds"])
    out.insert(0, "dataset", dataset)
    out.insert(1, "finding", "error falls as sigma grows (Wang 2022, Sec. 4.2)")
    return out


def reconstruct_consensus(histograms: np.ndarray, sigma: float, num_queries: int, rng: np.random.Generator) -> np.ndarray:
    """End-to-end variant (Wang App. E): consensus of histograms reconstructed from answers.

    Each histogram is queried ``num_queries`` times (fresh noise, no caching), the answer
    counts are inverted by :func:`reconstruct_histogram`, and the max vote share of the
    estimate is returned.
    """
    histograms = np.asarray(histograms, dtype=float)
    out = np.empty(len(histograms))
    for i, h in enumerate(histograms):
        counts = _counts(h, sigma, num_queries, rng)
        est = reconstruct_histogram(counts, sigma, int(round(h.sum())))
        out[i] = float(max_vote_share(est))
    return out


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
