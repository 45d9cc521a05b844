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
* :func:`teacher_properties` / :func:`teacher_rows` — what the stand-in teachers of the run
  are (issue 16 §3): mean teacher test accuracy, plurality (aggregate) accuracy and consensus,
  the properties the paper's argument relies on ("easy queries where teachers concur", §5.4),
  checked against :data:`TEACHER_REGIME` (issue #30's bar).
* :func:`canary_rows` — whether the canary-holding teachers learn their canary (issue 34 §1):
  the poison success rate (:func:`ppaudit.adversaries.canary_vote_rates`) per dataset and
  adversary, checked against :data:`POISON_SUCCESS_BAR`, and the same numbers in the note of
  the ``pois-advq>=nat-advq`` rows, whose outcome they explain.
  The paper states none of these numbers for its PATE / CaPC teachers (§5.1–5.2, App. D.1 give
  only architectures and optimiser), so no row of ``workflow/data/paper_numbers.csv`` holds
  them and the rows say "paper: not stated".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from ...adversaries import pooled_vote_counts
from ...audit import epsilon_floor  # re-exported: it lives in ppaudit.audit.composition

__all__ = ["select_candidates", "epsilon_floor", "findings_rows", "FINDINGS_COLUMNS", "teacher_properties", "teacher_rows",
           "TeacherRegime", "TEACHER_REGIME", "POISON_SUCCESS_BAR", "canary_rows"]


@dataclass(frozen=True)
class TeacherRegime:
    """The regime the stand-in PATE / CaPC teachers must be in for the findings to speak for the
    paper's (the paper states no value; §5.4's argument needs accurate teachers that concur).

    Attributes:
        min_mean_teacher_accuracy: lower bound on the mean teacher accuracy on the queries.
        min_mean_top_vote_share: lower bound on the mean share of the top vote per query.
        source: where the bar comes from (written in the findings row).

    Besides the two bars, the plurality vote must be at least as accurate as the mean teacher.
    """

    min_mean_teacher_accuracy: float
    min_mean_top_vote_share: float
    source: str

    def misses(self, p: Mapping[str, float]) -> list[str]:
        """What ``p`` (:func:`teacher_properties`) misses of the regime: ``[]`` when inside."""
        out = []
        if not p["mean_teacher_accuracy"] >= self.min_mean_teacher_accuracy:
            out.append(f"mean teacher accuracy {p['mean_teacher_accuracy']:.3g} < {self.min_mean_teacher_accuracy:g}")
        if not p["mean_top_vote_share"] >= self.min_mean_top_vote_share:
            out.append(f"mean top-vote share {p['mean_top_vote_share']:.3g} < {self.min_mean_top_vote_share:g}")
        if not p["plurality_accuracy"] >= p["mean_teacher_accuracy"]:
            out.append(f"plurality accuracy {p['plurality_accuracy']:.3g} < mean teacher accuracy {p['mean_teacher_accuracy']:.3g}")
        return out

    def describe(self) -> str:
        return (f"mean teacher accuracy ≥ {self.min_mean_teacher_accuracy:g}, mean top-vote share ≥ "
                f"{self.min_mean_top_vote_share:g} and plurality ≥ mean teacher accuracy ({self.source})")


#: The stand-in teachers' regime (issue #30 §2's bar; before it, our reading was a mean top-vote
#: share ≥ 0.5 alone): the only place these numbers are set.
TEACHER_REGIME = TeacherRegime(min_mean_teacher_accuracy=0.75, min_mean_top_vote_share=0.6, source="issue #30's bar; paper: not stated")

#: Columns of the Chadha findings table (``results/tables/chadha2024_findings.csv``).
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
    if "two_cut_joint" in have:  # Pois-NatQ: all natural queries on one training draw
        for col, extra in (("exact_joint", ""), ("joint_cap", " (exact: its certified cap)")):
            if col in have and np.isfinite(_eps(summary, ds, adv, col)):
                return "two_cut_joint", col, "sound: joint transcript" + extra
        exact = "exact_transcript" if "exact_transcript" in have else "exact"
        return "two_cut_joint", exact, "audit: sound joint transcript; exact: per-query sum (the joint model did not enumerate)"
    audit = "two_cut_transcript" if "two_cut_transcript" in have else "two_cut_cp"
    exact = "exact_transcript" if "exact_transcript" in have else "exact"
    label = "sound: transcript" if exact == "exact_transcript" else "paper: per-query composition"
    if audit == "two_cut_cp" and exact == "exact_transcript":
        label = "audit: paper per-query composition; exact: sound transcript"
    return audit, exact, label


def _transcript_cap(summary: pd.DataFrame, ds: str, adv: str) -> tuple[str, float, str]:
    """The tightest valid upper bound on the transcript's ε-scale RDP the summary holds, and why.

    ``transcript_cap`` is ``D_α(H_S ‖ H_S')`` (data processing over the shared histogram); it is
    infinite when the canary voter puts mass on a class that neither its twin nor any other
    teacher votes for on the query (then ``H_S'`` has histograms ``H_S`` never has). The
    transcript law's own divergence is finite: its certified upper end ``exact_transcript_hi``
    (the enumerated answer-count laws, :func:`ppaudit.vote_models.transcript_rdp`) is also a
    valid cap — for Pois-NatQ the per-query sum of it assumes independent training runs, so the
    joint cap ``joint_cap`` (one training draw for all queries, joint quasi-convexity) is used
    when present. Never a finite number that is not an upper bound: a Monte Carlo estimate
    (``exact_transcript_hi`` NaN) is not used.
    """
    cap = _eps(summary, ds, adv, "transcript_cap")
    hi = _eps(summary, ds, adv, "exact_transcript_hi")
    joint = _eps(summary, ds, adv, "joint_cap")
    if np.isfinite(joint):  # alone: the per-query sums of the other caps are caps only under independent training runs
        return "joint transcript cap", joint, ("cap: the certified joint cap of all natural queries on one training draw (joint quasi-convexity; "
                                               "the per-query sum assumes independent training runs)")
    why = []
    if adv == "pois-natq":
        why.append("per-query sum over the natural queries (a cap only if each query had its own training run)")
    if np.isposinf(cap):
        why.append("D_α(H_S‖H_S') is infinite here: the fitted canary voter puts mass on a class that neither its twin nor any other teacher "
                   "votes for on the query, so H_S' has histograms H_S never has")
    if np.isfinite(hi) and hi < cap:
        why.append("cap used: the certified upper end of the exact transcript RDP (enumerated answer-count laws; certified up to the "
                   "quadrature error of Eq. (4)), a valid upper bound")
        return "transcript law cap", hi, "; ".join(why)
    if np.isposinf(cap):
        why.append("the transcript law was not enumerated (no certified finite cap): the row is uninformative")
        return "transcript cap", cap, "; ".join(why)
    why.append("cap: D_α(H_S‖H_S') of the shared histogram (data processing)")
    return "transcript cap", cap, "; ".join(why)


def _estimate_row(summary: pd.DataFrame, ds: str, algo: str, adv: str, pa: float, floor: float, le) -> dict | None:
    """No finite cap is certified: the paper's composed audit against the Monte Carlo estimate
    of the transcript's exact RDP and its upper reading (+ 2 s.e.), labelled as an estimate.

    The paper's per-query composed exact value (``exact``) is shown beside it; an estimate above
    either paper value is explained, not flagged: the transcript's RDP is not bounded by ``n ×``
    the single-answer RDP (:mod:`ppaudit.vote_models.repeated_query`, issue 27 §2), and only the
    caps are certified."""
    est, up = _eps(summary, ds, adv, "exact_transcript"), _eps(summary, ds, adv, "exact_transcript_2se")
    if not (np.isfinite(est) and np.isfinite(up)):
        return None
    if pa > up:
        verdict = (f"the paper's composed audit is above the estimate + 2 s.e. by {pa - up:.4g} in ε: a claimed lower bound above the "
                   "estimated true value of the transcript (indicative, not certified)")
    elif pa > est:
        verdict = "the paper's composed audit is above the estimate but within 2 s.e.: undecided"
    else:
        verdict = f"the paper's composed audit is below the estimate by {est - pa:.4g} in ε"
    pe = _eps(summary, ds, adv, "exact")  # the paper's per-query composition: n × the single-answer exact RDP
    above = [name for name, v in (("composed audit", pa), ("per-query composed exact value", pe)) if np.isfinite(v) and est > v]
    why = ""
    if above:
        why = (f" The estimate above the paper's {' and '.join(above)} is no anomaly: the n answers share one training run's "
               "histogram, and the transcript's RDP is not bounded by n × the single-answer RDP (e.g. PATE k = 5, σ = 4, "
               "P_q = (0.1, 0.9), P'_q = (0, 1), n = 10, α = 24: exact transcript 0.367 against n × single 0.110; issue 27 §2).")
    note = (f"{verdict}.{why} No finite cap is certified here (see the row paper audit<=transcript cap), so the comparison is with the "
            "Monte Carlo estimate of the exact transcript RDP (ppaudit.experiments.chadha2024.private_prediction.transcript_columns): an estimate, "
            "not a bound — only the caps are certified. The moment estimate is biased low at large orders; on sampled histogram bases "
            "(M of them) it is biased upwards at small M, and its s.e. leaves the base sampling out (PATE k = 20, σ = 2, n = 10, "
            "P_q = (0.5, 0.3, 0.2), P'_q = (0.2, 0.3, 0.5), RDP at α = 8: exact 0.086, mean of 200 plug-in estimates on M = 30 sampled "
            "bases 0.215). RDP values on the ε scale (Thm 1).")
    pairs = [("paper composed audit", pa), ("paper composed exact", pe), ("exact transcript (estimate)", est), ("estimate + 2 s.e.", up)]
    return _row(ds, algo, "paper audit<=exact transcript (estimate)", adv, "worst", pairs, le(pa, up), floor, note=note)


def _joint_row(summary: pd.DataFrame, ds: str, algo: str, adv: str, floor: float, le) -> dict:
    """Pois-NatQ: the paper's per-query sum beside the joint transcript (one training draw)."""
    vals = {c: _eps(summary, ds, adv, c) for c in ("two_cut_cp", "two_cut_joint", "exact", "exact_joint", "joint_cap",
                                                  "valid_eps_lower_joint", "exact_eps_pld_joint")}
    pairs = [("sound: joint transcript audit", vals["two_cut_joint"])]
    cap = vals["joint_cap"] if np.isfinite(vals["joint_cap"]) else vals["exact_joint"]
    pairs.append(("joint cap" if np.isfinite(vals["joint_cap"]) else "exact joint (estimate)", cap))
    note = (f"paper: per-query composition audit = {vals['two_cut_cp']:.4g}, exact per-query sum = {vals['exact']:.4g} "
            f"(the sum assumes an independent training run per natural query); sound: joint transcript exact = {vals['exact_joint']:.4g}, "
            f"valid ε lower bound (Eq. 1) = {vals['valid_eps_lower_joint']:.4g}, exact ε (PLD) = {vals['exact_eps_pld_joint']:.4g}. "
            "Joint model: the canary teacher's and its twin's joint vote vectors of the N_g' instantiations, the other teachers per the fitted "
            "model independently per query (their own dependence across queries is not modelled). RDP values on the ε scale (Thm 1).")
    return _row(ds, algo, "joint transcript audit<=joint cap", adv, "worst", pairs, le(pairs[0][1], pairs[1][1]), floor, note=note)


def _floor_note(summary: pd.DataFrame, ds: str, adv: str) -> str:
    """Why an audit sits at the zero-RDP floor: sampled T against the effect size (issue 13 §4)."""
    sel = summary[(summary["dataset"] == ds) & (summary["adversary"] == adv)]
    if not {"trials_used_max", "count_modes", "confidence_per_audit"} <= set(sel.columns) or sel.empty:
        return ""
    from scipy.stats import norm

    t = int(sel["trials_used_max"].iloc[0])
    modes = str(sel["count_modes"].iloc[0])
    z = float(norm.ppf(float(sel["confidence_per_audit"].iloc[0])))
    if t <= 0:
        return ""
    return (f"Audit at the floor: T = {t} trials per query ({modes} counts). With T trials per side the 2-cut only resolves per-answer "
            f"probability gaps above about 2z·sqrt(p(1−p)/T) (z = {z:.2f} at the per-audit confidence), i.e. per-answer RDP above "
            f"≈ 2αz²/T = {2 * z * z / t:.2g}·α; a fitted model whose per-answer effect is below this resolution is not detected (its exact "
            "per-answer RDP is column exact of per_query.csv). More trials or exact counts (enumerable models) are "
            "needed (the paper runs T = 1e8); the sound transcript audit of the same model is Rao–Blackwellised "
            "(ppaudit.audit.rao_blackwell_transcript_audit: exact conditional laws, no sampled counts) and is not limited this way.")


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
    * ``transcript audit<=transcript cap`` beside it when the cap is finite (not the joint
      cap, which has its own row): the sound transcript audit against the same cap;
    * ``paper audit<=exact transcript (estimate)`` beside it when no finite cap is certified
      (``transcript_cap`` infinite, transcript not enumerated): the paper's composed audit
      against the Monte Carlo estimate of the transcript's exact RDP and the estimate + 2 s.e.
      (``exact_transcript_2se``); ``holds`` compares with the latter, and the note says it is
      an estimate, not a bound;
    * ``null canary at floor`` per adversary (when the summary has ``case = control``): the
      null-canary control's audit and exact ε sit at the floor (the fit invents no leakage);
    * ``pois-advq>=nat-advq`` (PATE only): the Pois-AdvQ audit and exact ε at least those of
      Nat-AdvQ, each adversary at its most-leaking candidate by the compared column (``case =
      max``; the note gives the values at the ``worst`` candidate, the one the paper's per-query
      audit picks, which is a tie broken by candidate order when that audit sits at the floor);
      when the exact values are Monte Carlo estimates (``exact_transcript``) and Nat-AdvQ's is
      above Pois-AdvQ's estimate but not above its estimate + 2 s.e., the row holds as a tie
      within the estimates' error and says so;
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
            chain = _row(ds, algo, "audit<=exact<=dd<=di", adv, "worst", [("audit", a), ("exact", e), ("dd", dd), ("di", di)],
                         le(a, e) and le(e, dd) and le(dd, di), floor, note=f"{label}. {ng_note}".strip())
            if le(a, floor):  # the audit detected nothing: say why
                why = ("Audit and exact value at the floor: the canary changes no vote of the fitted model (nothing to detect)."
                       if le(e, floor) else _floor_note(summary, ds, adv))
                chain["note"] = f"{chain['note']} {why}".strip()
            rows.append(chain)
            if "transcript_cap" in set(sel["column"]):
                pa = _eps(summary, ds, adv, "two_cut_cp")
                name, cap, why = _transcript_cap(summary, ds, adv)
                excess = pa - cap
                if excess > 0:
                    note = f"the paper's composed audit exceeds the cap by {excess:.4g} in ε (RDP audit on the ε scale, Thm 1 conversion)"
                else:
                    note = f"below the cap by {-excess:.4g} in ε" if excess < 0 else "equal to the cap in ε"
                fn = _floor_note(summary, ds, adv) if le(pa, floor) else ""
                if fn:  # the paper's per-query procedure detected nothing: say why
                    why = f"{why}. The paper's per-query audit is at the floor. {fn}"
                rows.append(_row(ds, algo, "paper audit<=transcript cap", adv, "worst", [("paper composed audit", pa), (name, cap)],
                                 bool(pa <= cap * (1 + tol) + tol), floor, note=f"{note}. {why}", allow_inf=True))
                ta = _eps(summary, ds, adv, "two_cut_transcript")
                if np.isfinite(cap) and np.isfinite(ta) and name != "joint transcript cap":  # joint: the joint row below
                    rows.append(_row(ds, algo, "transcript audit<=transcript cap", adv, "worst", [("sound: transcript audit", ta), (name, cap)],
                                     le(ta, cap), floor, note=f"ours: the transcript-level audit (one training draw per transcript) against the same cap. {why}"))
                if not np.isfinite(cap):
                    est = _estimate_row(summary, ds, algo, adv, pa, floor, le)
                    if est is not None:
                        rows.append(est)
            if "two_cut_joint" in set(sel["column"]):
                rows.append(_joint_row(summary, ds, algo, adv, floor, le))
            if "control" in set(sel["case"]):
                ca_, ce_ = _eps(summary, ds, adv, "two_cut_cp", "control"), _eps(summary, ds, adv, "exact", "control")
                at = le(ca_, floor) and le(ce_, floor)
                rows.append(_row(ds, algo, "null canary at floor", adv, "control", [("control audit", ca_), ("control exact", ce_), ("floor", floor)],
                                 at, floor, note=f"a canary not in the training data (its twin in its place). {ng_note}".strip()))
        if algo == "pate" and {"nat-advq", "pois-advq"} <= advs:
            for kind in ("audit", "exact"):
                cn = _sound(summary, ds, "nat-advq")[0 if kind == "audit" else 1]
                cp = _sound(summary, ds, "pois-advq")[0 if kind == "audit" else 1]
                # Each adversary's worst case by the compared column itself (case "max"): the
                # "worst" candidate is picked by the paper's per-query audit (two_cut_cp), which
                # may sit at the floor for several candidates (then its pick is a tie broken by
                # candidate order) and need not be the candidate this column finds leakiest.
                case = "max" if "max" in set(summary["case"]) else "worst"
                n, p = _eps(summary, ds, "nat-advq", cn, case), _eps(summary, ds, "pois-advq", cp, case)
                nw, pw = _eps(summary, ds, "nat-advq", cn), _eps(summary, ds, "pois-advq", cp)
                pick = (f"at the paper's worst-case pick (largest two_cut_cp audit; nat-advq {_eps(summary, ds, 'nat-advq', 'two_cut_cp'):.4g}, "
                        f"pois-advq {_eps(summary, ds, 'pois-advq', 'two_cut_cp'):.4g}, floor {floor:.4g}): nat-advq {nw:.4g}, pois-advq {pw:.4g}")
                pairs, ok = [(f"nat-advq {kind}", n), (f"pois-advq {kind}", p)], le(n, p)
                note = f"columns {cn} / {cp}, case {case}: each adversary's most-leaking candidate by that column; {pick}"
                p2 = _eps(summary, ds, "pois-advq", "exact_transcript_2se", case) if cp == "exact_transcript" else float("nan")
                if not ok and np.isfinite(p2) and le(n, p2):
                    # Monte Carlo estimates (the transcript law was not enumerated): within the error
                    pairs, ok = [(f"nat-advq {kind} (estimate)", n), (f"pois-advq {kind} (estimate) + 2 s.e.", p2)], True
                    note += (f". The exact values are Monte Carlo estimates: pois-advq's estimate {p:.4g} is below nat-advq's by "
                             f"{n - p:.2g}, within its 2 s.e. ({p2 - p:.2g}): a tie at this resolution, not a reversal")
                rows.append(_row(ds, algo, "pois-advq>=nat-advq", "pois-advq", case, pairs, ok, floor, note=note))
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


def teacher_properties(votes_S, labels, num_classes: int, sigma: float | None = None) -> dict:
    """Accuracy and consensus of the teachers of ``S`` on the query set (issue 16 §3).

    Chadha et al. 2024, §5.4: natural queries cost less privacy because of the "easy" queries
    "where teachers concur"; the data-dependent analysis of Papernot et al. (2018) pays off only
    under consensus. These are the properties of the stand-in teachers that the argument uses.

    Args:
        votes_S: ``(N_g, k, n_queries)`` teacher votes (``votes_S.npz`` of rule train_teachers).
        labels: ``(n_queries,)`` true labels of the queries.
        num_classes: ``C``.
        sigma: noise of the noisy argmax (optional: adds its exact expected accuracy, Eq. (4)).

    Returns:
        ``{"mean_teacher_accuracy", "plurality_accuracy", "mean_top_vote_share",
        "frac_top_share_ge_half", "noisy_argmax_accuracy" (NaN without sigma), "num_teachers",
        "num_instantiations", "num_queries"}`` — means over instantiations and queries; the
        plurality takes the smallest class on ties.

    Raises:
        ValueError: bad shapes or labels out of range.
    """
    v = np.asarray(votes_S, dtype=np.int64)
    y = np.asarray(labels, dtype=np.int64).reshape(-1)
    if v.ndim != 3 or v.shape[2] != y.size:
        raise ValueError(f"votes_S must be (N_g, k, {y.size}) for {y.size} labels, got {v.shape}")
    c = int(num_classes)
    if y.size and (y.min() < 0 or y.max() >= c or v.min() < 0 or v.max() >= c):
        raise ValueError(f"votes and labels must lie in [0, {c})")
    ng, k, nq = v.shape
    hist = np.zeros((ng, nq, c), dtype=np.int64)
    for g in range(ng):
        for j in range(nq):
            hist[g, j] = np.bincount(v[g, :, j], minlength=c)
    top = hist.max(axis=2) / k
    noisy = np.nan
    if sigma is not None:
        from ...noisy_argmax import class_probabilities

        probs = class_probabilities(hist.reshape(-1, c).astype(np.float64), float(sigma)).reshape(ng, nq, c)
        noisy = float(np.take_along_axis(probs, np.broadcast_to(y[None, :, None], (ng, nq, 1)), axis=2).mean())
    return {
        "mean_teacher_accuracy": float((v == y[None, None, :]).mean()),
        "plurality_accuracy": float((hist.argmax(axis=2) == y[None, :]).mean()),
        "mean_top_vote_share": float(top.mean()),
        "frac_top_share_ge_half": float((top >= 0.5).mean()),
        "noisy_argmax_accuracy": noisy,
        "num_teachers": int(k),
        "num_instantiations": int(ng),
        "num_queries": int(nq),
    }


def teacher_rows(properties: dict, algo: str, models: dict | None = None, regime: TeacherRegime = TEACHER_REGIME) -> pd.DataFrame:
    """One findings row per dataset: the stand-in teachers' properties beside the paper's (issue 16 §3).

    The paper states no teacher accuracy or consensus for PATE / CaPC (§5.1–5.2, App. D.1), so
    the paper's column is empty ("paper: not stated") and ``workflow/data/paper_numbers.csv``
    has no row for them. ``holds`` is the regime check (:data:`TEACHER_REGIME`, issue #30's bar):
    mean teacher accuracy ≥ 0.75, mean top-vote share ≥ 0.6 and plurality accuracy ≥ mean
    teacher accuracy; the note states the bar and, when the stand-in is out of it, what it misses.

    Args:
        properties: ``{dataset: teacher_properties(...)}``.
        algo: written in the rows.
        models: ``{dataset: teacher model name}`` for the note.
        regime: the bar (default :data:`TEACHER_REGIME`).

    Returns:
        Columns :data:`FINDINGS_COLUMNS`.
    """
    rows = []
    for ds in sorted(properties):
        p = properties[ds]
        missed = regime.misses(p)
        inside = not missed
        values = "; ".join(f"{n}={p[n]:.4g}" for n in ("mean_teacher_accuracy", "plurality_accuracy", "noisy_argmax_accuracy",
                                                        "mean_top_vote_share", "frac_top_share_ge_half"))
        model = (models or {}).get(ds, "")
        note = (f"stand-in: {model + ' ' if model else ''}teachers, k = {p['num_teachers']}, N_g = {p['num_instantiations']}, "
                f"{p['num_queries']} queries; paper: not stated (§5.1–5.2, App. D.1 give only LeNet-5 / WRN-16-4 teachers, k = 250 / 200; "
                f"no paper_numbers.csv row). Regime: {regime.describe()} — "
                + ("in regime." if inside else "OUT of the regime the paper's consensus argument (§5.4) relies on ("
                   + "; ".join(missed) + "): read its orderings with care."))
        rows.append({"dataset": ds, "algo": algo, "finding": "stand-in teachers (accuracy, consensus)", "adversary": "", "case": "",
                     "values": values, "holds": bool(inside), "at_floor": False, "note": note})
    return pd.DataFrame(rows, columns=list(FINDINGS_COLUMNS))


#: The share of canary-holding teachers that must vote their canary's label on its query for the
#: stand-ins to behave like the paper's teachers, which fit their 240 training images
#: (issue #34 §1's bar; paper: not stated).
POISON_SUCCESS_BAR = 0.9


def _rate_name(adversary: str) -> str:
    return "poison_success_rate" if adversary.startswith("pois") else "canary_label_rate"


def canary_rows(findings: pd.DataFrame, rates: Mapping[str, Mapping[str, Mapping]], algo: str, models: Mapping[str, str] | None = None,
                bar: float = POISON_SUCCESS_BAR) -> pd.DataFrame:
    """Do the canary-holding teachers learn their canary? (issue 34 §1) — rows for the findings table.

    Pois-AdvQ leaks more than Nat-AdvQ in the paper's PATE because "the inclusion of an
    adversarial (mislabelled) point is more likely to change the vote of any teacher than a
    natural point" (Chadha et al. 2024, §5.4). That needs teachers that fit their poison, as the
    paper's LeNet-5 / WRN-16-4 do. Per dataset and adversary one row ``canary teachers learn
    their canary`` with ``poison_success_rate`` (the poisoning adversaries) or ``canary_label_rate`` (Nat-AdvQ),
    ``twin_label_rate`` and ``flip_rate`` (:func:`ppaudit.adversaries.canary_vote_rates`);
    ``holds`` when the rate is at least ``bar``. The ``pois-advq>=nat-advq`` rows of
    ``findings`` get the two adversaries' rates and per-candidate flip rates in their note: a
    poison that is learned but whose twin already votes its label changes no vote.

    Args:
        findings: rows of :func:`findings_rows` (not modified; a copy is returned).
        rates: ``{dataset: {adversary: canary_vote_rates(...)}}``.
        algo: written in the rows.
        models: ``{dataset: teacher model name}`` for the note.
        bar: the least rate that holds (default :data:`POISON_SUCCESS_BAR`).

    Returns:
        ``findings`` with the notes extended, then the new rows; columns :data:`FINDINGS_COLUMNS`.

    Raises:
        ValueError: ``bar`` outside ``(0, 1]``.
    """
    if not 0.0 < float(bar) <= 1.0:
        raise ValueError(f"bar must lie in (0, 1], got {bar}")
    out = findings.copy()

    def text(r: Mapping, adv: str) -> str:
        return (f"{_rate_name(adv)}={r['canary_label_rate']:.4g}; twin_label_rate={r['twin_label_rate']:.4g}; "
                f"flip_rate={r['flip_rate']:.4g}")

    rows = []
    for ds in sorted(rates):
        model = (models or {}).get(ds, "")
        for adv in sorted(rates[ds]):
            r = rates[ds][adv]
            ok = bool(r["canary_label_rate"] >= bar)
            note = (f"stand-in: {model + ' ' if model else ''}teachers; over {r['num_pairs']} (candidate, instantiation) pairs of the "
                    f"canary-holding teacher: share voting the canary's label on its query, share whose canary-free twin already votes it, "
                    f"share whose vote differs from the twin's (per candidate {[round(f, 3) for f in r['per_candidate_flip_rate']]}). "
                    f"Bar: ≥ {bar:g} (issue #34 §1; paper: not stated, its LeNet-5 / WRN-16-4 teachers fit their data) — "
                    + ("the teachers learn their canary." if ok else "the teachers do NOT learn their canary: the audits of this "
                       "adversary measure a weaker canary than the paper's."))
            rows.append({"dataset": ds, "algo": algo, "finding": "canary teachers learn their canary", "adversary": adv, "case": "",
                         "values": text(r, adv), "holds": ok, "at_floor": False, "note": note})
        sel = (out["dataset"] == ds) & (out["finding"] == "pois-advq>=nat-advq")
        if sel.any() and {"nat-advq", "pois-advq"} <= set(rates[ds]):
            extra = "; ".join(f"{adv}: {text(rates[ds][adv], adv)} (per candidate flip {[round(f, 3) for f in rates[ds][adv]['per_candidate_flip_rate']]})"
                              for adv in ("pois-advq", "nat-advq"))
            learned = all(rates[ds][adv]["canary_label_rate"] >= bar for adv in ("pois-advq", "nat-advq"))
            for i in out.index[sel]:
                if not learned:
                    why = f" — a rate below {bar:g}: the stand-in teachers do not fit their canary as the paper's do"
                elif out.at[i, "holds"]:
                    why = f" — both canaries are learned (rate ≥ {bar:g})"
                else:
                    why = (f" — both canaries are learned (rate ≥ {bar:g}): the ordering is set by how often the canary changes the "
                           "teacher's vote (its twin may already vote the canary's label) and by where the changed vote falls in the "
                           "histogram, not by teachers that fail to fit their poison")
                out.at[i, "note"] = f"{out.at[i, 'note']}. Canary teachers: {extra}{why}."
    return pd.concat([out, pd.DataFrame(rows, columns=list(FINDINGS_COLUMNS))], ignore_index=True)
