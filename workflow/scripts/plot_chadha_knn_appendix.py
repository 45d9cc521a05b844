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
from ppaudit.plots.pate_capc import appendix_panels, plot_appendix_figure  # noqa: E402

# Private-kNN's theory is data-independent only (subsampled Gaussian, §6).
COLUMNS = ("data_independent", "exact", "two_cut_cp", "k_cut")
p = snakemake.params  # noqa: F821
s = pd.read_csv(snakemake.input.summary)  # noqa: F821
s = s[(s["adversary"] == p.adversary) & (s["case"] == p.case)]
bars, curve, which, plotted = appendix_panels(s, pd.read_csv(snakemake.input.rdp), p.case, p.panel_dataset, COLUMNS)  # noqa: F821
fig = plot_appendix_figure(bars, curve, p.title, f"composed RDP on {p.panel_dataset}, {which}", floor=p.floor)
log.info("plotted:\n%s", plotted.to_string(index=False))
save_figure(fig, snakemake.output.pdf)  # noqa: F821
save_figure(fig, snakemake.output.png)  # noqa: F821
write_csv(plotted, snakemake.output.csv)  # noqa: F821
