"""Snakemake script of rule plot_chadha_appendix (Figs. 7–16, App. E.1–E.2): ε bars per dataset
(theory, exact, 2-cut and k-cut audits) for one algorithm, adversary and case, plus the
composed RDP against the order on one dataset.

Inputs: ``summary`` (the algorithm's summaries), ``rdp`` (composed RDP per candidate of the
panel dataset). Params: algo, adversary, case, panel_dataset, floor, title.
Output csv: panel (``bars`` or ``rdp``), dataset, bar / order, column, value.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.io import save_figure, write_csv  # noqa: E402
from ppaudit.plots.pate_capc import appendix_panels, plot_appendix_figure  # noqa: E402

p = snakemake.params  # noqa: F821
s = pd.read_csv(snakemake.input.summary)  # noqa: F821
s = s[(s["adversary"] == p.adversary) & (s["case"] == p.case)]
bars, curve, which, plotted = appendix_panels(s, pd.read_csv(snakemake.input.rdp), p.case, p.panel_dataset)  # noqa: F821
fig = plot_appendix_figure(bars, curve, p.title, f"composed RDP on {p.panel_dataset}, {which}", floor=p.floor)
log.info("plotted:\n%s", plotted.to_string(index=False))
save_figure(fig, snakemake.output.pdf)  # noqa: F821
save_figure(fig, snakemake.output.png)  # noqa: F821
write_csv(plotted, snakemake.output.csv)  # noqa: F821
