"""Audits, tables and findings of the label-DP targets (observational paper Tables 1, 2, 4–7, Figs. 1–5; Malek et al. 2021 Tables 5–6).

The functions here turn the saved predictions of the reference and target models into
audit rows, and the audit rows into the papers' tables with the paper's reported numbers
in a ``paper`` column.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..attacks.memorization import memorization_epsilon
from ..attacks.observational import audit_label_inference, audit_membership, calibrated_mia_scores, rmia_offline_scores

__all__ = ["PAPER", "ALGO_LABELS", "audit_model", "build_table", "memorization_row", "findings"]

ALGO_LABELS = {
    "lp_1st": "LP-1ST",
    "lp_1st_prior": "LP-1ST (in-domain prior)",
    "lp_1st_ood": "LP-1ST (out-of-domain prior)",
    "lp_2st": "LP-2ST",
    "alibi": "ALIBI",
    "agibi": "AGIBI",
    "pate": "PATE (plain student; PATE-FM stand-in)",
}

# The papers' reported numbers: {table: {(paper row, ε): value}} with the paper's row names mapped to our algos.
_T1 = {"lp_1st_prior": ("2.13 ± .22", "2.02 ± .33", "0.43 ± .05"), "lp_1st_ood": ("2.26 ± .22", "1.86 ± .25", "0.90 ± .07"),
       "pate": ("2.42 ± .32", "2.22 ± .24", "0.79 ± .09"), "alibi": ("2.53 ± .33", "2.18 ± .27", "0.67 ± .07")}  # fmt: skip
_T6 = {"lp_1st_prior": ("1.98 ± 0.21", "1.99 ± 0.32", "0.41 ± 0.03"), "lp_1st_ood": ("2.08 ± 0.21", "1.78 ± 0.23", "0.81 ± 0.05"),
       "pate": ("2.26 ± 0.31", "2.16 ± 0.22", "0.74 ± 0.08"), "alibi": ("2.43 ± 0.31", "2.1 ± 0.26", "0.65 ± 0.05")}  # fmt: skip
_T4 = {"lp_1st_prior": ("91.3", "91.07", "60.4"), "lp_1st_ood": ("92.1", "91.5", "87.9"), "pate": ("92.5", "92.3", "91.3"), "alibi": ("90.1", "87.1", "66.9")}
_E_IMG = ("inf", "10", "1")
_E_TAB = ("inf", "8", "4", "2", "1", "0.1")
_T2 = {"lp_1st": ("1.37 ± .14", "1.29 ± .12", "1.22 ± .17", "0.59 ± .05", "0.34 ± .02", "0.06 ± .01"),
       "lp_1st_prior": ("1.47 ± .22", "1.37 ± .10", "1.28 ± .21", "—", "—", "—"),
       "lp_2st": ("1.52 ± .14", "1.46 ± .11", "1.24 ± .15", "0.75 ± .05", "0.61 ± .07", "0.06 ± .01"),
       "pate": ("1.60 ± .15", "1.48 ± .14", "1.28 ± .12", "0.71 ± .07", "0.59 ± .05", "0.06 ± .01")}  # fmt: skip
_T5 = {"lp_1st": ("0.130", "0.130", "0.136", "0.206", "0.362", "0.653"), "lp_1st_prior": ("0.130", "0.130", "0.136", "-", "-", "-"),
       "lp_2st": ("0.130", "0.130", "0.123", "0.207", "0.342", "0.527"), "pate": ("0.130", "0.151", "0.156", "0.188", "0.255", "0.680")}  # fmt: skip
_T7 = {"lia": "2.34 ± 0.25", "calibrated_mia": "0.72 ± 0.15", "rmia": "2.52 ± 0.32"}


def _paper_lookup(table: dict, eps_keys, algo: str, eps: str) -> str:
    row = table.get(algo)
    if row is None:
        return ""
    e = "inf" if math.isinf(float(eps)) else f"{float(eps):g}"
    return row[eps_keys.index(e)] if e in eps_keys else ""


PAPER = {
    "obs_table1": lambda a, e: _paper_lookup(_T1, _E_IMG, a, e),
    "obs_table6": lambda a, e: _paper_lookup(_T6, _E_IMG, a, e),
    "obs_table4": lambda a, e: _paper_lookup(_T4, _E_IMG, a, e),
    "obs_table2": lambda a, e: _paper_lookup(_T2, _E_TAB, a, e),
    "obs_table5": lambda a, e: _paper_lookup(_T5, _E_TAB, a, e),
}


def audit_model(y_target, target_probs, reference_probs, y_test, test_probs, test_reference_probs, settings: dict, rng: np.random.Generator) -> pd.DataFrame:
    """Observational LIA + calibrated-loss MIA + offline RMIA on one target model; one row per attack."""
    reps = int(settings["repetitions"])
    common = dict(fixed_fraction=float(settings["fixed_fraction"]), delta=float(settings["delta"]), confidence=float(settings["confidence"]))
    out = {}
    out["lia"] = audit_label_inference(y_target, target_probs, reference_probs, reps, rng, t=float(settings["t"]), **common)
    m = min(len(y_target), len(y_test))
    cm = calibrated_mia_scores(target_probs, reference_probs, y_target)
    cn = calibrated_mia_scores(test_probs, test_reference_probs, y_test)
    out["calibrated_mia"] = audit_membership(cm, cn, reps, rng, center=0.0, num_canaries=m, **common)
    # RMIA population: members and non-members pooled (no membership information is used).
    pop_t = np.concatenate([target_probs, test_probs])
    pop_r = np.concatenate([reference_probs, test_reference_probs])
    pop_y = np.concatenate([y_target, y_test])
    kw = dict(a=float(settings["rmia_a"]), population_target_probs=pop_t, population_reference_probs=pop_r, population_labels=pop_y)
    rm = rmia_offline_scores(target_probs, reference_probs, y_target, **kw)
    rn = rmia_offline_scores(test_probs, test_reference_probs, y_test, **kw)
    out["rmia"] = audit_membership(rm, rn, reps, rng, center=0.5, num_canaries=m, **common)
    rows = []
    for attack, a in out.items():
        rows.append(
            dict(
                attack=attack,
                num_canaries=int(a.num_samples),
                repetitions=reps,
                epsilon_sweep_mean=a.epsilon_sweep_mean,
                epsilon_sweep_std=a.epsilon_sweep_std,
                epsilon_fixed_mean=a.epsilon_fixed_mean,
                epsilon_fixed_std=a.epsilon_fixed_std,
            )
        )
    return pd.DataFrame(rows)


def _fmt(mean, std, digits=2):
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def build_table(table: str, audits: pd.DataFrame) -> pd.DataFrame:
    """One paper table from the stacked audit rows (columns dataset, algo, epsilon, attack, … , test_accuracy, test_log_loss)."""
    a = audits.copy()
    a["epsilon_order"] = a["epsilon"].map(lambda e: -math.inf if math.isinf(float(e)) else -float(e))
    a = a.sort_values(["algo", "epsilon_order"])
    rows = []
    if table in ("obs_table1", "obs_table2", "obs_table6"):
        col = "fixed" if table == "obs_table6" else "sweep"
        for _, r in a[a["attack"] == "lia"].iterrows():
            rows.append(
                dict(
                    dataset=r["dataset"], algorithm=ALGO_LABELS[r["algo"]], algo=r["algo"], epsilon_theory=float(r["epsilon"]),
                    claimed_epsilon=float(r["claimed_epsilon"]), epsilon_mean=r[f"epsilon_{col}_mean"], epsilon_std=r[f"epsilon_{col}_std"],
                    ours=_fmt(r[f"epsilon_{col}_mean"], r[f"epsilon_{col}_std"]), paper=PAPER[table](r["algo"], r["epsilon"]),
                    repetitions=int(r["repetitions"]), num_canaries=int(r["num_canaries"]),
                )
            )  # fmt: skip
    elif table in ("obs_table4", "obs_table5"):
        metric = "test_accuracy" if table == "obs_table4" else "test_log_loss"
        for _, r in a[a["attack"] == "lia"].iterrows():
            val = 100 * r[metric] if table == "obs_table4" else r[metric]
            rows.append(
                dict(dataset=r["dataset"], algorithm=ALGO_LABELS[r["algo"]], algo=r["algo"], epsilon_theory=float(r["epsilon"]),
                     claimed_epsilon=float(r["claimed_epsilon"]), metric=("test accuracy (%)" if table == "obs_table4" else "test log-loss"),
                     ours=round(float(val), 3), paper=PAPER[table](r["algo"], r["epsilon"]))
            )  # fmt: skip
    elif table == "obs_table7":
        for _, r in a.iterrows():
            rows.append(
                dict(dataset=r["dataset"], algorithm=ALGO_LABELS[r["algo"]], epsilon_theory=float(r["epsilon"]), attack=r["attack"],
                     epsilon_mean=r["epsilon_sweep_mean"], epsilon_std=r["epsilon_sweep_std"], ours=_fmt(r["epsilon_sweep_mean"], r["epsilon_sweep_std"]),
                     paper=_T7.get(r["attack"], ""), test_accuracy=r["test_accuracy"], num_canaries=int(r["num_canaries"]))
            )  # fmt: skip
    else:
        raise ValueError(f"unknown table {table!r}")
    return pd.DataFrame(rows)


MALEK_T5 = {("high", "1000"): "2.9–4.0", ("high", "10x100"): "2.7–3.6", ("medium", "1000"): "1.0–2.2", ("medium", "10x100"): "0.2–2.5",
            ("low", "1000"): "0.0–2.2", ("low", "10x100"): "0.0–1.6"}  # fmt: skip
MALEK_T6 = {("high", "alibi"): ("94.0%", "8.0", "2.9–4.0"), ("high", "agibi"): ("93.5%", "19", "2.1–3.2"),
            ("medium", "alibi"): ("84.2%", "2.1", "1.0–2.2"), ("medium", "agibi"): ("84.3%", "7.7", "0.7–1.4"),
            ("low", "alibi"): ("71.0%", "1.0", "0.0–2.2"), ("low", "agibi"): ("71.3%", "3.7", "0.0–2.0")}  # fmt: skip


def memorization_row(confidences, canary_labels, original_labels, confidence: float = 0.95, alternative_labels=None) -> dict:
    """ε_m intervals of concatenated canaries: the paper's normal interval at the best τ
    (columns ``epsilon_m_low`` … ``num_correct``, as in Malek et al.'s tables) and the exact
    Clopper–Pearson interval corrected for the choice of τ (``cp_`` columns), which compares
    each canary's label with its Game-3 alternative ``y''_i`` (``alternative_labels``)."""
    r = memorization_epsilon(confidences, canary_labels, original_labels, "normal", confidence=confidence)
    cp = memorization_epsilon(confidences, canary_labels, original_labels, "clopper_pearson", confidence=confidence, alternative_labels=alternative_labels)
    return dict(
        epsilon_m_low=r.epsilon_low, epsilon_m_high=r.epsilon_high, cgr=r.cgr, threshold=r.threshold, num_guesses=r.num_guesses, num_correct=r.num_correct,
        cp_epsilon_m_low=cp.epsilon_low, cp_epsilon_m_high=cp.epsilon_high, cp_cgr=cp.cgr, cp_threshold=cp.threshold, cp_num_guesses=cp.num_guesses,
        cp_num_correct=cp.num_correct,
    )


def findings(rr_summary: pd.DataFrame, tau_summary: pd.DataFrame, image_audits: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """The three claims of the observational paper, as numbers + a pass/fail boolean."""
    rows = []
    tol = float(settings["tight_tolerance"])
    # The issue states the claim with 1 % guesses; the paper's Fig. 2 (§6.6) makes it with
    # 0.1 % guesses and App. C adds that 1 % is tight at low ε but "not as tight in the
    # medium epsilon regime [1, 4]". Both fractions are checked (when computed).
    for frac in (0.01, 0.001):
        s = rr_summary[np.isclose(rr_summary["guess_fraction"], frac) & (rr_summary["counterfactual"] == "true_posterior")]
        s = s[(s["epsilon_theory"] >= 1) & (s["epsilon_theory"] <= 4)]
        if frac == 0.001 and s.empty:
            continue
        ratio = (s["epsilon_mean"] / s["epsilon_theory"]).to_numpy()
        rows.append(
            dict(
                claim=f"RR audit tight for eps_theory in [1, 4] with {100 * frac:g}% guesses (true-posterior counterfactuals)",
                metric="min over k and eps of eps_emp_mean / eps_theory",
                value=float(ratio.min()) if ratio.size else float("nan"),
                threshold=f">= {1 - tol:g}",
                holds=bool(ratio.size and ratio.min() >= 1 - tol),
                detail="; ".join(f"k={int(r.num_classes)} eps={r.epsilon_theory:g}: {r.epsilon_mean:.2f}" for r in s.itertuples()),
            )
        )
    mono = []
    for (eps, fr), g in tau_summary.groupby(["epsilon_theory", "guess_fraction"]):
        g = g.sort_values("tau")
        mono.append(float(g["epsilon_mean"].iloc[0] - g["epsilon_mean"].iloc[-1]))
    rows.append(
        dict(
            claim="larger tau lowers the measured eps (tau-shift, binary RR)",
            metric="min over (eps, guess fraction) of eps_emp(smallest tau) - eps_emp(largest tau)",
            value=float(min(mono)) if mono else float("nan"),
            threshold="> 0",
            holds=bool(mono and min(mono) > 0),
            detail=f"{len(mono)} settings",
        )
    )
    lia = image_audits[image_audits["attack"] == "lia"].set_index(["algo", "epsilon"])["epsilon_sweep_mean"]
    mia = image_audits[image_audits["attack"] == "calibrated_mia"].set_index(["algo", "epsilon"])["epsilon_sweep_mean"]
    diff = (lia - mia).abs()
    tol_mia = float(settings["mia_tolerance"])
    rows.append(
        dict(
            claim="observational LIA ~ calibration MIA (image, every mechanism and eps)",
            metric="max |eps_LIA - eps_MIA| (sweep means)",
            value=float(diff.max()) if len(diff) else float("nan"),
            threshold=f"<= {tol_mia:g}",
            holds=bool(len(diff) and diff.max() <= tol_mia),
            detail="; ".join(f"{a} eps={e}: LIA {lia[(a, e)]:.2f} MIA {mia[(a, e)]:.2f}" for a, e in diff.index),
        )
    )
    return pd.DataFrame(rows)
