"""Figures of the Private-kNN audit (Chadha et al. 2024, Fig. 5; App. E.4 Figs. 25–31 reuse
:func:`ppaudit.plots.pate_capc.plot_appendix_figure`)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

__all__ = ["plot_knn_fig5", "fig5_table", "knn_confidence_footer", "KNN_AUDITS", "FIG5_RIGHT_PANEL", "KNN_ADVERSARY_LABELS",
           "ADVERSARY_COLORS"]

from ..experiments.chadha2024.private_knn_names import KNN_ADVERSARY_LABELS  # noqa: E402 (re-exported)

#: Colour of each Private-kNN series (theory grey; one colour per adversary).
ADVERSARY_COLORS = {
    "data-independent theory": "0.6",
    "Nat-AdvQ": "tab:blue",
    "Pois-AdvQ": "tab:orange",
    "Pois-NatQ (test)": "tab:green",
    "Pois-NatQ (train)": "tab:olive",
    "Pois-NatQ (embedding)": "tab:red",
}


#: What Fig. 5's union bound covers (issue 27 §1; :data:`ppaudit.experiments.chadha2024.private_knn.KNN_COUNT_BOUNDS`).
KNN_AUDITS = ("2-cut, k-cut and per-query valid ε lower bound of each candidate and query — three shares per pair, also where "
              "the Rao–Blackwellised 2-cut and ε bound are one statement and the k-cut, like the crosses, is the paper's "
              "procedure on a Monte Carlo law — and each whole-transcript audit")


def knn_confidence_footer(summary: pd.DataFrame, labels: dict[str, str]) -> str:
    """Fig. 5's footer: per dataset's adversary the confidence with which every Private-kNN audit
    that was run holds at once (:func:`ppaudit.plots.pate_capc.confidence_footer` with
    :data:`KNN_AUDITS`; summary columns ``simultaneous_confidence``, ``num_audits``, ``multiplicity``).

    Args:
        summary: every kNN summary (column ``algo`` = ``knn``).
        labels: adversary → legend label.

    Returns:
        The footer text; empty for a summary without ``simultaneous_confidence``.
    """
    from .pate_capc import confidence_footer

    s = summary if "algo" in summary.columns else summary.assign(algo="knn")
    return confidence_footer([s], list(labels), covers=KNN_AUDITS, labels=labels)


#: The Pois-NatQ adversaries of Fig. 5's right panel (poisons from the test set, the train set
#: and the embedding space).
FIG5_RIGHT_PANEL = ("pois-natq-test", "pois-natq-train", "pois-natq-embedding")


def fig5_table(summary: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """The bars of Fig. 5 (Chadha et al. 2024, §6): worst-case ε at δ per dataset and adversary.

    Left panel: the data-independent theory (once per dataset, from its first adversary) and,
    for every adversary of ``labels``, the sound 2-cut audit (``two_cut_cp``, procedure: ours),
    the paper's procedure (``two_cut_paper``: where the output law is a Monte Carlo estimate,
    it is taken as exact), the valid ε lower bound (``valid_eps_lower``), the exact ε of the
    transcript (``exact_eps_pld``, where the laws enumerate) and the exact RDP of the model; right panel: the same for the Pois-NatQ adversaries of :data:`FIG5_RIGHT_PANEL`.
    Adversaries or columns missing from the summary are skipped.

    Args:
        summary: every kNN summary (columns dataset, adversary, case, column, epsilon).
        labels: adversary → legend label; its order is the bar order of the left panel.

    Returns:
        Columns panel, dataset, bar, adversary, column, epsilon (one row per bar value).

    Raises:
        ValueError: if the summary has no worst-case rows, a dataset has no
            data-independent row, or a right-panel adversary has no label.
    """
    missing = [a for a in FIG5_RIGHT_PANEL if a not in labels]
    if missing:
        raise ValueError(f"labels has no entry for {missing}")
    s = summary[summary["case"] == "worst"]
    if s.empty:
        raise ValueError("the summary has no worst-case rows (case == 'worst')")
    panels = {"left": list(labels), "right": list(FIG5_RIGHT_PANEL)}
    rows = []
    for ds, g in s.groupby("dataset", sort=False):
        def get(adv, col, g=g):
            return g.loc[(g["adversary"] == adv) & (g["column"] == col), "epsilon"]

        di = get(g["adversary"].iloc[0], "data_independent")
        if di.empty:
            raise ValueError(f"dataset {ds!r} has no data_independent row for adversary {g['adversary'].iloc[0]!r}")
        rows.append({"panel": "left", "dataset": ds, "bar": "data-independent theory", "adversary": "", "column": "data_independent", "epsilon": float(di.iloc[0])})
        for panel, advs in panels.items():
            for adv in advs:
                for col in ("two_cut_cp", "two_cut_paper", "exact", "valid_eps_lower", "exact_eps_pld"):
                    v = get(adv, col)
                    if len(v):
                        rows.append({"panel": panel, "dataset": ds, "bar": labels[adv], "adversary": adv, "column": col, "epsilon": float(v.iloc[0])})
    return pd.DataFrame(rows)


def _panel(ax, table: pd.DataFrame, floor: float | None):
    datasets = list(dict.fromkeys(table["dataset"]))
    bars = list(dict.fromkeys(table["bar"]))
    width = 0.8 / max(len(bars), 1)
    x = np.arange(len(datasets))
    for i, bar in enumerate(bars):
        sel = table[table["bar"] == bar]
        off = x + (i - (len(bars) - 1) / 2) * width
        audit = [sel.loc[(sel["dataset"] == d) & (sel["column"].isin(["two_cut_cp", "data_independent"])), "epsilon"] for d in datasets]
        audit = np.array([float(v.iloc[0]) if len(v) else np.nan for v in audit])
        ax.bar(off, audit, width, label=bar, color=ADVERSARY_COLORS.get(bar, plt.cm.tab10(i % 10)), edgecolor="white")
        exact = [sel.loc[(sel["dataset"] == d) & (sel["column"] == "exact"), "epsilon"] for d in datasets]
        exact = np.array([float(v.iloc[0]) if len(v) else np.nan for v in exact])
        if np.any(np.isfinite(exact)):
            ax.plot(off, exact, linestyle="none", marker="_", markersize=14, markeredgewidth=2, color="black",
                    label="exact ε of the model" if i == 1 else None)
        for col, marker, name in (("two_cut_paper", "x", "paper's procedure (MC law taken as exact)"),
                                  ("valid_eps_lower", "v", "valid ε lower bound (not Thm 1)"),
                                  ("exact_eps_pld", "^", "exact ε of the transcript (PLD, not Thm 1)")):
            v = [sel.loc[(sel["dataset"] == d) & (sel["column"] == col), "epsilon"] for d in datasets]
            v = np.array([float(x.iloc[0]) if len(x) else np.nan for x in v])
            if np.any(np.isfinite(v) & (v > 0)):
                ax.plot(off, np.where(v > 0, v, np.nan), linestyle="none", marker=marker, markersize=5, color="0.2",
                        label=name if i == 1 else None)
    if floor is not None:
        ax.axhline(floor, color="0.3", linewidth=0.8, linestyle=":", label=f"zero-RDP floor ε = {floor:.3g}")
    ax.set_xticks(x, datasets)
    ax.set_yscale("log")
    ax.set_ylabel("RDP audit on the ε scale, Thm 1 conversion (δ = 1e-6)", fontsize=7)
    ax.grid(True, axis="y", which="both", alpha=0.3)


def plot_knn_fig5(table: pd.DataFrame, title: str, floor: float | None = None, footer: str | None = None):
    """Fig. 5: left, every adversary's 2-cut audit against the data-independent theory per
    dataset; right, the Pois-NatQ poisons from the test set, the train set and the
    embedding space. Bars: the sound audit (ours); black ticks: the exact ε of the vote model
    for the same candidate; crosses: the paper's procedure; down triangles: the valid ε lower
    bound; up triangles: the exact ε of the transcript (PLD).

    Args:
        table: columns ``panel`` (``"left"``/``"right"``), ``dataset``, ``bar`` (legend label),
            ``column`` (``two_cut_cp``, ``two_cut_paper``, ``exact``, ``valid_eps_lower``,
            ``exact_eps_pld`` or ``data_independent``), ``epsilon``.
        title: figure title.
        floor: ε of a zero RDP curve (dotted line).
        footer: a line under the panels (:func:`knn_confidence_footer`).
    """
    from .style import add_footer, footer_inches

    fig, axes = plt.subplots(1, 2, figsize=(12.0, 5.0))
    titles = {"left": "adversaries vs theory (2-cut audit, worst case)", "right": "Pois-NatQ: test / train vs embedding poison"}
    legend: dict = {}  # one legend for both panels, under them: adversaries (colour), then the marks (procedure)
    for ax, panel in zip(axes, ("left", "right")):
        _panel(ax, table[table["panel"] == panel], floor)
        ax.set_title(titles[panel], fontsize=9)
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    bars = [k for k in legend if k in ADVERSARY_COLORS or k in set(table["bar"])]
    marks = [k for k in legend if k not in bars]
    ncol = 3
    rows = -(-len(bars) // ncol) + -(-len(marks) // ncol)
    legend_in = 0.17 * rows + 0.35
    fig.set_size_inches(12.0, 4.6 + legend_in + footer_inches(footer, 12.0)[1])
    fig.suptitle(title, fontsize=10)
    foot = add_footer(fig, footer)
    h = fig.get_size_inches()[1]
    mark_in = 0.17 * -(-len(marks) // ncol) + 0.1
    fig.legend([legend[k] for k in marks], marks, loc="lower center", bbox_to_anchor=(0.5, foot), ncol=ncol, fontsize=7,
               frameon=False)
    fig.legend([legend[k] for k in bars], bars, loc="lower center", bbox_to_anchor=(0.5, foot + mark_in / h), ncol=ncol,
               fontsize=7, frameon=False, title="bars: the sound 2-cut audit (ours) per adversary; marks: the other values",
               title_fontsize=7)
    fig.tight_layout(rect=(0, foot + legend_in / h, 1, 1))
    return fig
