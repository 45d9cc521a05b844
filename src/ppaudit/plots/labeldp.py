"""Figures of the observational label-DP audit paper (Figs. 1–5)."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

__all__ = ["plot_rr", "plot_tau_shift", "mia_comparison_table", "plot_mia_comparison"]

_CF = {"true_posterior": ("ground truth", "-", "o"), "logistic_regression": ("logistic regression", "--", "s")}



def _finish(fig, axes, title: str, legend_size: int = 8):
    """The common frame of the ε_emp panels: y label on the first panel, legend on the last, title."""
    axes[0][0].set_ylabel("empirical ε (95% conf.)")
    axes[0][-1].legend(fontsize=legend_size)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig

def plot_rr(summary: pd.DataFrame, guess_fraction: float, title: str):
    """ε_emp (mean ± std) vs ε_theory, one panel per k, one curve per counterfactual source."""
    s = summary[np.isclose(summary["guess_fraction"], guess_fraction)]
    ks = sorted(s["num_classes"].unique())
    fig, axes = plt.subplots(1, len(ks), figsize=(4 * len(ks), 3.6), squeeze=False, sharey=True)
    for ax, k in zip(axes[0], ks):
        g = s[s["num_classes"] == k]
        lim = float(g["epsilon_theory"].max())
        ax.plot([0, lim], [0, lim], color="0.6", linestyle=":", label="ε_emp = ε_theory")
        for cf, (label, ls, mk) in _CF.items():
            h = g[g["counterfactual"] == cf].sort_values("epsilon_theory")
            if len(h):
                ax.errorbar(h["epsilon_theory"], h["epsilon_mean"], yerr=h["epsilon_std"].fillna(0), linestyle=ls, marker=mk, capsize=3, label=label)
        ax.set_title(f"k = {k}")
        ax.set_xlabel("theoretical ε")
        ax.grid(alpha=0.3)
    return _finish(fig, axes, title)


def plot_tau_shift(summary: pd.DataFrame, title: str):
    """ε_emp vs τ (log x), one panel per ε_theory, one curve per guess fraction."""
    eps = sorted(summary["epsilon_theory"].unique())
    fig, axes = plt.subplots(1, len(eps), figsize=(4 * len(eps), 3.6), squeeze=False)
    for ax, e in zip(axes[0], eps):
        g = summary[summary["epsilon_theory"] == e]
        for fr, h in g.groupby("guess_fraction"):
            h = h.sort_values("tau")
            ax.errorbar(h["tau"], h["epsilon_mean"], yerr=h["epsilon_std"].fillna(0), marker="o", capsize=3, label=f"{100 * fr:g}% guesses")
        ax.axhline(e, color="0.6", linestyle=":", label="ε_theory")
        ax.set_xscale("log")
        ax.set_title(f"ε_theory = {e:g}")
        ax.set_xlabel("τ")
        ax.grid(alpha=0.3)
    return _finish(fig, axes, title)


_ATTACKS = {"lia": ("observational LIA", "o"), "calibrated_mia": ("calibration MIA", "s"), "rmia": ("RMIA (offline)", "^")}


def mia_comparison_table(audits: pd.DataFrame, attacks) -> pd.DataFrame:
    """The numbers of Obs. Figs. 1 and 5 (observational paper §6.3–6.4): LIA vs the MIA baselines.

    Args:
        audits: rows of the audit CSVs (rule ``audit_labeldp_models``, one row per dataset,
            mechanism, ε and attack) with columns dataset, algo, epsilon, claimed_epsilon,
            attack, epsilon_sweep_mean, epsilon_sweep_std, repetitions, num_canaries and
            optionally pate_student.
        attacks: the attacks drawn (``lia``, ``calibrated_mia``, ``rmia``).

    Returns:
        The rows of ``attacks``, in the order of ``audits``, with columns dataset, algorithm
        (the mechanism's label, :func:`ppaudit.experiments.labeldp.tables.algo_label`; PATE
        names its student), epsilon_theory, claimed_epsilon, attack, epsilon_mean,
        epsilon_std, repetitions, num_canaries — the input of :func:`plot_mia_comparison`.

    Raises:
        ValueError: if an attack is not one of ``lia``, ``calibrated_mia``, ``rmia``.
    """
    from ..experiments.labeldp.tables import algo_label

    unknown = [a for a in attacks if a not in _ATTACKS]
    if unknown:
        raise ValueError(f"attacks must be among {sorted(_ATTACKS)}, got {unknown}")
    a = audits[audits["attack"].isin(attacks)]
    students = a["pate_student"] if "pate_student" in a else pd.Series("", index=a.index)
    labels = [algo_label(al, ds, st if isinstance(st, str) else None) for al, ds, st in zip(a["algo"], a["dataset"], students)]
    return pd.DataFrame(
        dict(dataset=a["dataset"], algorithm=labels, epsilon_theory=a["epsilon"], claimed_epsilon=a["claimed_epsilon"],
             attack=a["attack"], epsilon_mean=a["epsilon_sweep_mean"], epsilon_std=a["epsilon_sweep_std"], repetitions=a["repetitions"],
             num_canaries=a["num_canaries"])
    )  # fmt: skip


def plot_mia_comparison(table: pd.DataFrame, attacks, title: str):
    """Per (dataset, algorithm) panel: ε_emp (sweep mean ± std) vs theoretical ε for each attack.

    ``table`` columns: dataset, algorithm, epsilon_theory, attack, epsilon_mean, epsilon_std.
    ε = ∞ is drawn at the right end of the axis and labelled ∞.
    """
    panels = list(table.groupby(["dataset", "algorithm"], sort=True).groups)
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.4), squeeze=False, sharey=True)
    for ax, (ds, algo) in zip(axes[0], panels):
        g = table[(table["dataset"] == ds) & (table["algorithm"] == algo)]
        finite = sorted(e for e in g["epsilon_theory"].unique() if not math.isinf(e))
        order = finite + ([math.inf] if (g["epsilon_theory"] == math.inf).any() else [])
        xpos = {e: i for i, e in enumerate(order)}
        for j, att in enumerate(attacks):
            h = g[g["attack"] == att].copy()
            h["x"] = h["epsilon_theory"].map(xpos) + (j - (len(attacks) - 1) / 2) * 0.1
            h = h.sort_values("x")
            ax.errorbar(h["x"], h["epsilon_mean"], yerr=h["epsilon_std"].fillna(0), marker=_ATTACKS[att][1], capsize=3, label=_ATTACKS[att][0], linestyle="none")
        ax.set_xticks(range(len(order)), ["∞" if math.isinf(e) else f"{e:g}" for e in order])
        ax.set_xlabel("theoretical ε")
        ax.set_title(f"{ds}: {algo}", fontsize=8)
        ax.grid(alpha=0.3)
    return _finish(fig, axes, title, legend_size=7)
