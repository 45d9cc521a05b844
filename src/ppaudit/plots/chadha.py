"""Figures of Chadha et al. 2024."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib import ticker  # noqa: E402

from .titles import compact_number, synthetic_title  # noqa: E402  (re-exported)

__all__ = ["plot_rdp_vs_order", "legend_labels", "compact_number", "synthetic_title", "synthetic_figure"]

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
#: Curves that are upper bounds (theory); every other column is read as an audit.
UPPER_BOUNDS = ("data_independent", "data_dependent", "exact")


def legend_labels(table: pd.DataFrame, names: dict[str, str]) -> dict[str, str]:
    """Legend labels that also say what the eye cannot see on a log axis.

    A curve identical to an earlier one (e.g. the data-dependent bound falls back to α/σ²
    where Papernot et al.'s Thm 6 does not apply) is hidden under it, and a lower bound of
    0 (nothing detected) has no place on a log axis: both get a note.
    """
    columns = [c for c in names if c in table]
    labels = {}
    for i, col in enumerate(columns):
        label = names[col]
        same = [c for c in columns[:i] if np.allclose(table[col], table[c], rtol=1e-12, atol=0)]
        if same:
            label += f"\n  = {names[same[0]].split(' (')[0].lower()} at every order"
        zeros = int((table[col] <= 0).sum())
        if zeros:
            label += f"\n  = 0 (nothing detected) at {zeros} of {len(table)} orders: not drawn"
        labels[col] = label
    return labels


def plot_rdp_vs_order(
    table: pd.DataFrame,
    labels: dict[str, str],
    title: str,
    logy: bool = True,
    ratio_to: str | None = None,
):
    """RDP (upper bounds and audits) against the Rényi order α (Chadha Figs. 2 and 6).

    Args:
        table: column ``order`` plus one column per curve.
        labels: column -> legend label, in drawing order (columns absent from the table are
            skipped); :func:`legend_labels` adds the notes for hidden and zero curves.
        title: the figure title.
        logy: log-scale RDP axis.
        ratio_to: if a column name (e.g. ``"exact"``), add a lower panel with every audit
            divided by that column — on a log axis audits within a few percent of the exact
            RDP are indistinguishable, the ratio shows how tight each is.

    Returns:
        The matplotlib figure (legend beside the axes, order axis labelled at powers of 2).
    """
    with_ratio = ratio_to is not None and ratio_to in table
    if with_ratio:
        fig, (ax, rax) = plt.subplots(2, 1, figsize=(9.0, 6.0), sharex=True, gridspec_kw={"height_ratios": [2.2, 1]})
    else:
        fig, ax = plt.subplots(figsize=(9.0, 4.2))
        rax = None
    for col, label in labels.items():
        if col not in table:
            continue
        style = _STYLE.get(col, {})
        y = table[col].where(table[col] > 0) if logy else table[col]
        ax.plot(table["order"], y, label=label, markersize=4, **style)
        if with_ratio and col not in UPPER_BOUNDS:
            rax.plot(table["order"], table[col] / table[ratio_to], markersize=4, **style)
    ax.set_ylabel("RDP ε(α)")
    ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8, frameon=False)
    bottom = ax
    if with_ratio:
        rax.axhline(1.0, color="black", linewidth=1)
        rax.set_ylabel(f"audit / {ratio_to}")
        rax.grid(True, which="both", alpha=0.3)
        bottom = rax
    bottom.set_xlabel("Rényi order α")
    bottom.xaxis.set_major_locator(ticker.LogLocator(base=2))
    bottom.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}"))
    bottom.xaxis.set_minor_formatter(ticker.NullFormatter())
    fig.tight_layout()
    return fig


def synthetic_figure(table: pd.DataFrame, methods, title: str):
    """RDP against the order of one synthetic pair (Chadha et al. 2024, Figs. 2 and 6).

    Draws the requested curves of ``ppaudit.experiments.chadha2024.synthetic.METHODS`` in that table's
    legend order; with more than one audit and the exact RDP, a lower panel shows each audit
    divided by the exact RDP (App. B's point).

    Args:
        table: the CSV of ``audit_histogram_pair`` (``order`` + one column per method).
        methods: the curves to draw (names of ``METHODS``).
        title: the axes title (:func:`synthetic_title`).

    Returns:
        ``(fig, plotted)``: the figure and the plotted numbers (``order`` + the drawn columns).

    Raises:
        ValueError: naming the methods the table lacks, or a method that is not in ``METHODS``.
    """
    from ..experiments.chadha2024.synthetic import METHODS

    methods = list(methods)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(METHODS)}")
    missing = [m for m in methods if m not in table.columns]
    if missing:
        raise ValueError(f"the table has no column(s) {missing}; it has {list(table.columns)}")
    columns = [m for m in METHODS if m in methods]
    plotted = table[["order", *columns]]
    labels = legend_labels(plotted, {m: METHODS[m] for m in columns})
    audits = [m for m in columns if m not in UPPER_BOUNDS]
    ratio_to = "exact" if "exact" in columns and len(audits) > 1 else None
    return plot_rdp_vs_order(plotted, labels, title, ratio_to=ratio_to), plotted
