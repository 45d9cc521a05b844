"""Audits, tables and findings of the label-DP targets (observational paper Tables 1, 2, 4–7, Figs. 1–5; Malek et al. 2021 Tables 5–6).

The functions here turn the saved predictions of the reference and target models into
audit rows, and the audit rows into the papers' tables with the paper's reported numbers
in a ``paper`` column — read from ``workflow/data/paper_numbers.csv``, the one place the
papers' numbers live (:func:`paper_strings`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...attacks.memorization import METHODS, memorization_epsilon
from ...attacks.observational import (
    audit_label_inference,
    audit_membership,
    calibrated_mia_scores,
    rmia_offline_audit_scores,
)

__all__ = [
    "ALGO_LABELS",
    "algo_label",
    "audit_model",
    "audit_target_models",
    "build_table",
    "findings",
    "fit_gaps",
    "memorization_row",
    "memorization_rows",
    "paper_strings",
    "read_paper_number_strings",
]

#: Display name of each label-DP algorithm in the tables (as the papers write them).
ALGO_LABELS = {
    "lp_1st": "LP-1ST",
    "lp_1st_nc": "LP-1ST (noise correction)",
    "lp_1st_prior": "LP-1ST (in-domain prior)",
    "lp_1st_ood": "LP-1ST (out-of-domain prior)",
    "lp_2st": "LP-2ST",
    "alibi": "ALIBI",
    "agibi": "AGIBI",
    "pate": "PATE-FM (FixMatch student, short schedule)",
}


def algo_label(algo: str, dataset: str | None = None, pate_student: str | None = None) -> str:
    """Row label of a mechanism; PATE is PATE-FM when its student was FixMatch, else "PATE (plain student)"."""
    if algo == "pate":
        student = pate_student if isinstance(pate_student, str) and pate_student else ("plain" if dataset == "tabular" else "fixmatch")
        return ALGO_LABELS["pate"] if student == "fixmatch" else "PATE (plain supervised student; CatBoost)" if dataset == "tabular" else "PATE (plain supervised student)"
    return ALGO_LABELS[algo]

def read_paper_number_strings(path) -> pd.DataFrame:
    """``workflow/data/paper_numbers.csv`` with every cell as written (the one place the papers' numbers live; issue 12)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def paper_strings(table: pd.DataFrame, numbers: pd.DataFrame | None, result_file: str, column: str) -> pd.Series:
    """The paper's number for each row of ``table``, as text (``"v ± s"`` or ``"v"``; ``""`` where the paper has none).

    Every row of ``numbers`` (:func:`read_paper_number_strings`) whose ``result_file`` is
    ``result_file`` and whose ``column`` is ``column`` selects its rows of ``table`` with its
    ``query`` — the same lookup :mod:`ppaudit.experiments.paper_comparison` performs on the
    written table.

    Raises:
        ValueError: when a listed query fails on ``table`` (naming the id).
    """
    out = pd.Series("", index=table.index, dtype=object)
    if numbers is None or table.empty:
        return out
    sel = numbers[(numbers["result_file"] == result_file) & (numbers["column"] == column)]
    for r in sel.itertuples():
        try:
            idx = table.query(r.query).index
        except Exception as exc:  # noqa: BLE001 - report which curated row is broken
            raise ValueError(f"paper number {r.id!r}: query {r.query!r} failed on {result_file}: {exc}") from exc
        out.loc[idx] = f"{r.paper_value} ± {r.paper_std}" if r.paper_std else r.paper_value
    return out


def audit_model(y_target, target_probs, reference_probs, y_test, test_probs, test_reference_probs, settings: dict, rng: np.random.Generator) -> pd.DataFrame:
    """Observational LIA + calibrated-loss MIA + offline RMIA on one target model; one row per attack.

    Every attack uses the same number of canaries ``m = min(|target half|, |test set|)`` in
    every repetition (§6.2: "the number of canaries is set to the size of the test sets";
    the LIA draws a fresh random subset of the target half each repetition). The RMIA
    population ``z`` is the test set (non-members only, leave-one-out for non-member
    candidates; :func:`ppaudit.attacks.observational.rmia_offline_audit_scores`).
    """
    reps = int(settings["repetitions"])
    common = dict(fixed_fraction=float(settings["fixed_fraction"]), delta=float(settings["delta"]), confidence=float(settings["confidence"]))
    out = {}
    m = min(len(y_target), len(y_test))
    out["lia"] = audit_label_inference(y_target, target_probs, reference_probs, reps, rng, t=float(settings["t"]), num_canaries=m, **common)
    cm = calibrated_mia_scores(target_probs, reference_probs, y_target)
    cn = calibrated_mia_scores(test_probs, test_reference_probs, y_test)
    out["calibrated_mia"] = audit_membership(cm, cn, reps, rng, center=0.0, num_canaries=m, **common)
    rm, rn, _ = rmia_offline_audit_scores(target_probs, reference_probs, y_target, test_probs, test_reference_probs, y_test, a=float(settings["rmia_a"]))
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


#: Mechanism extras of a target model's metrics copied into its audit rows.
AUDIT_EXTRA_KEYS = ("pate_student", "alibi_prior", "agibi_calibration", "pate_calibration", "epsilon_data_independent", "pate_sigma", "pate_answered", "pate_teacher_accuracy",
                    "pate_plurality_accuracy", "pate_label_accuracy", "pate_consensus", "pate_student_smoothing", "pate_query_share",
                    "pate_own_teacher_agreement", "pate_other_teacher_agreement", "pate_pivotal_share")


def stand_in_measure(row) -> str:
    """The measured numbers that say what a target model learned (ours): its test accuracy, mean top-class
    probability (confidence; above the accuracy = overconfident) and log-loss, the non-private ``M′``'s
    test log-loss and the base-rate entropy, how much better ``M`` fits its canaries than the test set
    (:func:`fit_gaps`: about 0 where the audit has nothing to find) and,
    for PATE, the teachers' mean accuracy on the queries, the noise-free plurality's accuracy, the share of
    released answers that are right, the answered count and σ (:func:`ppaudit.experiments.labeldp_release.pate_label_quality`),
    how far a canary's label reaches the student (:func:`ppaudit.experiments.labeldp_release.pate_label_reach`)
    and the student's label smoothing.

    ``paper_comparison`` appends it to a row's note when ours and the paper's value differ by more than 2×
    (:func:`ppaudit.experiments.paper_comparison.compare_with_paper`). Missing entries (bundles written
    before these keys existed) are left out.
    """
    def num(key):
        v = pd.to_numeric(row.get(key, ""), errors="coerce")
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

    parts = []
    acc, ll, conf = num("test_accuracy"), num("test_log_loss"), num("test_confidence")
    if acc is not None:
        parts.append(f"test accuracy {100 * acc:.1f} %" + (f" at mean confidence {100 * conf:.1f} %" if conf is not None else ""))
    if ll is not None:
        parts.append(f"test log-loss {ll:.3f}")
    if row.get("algo") == "pate":
        tacc, pacc, lacc = num("pate_teacher_accuracy"), num("pate_plurality_accuracy"), num("pate_label_accuracy")
        if tacc is not None:
            parts.append(f"teachers {100 * tacc:.0f} % right on the queries (mean), noise-free plurality {100 * pacc:.0f} %")
        if lacc is not None:
            sig, nans = num("pate_sigma"), num("pate_answered")
            parts.append(f"released answers {100 * lacc:.0f} % right ({int(nans)} answered, σ = {sig:.3g})" if sig is not None and nans is not None
                         else f"released answers {100 * lacc:.0f} % right")  # fmt: skip
        cal, edi = row.get("pate_calibration"), num("epsilon_data_independent")
        eps = pd.to_numeric(row.get("epsilon", math.nan), errors="coerce")
        if cal == "data_dependent" and edi is not None and not (isinstance(eps, float) and math.isinf(eps)):
            parts.append(f"σ calibrated to the data-dependent ε (paper; not a DP guarantee by itself), data-independent ε of the release {edi:.3g}")
        share, own, other, piv = num("pate_query_share"), num("pate_own_teacher_agreement"), num("pate_other_teacher_agreement"), num("pate_pivotal_share")
        if share is not None and own is not None:
            parts.append(f"a canary's label reaches the student most directly through its own query: {100 * share:.0f} % of canaries are queries, their own teacher "
                         f"votes their label on {100 * own:.0f} % (the other teachers {100 * other:.0f} %) and decides the noise-free plurality on "
                         f"{100 * piv:.1f} %")  # fmt: skip
        smooth = num("pate_student_smoothing")
        if smooth:
            parts.append(f"student fitted to the answers label-smoothed by a = {smooth:g}")
    ref_ll, base = num("reference_test_log_loss"), num("base_rate_entropy")
    if ref_ll is not None:
        parts.append(f"non-private M′ (true labels, reference half) test log-loss {ref_ll:.3f}" + (f" (ours {ll - ref_ll:+.3f} from it)" if ll is not None else "")
                     + (f", base-rate entropy {base:.3f}" if base is not None else ""))  # fmt: skip
    gap, ref_gap = num("memorisation_gap"), num("reference_memorisation_gap")
    if gap is not None:
        parts.append(f"M fits its canaries' labels better than test labels by {gap:+.3f} nats of log-loss"
                     + (f" (M′, which saw neither: {ref_gap:+.3f})" if ref_gap is not None else ""))  # fmt: skip
    return "; ".join(parts)


def audit_target_models(models, bundle: dict, reference: dict, dataset: str, settings: dict, seed: int) -> pd.DataFrame:
    """:func:`audit_model` on every target model of one dataset; the rows of all, in the order of ``models``.

    Model ``(algo, ε)`` is audited with the generator ``job_generator(seed, "labeldp_audit",
    dataset, algo, ε text)`` (its own: the rows of a model do not depend on the others) against
    the reference model ``M'`` (observational paper §6.2).

    Args:
        models: ``(algo, ε text)`` pairs.
        bundle: ``{model name: metrics and arrays}`` (:func:`ppaudit.experiments.labeldp_models.read_model_bundle`).
        reference: the reference model's ``target_probs`` and ``test_probs``.
        dataset: the dataset's name.
        settings: the audit settings of :func:`audit_model`.
        seed: the workflow seed.

    Returns:
        One row per (model, attack): ``dataset``, ``algo``, ``epsilon`` (∞ as ``inf``),
        :func:`audit_model`'s columns, ``claimed_epsilon``, ``test_accuracy``,
        ``test_log_loss``, ``test_confidence`` (mean top-class probability on the test set),
        :func:`fit_gaps`'s columns and the mechanism extras.

    Raises:
        ValueError: for a model missing from the bundle.
    """
    from ...rng import job_generator
    from .release import parse_epsilon
    from .models import model_name

    frames = []
    for algo, eps in models:
        name = model_name(algo, eps)
        if name not in bundle:
            raise ValueError(f"model {name!r} is not in the bundle, which holds {sorted(bundle)}")
        m = bundle[name]
        rng = job_generator(seed, "labeldp_audit", dataset, algo, eps)
        df = audit_model(m["y_target"], m["target_probs"], reference["target_probs"], m["y_test"], m["test_probs"], reference["test_probs"], settings, rng)
        df.insert(0, "epsilon", parse_epsilon(eps))
        df.insert(0, "algo", algo)
        df.insert(0, "dataset", dataset)
        df["claimed_epsilon"] = float(m["claimed_epsilon"])
        df["test_accuracy"] = m["test_accuracy"]
        df["test_log_loss"] = m["test_log_loss"]
        df["test_confidence"] = float(np.mean(np.max(m["test_probs"], axis=1)))  # beside the accuracy: over/under-confidence
        df = df.assign(**fit_gaps(m["y_target"], m["target_probs"], reference["target_probs"], m["y_test"], m["test_probs"], reference["test_probs"]))
        for key in AUDIT_EXTRA_KEYS:
            df[key] = m.get(key, "")
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def fit_gaps(y_target, target_probs, reference_probs, y_test, test_probs, test_reference_probs) -> dict:
    """What the observational label-inference attack can find, measured on the whole sets (ours).

    The attack (observational paper Alg. 2, §6.2) wins where the target model ``M`` fits a
    canary's label better than ``M′`` does; ``M`` can only do that for labels it depends on.
    Its ``memorisation_gap`` — log-loss on the test set minus log-loss on the target half (the
    canaries), both with the true labels — is about 0 for a model whose outputs do not depend on
    the canaries' labels; ``M′``'s gap (it saw neither set) is the control.

    Returns:
        ``canary_log_loss``, ``memorisation_gap``, ``reference_test_log_loss``,
        ``reference_memorisation_gap`` and ``base_rate_entropy`` (entropy in nats of the test
        labels' class shares: the log-loss of the constant predictor).
    """
    from .release import log_loss

    y_target, y_test = np.asarray(y_target), np.asarray(y_test)
    canary, test = log_loss(np.asarray(target_probs), y_target), log_loss(np.asarray(test_probs), y_test)
    ref_canary, ref_test = log_loss(np.asarray(reference_probs), y_target), log_loss(np.asarray(test_reference_probs), y_test)
    shares = np.bincount(y_test) / y_test.size
    shares = shares[shares > 0]
    return {
        "canary_log_loss": canary,
        "memorisation_gap": test - canary,
        "reference_test_log_loss": ref_test,
        "reference_memorisation_gap": ref_test - ref_canary,
        "base_rate_entropy": float(-np.sum(shares * np.log(shares))),
    }


#: The markdown note under a table with PATE rows calibrated by the paper's procedure.
PATE_DATA_DEPENDENT_NOTE = (
    "PATE rows with procedure `paper`: σ is calibrated so that the data-dependent ε (Papernot et al. 2018, GNMax data-dependent RDP; "
    "how Malek et al. 2021 state PATE-FM's ε) equals the ε of the column; it is a function of the private teacher votes and not a DP "
    "guarantee by itself. `claimed_epsilon_data_independent` is the sound (data-independent) ε of the same release."
)


def claim_procedure(row) -> str:
    """Whose calibration the row's claimed ε follows: ``paper`` or ``ours`` (PATE by ``pate_calibration``,
    :data:`ppaudit.experiments.labeldp_release.PATE_CALIBRATIONS`; AGIBI ``analytic`` is ours; the rest the papers')."""
    from .release import PATE_CALIBRATIONS

    if row.get("algo") == "pate":
        cal = row.get("pate_calibration")
        return PATE_CALIBRATIONS.get(cal if isinstance(cal, str) and cal else "data_independent", "ours")
    return "ours" if row.get("algo") == "agibi" and row.get("agibi_calibration") == "analytic" else "paper"


def data_independent_claim(row) -> float:
    """The sound data-independent ε of a PATE release (NaN for the other mechanisms, whose claim is data-independent)."""
    v = pd.to_numeric(row.get("epsilon_data_independent", ""), errors="coerce") if row.get("algo") == "pate" else float("nan")
    return float("inf") if row.get("algo") == "pate" and math.isinf(float(row["epsilon"])) else float(v)


def build_table(table: str, audits: pd.DataFrame, paper_numbers: pd.DataFrame | None = None) -> pd.DataFrame:
    """One paper table from the stacked audit rows (columns dataset, algo, epsilon, attack, … , test_accuracy, test_log_loss).

    ``paper_numbers`` (:func:`read_paper_number_strings`) fills the ``paper`` column from the
    rows of ``workflow/data/paper_numbers.csv`` that point at this table.
    """
    a = audits.copy()
    a["epsilon_order"] = a["epsilon"].map(lambda e: -math.inf if math.isinf(float(e)) else -float(e))
    a = a.sort_values(["algo", "epsilon_order"])
    rows = []
    if table in ("obs_table1", "obs_table2", "obs_table6"):
        col = "fixed" if table == "obs_table6" else "sweep"
        for _, r in a[a["attack"] == "lia"].iterrows():
            rows.append(
                dict(
                    dataset=r["dataset"], algorithm=algo_label(r["algo"], r["dataset"], r.get("pate_student")), algo=r["algo"], epsilon_theory=float(r["epsilon"]),
                    claimed_epsilon=float(r["claimed_epsilon"]), procedure=claim_procedure(r), claimed_epsilon_data_independent=data_independent_claim(r),
                    epsilon_mean=r[f"epsilon_{col}_mean"], epsilon_std=r[f"epsilon_{col}_std"],
                    ours=_fmt(r[f"epsilon_{col}_mean"], r[f"epsilon_{col}_std"]),
                    repetitions=int(r["repetitions"]), num_canaries=int(r["num_canaries"]), stand_in_measure=stand_in_measure(r),
                )
            )  # fmt: skip
    elif table in ("obs_table4", "obs_table5"):
        metric = "test_accuracy" if table == "obs_table4" else "test_log_loss"
        for _, r in a[a["attack"] == "lia"].iterrows():
            val = 100 * r[metric] if table == "obs_table4" else r[metric]
            rows.append(
                dict(dataset=r["dataset"], algorithm=algo_label(r["algo"], r["dataset"], r.get("pate_student")), algo=r["algo"], epsilon_theory=float(r["epsilon"]),
                     claimed_epsilon=float(r["claimed_epsilon"]), procedure=claim_procedure(r), claimed_epsilon_data_independent=data_independent_claim(r),
                     metric=("test accuracy (%)" if table == "obs_table4" else "test log-loss"),
                     ours=round(float(val), 3), stand_in_measure=stand_in_measure(r))
            )  # fmt: skip
    elif table == "obs_table7":
        for _, r in a.iterrows():
            rows.append(
                dict(dataset=r["dataset"], algorithm=algo_label(r["algo"], r["dataset"], r.get("pate_student")), epsilon_theory=float(r["epsilon"]), attack=r["attack"],
                     epsilon_mean=r["epsilon_sweep_mean"], epsilon_std=r["epsilon_sweep_std"], ours=_fmt(r["epsilon_sweep_mean"], r["epsilon_sweep_std"]),
                     test_accuracy=r["test_accuracy"], num_canaries=int(r["num_canaries"]))
            )  # fmt: skip
    else:
        raise ValueError(f"unknown table {table!r}")
    out = pd.DataFrame(rows)
    col = {"obs_table4": "ours", "obs_table5": "ours"}.get(table, "epsilon_mean")
    out["paper"] = paper_strings(out, paper_numbers, f"results/tables/labeldp/{table}.csv", col)
    return out


def memorization_rows(confidences, canary_labels, original_labels, confidence: float = 0.95, alternative_labels=None) -> list[dict]:
    """ε_m intervals of concatenated canaries by the three estimators of :func:`ppaudit.attacks.memorization.memorization_epsilon`.

    One dict per estimator: ``estimator`` (``paper`` — the authors' code, their τ grid,
    guessing canaries as the sample size, the all-correct correction; ``ours_normal`` —
    Kish effective size, 1 % τ grid; ``ours_cp`` — Clopper–Pearson against each canary's
    Game-3 alternative ``y''_i`` (``alternative_labels``), Bonferroni over τ), ``procedure``
    (paper / ours), ``epsilon_m_low``, ``epsilon_m_high``, ``interval`` (text), ``cgr``,
    ``threshold``, ``num_guesses``, ``num_correct``, ``sample_size``.
    """
    rows = []
    for est in METHODS:
        kw = {"alternative_labels": alternative_labels} if est == "ours_cp" else {}
        r = memorization_epsilon(confidences, canary_labels, original_labels, est, confidence=confidence, **kw)
        rows.append(dict(estimator=est, procedure=r.procedure, epsilon_m_low=r.epsilon_low, epsilon_m_high=r.epsilon_high,
                         interval=f"{r.epsilon_low:.1f}–{r.epsilon_high:.1f}", cgr=r.cgr, threshold=r.threshold, num_guesses=r.num_guesses,
                         num_correct=r.num_correct, sample_size=r.sample_size))  # fmt: skip
    return rows


def memorization_row(confidences, canary_labels, original_labels, confidence: float = 0.95, alternative_labels=None) -> dict:
    """:func:`memorization_rows` flattened into one dict with ``{estimator}_`` prefixes."""
    out = {}
    for r in memorization_rows(confidences, canary_labels, original_labels, confidence, alternative_labels):
        est = r.pop("estimator")
        out.update({f"{est}_{k}": v for k, v in r.items()})
    return out


def findings(rr_summary: pd.DataFrame, tau_summary: pd.DataFrame, image_audits: pd.DataFrame, settings: dict, malek: pd.DataFrame | None = None,
             paper_numbers: pd.DataFrame | None = None) -> pd.DataFrame:  # fmt: skip
    """The three claims of the observational paper, as numbers + a pass/fail boolean, plus the stand-ins' regime.

    Every row has ``procedure``: the claims are tested with the paper's procedure (LIA sweep,
    Theorem 5); the Malek rows report the ``paper`` estimator and ``ours_cp``. Regime rows
    compare the property each stand-in's argument relies on with the paper's value: the test
    accuracy of the image label-DP models (Obs. Table 4) and, with ``malek`` (the Malek
    Table 6 CSV), the memorisation rate of the mislabelled canaries and the test accuracy of
    the memorization-game MLP (Malek Table 6 accuracies). ``paper_numbers``:
    :func:`read_paper_number_strings` (Obs. Table 4's accuracies).
    """
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
    for r in rows:
        r["procedure"] = "paper"
    # Regime of the stand-ins: the property each argument relies on, next to the paper's value.
    tol_acc = float(settings.get("accuracy_tolerance", 10.0))
    acc = image_audits[image_audits["attack"] == "lia"]
    gaps, det = [], []
    t4 = build_table("obs_table4", image_audits, paper_numbers) if len(acc) else pd.DataFrame()
    t4_paper = dict(zip(zip(t4.get("algo", []), t4.get("epsilon_theory", [])), t4.get("paper", [])))
    for r in acc.itertuples():
        pv = t4_paper.get((r.algo, float(r.epsilon)), "")
        if pv:
            gaps.append(100 * float(r.test_accuracy) - float(pv))
            det.append(f"{r.algo} eps={r.epsilon}: ours {100 * r.test_accuracy:.1f} paper {pv}")
    rows.append(
        dict(claim="image stand-in in the paper's accuracy regime (Obs. Table 4, CIFAR-10)", metric="max |acc_ours - acc_paper| (pp)",
             value=float(np.max(np.abs(gaps))) if gaps else float("nan"), threshold=f"<= {tol_acc:g}", holds=bool(gaps and np.max(np.abs(gaps)) <= tol_acc),
             detail="; ".join(det), procedure="paper")
    )
    if malek is not None and len(malek):
        m = malek[malek["estimator"] == "paper"]
        det = "; ".join(f"{r.algorithm} {r.level} eps={r.epsilon:g}: memorised {r.canary_memorisation_rate:.2f}, acc {100 * r.test_accuracy:.1f} (paper {r.paper_accuracy})"
                        for r in m.itertuples())  # fmt: skip
        high = m[m["level"] == "high"]
        rows.append(
            dict(claim="Malek game: the stand-in MLP memorises mislabelled canaries at the high-accuracy level (the paper's ResNet reaches eps_m 2.9-4.0, CGR >= 0.95)",
                 metric="min canary memorisation rate at level high", value=float(high["canary_memorisation_rate"].min()) if len(high) else float("nan"),
                 threshold="> 0.5", holds=bool(len(high) and high["canary_memorisation_rate"].min() > 0.5), detail=det, procedure="paper")
        )
        for est in ("paper", "ours_cp"):
            g = malek[(malek["estimator"] == est) & (malek["level"] == "high")]
            rows.append(
                dict(claim=f"Malek Table 6: ALIBI eps_m interval overlaps the paper's at the high level ({est} estimator)", metric="eps_m interval",
                     value=float(g[g["algorithm"] == "ALIBI"]["epsilon_m_low"].min()) if len(g) else float("nan"), threshold="overlaps 2.9-4.0",
                     holds=bool(len(g) and any(max(r.epsilon_m_low, 2.9) <= min(r.epsilon_m_high, 4.0) for r in g[g["algorithm"] == "ALIBI"].itertuples())),
                     detail="; ".join(f"{r.algorithm}: {r.interval}" for r in g.itertuples()), procedure="paper" if est == "paper" else "ours")
            )
    return pd.DataFrame(rows)
