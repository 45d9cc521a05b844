"""The auditor checks itself: correct mechanisms and planted-bug twins (target ``selfcheck``).

Following the way Tramèr et al. 2022 ("Debugging differential privacy: a case study for
privacy auditing") and DP-Auditorium test auditors, every case is a black-box mechanism
``mechanism(data, n, rng)`` with a neighbouring pair and the claim its author makes. The
audit (:func:`ppaudit.blackbox.audit_mechanism`, confidence 95 %) is repeated over seeded
repetitions with fresh draws; the bars are

* a *correct* mechanism (its claim holds) is flagged in at most 5 % of the repetitions, up to
  binomial slack: at most ``binom.ppf(1 − slack_level, R, 0.05)`` of ``R`` runs (the audit's
  false-alarm probability is ≤ 5 %, so this bar fails with probability ≤ ``slack_level``);
* a *planted bug* (its claim is false) is flagged in at least 90 % of the repetitions.

Cases (all outputs are sampled; no exact-count shortcut):

=======================  ===============================================  =====================
case                     mechanism and neighbouring pair                  claim
=======================  ===============================================  =====================
gnmax                    Gaussian noisy argmax, σ = 2, votes [5, 5, 0]    RDP α/σ² (Papernot
                         vs [6, 4, 0] (one teacher's vote moved)          et al. 2018, Prop. 8)
gnmax_sigma_halved       the same, but the noise is σ/2 = 1               RDP α/σ² with σ = 2
randomized_response      4-ary RR with ε = 1, label 0 vs label 1          (1, 0)-DP
laplace_rnm              report-noisy-max, Laplace(1/ε), ε = 0.5,         (0.5, 0)-DP
                         counts [0, 3] vs [1, 3] (add one record)
laplace_rnm_sensitivity  the same noise, but one record moves a count     (0.5, 0)-DP
                         by 2 (sensitivity 2 accounted as 1)
laplace_rnm_wrong_scale  Laplace noise of scale ε = 0.5 instead of 1/ε    (0.5, 0)-DP
gaussian_rnm             report-noisy-max, N(0, σ²), σ = 1/√(2ρ), ρ=1/8,  1/8-zCDP
                         counts [0, 0, 0, 0] vs [1, 0, 0, 0]
gaussian_rnm_4x_zcdp     σ = 1/√(8ρ): spends 4ρ                           1/8-zCDP
=======================  ===============================================  =====================
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from ._validation import check_positive_int, check_probability
from .blackbox import Claim, audit_mechanism
from ._lazy import LazyImport

binom = LazyImport("scipy.stats", "binom")  # scipy.stats costs ≈ 1 s to import; loaded on first use

__all__ = [
    "SELFCHECK_ORDERS",
    "SelfCheckCase",
    "SelfCheckResult",
    "selfcheck_cases",
    "run_selfcheck",
    "plot_selfcheck",
    "false_alarm_limit",
]

#: Orders audited by the self-check.
SELFCHECK_ORDERS = (1.5, 2.0, 4.0, 8.0, 16.0, 32.0)
#: Default repetitions and trials per side of the target.
DEFAULT_REPETITIONS = 100
DEFAULT_TRIALS = 30_000
#: Bars.
MAX_FALSE_ALARM_RATE = 0.05
MIN_DETECTION_RATE = 0.90


# --------------------------------------------------------------------------------------
# mechanisms (vectorised over the n draws)
# --------------------------------------------------------------------------------------


def gaussian_noisy_argmax(sigma: float) -> Callable:
    """``argmax(h + N(0, σ² I))`` (Chadha et al. 2024, Eq. (3); GNMax of Papernot et al. 2018)."""

    def mech(hist, n, rng):
        h = np.asarray(hist, dtype=np.float64)
        return np.argmax(h + sigma * rng.standard_normal((n, h.size)), axis=1)

    return mech


def randomized_response(epsilon: float, k: int) -> Callable:
    """k-ary randomized response: keep the label w.p. ``e^ε/(e^ε + k − 1)``, else a uniform other label."""
    keep = math.exp(epsilon) / (math.exp(epsilon) + k - 1)

    def mech(label, n, rng):
        other = (label + 1 + rng.integers(0, k - 1, size=n)) % k
        return np.where(rng.random(n) < keep, label, other)

    return mech


def laplace_report_noisy_max(scale: float, weight: float = 1.0) -> Callable:
    """``argmax(weight · counts + Laplace(scale))`` (Dwork & Roth 2014, §3.3)."""

    def mech(counts, n, rng):
        c = weight * np.asarray(counts, dtype=np.float64)
        return np.argmax(c + rng.laplace(0.0, scale, size=(n, c.size)), axis=1)

    return mech


def gaussian_report_noisy_max(sigma: float) -> Callable:
    """``argmax(counts + N(0, σ²))``: post-processing of the Gaussian mechanism, ρ = Δ²/(2σ²)."""
    return gaussian_noisy_argmax(sigma)


@dataclass(frozen=True)
class SelfCheckCase:
    """One self-check case.

    Attributes:
        name: identifier.
        family: the correct mechanism this case belongs to.
        planted_bug: description of the bug, or ``None`` for a correct mechanism.
        mechanism: ``mechanism(data, n, rng)``.
        dataset, neighbour: the neighbouring pair.
        claim: what the author claims.
        truth: what the mechanism really satisfies (text).
    """

    name: str
    family: str
    planted_bug: str | None
    mechanism: Callable
    dataset: object
    neighbour: object
    claim: Claim
    truth: str


def selfcheck_cases() -> list[SelfCheckCase]:
    """The correct mechanisms and their planted-bug twins (table in the module docstring)."""
    orders = np.asarray(SELFCHECK_ORDERS)
    sigma = 2.0
    eps_rnm = 0.5
    rho = 0.125
    gn_claim = Claim.rdp(orders, orders / sigma**2)
    return [
        SelfCheckCase("gnmax", "Gaussian noisy argmax", None, gaussian_noisy_argmax(sigma), [5, 5, 0], [6, 4, 0],
                      gn_claim, "RDP <= alpha/sigma^2 with sigma = 2 (Papernot et al. 2018, Prop. 8)"),
        SelfCheckCase("gnmax_sigma_halved", "Gaussian noisy argmax", "sigma halved in the mechanism, not in the claim",
                      gaussian_noisy_argmax(sigma / 2), [5, 5, 0], [6, 4, 0], gn_claim,
                      "RDP up to 4 alpha/sigma^2"),
        SelfCheckCase("randomized_response", "randomized response", None, randomized_response(1.0, 4), 0, 1,
                      Claim.dp(1.0, 0.0), "exactly (1, 0)-DP"),
        SelfCheckCase("laplace_rnm", "Laplace report-noisy-max", None, laplace_report_noisy_max(1.0 / eps_rnm), [0, 3], [1, 3],
                      Claim.dp(eps_rnm, 0.0), "(0.5, 0)-DP (Dwork & Roth 2014, Claim 3.9)"),
        SelfCheckCase("laplace_rnm_sensitivity", "Laplace report-noisy-max", "sensitivity 2 accounted as 1",
                      laplace_report_noisy_max(1.0 / eps_rnm), [0, 3], [2, 3], Claim.dp(eps_rnm, 0.0),
                      "up to (1, 0)-DP"),
        SelfCheckCase("laplace_rnm_wrong_scale", "Laplace report-noisy-max", "Laplace noise of scale eps instead of 1/eps",
                      laplace_report_noisy_max(eps_rnm), [0, 3], [1, 3], Claim.dp(eps_rnm, 0.0), "up to (2, 0)-DP"),
        SelfCheckCase("gaussian_rnm", "Gaussian report-noisy-max", None, gaussian_report_noisy_max(1.0 / math.sqrt(2 * rho)),
                      [0, 0, 0, 0], [1, 0, 0, 0], Claim.zcdp(rho), "1/8-zCDP"),
        SelfCheckCase("gaussian_rnm_4x_zcdp", "Gaussian report-noisy-max", "spends 4x its claimed zCDP (sigma = 1/sqrt(8 rho))",
                      gaussian_report_noisy_max(1.0 / math.sqrt(8 * rho)), [0, 0, 0, 0], [1, 0, 0, 0], Claim.zcdp(rho),
                      "1/2-zCDP"),
    ]


def false_alarm_limit(repetitions: int, rate: float = MAX_FALSE_ALARM_RATE, slack_level: float = 0.01) -> int:
    """Largest number of flagged runs (of ``R``) that still meets the false-alarm bar.

    ``binom.ppf(1 − slack_level, R, rate)``: a sound audit (false-alarm probability ≤ ``rate``)
    exceeds it with probability ≤ ``slack_level``.
    """
    r = check_positive_int(repetitions, "repetitions")
    return int(binom.ppf(1.0 - check_probability(slack_level, "slack_level"), r, rate))


@dataclass
class SelfCheckResult:
    """Outcome of :func:`run_selfcheck`.

    Attributes:
        table: one row per case: claim, mean lower bounds, flagged runs, rate, bar, pass.
        runs: one row per (case, repetition).
        passed: True iff every case meets its bar.
        repetitions, trials, confidence, seed: the settings.
    """

    table: pd.DataFrame
    runs: pd.DataFrame
    passed: bool
    repetitions: int
    trials: int
    confidence: float
    seed: int
    slack_level: float = 0.01


def run_selfcheck(
    repetitions: int = DEFAULT_REPETITIONS,
    trials: int = DEFAULT_TRIALS,
    *,
    confidence: float = 0.95,
    seed: int = 0,
    cases: list[str] | None = None,
    slack_level: float = 0.01,
    progress: bool = False,
) -> SelfCheckResult:
    """Run every case ``repetitions`` times with ``trials`` draws per side and check the bars.

    Args:
        repetitions: seeded repetitions ``R`` per case (the target uses ≥ 100).
        trials: draws per side per repetition.
        confidence: the audit's confidence (false alarms ≤ 1 − confidence).
        seed: root seed; repetition ``r`` of case ``i`` uses ``SeedSequence(seed).spawn``.
        cases: names of the cases to run (default: all).
        slack_level: probability that a sound audit fails the false-alarm bar.
        progress: tqdm bar over the repetitions.

    Returns:
        :class:`SelfCheckResult`.

    Raises:
        ValueError: on an unknown case name or bad settings.
    """
    reps = check_positive_int(repetitions, "repetitions")
    t = check_positive_int(trials, "trials")
    conf = check_probability(confidence, "confidence")
    all_cases = selfcheck_cases()
    names = [c.name for c in all_cases]
    if cases is not None:
        unknown = [c for c in cases if c not in names]
        if unknown:
            raise ValueError(f"unknown self-check case(s) {unknown}; known: {names}")
        all_cases = [c for c in all_cases if c.name in cases]
    limit = false_alarm_limit(reps, 1.0 - conf, slack_level)
    need = int(math.ceil(MIN_DETECTION_RATE * reps - 1e-9))
    root = np.random.SeedSequence(int(seed))
    case_seqs = root.spawn(len(names))
    from tqdm.auto import tqdm

    run_rows, rows = [], []
    for case in all_cases:
        seqs = case_seqs[names.index(case.name)].spawn(reps)
        for r in tqdm(range(reps), disable=not progress, desc=case.name):
            res = audit_mechanism(case.mechanism, case.dataset, case.neighbour, t, SELFCHECK_ORDERS,
                                  confidence=conf, rng=seqs[r], claim=case.claim)
            j = int(np.argmax(res.rdp_lower_bound - np.nan_to_num(res.claim_rdp, posinf=1e300)))
            run_rows.append({
                "case": case.name, "repetition": r, "flagged": res.violation,
                "rdp_lower_bound_alpha2": float(res.rdp_lower_bound[list(SELFCHECK_ORDERS).index(2.0)]),
                "epsilon_lower_bound": res.epsilon_lower_bound,
                "rdp_violated": bool(res.violated_orders.size), "epsilon_violated": res.epsilon_violated,
                "closest_order": float(res.orders[j]),
            })
        sub = pd.DataFrame([x for x in run_rows if x["case"] == case.name])
        flagged = int(sub["flagged"].sum())
        bug = case.planted_bug is not None
        ok = flagged >= need if bug else flagged <= limit
        claim_rdp2 = float(case.claim.rdp_curve([2.0])[0])
        rows.append({
            "case": case.name, "family": case.family, "planted_bug": case.planted_bug or "",
            "claim": case.claim.describe(), "truth": case.truth, "trials_per_side": t, "repetitions": reps,
            "claim_rdp_alpha2": claim_rdp2, "mean_rdp_lower_bound_alpha2": float(sub["rdp_lower_bound_alpha2"].mean()),
            "claim_epsilon": float(case.claim.epsilon_at(case.claim.delta if case.claim.kind == "dp" else 1e-5)),
            "mean_epsilon_lower_bound": float(sub["epsilon_lower_bound"].mean()),
            "flagged": flagged, "flag_rate": flagged / reps,
            "bar": (f">= {MIN_DETECTION_RATE:.0%} ({need}/{reps})" if bug
                    else f"<= {1 - conf:.0%} + slack ({limit}/{reps})"),
            "passed": bool(ok),
        })
    table = pd.DataFrame(rows)
    return SelfCheckResult(table, pd.DataFrame(run_rows), bool(table["passed"].all()), reps, t, conf, int(seed), slack_level)


def plot_selfcheck(result: SelfCheckResult):
    """Bar chart of flag rates per case with the bars (5 % + slack, 90 %).

    Returns:
        ``(figure, table)`` — the table is ``result.table``.
    """
    import matplotlib.pyplot as plt  # lazy: [workflow] extra

    tab = result.table
    fig, ax = plt.subplots(figsize=(7.0, 3.2))
    colors = ["tab:red" if b else "tab:blue" for b in tab["planted_bug"].astype(bool)]
    ax.bar(range(len(tab)), tab["flag_rate"], color=colors)
    limit = false_alarm_limit(result.repetitions, 1 - result.confidence, result.slack_level) / result.repetitions
    for i, (k, rate) in enumerate(zip(tab["flagged"], tab["flag_rate"])):
        ax.text(i, rate + 0.02, f"{k}/{result.repetitions}", ha="center", fontsize=7)
    ax.axhline(limit, color="tab:blue", ls="--", lw=1, label=f"false-alarm bar ({limit:.0%})")
    ax.axhline(MIN_DETECTION_RATE, color="tab:red", ls=":", lw=1, label=f"detection bar ({MIN_DETECTION_RATE:.0%})")
    ax.set_xticks(range(len(tab)))
    ax.set_xticklabels(tab["case"], rotation=35, ha="right", fontsize=7)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("flagged runs")
    ax.set_title(f"self-check: {result.repetitions} runs x {result.trials} trials/side (blue: correct, red: planted bug)",
                 fontsize=8)
    ax.legend(fontsize=7, loc="center right")
    fig.tight_layout()
    return fig, tab
