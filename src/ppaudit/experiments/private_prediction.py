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
     :func:`ppaudit.experiments.synthetic.audit_histogram_pair`). This is our reading of
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

Confidence: each per-query lower bound holds with probability ≥ ``confidence``; their sum
over queries and the maximum over candidates are reported as the paper does. Set
``bonferroni=True`` in :func:`audit_crafted` to run every per-query audit at
``1 − (1 − confidence)/N`` (``N`` = number of audits), which makes all of them hold
simultaneously with probability ≥ ``confidence``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .._validation import as_orders, check_positive_int, check_probability, check_sigma
from ..accounting import gnmax_rdp_data_dependent, gnmax_rdp_data_independent, rdp_to_dp
from ..adversaries import CraftedCanaries
from ..audit import k_cut_lower_bound, two_cut_lower_bound
from ..montecarlo import model_noisy_argmax_counts, spawn_generators
from ..rng import job_generator
from ..vote_models import (
    QUADRATURE_ABS_ERROR,
    CapcFit,
    NeighbouringVoteModel,
    PateFit,
    capc_vote_model,
    certified_mixture_rdp,
    enumerate_output_distributions,
    estimate_output_distributions,
    mixture_rdp_estimate,
    pate_vote_model,
)

__all__ = [
    "RDP_COLUMNS",
    "audit_vote_model",
    "vote_model_for",
    "audit_crafted",
    "compose_candidates",
    "summarize_candidates",
]

#: The RDP columns of the per-query table that are composed over queries.
RDP_COLUMNS = ("two_cut_cp", "k_cut", "exact", "exact_lo", "exact_hi", "data_dependent", "data_independent")


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
            ``τ = tail_mass + C·1e-12/2`` of the full one per trial; the reported
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
        ``"identical"``), ``tail_mass``, ``support_size``, ``trials``,
        ``effective_confidence``.
    """
    s = check_sigma(sigma)
    a = as_orders(orders)
    t = check_positive_int(trials, "trials")
    conf = check_probability(confidence, "confidence")
    if count_mode not in ("sample", "exact", "auto"):
        raise ValueError(f"count_mode must be 'sample', 'exact' or 'auto', got {count_mode!r}")
    t_sample = t if sample_trials is None else check_positive_int(sample_trials, "sample_trials")
    if exact not in ("auto", "enumerate", "average"):
        raise ValueError(f"exact must be 'auto', 'enumerate' or 'average', got {exact!r}")
    g_counts0, g_counts1, g_select, g_exact = spawn_generators(rng, 4)
    c = model.num_classes
    out = {"order": a}
    dd = np.maximum(gnmax_rdp_data_dependent(model.mean("S"), s, a), gnmax_rdp_data_dependent(model.mean("S_prime"), s, a))
    out["data_dependent"] = dd
    out["data_independent"] = gnmax_rdp_data_independent(s, a)
    meta = {"tail_mass": np.nan, "support_size": 0, "trials": t, "effective_confidence": conf}
    if model.identical:
        zero = np.zeros(a.size)
        out.update(two_cut_cp=zero, k_cut=zero, exact=zero, exact_lo=zero, exact_hi=zero, exact_se=zero)
        meta.update(exact_method="identical", trials=0)
        return _frame(out, meta)
    enum = None
    if exact in ("auto", "enumerate") or count_mode in ("exact", "auto"):
        enum = enumerate_output_distributions(model, s, max_tail_mass, max_support)
        if enum is None and (exact == "enumerate" or count_mode == "exact"):
            raise ValueError(
                f"the model's support is too large to enumerate within max_support={max_support} "
                f"and max_tail_mass={max_tail_mass}; use exact='average' and count_mode='sample'"
            )
    if enum is not None and exact != "average":
        cert = certified_mixture_rdp(enum, a)
        out.update(exact=cert["rdp"], exact_lo=cert["rdp_lo"], exact_hi=cert["rdp_hi"], exact_se=np.zeros(a.size))
        meta.update(exact_method="enumerate", tail_mass=enum.tail_mass, support_size=enum.support_size)
    else:
        est = mixture_rdp_estimate(estimate_output_distributions(model, s, exact_draws, g_exact), a)
        out.update(exact=est["rdp"], exact_lo=np.full(a.size, np.nan), exact_hi=np.full(a.size, np.nan), exact_se=est["se"])
        meta.update(exact_method="average")
    if count_mode == "exact" or (count_mode == "auto" and enum is not None):
        tv = enum.tail_mass + c * QUADRATURE_ABS_ERROR / 2.0
        counts0 = model_noisy_argmax_counts(enum.discrete_model("S"), c, s, t, g_counts0, mode="exact")
        counts1 = model_noisy_argmax_counts(enum.discrete_model("S_prime"), c, s, t, g_counts1, mode="exact")
        meta["effective_confidence"] = max(0.0, conf - 2.0 * t * tv)
    else:
        if count_mode == "auto":
            t = t_sample
            meta["trials"] = t
        counts0 = model_noisy_argmax_counts(model.sampler("S"), c, s, t, g_counts0, chunk_size=chunk_size, progress=progress)
        counts1 = model_noisy_argmax_counts(model.sampler("S_prime"), c, s, t, g_counts1, chunk_size=chunk_size, progress=progress)
    out["two_cut_cp"] = two_cut_lower_bound(counts0, counts1, a, conf, selection=selection, rng=g_select).lower_bound
    out["k_cut"] = k_cut_lower_bound(counts0, counts1, a, conf, method=k_cut_method)
    return _frame(out, meta)


def _frame(cols: dict, meta: dict) -> pd.DataFrame:
    df = pd.DataFrame({k: cols[k] for k in ("order",) + RDP_COLUMNS + ("exact_se",)})
    for k, v in meta.items():
        df[k] = v
    return df


def vote_model_for(fit: PateFit | CapcFit, candidate: int, query: int) -> NeighbouringVoteModel:
    """The vote model of one query for one candidate canary (row ``candidate`` of the fit)."""
    if isinstance(fit, PateFit):
        return pate_vote_model(fit.P[query], fit.P_prime[candidate, query], fit.k)
    if isinstance(fit, CapcFit):
        return capc_vote_model(fit.P_teachers[query], fit.P1_prime[candidate, query])
    raise ValueError(f"fit must be a PateFit or CapcFit, got {type(fit).__name__}")


def audit_crafted(
    fit: PateFit | CapcFit,
    crafted: CraftedCanaries,
    sigma: float,
    trials: int,
    orders,
    seed: int,
    experiment: str,
    confidence: float = 0.95,
    candidates: Sequence[int] | None = None,
    bonferroni: bool = False,
    progress: bool = False,
    **audit_kwargs,
) -> pd.DataFrame:
    """Per-query audits of every candidate canary of an adversary.

    Row ``i`` of ``fit.P_prime`` / ``fit.P1_prime`` must belong to candidate ``i`` of
    ``crafted`` (the canary teachers were trained in that order). Each (candidate, query)
    audit draws from ``job_generator(seed, experiment, "audit", key, query)``, so a subset
    of candidates (``candidates``, e.g. one Snakemake job per shard) gives the same rows.

    Args:
        fit: the fitted model (PATE or CaPC).
        crafted: the candidates and their query sequences.
        sigma, trials, orders, confidence: as :func:`audit_vote_model`.
        seed, experiment: root of the randomness.
        candidates: rows of ``crafted`` to audit (default: all).
        bonferroni: divide the error level by the number of audits (see module docstring).
        progress: tqdm bar over the audits.
        **audit_kwargs: passed to :func:`audit_vote_model`.

    Returns:
        Long table: ``candidate``, ``key``, ``canary_index``, ``canary_label``, ``query``,
        ``repetitions`` + the columns of :func:`audit_vote_model`.
    """
    from tqdm.auto import tqdm

    n_fit = fit.P_prime.shape[0] if isinstance(fit, PateFit) else fit.P1_prime.shape[0]
    if n_fit != crafted.num_candidates:
        raise ValueError(f"the fit has {n_fit} canaries but crafted has {crafted.num_candidates} candidates")
    rows = range(crafted.num_candidates) if candidates is None else [int(i) for i in candidates]
    pairs = [(i, int(q), int(r)) for i in rows for q, r in zip(crafted.audit_queries[i], crafted.repetitions[i])]
    conf = check_probability(confidence, "confidence")
    if bonferroni and pairs:
        conf = 1.0 - (1.0 - conf) / len(pairs)
    keys = crafted.keys
    frames = []
    for i, q, r in tqdm(pairs, disable=not progress, desc=f"audit {crafted.adversary}", unit="query", mininterval=2.0):
        model = vote_model_for(fit, i, q)
        df = audit_vote_model(model, sigma, trials, orders, conf, rng=job_generator(seed, experiment, "audit", keys[i], q), **audit_kwargs)
        df.insert(0, "repetitions", r)
        df.insert(0, "query", q)
        df.insert(0, "canary_label", int(crafted.canary_label[i]))
        df.insert(0, "canary_index", int(crafted.canary_index[i]))
        df.insert(0, "key", keys[i])
        df.insert(0, "candidate", i)
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def compose_candidates(per_query: pd.DataFrame, delta: float = 1e-6, columns: Sequence[str] = RDP_COLUMNS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Compose per-query RDP over each candidate's query sequence and convert to ε (§4.2, §5.4).

    ``composed(α) = Σ_q repetitions_q · rdp_q(α)`` per candidate and column (Mironov 2017;
    :func:`ppaudit.audit.compose_rdp`); then ``ε = min_α`` of Thm 1 (Balle et al. 2020) at
    ``delta``. A column with a NaN in any of a candidate's queries (e.g. ``exact_lo`` from a
    Monte Carlo mixture) is NaN for that candidate. The standard error of the composed
    Monte Carlo ``exact`` is ``sqrt(Σ_q repetitions_q² · exact_se_q²)`` (independent queries).

    Returns:
        ``(rdp, eps)``: ``rdp`` long table (``candidate``, ``key``, ``canary_index``,
        ``canary_label``, ``order``, one column per RDP column and ``exact_se``), ``eps`` one row per candidate
        with ``eps_<column>`` and ``order_<column>`` (the minimising order).
    """
    d = check_probability(delta, "delta")
    if per_query.empty:
        raise ValueError("per_query is empty: nothing to compose")
    ids = ["candidate", "key", "canary_index", "canary_label"]
    weighted = per_query[ids + ["order"]].copy()
    columns = list(columns)
    for col in columns:
        weighted[col] = per_query[col] * per_query["repetitions"]
    has_se = "exact_se" in per_query
    if has_se:  # independent per-query estimates: variances add, scaled by repetitions²
        weighted["exact_se"] = (per_query["exact_se"] * per_query["repetitions"]) ** 2
    cols = columns + (["exact_se"] if has_se else [])
    grouped = weighted.groupby(ids + ["order"], sort=True)
    rdp = grouped[cols].sum().reset_index()
    # A missing value (e.g. exact_lo of a Monte Carlo mixture) in any query makes the
    # composition unknown: NaN, not the sum of the others.
    missing = grouped[cols].agg(lambda v: bool(v.isna().any())).reset_index(drop=True)
    for col in cols:
        rdp.loc[missing[col].to_numpy(dtype=bool), col] = np.nan
    if has_se:
        rdp["exact_se"] = np.sqrt(rdp["exact_se"])
    eps_rows = []
    for key_vals, grp in rdp.groupby(ids, sort=True):
        grp = grp.sort_values("order")
        orders = grp["order"].to_numpy()
        row = dict(zip(ids, key_vals))
        for col in columns:
            vals = grp[col].to_numpy()
            if np.any(np.isnan(vals)) or not np.any(np.isfinite(orders)):
                row[f"eps_{col}"], row[f"order_{col}"] = np.nan, np.nan
                continue
            e, o = rdp_to_dp(vals, orders, d, return_order=True)
            row[f"eps_{col}"], row[f"order_{col}"] = e, o
        eps_rows.append(row)
    return rdp, pd.DataFrame(eps_rows)


def summarize_candidates(eps: pd.DataFrame, worst_by: str = "two_cut_cp", columns: Sequence[str] = RDP_COLUMNS) -> pd.DataFrame:
    """Worst and average case over candidate canaries (§5.4, App. E.1–E.2).

    * ``worst``: the candidate with the largest ``eps_<worst_by>`` (the audit that leaks
      most, as plotted in Figs. 3–4), with every column's ε for that same candidate;
    * ``max``: the per-column maximum over candidates;
    * ``average``: the per-column mean ε over candidates.

    Returns:
        Long table with ``case``, ``column``, ``epsilon``, ``candidate`` (for ``worst``).
    """
    if f"eps_{worst_by}" not in eps:
        raise ValueError(f"worst_by must name a composed column, got {worst_by!r}; have {[c[4:] for c in eps if c.startswith('eps_')]}")
    rows = []
    best = int(eps[f"eps_{worst_by}"].fillna(-np.inf).to_numpy().argmax())
    for col in columns:
        vals = eps[f"eps_{col}"]
        rows.append({"case": "worst", "column": col, "epsilon": float(vals.iloc[best]), "candidate": int(eps["candidate"].iloc[best])})
        rows.append({"case": "max", "column": col, "epsilon": float(vals.max()), "candidate": -1})
        rows.append({"case": "average", "column": col, "epsilon": float(vals.mean()), "candidate": -1})
    return pd.DataFrame(rows)
