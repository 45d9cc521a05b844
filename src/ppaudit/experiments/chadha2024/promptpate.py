"""The paper's PromptPATE claims (Chadha et al. 2024, §5.3–5.4), checked on the audit
summaries; a check that fails is reported with its numbers.

Rows (columns :data:`~ppaudit.experiments.pate_capc_findings.FINDINGS_COLUMNS`; ε at δ,
worst case):

* ``audit<=exact<=dd<=di`` per adversary and ``pois-natq<<advq`` (as for PATE/CaPC,
  :func:`ppaudit.experiments.pate_capc_findings.findings_rows`);
* ``audit≈exact`` per adversary: the 2-cut audit is at least half the exact ε ("tight
  audits", §5.4);
* ``nat-advq≈pois-advq``: the two AdvQ adversaries leak alike (within 2×) in exact ε and
  audit ("Both adversaries exhibit similar leakage levels for CaPC and PromptPATE");
* ``pois-natq best variant``: every Pois-NatQ prompt's audit and the best (§5.3), holds if
  the best detects something (above the zero-RDP floor);
* ``pate<=capc<=promptpate`` and ``promptpate>=others`` (dataset ``all``): Pois-NatQ
  audit ε of each algorithm (max over its datasets), raw and divided by the same setting's
  data-independent ε (the algorithms run on different datasets, k, σ and n_Q); and for the
  AdvQ adversaries the audit / exact ratio (Fig. 3: "relative to exact RDP calculations ...
  least leakage in PATE, followed by CaPC and PromptPATE"; NaN where the exact ε is at the
  zero-RDP floor);
* ``teachers classify`` per dataset (the property the paper's PromptPATE argument rests on:
  one-shot teachers that are classifiers, so the vote histograms are not degenerate): mean
  teacher accuracy against the majority-class rate of the queries, with the plurality
  vote's accuracy, the normalised vote entropy and the teachers' decoding
  (:func:`teacher_statistics`). Holds if the mean teacher accuracy exceeds the
  majority-class rate.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import pandas as pd

from .pate_capc_findings import FINDINGS_COLUMNS, findings_rows

__all__ = ["teacher_statistics", "promptpate_findings"]

ALGO = "promptpate"
_TOL = 1e-9


def teacher_statistics(query_labels, teacher_votes, num_classes: int) -> dict:
    """How well the PromptPATE teachers classify the queries.

    Args:
        query_labels: ``(n_Q,)`` true labels.
        teacher_votes: ``(k, n_Q)`` teacher votes.
        num_classes: ``C``.

    Returns:
        ``teacher_accuracy`` (mean over teachers), ``plurality_accuracy`` (noiseless
        plurality vote, ties → smaller label), ``majority_class_rate`` (share of the
        queries' most common true label: the accuracy of a constant answer),
        ``vote_entropy`` (mean over queries of the entropy of the vote histogram divided by
        ``log C``: 0 = every teacher votes alike, 1 = uniform) and
        ``constant_teachers`` (share of teachers that give one answer to every query).

    Raises:
        ValueError: shapes that do not match, or labels outside ``[0, C)``.
    """
    y = np.asarray(query_labels, dtype=np.int64)
    v = np.asarray(teacher_votes, dtype=np.int64)
    c = int(num_classes)
    if c < 2:
        raise ValueError(f"num_classes must be >= 2, got {num_classes}")
    if y.ndim != 1 or v.ndim != 2 or v.shape[1] != y.size or y.size == 0:
        raise ValueError(f"query_labels must be (n_Q,) and teacher_votes (k, n_Q); got {y.shape} and {v.shape}")
    if y.min() < 0 or y.max() >= c or v.min() < 0 or v.max() >= c:
        raise ValueError(f"labels and votes must lie in [0, {c}), got labels in [{y.min()}, {y.max()}], votes in [{v.min()}, {v.max()}]")
    hist = np.stack([np.bincount(v[:, q], minlength=c) for q in range(y.size)])
    p = hist / hist.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=1) / math.log(c)
    return {
        "teacher_accuracy": float((v == y[None, :]).mean()),
        "plurality_accuracy": float(np.mean(np.argmax(hist, axis=1) == y)),
        "majority_class_rate": float(np.bincount(y, minlength=c).max() / y.size),
        "vote_entropy": float(ent.mean()),
        "constant_teachers": float(np.mean([np.unique(row).size == 1 for row in v])),
    }


def _eps(table: pd.DataFrame, ds, adv, col, case="worst") -> float:
    sel = table[(table["dataset"] == ds) & (table["adversary"] == adv) & (table["case"] == case) & (table["column"] == col)]
    return float(sel["epsilon"].iloc[0]) if len(sel) else float("nan")


def _row(ds, finding, adversary, values, holds, at_floor, note="") -> dict:
    ok = bool(holds) and all(np.isfinite(v) for _, v in values)
    text = ", ".join(f"{k}={v:.4g}" for k, v in values)
    return dict(dataset=ds, algo=ALGO, finding=finding, adversary=adversary, case="worst", values=text, holds=ok,
                at_floor=bool(at_floor), note=note)


def _ratio_to_exact(t: pd.DataFrame, ds, adv) -> float:
    """audit / exact ε, NaN when the exact ε sits at the zero-RDP floor (nothing to detect)."""
    a, e = _eps(t, ds, adv, "two_cut_cp"), _eps(t, ds, adv, "exact")
    return a / e if e > float(t["eps_floor"].iloc[0]) * (1 + _TOL) else float("nan")


def _algo_max(table: pd.DataFrame, adv, fn) -> float:
    vals = [fn(table, ds, adv) for ds in table.loc[table["adversary"] == adv, "dataset"].unique()]
    vals = [v for v in vals if np.isfinite(v)]
    return max(vals) if vals else float("nan")


def promptpate_findings(
    summary: pd.DataFrame,
    variants: pd.DataFrame,
    others: Mapping[str, pd.DataFrame],
    floor: float,
    teachers: Mapping[str, Mapping] | None = None,
) -> pd.DataFrame:
    """The PromptPATE findings table (module docstring).

    Args:
        summary: the PromptPATE summary (Figs. 3/4 columns; one Pois-NatQ variant).
        variants: every audit summary with the columns ``variant`` and ``best_variant``.
        others: PATE / CaPC summaries by algorithm name (``"pate"``, ``"capc"``).
        floor: ε of an all-zero RDP curve at the orders and δ.
        teachers: per dataset, :func:`teacher_statistics` plus ``answers`` and
            ``calibration`` (the teachers' decoding; the paper's is numbers / none);
            ``None`` leaves out the ``teachers classify`` rows.

    Returns:
        The findings rows.
    """
    rows = findings_rows(summary, ALGO, floor).to_dict("records")
    for ds in sorted(summary["dataset"].unique()):
        for adv in ("nat-advq", "pois-advq", "pois-natq"):
            a, e = _eps(summary, ds, adv, "two_cut_cp"), _eps(summary, ds, adv, "exact")
            rows.append(_row(ds, "audit≈exact", adv, [("audit", a), ("exact", e), ("audit/exact", a / e if e > 0 else np.nan)],
                             a >= 0.5 * e * (1 - _TOL), max(a, e) <= floor * (1 + _TOL), "holds if audit ≥ 0.5 × exact (tight audit, §5.4)"))
        for col, name in (("exact", "exact"), ("two_cut_cp", "audit")):
            n, q = _eps(summary, ds, "nat-advq", col), _eps(summary, ds, "pois-advq", col)
            rows.append(_row(ds, "nat-advq≈pois-advq", "pois-advq", [(f"nat-advq {name}", n), (f"pois-advq {name}", q)],
                             max(n, q) <= 2 * min(n, q) * (1 + _TOL), max(n, q) <= floor * (1 + _TOL), "holds if within a factor 2 (§5.4)"))
        nv = variants[(variants["dataset"] == ds) & (variants["adversary"] == "pois-natq") & (variants["case"] == "worst")]
        vals = [(v, _eps(nv[nv["variant"] == v], ds, "pois-natq", "two_cut_cp")) for v in dict.fromkeys(nv["variant"]) if v != "best"]
        best = sorted(set(nv["best_variant"]) - {""})
        best_eps = _eps(nv[nv["variant"] == "best"], ds, "pois-natq", "two_cut_cp")
        rows.append(_row(ds, "pois-natq best variant", "pois-natq", vals, best_eps > floor * (1 + _TOL), best_eps <= floor * (1 + _TOL),
                         f"2-cut audit ε per App. D.2 prompt; best = {', '.join(best) or '?'} (the Pois-NatQ bar of Fig. 4)"))

    tables = {**{a: others[a] for a in ("pate", "capc") if a in others}, ALGO: summary}
    checks = [
        ("pois-natq", "audit ε", lambda t, ds, adv: _eps(t, ds, adv, "two_cut_cp"),
         "§5.4: Pois-NatQ leakage PATE ≪ CaPC < PromptPATE (raw ε; different datasets, k, σ, n_Q)"),
        ("pois-natq", "audit ε / data-independent ε", lambda t, ds, adv: _eps(t, ds, adv, "two_cut_cp") / _eps(t, ds, adv, "data_independent"),
         "§5.4: Pois-NatQ leakage PATE ≪ CaPC < PromptPATE, each divided by the data-independent ε of its own setting"),
        ("nat-advq", "audit/exact", _ratio_to_exact,
         "§5.4 (Fig. 3): relative to exact, least leakage in PATE, then CaPC and PromptPATE; nan where the exact ε is at the floor"),
        ("pois-advq", "audit/exact", _ratio_to_exact,
         "§5.4 (Fig. 3): relative to exact, least leakage in PATE, then CaPC and PromptPATE; nan where the exact ε is at the floor"),
    ]
    for adv, what, fn, note in checks:
        vals = [(f"{a} {what}", _algo_max(t, adv, fn)) for a, t in tables.items()]
        v = [x for _, x in vals]
        holds = all(v[i] <= v[i + 1] * (1 + _TOL) + _TOL for i in range(len(v) - 1))
        floors = [_eps(t, t["dataset"].iloc[0], adv, "two_cut_cp") <= float(t["eps_floor"].iloc[0]) * (1 + _TOL) for t in tables.values()]
        rows.append(_row("all", "pate<=capc<=promptpate", adv, vals, holds, all(floors), note + " (max over each algorithm's datasets)"))
        if len(v) > 1:  # PromptPATE's own claim: it leaks most (the PATE-vs-CaPC order is theirs to check)
            rows.append(_row("all", "promptpate>=others", adv, vals, all(v[-1] >= x * (1 - _TOL) for x in v[:-1]), all(floors),
                             note + " — PromptPATE at least every other algorithm (max over each algorithm's datasets)"))

    for ds, st in sorted((teachers or {}).items()):
        vals = [(k, float(st[k])) for k in ("teacher_accuracy", "majority_class_rate", "plurality_accuracy", "vote_entropy", "constant_teachers")]
        rows.append(_row(ds, "teachers classify", "none", vals, st["teacher_accuracy"] > st["majority_class_rate"], False,
                         f"answers {st.get('answers', 'numbers')}, calibration {st.get('calibration', 'none')} "
                         f"({'paper' if (st.get('answers', 'numbers'), st.get('calibration', 'none')) == ('numbers', 'none') else 'ours'}); "
                         "holds if the mean one-shot teacher accuracy exceeds the majority-class rate (a constant answer)"))
    return pd.DataFrame(rows, columns=list(FINDINGS_COLUMNS))
