"""Bar plots of the PATE / CaPC audits (Chadha et al. 2024, Figs. 3, 4 and 7–16)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .style import add_footer, footer_inches, procedure_hatch  # noqa: E402

__all__ = ["plot_leakage_panels", "plot_appendix_figure", "appendix_panels", "fig34_table", "confidence_footer", "ASYMPTOTIC_NOTE", "PATE_CAPC_AUDITS", "APPENDIX_BARS", "SOUND_BARS", "EPS_BARS",
           "JOINT_BARS", "REAL_EPS_COLUMNS", "BAR_COLORS", "EPS_AXIS_LABEL", "MIXED_EPS_AXIS_LABEL"]

#: Summary columns drawn as bars of the appendix figures (Chadha et al. 2024, App. E), in order.
APPENDIX_BARS = {
    "data_independent": "data-independent theory",
    "data_dependent": "data-dependent theory",
    "exact": "exact",
    "two_cut_cp": "2-cut audit",
    "k_cut": "k-cut audit",
}

#: The sound transcript-level columns (issue 13 §1) drawn beside the paper's when a summary has them.
SOUND_BARS = {
    "transcript_cap": "transcript cap D_α(H_S‖H_S') (sound)",
    "exact_transcript": "exact (sound: transcript)",
    "two_cut_transcript": "2-cut audit (sound: transcript)",
}

#: Bars that are ε values already (no Thm 1 conversion; issue 13 §3): the exact ε of the transcript
#: (dp-accounting PLD, the tight upper reference) and the valid ε lower bound of the transcript
#: audit (Eq. (1)); ``*_joint``: the same for the joint Pois-NatQ transcript (all natural
#: queries on one training draw, :mod:`ppaudit.experiments.chadha2024.pate_capc_joint`).
EPS_BARS = {
    "exact_eps_pld": "exact ε (PLD, sound: transcript)",
    "valid_eps_lower": "valid ε lower bound (transcript)",
}

#: The joint Pois-NatQ transcript ("sound: joint transcript"), beside the paper's per-query sum.
JOINT_BARS = {
    "joint_cap": "joint cap (sound: joint transcript)",
    "exact_joint": "exact (sound: joint transcript)",
    "two_cut_joint": "2-cut audit (sound: joint transcript)",
    "exact_eps_pld_joint": "exact ε (PLD, sound: joint transcript)",
    "valid_eps_lower_joint": "valid ε lower bound (Eq. 1, joint transcript)",
}

#: Columns of :data:`EPS_BARS` and :data:`JOINT_BARS` that are real ε values (the others are RDP on the ε scale).
REAL_EPS_COLUMNS = ("exact_eps_pld", "valid_eps_lower", "exact_eps_pld_joint", "valid_eps_lower_joint")

#: The y axis of every ε bar: an RDP audit converted with Thm 1 is not a valid ε lower bound.
EPS_AXIS_LABEL = "RDP audit on the ε scale, Thm 1 conversion (δ = 1e-6)"

#: The y axis when real ε bars (PLD, Eq. (1)) stand beside the Thm 1 conversions.
MIXED_EPS_AXIS_LABEL = "ε at δ = 1e-6: RDP bars via Thm 1\n(RDP audit on the ε scale);\nPLD / Eq. 1 bars: ε itself"


def _eps_axis_label(table: pd.DataFrame) -> str:
    if "column" in table and table["column"].isin(REAL_EPS_COLUMNS).any():
        return MIXED_EPS_AXIS_LABEL
    return EPS_AXIS_LABEL

_PAPER = " (paper: per-query composition)"

#: Colour of each bar of the PATE/CaPC figures, by label prefix (the first that matches).
BAR_COLORS = {  # first matching prefix wins: the specific ones first
    "exact ε (PLD": "tab:brown",
    "valid ε lower bound": "tab:cyan",
    "joint cap": "tab:pink",
    "exact (sound: joint": "tab:olive",
    "2-cut audit (sound: joint": "tab:orange",
    "data-independent": "0.6",
    "data-dependent": "tab:red",
    "exact": "black",
    "2-cut audit": "tab:blue",
    "k-cut audit": "tab:green",
    "transcript cap": "tab:purple",
}


#: Reading order of the legend groups (one quantity, one colour each): theory, exact, audits, valid ε bounds.
LEGEND_ORDER = ("data-independent", "data-dependent", "transcript cap", "joint cap", "exact ε (PLD", "exact", "2-cut audit",
                "k-cut audit", "valid ε lower bound")


def _group(bar: str) -> int:
    """The legend group of a bar: the position of its quantity in :data:`LEGEND_ORDER` (the longest matching prefix)."""
    hits = [(len(key), -k) for k, key in enumerate(LEGEND_ORDER) if str(bar).startswith(key)]
    return -max(hits)[1] if hits else len(LEGEND_ORDER)


def _color(bar: str, i: int) -> str:
    for key, col in BAR_COLORS.items():
        if bar.startswith(key):
            return col
    return plt.cm.tab10(i % 10)


def _bars(ax, table: pd.DataFrame, floor: float | None):
    datasets = list(dict.fromkeys(table["dataset"]))
    bars = list(dict.fromkeys(table["bar"]))
    width = 0.8 / max(len(bars), 1)
    x = np.arange(len(datasets))
    for i, bar in enumerate(bars):
        vals = [table.loc[(table["dataset"] == d) & (table["bar"] == bar), "epsilon"].squeeze() if ((table["dataset"] == d) & (table["bar"] == bar)).any() else np.nan for d in datasets]
        # colour: the quantity; hatch: the adversary (//) and the procedure (dots: sound, ours; xx: joint)
        ax.bar(x + (i - (len(bars) - 1) / 2) * width, np.asarray(vals, dtype=float), width, label=bar, color=_color(bar, i),
               hatch=procedure_hatch(bar), edgecolor="white", linewidth=0.0)
    if floor is not None:
        ax.axhline(floor, color="0.3", linewidth=0.8, linestyle=":", label=f"zero-RDP floor ε = {floor:.3g}")
    ax.set_xticks(x, datasets)
    ax.set_yscale("log")
    ax.grid(True, axis="y", which="both", alpha=0.3)


def plot_leakage_panels(table: pd.DataFrame, title: str, floor: float | None = None, footer: str | None = None):
    """One panel per algorithm (Figs. 3–4): grouped ε bars per dataset.

    Args:
        table: columns ``algo``, ``dataset``, ``bar`` (legend label), ``epsilon``; panels and
            bars in order of first appearance.
        title: figure title.
        floor: ε of a zero RDP curve (drawn as a dotted line).
        footer: a line under the panels (e.g. :func:`confidence_footer`).
    """
    algos = list(dict.fromkeys(table["algo"]))
    legend = {}  # every bar of every panel, once (the panels draw different bars)
    # room under the panels for the legend, grouped by quantity (colour), two columns
    nbars = table["bar"].nunique() + (floor is not None)
    width = max(9.0, 4.2 * len(algos))
    rows = (nbars + 1) // 2
    legend_in = 0.16 * rows + 0.1
    height = 3.6 + legend_in
    fig, axes = plt.subplots(1, len(algos), figsize=(width, height), squeeze=False)
    for ax, algo in zip(axes[0], algos):
        _bars(ax, table[table["algo"] == algo], floor)
        ax.set_title(algo, fontsize=10)
        ax.set_ylabel(_eps_axis_label(table[table["algo"] == algo]), fontsize=7)
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    order = sorted(legend, key=lambda lab: (_group(lab), list(legend).index(lab)))
    fig.suptitle(title, fontsize=10)
    fig.set_size_inches(width, height + footer_inches(footer, width)[1])
    foot = add_footer(fig, footer)
    leg_frac = legend_in / fig.get_size_inches()[1]
    fig.legend([legend[k] for k in order], order, loc="lower center", bbox_to_anchor=(0.5, foot), ncol=2, fontsize=7,
               frameon=False, title="colour: quantity · hatch //: Pois-AdvQ · dots: sound (ours) · plain: the paper's procedure",
               title_fontsize=7)
    fig.tight_layout(rect=(0, foot + leg_frac, 1, 1))
    return fig


#: The footer's caveat (issue #34 §3): the union bound is exact for the Clopper–Pearson 2-cut, but the k-cut's
#: simultaneous intervals (Goodman, Sison–Glaz) are asymptotic (ppaudit.audit.bounds), so for them "at once" is too.
ASYMPTOTIC_NOTE = "the k-cut's Goodman / Sison–Glaz intervals are asymptotic, so its share of that confidence is too"
#: What the PATE / CaPC footer's union bound covers (issue 27 §1).
PATE_CAPC_AUDITS = ("2-cut, k-cut and transcript audits of each candidate and query, again for the null-canary controls, "
                    "and the joint audits")


def confidence_footer(summaries, adversaries, covers: str = PATE_CAPC_AUDITS, labels=None) -> str:
    """The confidence that holds for the bars of Figs. 3–4 (PATE / CaPC) or 5 (Private-kNN), as one line per algorithm.

    Per algorithm and adversary, the smallest ``simultaneous_confidence`` over its datasets
    (:func:`ppaudit.audit.simultaneous_confidence`: the union bound over every audit that was
    run — PATE / CaPC: the 2-cut, k-cut and transcript audits of each (candidate, query), the
    same for the null-canary control, and the joint audits; Private-kNN: the 2-cut, k-cut and
    per-query ε bound of each (candidate, query) and the whole-transcript audits; pruning slack
    included), the number of audits it covers (``num_audits``, the largest over the datasets,
    when the summaries have it) and the multiplicity correction. Every bar of the adversary, the
    sums over queries, the worst candidate and the comparisons between bars hold together at
    that level. Summaries without the column (PromptPATE) are skipped.

    Args:
        summaries: summary tables (columns algo, adversary, simultaneous_confidence, multiplicity;
            optional num_audits).
        adversaries: the adversaries of the figure.
        covers: the audits the union bound counts, in words (:data:`PATE_CAPC_AUDITS`,
            :data:`ppaudit.plots.knn.KNN_AUDITS`).
        labels: adversary → label (default: Nat-AdvQ, Pois-AdvQ, Pois-NatQ; others by name).

    Returns:
        The footer text, the caveat :data:`ASYMPTOTIC_NOTE` on its last line; empty when no summary has the column.
    """
    names = {**_ADV_LABEL, **dict(labels or {})}
    parts = []
    for s in summaries:
        if "simultaneous_confidence" not in s.columns:
            continue
        s = s[s["adversary"].isin(list(adversaries))]
        for algo, g in s.groupby("algo", sort=False):
            each = []
            for adv, h in g.groupby("adversary", sort=False):
                n = f" (N = {int(h['num_audits'].max())})" if "num_audits" in h.columns else ""
                each.append(f"{names.get(adv, adv)} ≥ {float(h['simultaneous_confidence'].min()):.4f}{n}")
            parts.append(f"{algo}: {', '.join(each)} ({'; '.join(sorted(set(g['multiplicity'].astype(str))))})")
    if not parts:
        return ""
    return (f"per algorithm, dataset and adversary, every audit run ({covers}) holds at once (union bound over its N "
            "audits, pruning slack included; smallest over the datasets) with confidence " + "; ".join(parts)
            + f"\n{ASYMPTOTIC_NOTE}")


def plot_appendix_figure(bars: pd.DataFrame, rdp: pd.DataFrame, title: str, rdp_title: str, floor: float | None = None):
    """Appendix E figure: ε bars (theory, exact, 2-cut and k-cut audits) + RDP vs order.

    Args:
        bars: columns ``dataset``, ``bar``, ``epsilon``.
        rdp: column ``order`` + one column per curve (legend label = column name).
        title, rdp_title: titles of the figure and of the RDP panel.
        floor: ε of a zero RDP curve.
    """
    nbars = bars["bar"].nunique() + (floor is not None)
    extra = 0.17 * ((nbars + 1) // 2)  # the bar legend goes under the bars, two columns
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11.0, 4.4 + extra))
    _bars(ax0, bars, floor)
    ax0.set_ylabel(_eps_axis_label(bars), fontsize=7)
    ax0.legend(fontsize=6.5, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2)
    for i, col in enumerate(c for c in rdp.columns if c != "order"):
        y = rdp[col].to_numpy(dtype=float)
        y = np.where(y > 0, y, np.nan)
        # colour: the quantity; line style: the procedure (dashed: sound, ours; dotted: joint); marker: an audit
        ls = ":" if "joint" in col else ("--" if "sound" in col else "-")
        ax1.plot(rdp["order"], y, marker="o" if "audit" in col else None, markersize=3, label=col, color=_color(col, i), linestyle=ls)
    ax1.set_xscale("log", base=2)
    ax1.set_yscale("log")
    ax1.set_xlabel("Rényi order α")
    ax1.set_ylabel("composed RDP ε(α) (0 not drawn)")
    ax1.set_title(rdp_title, fontsize=9)
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=7, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, extra / (4.4 + extra), 1, 1))
    return fig


def appendix_panels(summary: pd.DataFrame, rdp: pd.DataFrame, case: str, panel_dataset: str, columns=tuple(APPENDIX_BARS)):
    """The numbers of one appendix figure (App. E.1–E.4: PATE, CaPC, PromptPATE, Private-kNN).

    When the summary holds the sound transcript-level columns (:data:`SOUND_BARS`; PATE and
    CaPC, issue 13 §1) they are drawn beside the paper's, whose exact and audit bars are then
    labelled "(paper: per-query composition)". The ε bars of Figs. 3/4 follow as in
    :func:`fig34_table`: the exact ε of the transcript (PLD) and the valid ε lower bound of the
    transcript audit (Rao–Blackwellised by default, :func:`ppaudit.audit.rao_blackwell_transcript_audit`;
    Eq. (1) on sampled transcripts otherwise) — :data:`EPS_BARS`, real ε values, no Thm 1 conversion — and, for
    Pois-NatQ, the joint transcript of all natural queries on one training draw
    (:data:`JOINT_BARS`). These are bars only (they are not RDP curves of ``rdp``); a NaN (e.g.
    the PLD of a multi-query candidate, or a joint model that did not enumerate) is not drawn.

    Args:
        summary: summary rows of one adversary and case (columns dataset, column, epsilon,
            candidate), any datasets.
        rdp: composed RDP per candidate (columns candidate, order and ``columns``) of the
            panel dataset.
        case: ``"worst"`` (the RDP curve of the worst candidate of ``panel_dataset``) or
            ``"average"`` (the mean curve over the candidates).
        panel_dataset: the dataset of the RDP panel.
        columns: which of :data:`APPENDIX_BARS` to draw (Private-kNN has no data-dependent bound).

    Returns:
        ``(bars, curve, which, plotted)``: ε bars (dataset, bar, column, epsilon), the RDP
        curves (order + one column per bar name), a description of the curve, and the long
        table of every plotted number (panel, dataset, bar, order, value).

    Raises:
        ValueError: no summary row with the columns asked for.
    """
    have = set(summary["column"])
    sound = {c: n for c, n in SOUND_BARS.items() if c in have and c in rdp.columns}
    names = {c: APPENDIX_BARS[c] for c in columns}
    if sound:
        names = {c: (n + _PAPER if c in ("exact", "two_cut_cp", "k_cut") else n) for c, n in names.items()}
        names.update(sound)
        finite = set(summary.loc[np.isfinite(summary["epsilon"].to_numpy(dtype=float)), "column"])
        bar_only = {c: n for c, n in {**EPS_BARS, **JOINT_BARS}.items() if c in finite}
        names.update(bar_only)
    curve_cols = [c for c in names if c in rdp.columns]
    s = summary[summary["column"].isin(list(names)) & np.isfinite(summary["epsilon"].to_numpy(dtype=float))]
    if s.empty:
        raise ValueError(f"no summary rows with columns {list(names)} for the {case} case")
    bars = pd.DataFrame([{"dataset": r.dataset, "bar": names[r.column], "column": r.column, "epsilon": float(r.epsilon)} for r in s.itertuples()])
    bars = bars.iloc[np.argsort(bars["column"].map(list(names).index).to_numpy(), kind="stable")].reset_index(drop=True)
    ncand = rdp["candidate"].nunique()
    if case == "worst":
        cand = int(s.loc[s["dataset"] == panel_dataset, "candidate"].iloc[0])
        curve = rdp[rdp["candidate"] == cand].sort_values("order")
        which = f"worst of {ncand} candidate(s) (#{cand})"
    else:
        curve = rdp.groupby("order", as_index=False)[curve_cols].mean()
        which = f"mean over {ncand} candidates"
    curve = curve[["order", *curve_cols]].astype(float).rename(columns=names).reset_index(drop=True)
    plotted = pd.concat(
        [
            bars.assign(panel="bars").rename(columns={"epsilon": "value"}),
            curve.melt(id_vars="order", var_name="bar", value_name="value").assign(panel="rdp", dataset=panel_dataset),
        ],
        ignore_index=True,
    )[["panel", "dataset", "bar", "order", "value"]]
    return bars, curve, which, plotted


_ADV_LABEL = {"nat-advq": "Nat-AdvQ", "pois-advq": "Pois-AdvQ", "pois-natq": "Pois-NatQ"}


def fig34_table(summaries, adversaries) -> pd.DataFrame:
    """The bars of Figs. 3 and 4 (Chadha et al. 2024, §5.4): worst case, one panel per algorithm.

    Per (algorithm, dataset): the data-independent theory (of the first adversary), the
    data-dependent theory and the exact ε per adversary, and the 2-cut audit per adversary.
    Where a summary holds the sound transcript-level values (PATE, CaPC; issue 13 §1), the
    exact and audit bars of the paper's per-query composition are labelled so and the sound
    "exact (sound: transcript)" / "2-cut audit … (sound: transcript)" bars follow them, with
    the exact ε of the transcript (dp-accounting PLD; the tight upper reference) and the valid ε
    lower bound of the transcript audit (Rao–Blackwellised by default) — real ε values, unlike the Thm 1 conversions.
    Pois-NatQ summaries with the joint audit (:mod:`ppaudit.experiments.chadha2024.pate_capc_joint`) add
    the :data:`JOINT_BARS` ("sound: joint transcript": one training draw for all natural
    queries; the paper's per-query sum assumes one independent training run per query).

    Args:
        summaries: summary tables (columns algo, dataset, adversary, case, column, epsilon).
        adversaries: Fig. 3: ``["nat-advq", "pois-advq"]``; Fig. 4: ``["pois-natq"]``.

    Returns:
        Columns algo, dataset, bar, adversary, column, epsilon (one row per bar).

    Raises:
        ValueError: no adversary given.
    """
    advs = list(adversaries)
    if not advs:
        raise ValueError("adversaries must name at least one adversary")
    rows = []
    for s in summaries:
        s = s[(s["case"] == "worst") & s["adversary"].isin(advs)]
        for (algo, ds), g in s.groupby(["algo", "dataset"], sort=False):
            get = lambda adv, col: g.loc[(g["adversary"] == adv) & (g["column"] == col), "epsilon"]  # noqa: E731, B023
            sound = "exact_transcript" in set(g["column"])
            paper = _PAPER if sound else ""
            di = get(advs[0], "data_independent")
            if len(di):
                rows.append({"algo": algo, "dataset": ds, "bar": "data-independent theory", "adversary": advs[0], "column": "data_independent", "epsilon": float(di.iloc[0])})
            tag = (lambda a: f" ({_ADV_LABEL.get(a, a)})") if len(advs) > 1 else (lambda a: "")
            cols = [("data_dependent", "data-dependent theory"), ("exact", "exact" + paper)]
            if sound:
                cols.append(("exact_transcript", "exact (sound: transcript)"))
            for col, name in cols:
                for adv in advs:
                    v = get(adv, col)
                    if len(v):
                        rows.append({"algo": algo, "dataset": ds, "bar": name + tag(adv), "adversary": adv, "column": col, "epsilon": float(v.iloc[0])})
            for col, name in (("exact_eps_pld", "exact ε (PLD, sound: transcript)"), ("valid_eps_lower", "valid ε lower bound (transcript)")):
                for adv in advs:
                    v = get(adv, col)
                    if len(v) and sound and np.isfinite(v.iloc[0]):  # NaN: not computed (e.g. PLD of a multi-query candidate)
                        rows.append({"algo": algo, "dataset": ds, "bar": name + tag(adv), "adversary": adv, "column": col, "epsilon": float(v.iloc[0])})
            for col, suffix in (("two_cut_cp", paper), ("two_cut_transcript", " (sound: transcript)")):
                for adv in advs:
                    v = get(adv, col)
                    if len(v):
                        rows.append({"algo": algo, "dataset": ds, "bar": f"2-cut audit {_ADV_LABEL.get(adv, adv)}{suffix}", "adversary": adv, "column": col,
                                     "epsilon": float(v.iloc[0])})
            for col, name in JOINT_BARS.items():  # Pois-NatQ: all natural queries on one training draw
                for adv in advs:
                    v = get(adv, col)
                    if len(v) and np.isfinite(v.iloc[0]):
                        rows.append({"algo": algo, "dataset": ds, "bar": name + tag(adv), "adversary": adv, "column": col, "epsilon": float(v.iloc[0])})
    return pd.DataFrame(rows, columns=["algo", "dataset", "bar", "adversary", "column", "epsilon"])
