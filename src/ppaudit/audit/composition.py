"""Composition of per-query audits over queries, candidate summaries and the ε floor (Chadha et al. 2024, §4.2, §5.4).

* :func:`compose_rdp` — order-wise sum of per-query RDP (Mironov 2017).
* :func:`compose_candidates` — per candidate canary: ``Σ_q repetitions_q · rdp_q(α)`` over its
  query sequence, then ``ε`` at ``δ`` with Thm 1 (Balle et al. 2020). This is the paper's
  procedure (``procedure: paper``). Two caveats, both stated where the numbers are shown:

  - Thm 1 turns an RDP *upper* bound into an ε upper bound; applied to an RDP lower bound or
    to the exact RDP it is "the RDP audit on the ε scale", not a valid ε lower bound.
  - For a randomly trained mechanism (PATE, random-partition CaPC) the ``n`` answers to a
    repeated query share one histogram, so the transcript's RDP is at most
    ``D_α(P_q ‖ P'_q)``; ``n ×`` the single-answer value can exceed that cap (the sound,
    transcript-level audit is :mod:`ppaudit.audit.transcript`). Pois-NatQ with random
    partitions likewise shares one training run over its natural queries: the per-query sum
    assumes independent training runs per query.

* :func:`summarize_candidates` — worst / max / average case over candidates (§5.4).
* :func:`epsilon_floor` — the ε an all-zero RDP curve converts to: an audit at this value
  detected nothing.
* :func:`simultaneous_confidence` — the confidence with which every audit behind a table holds
  at once (union bound over each audit that was run: the 2-cut and k-cut of each (candidate,
  query), its transcript audit, all again for the null-canary control, and the joint audits;
  pruning slack included); :func:`count_audits` — how many that is.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .._validation import check_probability
from .per_query import LOWER_BOUNDS, RDP_COLUMNS

__all__ = ["compose_rdp", "compose_candidates", "summarize_candidates", "epsilon_floor", "simultaneous_confidence", "count_audits",
           "TRANSCRIPT_COLUMNS", "EPSILON_COLUMNS"]

#: Per-query columns that are already ε values at δ (not RDP curves): ``valid_eps_lower`` — the
#: (ε, δ) audit of Eq. (1) on a query's transcript, a valid ε lower bound; ``exact_eps_pld`` — the
#: exact ε of the transcript (dp-accounting PLD). A candidate's ``valid_eps_lower`` is the largest
#: over its queries (each holds at its per-audit confidence, so all hold together under
#: Bonferroni); ``exact_eps_pld`` is reported for single-query candidates (AdvQ) and is NaN when
#: a candidate asks several queries (their joint law is not composed here).
EPSILON_COLUMNS = ("valid_eps_lower", "exact_eps_pld")

#: Columns of a per-query table that already describe the whole transcript of a query's
#: ``repetitions`` answers (issue 13 §1): composed over queries *without* the repetitions factor.
TRANSCRIPT_COLUMNS = ("exact_transcript", "exact_transcript_lo", "exact_transcript_hi", "transcript_cap", "two_cut_transcript")


def compose_rdp(per_query_rdp, repetitions: int | np.ndarray | None = None) -> np.ndarray:
    """Compose per-query RDP (bounds) over a query sequence: the order-wise sum (Mironov 2017).

    Args:
        per_query_rdp: ``(Q, A)`` RDP values of ``Q`` queries at ``A`` orders (or ``(A,)``
            for one query).
        repetitions: how many times each query is asked (scalar or ``(Q,)``); the
            adversarial distinguisher asks one query ``n_Q`` times (Chadha et al. 2024, §5.4).

    Returns:
        ``(A,)`` composed RDP.
    """
    r = np.atleast_2d(np.asarray(per_query_rdp, dtype=np.float64))
    if np.any(np.isnan(r)) or np.any(r < 0):
        raise ValueError("per-query RDP values must be >= 0 and not NaN")
    if repetitions is None:
        return r.sum(axis=0)
    reps = np.asarray(repetitions, dtype=np.float64)
    if np.any(reps < 0) or np.any(reps != np.round(reps)):
        raise ValueError(f"repetitions must be non-negative integers, got {repetitions}")
    reps = np.broadcast_to(reps, (r.shape[0],))
    return (r * reps[:, None]).sum(axis=0)


def compose_candidates(
    per_query: pd.DataFrame,
    delta: float = 1e-6,
    columns: Sequence[str] = RDP_COLUMNS,
    transcript_columns: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Compose per-query RDP over each candidate's query sequence and convert to ε (§4.2, §5.4).

    ``composed(α) = Σ_q repetitions_q · rdp_q(α)`` per candidate and column (Mironov 2017;
    :func:`ppaudit.audit.compose_rdp`) — the paper's per-query composition — then
    ``ε = min_α`` of Thm 1 (Balle et al. 2020) at ``delta`` ("RDP audit on the ε scale, Thm 1
    conversion": not a valid ε lower bound). A column with a NaN in any of a candidate's
    queries (e.g. ``exact_lo`` from a Monte Carlo mixture) is NaN for that candidate. The
    standard error of the composed Monte Carlo ``exact`` is
    ``sqrt(Σ_q repetitions_q² · exact_se_q²)`` (independent queries).

    ``transcript_columns`` (default: those of :data:`TRANSCRIPT_COLUMNS` present) already
    cover a query's ``repetitions`` answers and are summed over queries as they are (with
    ``transcript_se`` added in quadrature); the sum over *different* queries assumes
    independent training runs per query (the paper's Pois-NatQ assumption). With
    ``transcript_se``, ``eps_exact_transcript_2se`` converts ``exact_transcript + 2·transcript_se``:
    where the transcript RDP is a Monte Carlo estimate, its upper reading (an estimate, not a
    bound: :func:`ppaudit.experiments.chadha2024.pate_capc_findings.findings_rows` compares the paper's
    composed audit with it when no finite cap is certified); equal to ``eps_exact_transcript``
    where the transcript was enumerated (``transcript_se = 0``).

    Args:
        per_query: rows ``candidate, key, canary_index, canary_label`` (+ ``party``,
            ``control`` when present), ``query``, ``repetitions``, ``order`` and the columns.
        delta: δ of the conversion.
        columns: per-answer RDP columns.
        transcript_columns: per-transcript RDP columns.

    Returns:
        ``(rdp, eps)``: ``rdp`` long table (the id columns, ``order``, one column per RDP
        column and ``exact_se``), ``eps`` one row per candidate with ``eps_<column>`` and
        ``order_<column>`` (the minimising order).

    Raises:
        ValueError: an empty table or a bad δ.
    """
    from ..accounting import rdp_to_dp as _rdp_to_dp

    d = check_probability(delta, "delta")
    if per_query.empty:
        raise ValueError("per_query is empty: nothing to compose")
    ids = ["candidate", "key", "canary_index", "canary_label"] + [c for c in ("party", "control") if c in per_query]
    weighted = per_query[ids + ["order"]].copy()
    columns = list(columns) + [c for c in ("data_dependent_expected", "data_dependent_max") if c in per_query and c not in columns]
    tcols = [c for c in TRANSCRIPT_COLUMNS if c in per_query] if transcript_columns is None else list(transcript_columns)
    for col in columns:
        weighted[col] = per_query[col] * per_query["repetitions"]
    for col in tcols:
        weighted[col] = per_query[col]
    has_se = "exact_se" in per_query
    if has_se:  # independent per-query estimates: variances add, scaled by repetitions²
        weighted["exact_se"] = (per_query["exact_se"] * per_query["repetitions"]) ** 2
    has_tse = bool(tcols) and "transcript_se" in per_query
    if has_tse:
        weighted["transcript_se"] = per_query["transcript_se"] ** 2
    cols = columns + tcols + (["exact_se"] if has_se else []) + (["transcript_se"] if has_tse else [])
    columns = columns + tcols
    grouped = weighted.groupby(ids + ["order"], sort=True)
    rdp = grouped[cols].sum().reset_index()
    # A missing value (e.g. exact_lo of a Monte Carlo mixture) in any query makes the
    # composition unknown: NaN, not the sum of the others.
    keys = ids + ["order"]
    missing = weighted[cols].isna().join(weighted[keys]).groupby(keys, sort=True)[cols].any().reset_index(drop=True)
    for col in cols:
        rdp.loc[missing[col].to_numpy(dtype=bool), col] = np.nan
    if has_se:
        rdp["exact_se"] = np.sqrt(rdp["exact_se"])
    if has_tse:
        rdp["transcript_se"] = np.sqrt(rdp["transcript_se"])
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
            e, o = _rdp_to_dp(vals, orders, d, return_order=True)
            row[f"eps_{col}"], row[f"order_{col}"] = e, o
        if has_tse and "exact_transcript" in tcols:  # the Monte Carlo transcript estimate + 2 s.e. (not a bound)
            vals = grp["exact_transcript"].to_numpy() + 2.0 * grp["transcript_se"].to_numpy()
            if np.all(np.isfinite(vals)) and np.any(np.isfinite(orders)):
                e, o = _rdp_to_dp(np.maximum(vals, 0.0), orders, d, return_order=True)
            else:
                e, o = np.nan, np.nan
            row["eps_exact_transcript_2se"], row["order_exact_transcript_2se"] = e, o
        eps_rows.append(row)
    eps = pd.DataFrame(eps_rows)
    ecols = [c for c in EPSILON_COLUMNS if c in per_query]
    if ecols:
        per_cand = per_query.groupby(ids, sort=True)
        nq = per_cand["query"].nunique().reset_index(drop=True)
        for col in ecols:
            g = per_cand[col]
            vals = g.max().where(g.count() == g.size()).astype(float).reset_index(drop=True)  # NaN if any query's is
            if col == "exact_eps_pld":
                vals = vals.where(nq == 1)
            eps[f"eps_{col}"] = vals.to_numpy()
    return rdp, eps


def summarize_candidates(eps: pd.DataFrame, worst_by: str = "two_cut_cp", columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Worst and average case over candidate canaries (§5.4, App. E.1–E.2).

    * ``worst``: the candidate with the largest ``eps_<worst_by>`` (the audit that leaks
      most, as plotted in Figs. 3–4), with every column's ε for that same candidate;
    * ``max``: the per-column maximum over candidates;
    * ``average``: the per-column mean ε over candidates (over the candidates audited: with
      ``candidate_selection: margin`` these are the most vulnerable queries, not random ones);
    * ``control`` (when ``eps`` has null-canary rows, ``control = True``): the per-column
      maximum over the candidates' null canaries — it must sit at the ε floor.

    Args:
        eps: the ``eps`` table of :func:`compose_candidates`.
        worst_by: the column that picks the worst candidate.
        columns: the columns summarised (default: :data:`RDP_COLUMNS` and the transcript
            columns present).

    Returns:
        Long table with ``case``, ``column``, ``epsilon``, ``candidate`` (for ``worst``).

    Raises:
        ValueError: ``worst_by`` is not a composed column.
    """
    if columns is None:
        extra = ("data_dependent_expected", "data_dependent_max") + TRANSCRIPT_COLUMNS + ("exact_transcript_2se",) + EPSILON_COLUMNS
        columns = list(RDP_COLUMNS) + [c for c in extra if f"eps_{c}" in eps]
    ctl = None
    if "control" in eps:
        mask = eps["control"].astype(bool).to_numpy()
        ctl, eps = eps[mask], eps[~mask].reset_index(drop=True)
    if f"eps_{worst_by}" not in eps:
        raise ValueError(f"worst_by must name a composed column, got {worst_by!r}; have {[c[4:] for c in eps if c.startswith('eps_')]}")
    rows = []
    best = int(eps[f"eps_{worst_by}"].fillna(-np.inf).to_numpy().argmax())
    for col in columns:
        vals = eps[f"eps_{col}"]
        rows.append({"case": "worst", "column": col, "epsilon": float(vals.iloc[best]), "candidate": int(eps["candidate"].iloc[best])})
        rows.append({"case": "max", "column": col, "epsilon": float(vals.max()), "candidate": -1})
        rows.append({"case": "average", "column": col, "epsilon": float(vals.mean()), "candidate": -1})
        if ctl is not None and len(ctl):
            rows.append({"case": "control", "column": col, "epsilon": float(ctl[f"eps_{col}"].max()), "candidate": -1})
    return pd.DataFrame(rows)


def epsilon_floor(orders: Sequence[float], delta: float) -> float:
    """ε of the all-zero RDP curve at ``delta`` (Thm 1, Balle et al. 2020): the value of an
    audit that found nothing. It depends only on the orders and ``δ``.

    Args:
        orders: Rényi orders α > 1 used by the audit.
        delta: the δ of the conversion, in ``(0, 1)``.

    Returns:
        ``min_α log(1 − 1/α) − (log δ + log α)/(α − 1)`` over the orders.

    Raises:
        ValueError: bad orders or δ.
    """
    from ..accounting import rdp_to_dp

    a = np.asarray(orders, dtype=np.float64)
    return float(rdp_to_dp(np.zeros(a.size), a, delta))


def simultaneous_confidence(per_query: pd.DataFrame, joint: pd.DataFrame | None = None) -> float:
    """The confidence with which every audit behind a per-query table (and its joint table) holds at once.

    A worst-case bar (the max over candidates), a composed sum over queries and the comparison of
    two bars are statements about many audits together. By the union bound they hold with
    probability at least ``1 − Σ_audits (1 − c_i)`` over **every audit that was run**, where
    ``c_i`` is audit ``i``'s confidence (Bonferroni 1936; the union bound needs no independence):

    * per (candidate, query, control) — the canary's rows and its null-canary control's rows
      (``control``) are separate audits — ``count_audits`` lower bounds from the output counts
      (the 2-cut and the k-cut, App. B of Chadha et al. 2024), each at its effective confidence
      (``effective_confidence = confidence − 2·T·τ``, the certified slack of pruning the
      enumerated law); its Rényi orders come from one interval and count once;
    * per (candidate, query, control), ``transcript_audits`` transcript-level audits at
      ``confidence_per_audit`` (1 for the Rao–Blackwellised audit, whose RDP and ε bounds hold
      together; 2 for the sampled one, whose 2-cut and Eq. (1) bounds hold each on its own);
    * per candidate of ``joint`` (the joint Pois-NatQ audit), ``num_audits`` audits at its
      ``confidence_per_audit``.

    With Bonferroni at ``1 − 0.05/N`` over these ``N`` audits and no slack this is exactly 0.95;
    with the paper's uncorrected 95 % per audit it is ``1 − 0.05·N`` (floored at 0). Counting one
    audit per (candidate, query), as before issue 27, claimed 0.95 for 40 pairs where the 2-cut,
    the k-cut and the transcript audit of each pair and of its control — 240 audits at
    ``1 − 0.05/40`` — hold at once only with ``1 − 240·0.05/40 = 0.70``.

    Args:
        per_query: columns ``candidate``, ``query``, ``effective_confidence`` (one row per order);
            optional ``control`` (default: no controls), ``count_audits`` (default: how many of
            :data:`~ppaudit.audit.per_query.LOWER_BOUNDS` are columns, at least 1),
            ``transcript_audits`` (default 0) with ``confidence_per_audit`` (and, where present,
            ``transcript_effective_confidence``: that level less the certified distance of the
            histogram samplers from their exact laws; the smaller counts).
        joint: the joint audit's table (columns ``candidate``, ``confidence_per_audit``,
            optional ``num_audits``, default 1, and ``effective_confidence``, the smaller counts),
            or ``None``/empty.

    Returns:
        The simultaneous confidence in ``[0, 1]``.

    Raises:
        ValueError: when a column is missing, a confidence lies outside ``[0, 1]`` or an audit
            count is negative.

    Example:
        >>> t = pd.DataFrame({"candidate": [0, 0], "query": 0, "control": [False, True],
        ...                   "effective_confidence": 1 - 0.05 / 6, "count_audits": 2,
        ...                   "transcript_audits": 1, "confidence_per_audit": 1 - 0.05 / 6})
        >>> round(simultaneous_confidence(t), 12)
        0.95
    """
    need = {"candidate", "query", "effective_confidence"}
    if not need <= set(per_query.columns):
        raise ValueError(f"per_query needs columns {sorted(need)}, missing {sorted(need - set(per_query.columns))}")
    t = per_query.copy()
    if "control" not in t.columns:
        t["control"] = False
    if "count_audits" not in t.columns:
        t["count_audits"] = max(1, sum(c in t.columns for c in LOWER_BOUNDS))
    if "transcript_audits" not in t.columns:
        t["transcript_audits"] = 0
    if (t["transcript_audits"] > 0).any() and "confidence_per_audit" not in t.columns:
        raise ValueError("per_query has transcript_audits > 0 but no column confidence_per_audit")
    if "confidence_per_audit" not in t.columns:
        t["confidence_per_audit"] = 1.0
    for col in ("effective_confidence", "confidence_per_audit"):
        conf = t[col].to_numpy(dtype=float)
        bad = ~((conf >= 0) & (conf <= 1))
        if conf.size and bad.any():
            raise ValueError(f"{col} must lie in [0, 1], got {conf[bad][:3].tolist()}")
    for col in ("count_audits", "transcript_audits"):
        if (t[col] < 0).any():
            raise ValueError(f"{col} must be >= 0, got {t.loc[t[col] < 0, col].iloc[0]}")
    if "transcript_effective_confidence" in t.columns:  # the transcript audits' level less their samplers' certified distance
        t["confidence_per_audit"] = np.fmin(t["confidence_per_audit"], t["transcript_effective_confidence"])
    g = t.groupby(["candidate", "query", "control"]).agg(
        eff=("effective_confidence", "min"), conf=("confidence_per_audit", "min"),
        n_count=("count_audits", "max"), n_tr=("transcript_audits", "max"))
    fail = float((g["n_count"] * (1.0 - g["eff"])).sum() + (g["n_tr"] * (1.0 - g["conf"])).sum())
    if joint is not None and not joint.empty:
        if not {"candidate", "confidence_per_audit"} <= set(joint.columns):
            raise ValueError(f"joint needs columns ['candidate', 'confidence_per_audit'], got {sorted(joint.columns)}")
        j = joint.assign(num_audits=joint["num_audits"] if "num_audits" in joint.columns else 1)
        jc = j["confidence_per_audit"].to_numpy(dtype=float)
        if not ((jc >= 0) & (jc <= 1)).all():
            raise ValueError(f"joint confidence_per_audit must lie in [0, 1], got {jc[~((jc >= 0) & (jc <= 1))][:3].tolist()}")
        if "effective_confidence" in j.columns:  # less the samplers' certified distance
            j["confidence_per_audit"] = np.fmin(j["confidence_per_audit"], j["effective_confidence"])
        jg = j.groupby("candidate").agg(conf=("confidence_per_audit", "min"), n=("num_audits", "max"))
        fail += float((jg["n"] * (1.0 - jg["conf"])).sum())
    return max(0.0, 1.0 - fail)


def count_audits(per_query: pd.DataFrame, joint: pd.DataFrame | None = None) -> int:
    """How many audits :func:`simultaneous_confidence` counts in ``per_query`` (and ``joint``): the ``N`` of its union bound.

    Args:
        per_query, joint: as :func:`simultaneous_confidence`.

    Returns:
        ``Σ (count_audits + transcript_audits)`` over the (candidate, query, control) groups, plus
        ``Σ num_audits`` over the joint candidates.
    """
    t = per_query.assign(
        control=per_query["control"] if "control" in per_query.columns else False,
        count_audits=per_query["count_audits"] if "count_audits" in per_query.columns
        else max(1, sum(c in per_query.columns for c in LOWER_BOUNDS)),
        transcript_audits=per_query["transcript_audits"] if "transcript_audits" in per_query.columns else 0)
    g = t.groupby(["candidate", "query", "control"])[["count_audits", "transcript_audits"]].max()
    n = int(g.to_numpy().sum())
    if joint is not None and not joint.empty:
        j = joint.assign(num_audits=joint["num_audits"] if "num_audits" in joint.columns else 1)
        n += int(j.groupby("candidate")["num_audits"].max().sum())
    return n
