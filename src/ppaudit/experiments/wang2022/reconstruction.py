"""Experiments of Wang et al. 2022, "In Differential Privacy, There is Truth" (§2, §4, §5).

* :func:`vote_histograms` — teachers' votes ``(k, n)`` → vote histograms ``(n, C)``.
* :func:`attack_selected_histograms` — the two attackers of §4.1 on the L/M/H histograms:
  the hard query limit (``M`` = 10^4 queries for every σ) and the privacy-budget limit
  (queries until PATE's own data-dependent accounting reaches the budget, σ = 40). PATE's
  accountant is the paper's by default — Confident-GNMax (Papernot et al. 2018; threshold
  check + Pr[answered] · GNMax, improved RDP→DP conversion) — or plain GNMax with the
  classic conversion (``accountant="gnmax"``). Every answered query is reconstructed by
  each requested solver (``ours``: constrained Gauss–Newton; ``paper``: Alg. 2's gradient
  descent) on the same answers; every row holds the solver (``procedure``), the number of
  submitted and answered queries, the reconstruction error (:func:`normalised_l1_error`)
  and the privacy cost (:func:`attack_privacy_cost`).
* :func:`sigma_findings` — the finding "error falls as σ grows" (§4.2) as numbers + booleans,
  per solver.
* :func:`budget_findings` — the budget-limited attack's mean error and query counts against
  the paper's number for the dataset (0.11 for MNIST, 0.05 for SVHN).
* :func:`reconstruct_consensus` — the end-to-end PhD attack (App. E): reconstruct each
  2-class histogram from noisy answers, then take its consensus.

The answer-caching defence (§5) is :mod:`ppaudit.experiments.wang2022_caching`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...attacks.histogram import (
    ACCOUNTANTS,
    SOLVERS,
    answered_queries,
    attack_privacy_cost,
    max_vote_share,
    normalised_l1_error,
    queries_within_budget,
    reconstruct_histogram,
    reconstruct_with_solver,
    sample_answer_counts,
)

__all__ = [
    "vote_histograms",
    "attack_selected_histograms",
    "sigma_findings",
    "budget_findings",
    "query_cost_findings",
    "reconstruct_consensus",
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
    *,
    accountant: str = "confident_gnmax",
    threshold: float | None = None,
    sigma_threshold: float | None = None,
    solvers=("ours", "paper"),
    paper_max_iterations: int = 20_000,
) -> pd.DataFrame:
    """Both attackers of Wang §4.1 on the selected histograms (one row per attack × solver).

    Per histogram: the hard-query-limit attacker submits ``num_queries`` queries at every σ
    of ``sigmas``; the budget-limited attacker submits, at ``budget_sigma``, the largest
    number of queries whose cost stays within ``budget`` (:func:`queries_within_budget`).
    Under ``accountant="confident_gnmax"`` (the paper's: Wang §4.1 follows "the
    parameterization from Papernot et al." 2018, Confident-GNMax with threshold ``T`` and
    check noise ``σ₁``, GNMax noise σ) a submitted query is answered with probability
    ``Pr[max n + N(0, σ₁²) ≥ T]`` and otherwise returns no label
    (:func:`ppaudit.attacks.histogram.answered_queries`); the attacker reconstructs from
    the answered ones. Under ``"gnmax"`` every query is answered. The same answer counts
    are given to every solver of ``solvers`` (``"paper"`` uses the §4.1 stop-at-negative
    rule on the budget attack, as the paper does "for the attacks against canonical
    settings"); with no answer at all the estimate is the uninformed ``N/C`` per class.

    Args:
        histograms: ``(K, C)`` vote histograms.
        selection: output of :func:`ppaudit.attacks.histogram.select_consensus_histograms`.
        sigmas: GNMax σ grid of the hard-query-limit attacker.
        num_queries: its query limit (10^4 in the paper).
        delta: δ of the privacy cost (1e-5 MNIST, 1e-6 SVHN).
        budget: ε budget of the budget-limited attacker (1.97 MNIST, 4.96 SVHN).
        budget_sigma: its GNMax σ (40).
        rng: generator for the answers.
        accountant: ``"confident_gnmax"`` (default) or ``"gnmax"``.
        threshold: Confident-GNMax ``T`` (200 MNIST, 300 SVHN).
        sigma_threshold: Confident-GNMax ``σ₁`` (150 MNIST, 200 SVHN).
        solvers: subset of ``("ours", "paper")``.
        paper_max_iterations: gradient-step cap of the paper's solver.

    Returns:
        Columns ``attack`` (``query_limit`` / ``budget``), ``procedure`` (the solver:
        ``paper`` / ``ours``), ``accountant``, ``label``, ``level``, ``index``,
        ``max_vote_share``, ``sigma``, ``num_queries`` (submitted), ``num_answered``,
        ``error``, ``privacy_cost``, ``budget``, ``delta``, ``threshold``,
        ``sigma_threshold``, ``true`` and ``estimate`` (space-separated numbers).

    Raises:
        ValueError: on an unknown accountant or solver, or missing threshold parameters.
    """
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
    solvers = tuple(solvers)
    if not solvers or any(sv not in SOLVERS for sv in solvers):
        raise ValueError(f"solvers must be a non-empty subset of {SOLVERS}, got {solvers!r}")
    confident = accountant == "confident_gnmax"
    if confident and (threshold is None or sigma_threshold is None):
        raise ValueError(f"accountant 'confident_gnmax' needs threshold and sigma_threshold, got {threshold!r} and {sigma_threshold!r}")
    acc = {"accountant": accountant, "threshold": threshold if confident else None, "sigma_threshold": sigma_threshold if confident else None}
    histograms = np.asarray(histograms, dtype=float)
    num_teachers = int(round(histograms[0].sum()))
    rows = []
    for _, sel in selection.iterrows():
        h = histograms[int(sel["index"])]
        plans = [("query_limit", float(s), int(num_queries), math.inf) for s in sigmas]
        m_budget = queries_within_budget(h, budget_sigma, budget, delta, max_queries=None, **acc)
        plans.append(("budget", float(budget_sigma), int(m_budget), float(budget)))
        for attack, sigma, m, b in plans:
            answered = answered_queries(h, m, threshold, sigma_threshold, rng) if confident else m
            counts = _counts(h, sigma, answered, rng) if answered >= 1 else None
            cost = float(attack_privacy_cost(h, sigma, m, delta, **acc))
            for solver in solvers:
                if counts is None:  # no answer: the attacker knows nothing
                    est = np.full_like(h, num_teachers / len(h))
                else:
                    est = reconstruct_with_solver(
                        counts, sigma, num_teachers, solver, stop_at_negative=attack == "budget", max_iterations=paper_max_iterations
                    )
                rows.append(
                    {
                        "attack": attack,
                        "procedure": solver,
                        "accountant": accountant,
                        "label": sel["label"],
                        "level": sel["level"],
                        "index": int(sel["index"]),
                        "max_vote_share": float(sel["max_vote_share"]),
                        "sigma": sigma,
                        "num_queries": m,
                        "num_answered": int(answered),
                        "error": float(normalised_l1_error(h, est)),
                        "privacy_cost": cost,
                        "budget": b,
                        "delta": delta,
                        "threshold": acc["threshold"] if confident else math.nan,
                        "sigma_threshold": acc["sigma_threshold"] if confident else math.nan,
                        "true": " ".join(f"{v:g}" for v in h),
                        "estimate": " ".join(f"{v:.4f}" for v in est),
                    }
                )
    return pd.DataFrame(rows)


def _procedures(attacks: pd.DataFrame) -> list:
    return list(dict.fromkeys(attacks["procedure"])) if "procedure" in attacks else [None]


def sigma_findings(attacks: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """"Error falls as σ grows" (Wang §4.2) on the hard-query-limit attacks of one dataset.

    Per solver (``procedure`` column, when present): (1) the mean error at the largest σ is
    below the mean error at the smallest σ; (2) the Spearman correlation between σ and
    error (over histograms × σ) is negative; (3) the mean error decreases monotonically over
    the σ grid; (4) the share of histograms whose error at the largest σ is below their
    error at the smallest σ is > 1/2; (5) per consensus level (when the rows carry
    ``level``), check (1) within the level. The mean errors per σ are in ``description``.

    Returns:
        Columns ``dataset``, ``finding``, ``procedure``, ``check``, ``description``,
        ``value``, ``reference``, ``holds``.
    """
    out = []
    for proc in _procedures(attacks):
        sub = attacks if proc is None else attacks[attacks["procedure"] == proc]
        t = _sigma_checks(sub[sub["attack"] == "query_limit"])
        t.insert(0, "procedure", proc if proc is not None else "ours")
        out.append(t)
    table = pd.concat(out, ignore_index=True)
    table.insert(0, "dataset", dataset)
    table.insert(1, "finding", "error falls as sigma grows (Wang 2022, Sec. 4.2)")
    return table


def _sigma_checks(q: pd.DataFrame) -> pd.DataFrame:
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
        ("mean_error_monotone_decreasing", "mean error per σ " + ", ".join(f"{s:g}: {v:.4f}" for s, v in means.items()), float(means.iloc[-1]), float(means.iloc[0]), mono),
        ("share_histograms_improving", f"share of histograms with error(σ={hi:g}) < error(σ={lo:g})", share, 0.5, bool(share > 0.5)),
    ]
    if "level" in q:
        for level in ("low", "medium", "high"):
            lq = q[q["level"] == level]
            if lq.empty:
                continue
            m = lq.groupby("sigma")["error"].mean()
            rows.append((f"mean_error_falls_{level}_consensus", f"{level}-consensus histograms: mean error σ={hi:g} vs σ={lo:g}", float(m[hi]), float(m[lo]), bool(m[hi] < m[lo])))
    return pd.DataFrame(rows, columns=["check", "description", "value", "reference", "holds"])


def budget_findings(attacks: pd.DataFrame, dataset: str, paper_error: float, paper_dataset: str) -> pd.DataFrame:
    """The budget-limited attack (Wang §4.2, Fig. 4) against the paper's mean error, per solver.

    Rows per ``procedure``: ``budget_attack_mean_error_at_most_paper`` (mean error ≤ the
    paper's, e.g. 0.11 for MNIST at ε = 1.97, 0.05 for SVHN at ε = 4.96) and
    ``budget_attack_mean_queries`` / ``budget_attack_mean_answered`` (the query counts the
    accountant allowed; ``holds`` is empty — numbers, not checks).

    Args:
        attacks: rows of :func:`attack_selected_histograms` for one dataset.
        dataset: our dataset name.
        paper_error: the paper's mean error for the dataset it stands for.
        paper_dataset: that dataset's name in the paper (``MNIST`` / ``SVHN``).
    """
    rows = []
    budget = attacks[attacks["attack"] == "budget"]
    for proc in _procedures(attacks):
        b = budget if proc is None else budget[budget["procedure"] == proc]
        acc = str(b["accountant"].iloc[0]) if "accountant" in b else "gnmax"
        setting = f"budget {b['budget'].iloc[0]:g}, δ {b['delta'].iloc[0]:g}, σ {b['sigma'].iloc[0]:g}, accountant {acc}"
        err = float(b["error"].mean())
        answered = b["num_answered"] if "num_answered" in b else b["num_queries"]
        base = {"dataset": dataset, "procedure": proc if proc is not None else "ours"}
        rows += [
            {**base, "finding": f"budget-limited attack is accurate (Wang 2022, Sec. 4.2: mean {paper_error:g} on {paper_dataset})",
             "check": "budget_attack_mean_error_at_most_paper", "description": f"mean error, {setting}",
             "value": err, "reference": float(paper_error), "holds": bool(err <= paper_error)},
            {**base, "finding": "queries allowed by PATE's accountant within the budget (Wang 2022, Sec. 4.1)",
             "check": "budget_attack_mean_queries", "description": f"mean submitted queries (range {b['num_queries'].min()}-{b['num_queries'].max()}), {setting}",
             "value": float(b["num_queries"].mean()), "reference": math.nan, "holds": None},
            {**base, "finding": "answered queries within the budget (Confident-GNMax returns no label below the threshold)",
             "check": "budget_attack_mean_answered", "description": f"mean answered queries, {setting}",
             "value": float(answered.mean()), "reference": math.nan, "holds": None},
        ]
    return pd.DataFrame(rows, columns=["dataset", "finding", "procedure", "check", "description", "value", "reference", "holds"])


def query_cost_findings(attacks: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The privacy cost of the query-limited attack (Wang §4.2: 10^4 queries cost roughly ε 1 to 12).

    The cost depends on the answers, not on the solver, so each (histogram, σ) counts once.

    Args:
        attacks: rows of :func:`attack_selected_histograms` for one dataset.
        dataset: our dataset name.

    Returns:
        One row ``query_limit_cost_share_in_1_12``: the share of query-limited costs in
        ``[1, 12]`` (``value``), the range in ``description``, ``reference`` 0.5 and
        ``holds`` = share ≥ 0.5; ``procedure`` is empty (solver-free).

    Raises:
        ValueError: if ``attacks`` has no query-limited row.
    """
    query = attacks[attacks["attack"] == "query_limit"].drop_duplicates(["label", "sigma"])
    if query.empty:
        raise ValueError(f"attacks of {dataset!r} hold no query_limit row")
    share = float(query["privacy_cost"].between(1, 12).mean())
    return pd.DataFrame([
        {"dataset": dataset, "finding": "10^4-query costs roughly 1 to 12 (Wang 2022, Sec. 4.2)", "procedure": "",
         "check": "query_limit_cost_share_in_1_12", "description": f"share of costs in [1, 12]; range {query['privacy_cost'].min():.3g}-{query['privacy_cost'].max():.3g}",
         "value": share, "reference": 0.5, "holds": bool(share >= 0.5)},
    ])


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
