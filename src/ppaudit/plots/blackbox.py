"""Figure: the black-box benchmark against StatDP and DP-Sniper (target ``blackbox_benchmark``).

matplotlib is imported inside the function: plots are not part of the lean core.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["plot_blackbox_benchmark"]

_COLUMNS = {"epsilon0", "case", "buggy", "verdict_rate", "mean_epsilon_lower_bound", "true_epsilon",
            "claim_epsilon", "dpsniper_epsilon_lower_bound", "statdp_epsilon_lower_bound", "seeds", "flagged"}


def plot_blackbox_benchmark(table: pd.DataFrame, detection_bar: float = 0.9, false_alarm_bar: float | None = None):
    """Two panels per setting (claimed ε₀ and draws): verdict rate per mechanism, and ε lower bounds beside the peers'.

    Args:
        table: :attr:`ppaudit.experiments.blackbox.benchmark.BenchmarkResult.table`.
        detection_bar: the detection bar drawn on the verdict panel (buggy cases).
        false_alarm_bar: the false-alarm bar (correct cases) as a rate; ``None``: not drawn.

    Returns:
        ``(figure, plotted)``: the figure and the long table of every plotted number
        (``epsilon0``, ``trials``, ``panel``, ``case``, ``series``, ``value``).

    Raises:
        ValueError: if ``table`` is empty or lacks a column.
    """
    import matplotlib.pyplot as plt  # lazy: [workflow] extra

    missing = _COLUMNS - set(table.columns)
    if missing:
        raise ValueError(f"table lacks the columns {sorted(missing)}")
    if table.empty:
        raise ValueError("table is empty")
    trials = table["trials"] if "trials" in table.columns else pd.Series([None] * len(table), index=table.index)
    keys = list(dict.fromkeys(zip(table["epsilon0"].tolist(), trials.tolist())))  # one row of panels per setting
    fig, axes = plt.subplots(len(keys), 2, figsize=(11.0, 3.3 * len(keys)), squeeze=False)
    rows = []
    for r, (eps, t_set) in enumerate(keys):
        sub = table[(table["epsilon0"] == eps) & ((trials == t_set) if t_set is not None else True)].reset_index(drop=True)
        at = "" if t_set is None else f", {int(t_set):,} draws per side per pair"
        x = np.arange(len(sub))
        ax = axes[r, 0]
        colors = ["tab:red" if b else "tab:blue" for b in sub["buggy"].astype(bool)]
        ax.bar(x, sub["verdict_rate"], color=colors)
        for i, (k, n) in enumerate(zip(sub["flagged"], sub["seeds"])):
            ax.text(i, sub["verdict_rate"][i] + 0.02, f"{k}/{n}", ha="center", fontsize=6)
        ax.axhline(detection_bar, color="tab:red", ls=":", lw=1, label=f"detection bar ({detection_bar:.0%})")
        if false_alarm_bar is not None:
            ax.axhline(false_alarm_bar, color="tab:blue", ls="--", lw=1, label=f"false-alarm bar ({false_alarm_bar:.0%})")
        ax.set_ylim(0, 1.12)
        ax.set_ylabel("verdict 'violation'")
        ax.set_title(f"claimed ε0 = {eps:g}{at}: share of seeds flagged (red: buggy, blue: correct)", fontsize=8)
        ax.legend(fontsize=6, loc="center right")
        ax = axes[r, 1]
        width = 0.27
        series = (("ours (mean valid ε LB)", "mean_epsilon_lower_bound", "tab:green"),
                  ("DP-Sniper (published)", "dpsniper_epsilon_lower_bound", "tab:orange"),
                  ("StatDP (published by DP-Sniper)", "statdp_epsilon_lower_bound", "tab:purple"))
        for j, (label, col, color) in enumerate(series):
            vals = sub[col].astype(float).to_numpy()
            ax.bar(x + (j - 1) * width, np.nan_to_num(vals, nan=0.0), width, color=color, label=label)
            for case, v in zip(sub["case"], vals):
                rows.append({"epsilon0": eps, "trials": t_set, "panel": "epsilon_lower_bound", "case": case, "series": label, "value": v})
        true = sub["true_epsilon"].astype(float).to_numpy()
        finite = np.isfinite(true)
        ax.scatter(x[finite], true[finite], marker="_", s=120, color="black", zorder=3, label="true ε")
        ax.axhline(eps, color="grey", ls="--", lw=0.8, label=f"claim ε0 = {eps:g}")
        ax.set_yscale("symlog", linthresh=0.1)
        ax.set_ylabel("ε lower bound")
        ax.set_title(f"claimed ε0 = {eps:g}{at}: ε lower bounds (true ε: black; ∞ not drawn)", fontsize=8)
        ax.legend(fontsize=6, loc="upper left")
        for a in axes[r]:
            a.set_xticks(x)
            a.set_xticklabels(sub["case"], rotation=40, ha="right", fontsize=7)
        for case, rate, t in zip(sub["case"], sub["verdict_rate"], true):
            rows.append({"epsilon0": eps, "trials": t_set, "panel": "verdict_rate", "case": case, "series": "ours", "value": float(rate)})
            rows.append({"epsilon0": eps, "trials": t_set, "panel": "epsilon_lower_bound", "case": case, "series": "true ε",
                         "value": float(t) if not math.isnan(t) else math.nan})
    fig.tight_layout()
    return fig, pd.DataFrame(rows)
