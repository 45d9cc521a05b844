"""Snakemake script of rules plot_chadha_fig2 / plot_chadha_fig6: RDP against the order α.

Input: ``table`` (CSV of rule audit_synthetic_pair). Params: ``methods`` (curves to draw,
in legend order), ``title``. Outputs: ``pdf``, ``png`` and ``csv`` (every plotted number:
the order and one column per drawn curve).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib import ticker  # noqa: E402

from ppaudit.experiments.synthetic import METHODS  # noqa: E402
from ppaudit.io import save_figure, write_csv  # noqa: E402
from ppaudit.plots.chadha import plot_rdp_vs_order  # noqa: E402

table = pd.read_csv(snakemake.input.table)  # noqa: F821
methods = list(snakemake.params.methods)  # noqa: F821
missing = [m for m in methods if m not in table.columns]
if missing:
    raise ValueError(f"{snakemake.input.table} has no column(s) {missing}; it has {list(table.columns)}")  # noqa: F821
columns = [m for m in METHODS if m in methods]
plotted = table[["order", *columns]]
log.info("plotting %s", columns)

# Legend notes for what the eye cannot see: a curve hidden under an identical earlier one
# (e.g. the data-dependent bound falls back to α/σ² when it does not apply), and a lower
# bound of 0 (nothing detected), which has no place on the log RDP axis.
labels = {}
for i, m in enumerate(columns):
    labels[m] = METHODS[m]
    same = [c for c in columns[:i] if np.allclose(plotted[m], plotted[c], rtol=1e-12, atol=0)]
    if same:
        labels[m] += f"\n  = {METHODS[same[0]].split(' (')[0].lower()} at every order"
    zeros = int((plotted[m] <= 0).sum())
    if zeros:
        labels[m] += f"\n  = 0 (nothing detected) at {zeros} of {len(plotted)} orders: not drawn"
        log.info("%s is 0 at %d orders (not drawn on the log axis)", m, zeros)

fig = plot_rdp_vs_order(plotted, labels, snakemake.params.title)  # noqa: F821
# Order axis: plain numbers at powers of two, no crowded minor labels.
ax = fig.axes[0]
ax.xaxis.set_major_locator(ticker.LogLocator(base=2))
ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}"))
ax.xaxis.set_minor_formatter(ticker.NullFormatter())
# Legend beside the axes, where it hides no curve however many there are.
fig.set_size_inches(9.0, 4.2)
ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8, frameon=False)
fig.tight_layout()
save_figure(fig, snakemake.output.pdf)  # noqa: F821
save_figure(fig, snakemake.output.png)  # noqa: F821
write_csv(plotted, snakemake.output.csv)  # noqa: F821
log.info("wrote %s", list(snakemake.output))  # noqa: F821
