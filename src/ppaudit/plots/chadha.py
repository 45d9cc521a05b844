"""Figures of Chadha et al. 2024."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

__all__ = ["plot_rdp_vs_order"]

_STYLE = {
    "data_independent": dict(color="0.5", linestyle=":", marker=None),
    "data_dependent": dict(color="tab:red", linestyle="--", marker=None),
    "exact": dict(color="black", linestyle="-", marker=None),
    "two_cut_cp": dict(color="tab:blue", linestyle="-", marker="o"),
    "k_cut_goodman": dict(color="tab:green", linestyle="-", marker="s"),
    "k_cut_sison_glaz": dict(color="tab:olive", linestyle="-", marker="D"),
    "two_cut_bootstrap": dict(color="tab:purple", linestyle="-.", marker="^"),
    "k_cut_bootstrap": dict(color="tab:orange", linestyle="-.", marker="v"),
}


def plot_rdp_vs_order(table: pd.DataFrame, labels: dict[str, str], title: str, logy: bool = True):
    """RDP (upper bounds and audits) against the Rényi order α (Chadha Figs. 2 and 6).

    Args:
        table: column ``order`` plus one column per curve.
        labels: column -> legend label, in drawing order (columns absent from the table are
            skipped).
        title: the axes title.
        logy: log-scale RDP axis.

    Returns:
        The matplotlib figure.
    """
    fig, ax = plt.subplots(figsize=(6.0, 4.2))
    for col, label in labels.items():
        if col not in table:
            continue
        style = _STYLE.get(col, {})
        ax.plot(table["order"], table[col], label=label, markersize=4, **style)
    ax.set_xlabel("Rényi order α")
    ax.set_ylabel("RDP ε(α)")
    ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig
