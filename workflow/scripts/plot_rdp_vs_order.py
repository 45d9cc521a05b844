"""Snakemake script of rules plot_chadha_fig2 / plot_chadha_fig6: RDP against the order α.

Input: ``table`` (CSV of rule audit_synthetic_pair). Params: ``methods`` (curves to draw,
in legend order), ``title``. Outputs: ``pdf``, ``png`` and ``csv`` (every plotted number:
the order and one column per drawn curve).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.experiments.synthetic import METHODS  # noqa: E402
from ppaudit.io import save_figure, write_csv  # noqa: E402
from ppaudit.plots.chadha import UPPER_BOUNDS, legend_labels, plot_rdp_vs_order  # noqa: E402

table = pd.read_csv(snakemake.input.table)  # noqa: F821
methods = list(snakemake.params.methods)  # noqa: F821
missing = [m for m in methods if m not in table.columns]
if missing:
    raise ValueError(f"{snakemake.input.table} has no column(s) {missing}; it has {list(table.columns)}")  # noqa: F821
columns = [m for m in METHODS if m in methods]
plotted = table[["order", *columns]]
log.info("plotting %s", columns)

labels = legend_labels(plotted, {m: METHODS[m] for m in columns})
audits = [m for m in columns if m not in UPPER_BOUNDS]
# With several audits, a lower panel shows each divided by the exact RDP (App. B's point).
ratio_to = "exact" if "exact" in columns and len(audits) > 1 else None
fig = plot_rdp_vs_order(plotted, labels, snakemake.params.title, ratio_to=ratio_to)  # noqa: F821
save_figure(fig, snakemake.output.pdf)  # noqa: F821
save_figure(fig, snakemake.output.png)  # noqa: F821
write_csv(plotted, snakemake.output.csv)  # noqa: F821
log.info("wrote %s", list(snakemake.output))  # noqa: F821
