"""Candidate choice and the findings checks of the PATE / CaPC audits (Chadha et al. 2024, §5.4).

* :func:`select_candidates` — which query-set points become candidate canaries. The paper
  instantiates the AdvQ adversaries for all ``n_Q = 1000`` queries and reports the worst
  (§5.4); at the embedded scale only a few candidates are affordable, so ``"margin"``
  takes the queries whose pooled teacher votes have the smallest top-2 margin (where one
  flipped vote moves the noisy argmax most) and ``"first"`` the first points of the
  (random) query set. With ``"margin"`` the *average* case is an average over the most
  vulnerable queries, not over random ones.
* :func:`epsilon_floor` — the ε that a zero RDP curve converts to (it depends only on the
  largest order and δ): an audit at this value detected nothing.
* :func:`findings_rows` — the paper's orderings (§5.4) checked on summary tables; a check
  that fails is reported with its numbers, never dropped.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..accounting import rdp_to_dp
from ..adversaries import pooled_vote_counts

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


def epsilon_floor(orders: Sequence[float], delta: float) -> float:
    """ε of the all-zero RDP curve at ``delta`` (Thm 1): the value of an audit that found nothing."""
    a = np.asarray(orders, dtype=np.float64)
    return float(rdp_to_dp(np.zeros(a.size), a, delta))


def _eps(summary: pd.DataFrame, dataset: str, adversary: str, column: str, case: str = "worst") -> float:
    sel = summary[(summary["dataset"] == dataset) & (summary["adversary"] == adversary) & (summary["case"] == case) & (summary["column"] == column)]
    return float(sel["epsilon"].iloc[0]) if len(sel) else float("nan")


def _row(dataset, algo, finding, adversary, case, pairs, holds, floor, note=""):
    values = " ≤ ".join(f"{k}={v:.4g}" for k, v in pairs)
    vals = [v for _, v in pairs]
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


def findings_rows(
    summary: pd.DataFrame,
    algo: str,
    floor: float,
    other: pd.DataFrame | None = None,
    other_algo: str | None = None,
    natq_factor: float = 0.5,
    tol: float = 1e-9,
) -> pd.DataFrame:
    """The orderings of §5.4 for one algorithm, per dataset (worst case, ε at δ).

    Rows (``finding``):

    * ``audit<=exact<=dd<=di`` per adversary: 2-cut audit ≤ exact ≤ data-dependent ≤
      data-independent (the exact value is a Monte Carlo estimate when enumeration was
      too large, so ``audit ≤ exact`` may fail within its standard error);
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
            summaries of ``algo``, concatenated).
        algo: name written in the rows.
        floor: :func:`epsilon_floor` of the orders and δ used.
        other, other_algo: the summary of an algorithm to compare with.
        natq_factor: what "≪" means.
        tol: relative slack of every ≤.
    """
    le = lambda a, b: a <= b * (1 + tol) + tol  # noqa: E731
    rows = []
    for ds in sorted(summary["dataset"].unique()):
        advs = set(summary.loc[summary["dataset"] == ds, "adversary"])
        for adv in sorted(advs):
            a, e, dd, di = (_eps(summary, ds, adv, c) for c in ("two_cut_cp", "exact", "data_dependent", "data_independent"))
            rows.append(_row(ds, algo, "audit<=exact<=dd<=di", adv, "worst", [("audit", a), ("exact", e), ("dd", dd), ("di", di)], le(a, e) and le(e, dd) and le(dd, di), floor))
        if algo == "pate" and {"nat-advq", "pois-advq"} <= advs:
            for col, name in (("two_cut_cp", "audit"), ("exact", "exact")):
                n, p = _eps(summary, ds, "nat-advq", col), _eps(summary, ds, "pois-advq", col)
                rows.append(_row(ds, algo, "pois-advq>=nat-advq", "pois-advq", "worst", [(f"nat-advq {name}", n), (f"pois-advq {name}", p)], le(n, p), floor))
        if other is not None and ds in set(other["dataset"]):
            for adv in ("nat-advq", "pois-advq"):
                if adv in advs:
                    o, s = _eps(other, ds, adv, "two_cut_cp"), _eps(summary, ds, adv, "two_cut_cp")
                    rows.append(_row(ds, algo, f"{algo}>={other_algo}", adv, "worst", [(f"{other_algo} audit", o), (f"{algo} audit", s)], le(o, s), floor))
        if "pois-natq" in advs and advs & {"nat-advq", "pois-advq"}:
            for col, name in (("two_cut_cp", "audit"), ("exact", "exact")):
                nat = _eps(summary, ds, "pois-natq", col)
                adv_max = max(_eps(summary, ds, a, col) for a in advs & {"nat-advq", "pois-advq"})
                rows.append(
                    _row(ds, algo, "pois-natq<<advq", "pois-natq", "worst", [(f"pois-natq {name}", nat), (f"{natq_factor:g}·max advq {name}", natq_factor * adv_max)], le(nat, natq_factor * adv_max), floor, note=f"'≪' read as ≤ {natq_factor:g}× the larger AdvQ value")
                )
    return pd.DataFrame(rows, columns=list(FINDINGS_COLUMNS))
