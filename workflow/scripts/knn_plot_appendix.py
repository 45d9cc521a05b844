"""Snakemake script of rule plot_chadha_knn_appendix (Figs. 25–31, App. E.4): ε bars per dataset
(data-independent theory, exact, 2-cut and k-cut audits) for one adversary and case, plus the
composed RDP against the order on one dataset (as Figs. 7–16 for PATE / CaPC).

Inputs: ``summary`` (every kNN summary), ``rdp`` (composed RDP per candidate of the panel
dataset). Params: adversary, case, panel_dataset, floor, title.
Output csv: panel (``bars`` or ``rdp``), dataset, bar, order, value.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.io import save_figure, write_csv  # noqa: E402
from ppaudit.plots.pate_capc import plot_appendix_figure  # noqa: E402

BARS = {
    "data_independent": "data-independent theory",
    "exact": "exact",
    "two_cut_cp": "2-cut audit",
    "k_cut": "k-cut audit",
}
p = snakemake.params  # noqa: F821
s = pd.read_csv(snakemake.input.summary)  # noqa: F821
s = s[(s["adversary"] == p.adversary) & (s["case"] == p.case) & s["column"].isin(list(BARS))]
bars = pd.DataFrame([{"dataset": r.dataset, "bar": BARS[r.column], "column": r.column, "epsilon": r.epsilon} for r in s.itertuples()])
bars["_o"] = bars["column"].map(list(BARS).index)
bars = bars.sort_values(["_o"], kind="stable").drop(columns="_o")
rdp = pd.read_csv(snakemake.input.rdp)  # noqa: F821
if p.case == "worst":
    cand = int(s.loc[s["dataset"] == p.panel_dataset, "candidate"].iloc[0])
    curve = rdp[rdp["candidate"] == cand].sort_values("order")
    which = f"worst candidate (#{cand})"
else:
    curve = rdp.groupby("order", as_index=False)[list(BARS)].mean()
    which = f"mean over {rdp['candidate'].nunique()} candidates"
curve = curve[["order", *BARS]].rename(columns=BARS).reset_index(drop=True)
fig = plot_appendix_figure(bars, curve, p.title, f"composed RDP on {p.panel_dataset}, {which}", floor=p.floor)
plotted = pd.concat(
    [
        bars.assign(panel="bars").rename(columns={"epsilon": "value"}),
        curve.melt(id_vars="order", var_name="bar", value_name="value").assign(panel="rdp", dataset=p.panel_dataset),
    ],
    ignore_index=True,
)[["panel", "dataset", "bar", "order", "value"]]
log.info("plotted:\n%s", plotted.to_string(index=False))
save_figure(fig, snakemake.output.pdf)  # noqa: F821
save_figure(fig, snakemake.output.png)  # noqa: F821
write_csv(plotted, snakemake.output.csv)  # noqa: F821
