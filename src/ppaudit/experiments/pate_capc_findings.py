"""Candidate choice and the findings checks of the PATE / CaPC audits (Chadha et al. 2024, §5.4).

* :func:`select_candidates` — which query-set points become candidate canaries. The paper
  instantiates the AdvQ adversaries for all ``n_Q = 1000`` queries and reports the worst
  (§5.4); at the embedded scale only a few candidates are affordable, so ``"margin"``
  takes the queries whose pooled teacher votes have the smallest top-2 margin (where one
  flipped vote moves the noisy argmax most) and ``"first"`` the first points of the
  (random) query set. With ``"margin"`` the *average* case is an average over the most
  vulnerable queries, not over random ones.
* :func:`epsilon_floor` (re-exported from :mod:`ppaudit.audit`) — the ε that a zero RDP curve
  converts to (it depends only on the orders and δ): an audit at this value detected nothing.
* :func:`findings_rows` — the paper's orderings (§5.4) checked on summary tables; a check
  that fails is reported with its numbers, never dropped.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from ..adversaries import pooled_vote_counts
from ..audit import epsilon_floor  # re-exported: it lives in ppaudit.audit.composition

__all__ = ["select_candidates", "epsilon_floor", "findings_rows", "FINDINGS_COLUMNS"]

FINDINGS_COLUMNS = ("dataset", "algo", "finding", "adversary", "case", "values", "holds", "at_floor", "note")


def select_candidates(votes_S, num_classes: int, num_candidates: int, how: str = "margin") -> np.ndarray:
    """Indices (into the query set) of the candidate canaries.

    Args:
        votes_S: ``(N_g, k, n_queries)`` votes of the teachers of ``S``.
        num_classes: ``C``.
        num_candidates: how many (capped at ``n_queries``).
        how: ``"margin"`` (smallest top-2 margin of the pooled votes first; ties by index)
            or ``"first"`` (the first query-set points).

    Returns:
        ``(n,)`` int64 distinct indices.
    """
    counts = pooled_vote_counts(votes_S, num_classes)
    nq = counts.shape[0]
    if num_candidates < 1:
        raise ValueError(f"num_candidates must be >= 1, got {num_candidates}")
    n = min(int(num_candidates), nq)
    if how == "first":
        return np.arange(n, dtype=np.int64)
    if how == "margin":
        top2 = -np.sort(-counts, axis=1)[:, :2]
        margin = top2[:, 0] - top2[:, 1]
        return np.lexsort((np.arange(nq), margin))[:n].astype(np.int64)
    raise ValueError(f"how must be 'margin' or 'first', got {how!r}")


def _eps(summary: pd.DataFrame, dataset: str, adversary: str, column: str, case: str = "worst") -> float:
    sel = summary[(summary["dataset"] == dataset) & (summary["adversary"] == adversary) & (summary["case"] == case) & (summary["column"] == column)]
    return float(sel["epsilon"].iloc[0]) if len(sel) else float("nan")


def _row(dataset, algo, finding, adversary, case, pairs, holds, floor, note="", allow_inf=False):
    values = " ≤ ".join(f"{k}={v:.4g}" for k, v in pairs)
    vals = [v for _, v in pairs]
    if allow_inf:  # an infinite upper bound is a valid (uninformative) cap
        vals = [0.0 if np.isposinf(v) else v for v in vals]
    return {
        "dataset": dataset,
        "algo": algo,
        "finding": finding,
        "adversary": adversary,
        "case": case,
        "values": values,
        "holds": bool(holds) if np.all(np.isfinite(vals)) else False,
        "at_floor": bool(np.all(np.asarray(vals) <= floor * (1 + 1e-9))) if floor is not None else False,
        "note": note,
    }


def _sound(summary: pd.DataFrame, ds: str, adv: str) -> tuple[str, str, str]:
    """The audit and exact columns the orderings use: the sound transcript-level ones when the
    summary has them (issue 13 §1), else the paper's per-query composition."""
    have = set(summary.loc[(summary["dataset"] == ds) & (summary["adversary"] == adv), "column"])
    audit = "two_cut_transcript" if "two_cut_transcript" in have else "two_cut_cp"
    exact = "exact_transcript" if "exact_transcript" in have else "exact"
    label = "sound: transcript" if exact == "exact_transcript" else "paper: per-query composition"
    if audit == "two_cut_cp" and exact == "exact_transcript":
        label = "audit: paper per-query composition; exact: sound transcript"
    return audit, exact, label


def findings_rows(
    summary: pd.DataFrame,
    algo: str,
    floor: float,
    other: pd.DataFrame | None = None,
    other_algo: str | None = None,
    natq_factor: float = 0.5,
    tol: float = 1e-9,
) -> pd.DataFrame:
    """The orderings of §5.4 for one algorithm, per dataset (worst case, ε at δ), and the
    soundness rows of issue 13.

    Rows (``finding``):

    * ``audit<=exact<=dd<=di`` per adversary: audit ≤ exact ≤ data-dependent ≤
      data-independent, on the sound transcript-level values when the summary has them
      (``exact_transcript``, ``two_cut_transcript``; the note says which were used), else on
      the paper's per-query composition (the exact value is a Monte Carlo estimate when
      enumeration was too large, so ``audit ≤ exact`` may fail within its standard error);
    * ``paper audit<=transcript cap`` per adversary (when ``transcript_cap`` is present): the
      paper's composed audit (``n_Q ×`` the per-answer bound) against the histogram cap
      ``D_α(H_S ‖ H_S')`` of the shared-histogram transcript, both on the ε scale; a failure
      is a "lower bound" above a valid upper bound, and the note says by how much;
    * ``null canary at floor`` per adversary (when the summary has ``case = control``): the
      null-canary control's audit and exact ε sit at the floor (the fit invents no leakage);
    * ``pois-advq>=nat-advq`` (PATE only): the Pois-AdvQ audit and exact ε at least those of
      Nat-AdvQ;
    * ``{algo}>={other_algo}`` (when ``other`` is given, e.g. CaPC against PATE): audit ε of
      each AdvQ adversary at least the other algorithm's;
    * ``pois-natq<<advq``: Pois-NatQ ≤ ``natq_factor`` × the larger AdvQ value, for the
      audit and for the exact ε.

    ``at_floor`` marks rows whose values all sit at the zero-RDP floor (nothing detected):
    the comparison then says nothing.

    Args:
        summary: rows ``dataset, adversary, case, column, epsilon`` (the compose_audit
            summaries of ``algo``, concatenated; ``num_instantiations`` /
            ``num_canary_instantiations`` columns, when present, go into the notes).
        algo: name written in the rows.
        floor: :func:`epsilon_floor` of the orders and δ used.
        other, other_algo: the summary of an algorithm to compare with.
        natq_factor: what "≪" means.
        tol: relative slack of every ≤.

    Returns:
        Columns :data:`FINDINGS_COLUMNS`.
    """
    le = lambda a, b: a <= b * (1 + tol) + tol  # noqa: E731
    rows = []
    for ds in sorted(summary["dataset"].unique()):
        advs = set(summary.loc[summary["dataset"] == ds, "adversary"])
        for adv in sorted(advs):
            sel = summary[(summary["dataset"] == ds) & (summary["adversary"] == adv)]
            ng_note = ""
            if {"num_instantiations", "num_canary_instantiations"} <= set(sel.columns):
                ng_note = f"N_g = {sel['num_instantiations'].iloc[0]}, N_g' = {sel['num_canary_instantiations'].iloc[0]}. "
            ca, ce, label = _sound(summary, ds, adv)
            a, e, dd, di = (_eps(summary, ds, adv, c) for c in (ca, ce, "data_dependent", "data_independent"))
            rows.append(_row(ds, algo, "audit<=exact<=dd<=di", adv, "worst", [("audit", a), ("exact", e), ("dd", dd), ("di", di)],
                             le(a, e) and le(e, dd) and le(dd, di), floor, note=f"{label}. {ng_note}".strip()))
            if "transcript_cap" in set(sel["column"]):
                pa, cap = _eps(summary, ds, adv, "two_cut_cp"), _eps(summary, ds, adv, "transcript_cap")
                excess = pa - cap
                note = (f"the paper's composed audit exceeds the cap by {excess:.4g} in ε (RDP audit on the ε scale, Thm 1 conversion)"
                        if excess > 0 else f"below the cap by {-excess:.4g} in ε")
                if np.isposinf(cap):
                    note += " (the cap is infinite: the fitted canary voter puts mass on a class its twin never votes for)"
                rows.append(_row(ds, algo, "paper audit<=transcript cap", adv, "worst", [("paper composed audit", pa), ("transcript cap", cap)],
                                 bool(pa <= cap * (1 + tol) + tol), floor, note=note, allow_inf=True))
            if "control" in set(sel["case"]):
                ca_, ce_ = _eps(summary, ds, adv, "two_cut_cp", "control"), _eps(summary, ds, adv, "exact", "control")
                at = le(ca_, floor) and le(ce_, floor)
                rows.append(_row(ds, algo, "null canary at floor", adv, "control", [("control audit", ca_), ("control exact", ce_), ("floor", floor)],
                                 at, floor, note=f"a canary not in the training data (its twin in its place). {ng_note}".strip()))
        if algo == "pate" and {"nat-advq", "pois-advq"} <= advs:
            for kind in ("audit", "exact"):
                cn = _sound(summary, ds, "nat-advq")[0 if kind == "audit" else 1]
                cp = _sound(summary, ds, "pois-advq")[0 if kind == "audit" else 1]
                n, p = _eps(summary, ds, "nat-advq", cn), _eps(summary, ds, "pois-advq", cp)
                rows.append(_row(ds, algo, "pois-advq>=nat-advq", "pois-advq", "worst", [(f"nat-advq {kind}", n), (f"pois-advq {kind}", p)], le(n, p), floor,
                                 note=f"columns {cn} / {cp}"))
        if other is not None and ds in set(other["dataset"]):
            for adv in ("nat-advq", "pois-advq"):
                if adv in advs:
                    col = _sound(summary, ds, adv)[0]
                    ocol = col if col in set(other.loc[(other["dataset"] == ds) & (other["adversary"] == adv), "column"]) else "two_cut_cp"
                    o, s_ = _eps(other, ds, adv, ocol), _eps(summary, ds, adv, col)
                    rows.append(_row(ds, algo, f"{algo}>={other_algo}", adv, "worst", [(f"{other_algo} audit", o), (f"{algo} audit", s_)], le(o, s_), floor,
                                     note=f"columns {ocol} / {col}"))
        if "pois-natq" in advs and advs & {"nat-advq", "pois-advq"}:
            for kind in ("audit", "exact"):
                pick = 0 if kind == "audit" else 1
                nat = _eps(summary, ds, "pois-natq", _sound(summary, ds, "pois-natq")[pick])
                adv_max = max(_eps(summary, ds, a, _sound(summary, ds, a)[pick]) for a in advs & {"nat-advq", "pois-advq"})
                rows.append(
                    _row(ds, algo, "pois-natq<<advq", "pois-natq", "worst", [(f"pois-natq {kind}", nat), (f"{natq_factor:g}·max advq {kind}", natq_factor * adv_max)],
                         le(nat, natq_factor * adv_max), floor, note=f"'≪' read as ≤ {natq_factor:g}× the larger AdvQ value; sound columns where present")
                )
    return pd.DataFrame(rows, columns=list(FINDINGS_COLUMNS))
