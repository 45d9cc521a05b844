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
* :func:`repeated_query_counts` and :func:`caching_transcript_audit` — the same defence
  measured on a fitted PATE / CaPC vote model (the PATE/CaPC stage's ``P_q``, ``P'_q``): a
  2-cut audit of the adversary's whole transcript of ``n_Q`` repeated answers, with and
  without the cache, next to the single-answer audit.
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
from ..montecarlo import model_noisy_argmax_counts, noisy_argmax_counts
from ..noisy_argmax import class_probabilities

__all__ = [
    "vote_histograms",
    "attack_selected_histograms",
    "sigma_findings",
    "reconstruct_consensus",
    "caching_reconstruction",
    "caching_audits",
    "neighbouring_pair",
    "repeated_query_counts",
    "caching_transcript_audit",
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


#: Normal draws per chunk of :func:`repeated_query_counts` (bounded memory: 8 bytes each).
_TRANSCRIPT_CHUNK_ELEMENTS = 4_000_000


def repeated_query_counts(model, num_classes: int, sigma: float, num_repetitions: int, trials: int, rng: np.random.Generator, cache_answers: bool) -> np.ndarray:
    """Answer counts of ``trials`` transcripts of one query asked ``num_repetitions`` times.

    One transcript is one training-phase instantiation: its histogram ``H ~ model`` is drawn
    once (the teachers are fixed while the adversary repeats its query — Chadha et al. 2024,
    §5.1) and the ``n_Q`` answers are Gaussian noisy argmaxes of that ``H`` with fresh noise
    each (no cache) or the first answer repeated (cache, Wang et al. 2022 §5). The counts
    vector is a sufficient statistic of an exchangeable transcript.

    Args:
        model: ``model(rng, n) -> (n, C)`` histogram sampler (e.g.
            :meth:`ppaudit.vote_models.NeighbouringVoteModel.sampler`).
        num_classes: ``C``.
        sigma: noise standard deviation.
        num_repetitions: ``n_Q`` answers per transcript.
        trials: transcripts.
        rng: generator.
        cache_answers: answer caching on/off.

    Returns:
        ``(trials, C)`` int64 answer counts; every row sums to ``n_Q``.
    """
    c, n, t = int(num_classes), int(num_repetitions), int(trials)
    if n < 1 or t < 1:
        raise ValueError(f"num_repetitions and trials must be >= 1, got {num_repetitions} and {trials}")
    out = np.zeros((t, c), dtype=np.int64)
    per_row = c if cache_answers else n * c
    rows = max(1, _TRANSCRIPT_CHUNK_ELEMENTS // per_row)
    for a in range(0, t, rows):
        b = min(t, a + rows)
        h = np.asarray(model(rng, b - a), dtype=np.float64)
        if cache_answers:
            ans = np.argmax(h + sigma * rng.standard_normal((b - a, c)), axis=1)
            out[np.arange(a, b), ans] = n
        else:
            ans = np.argmax(h[:, None, :] + sigma * rng.standard_normal((b - a, n, c)), axis=2)
            flat = ans + (np.arange(b - a) * c)[:, None]
            out[a:b] = np.bincount(flat.ravel(), minlength=(b - a) * c).reshape(b - a, c)
    return out


def _score_edges(scores: np.ndarray, num_bins: int) -> np.ndarray:
    """Bin edges of transcript scores: midpoints between the distinct values when there are
    at most ``num_bins`` (a cached transcript has at most ``C``), else quantiles of the
    distinct values. Quantiles of the raw scores would merge every rare value below or
    above a heavy atom (most transcripts answer the top class) into one bin."""
    u = np.unique(scores)
    if u.size <= num_bins:
        return (u[1:] + u[:-1]) / 2.0
    return np.unique(np.quantile(u, np.linspace(0, 1, num_bins + 1)[1:-1]))


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
) -> pd.DataFrame:
    """2-cut audits of a repeated-query (AdvQ) adversary's transcript, with and without caching.

    The AdvQ adversaries of Chadha et al. 2024 (§5.1) ask their canary query ``n_Q`` times;
    the PATE/CaPC stage audits one answer and composes (``n_Q · b(α)``). Here the whole
    transcript is audited directly, on the fitted vote model (``model`` is a
    :class:`ppaudit.vote_models.NeighbouringVoteModel`: ``H_S`` and ``H_S'`` of one query):

    1. a pilot (``pilot_fraction · trials`` independent single answers per side) estimates
       the single-answer output laws ``p``, ``p'`` (add-½ smoothing); the transcript's score
       is its log-likelihood ratio under independent answers, ``Σ_j n_j log(p_j / p'_j)``;
    2. pilot transcripts (same size, independent of the audit draws) fix at most
       ``num_bins`` score bins (:func:`_score_edges`: one bin per distinct pilot score when
       there are few, else quantiles of the distinct scores, so that rare extreme scores
       keep their own bins) — the audit's discrete outputs;
    3. ``trials`` transcripts per side are binned and audited with
       :func:`ppaudit.audit.two_cut_lower_bound` (Clopper–Pearson, split selection of the
       output set) — a valid lower bound on the RDP of the transcript whatever the score.

    With the cache a transcript is one answer repeated, so its score bins are single
    answers and the audit can measure no more than the single-answer leakage (a function of
    one answer cannot have larger Rényi divergence); without it the ``n_Q`` answers add up.
    The single-answer audit with the same ``trials`` is returned for comparison. The score
    assumes independent answers, which they are not (the histogram is shared), so with a
    finite ``trials`` the uncached transcript audit can fall below the single-answer audit
    when the leakage sits in rare outputs, although its true divergence is at least as large.

    Returns:
        Rows ``(view, order, audit)`` with ``view`` in ``single_answer``, ``no_cache``,
        ``cache``, plus ``trials``, ``num_repetitions``, ``sigma``, ``confidence``.
    """
    orders = np.asarray(orders, dtype=float)
    c = model.num_classes
    s_sampler, p_sampler = model.sampler("S"), model.sampler("S_prime")
    pilot = max(1000, int(round(pilot_fraction * trials)))
    q0 = model_noisy_argmax_counts(s_sampler, c, sigma, pilot, rng=rng)
    q1 = model_noisy_argmax_counts(p_sampler, c, sigma, pilot, rng=rng)
    w = np.log((q0 + 0.5) / (q0.sum() + 0.5 * c)) - np.log((q1 + 0.5) / (q1.sum() + 0.5 * c))
    single0 = model_noisy_argmax_counts(s_sampler, c, sigma, trials, rng=rng)
    single1 = model_noisy_argmax_counts(p_sampler, c, sigma, trials, rng=rng)
    bounds = {"single_answer": two_cut_lower_bound(single0, single1, orders, confidence=confidence, rng=rng).lower_bound}
    for view, cache in (("no_cache", False), ("cache", True)):
        pilot_scores = np.concatenate([
            repeated_query_counts(smp, c, sigma, num_repetitions, pilot, rng, cache) @ w for smp in (s_sampler, p_sampler)
        ])
        edges = _score_edges(pilot_scores, num_bins)
        counts = [
            np.bincount(np.searchsorted(edges, repeated_query_counts(smp, c, sigma, num_repetitions, trials, rng, cache) @ w, side="right"), minlength=edges.size + 1)
            for smp in (s_sampler, p_sampler)
        ]
        if edges.size == 0:  # every pilot score equal: nothing to separate
            bounds[view] = np.zeros_like(orders)
        else:
            bounds[view] = two_cut_lower_bound(counts[0], counts[1], orders, confidence=confidence, rng=rng).lower_bound
    return pd.DataFrame(
        [
            {"view": view, "order": float(a), "audit": float(b[i]), "trials": int(trials), "num_repetitions": int(num_repetitions),
             "sigma": float(sigma), "confidence": float(confidence)}
            for view, b in bounds.items()
            for i, a in enumerate(orders)
        ]
    )
