"""Snakemake script of rule plot_chadha_fig5 (Fig. 5, §6): worst-case ε at δ per dataset.

Left: data-independent theory and the 2-cut audit of every adversary; right: the Pois-NatQ
poisons from the test set, the train set and the embedding space (the bars:
ppaudit.plots.knn.fig5_table). Input: ``summary`` (every kNN summary). Params: floor,
labels (adversary → legend label), title. Output csv: panel, dataset, bar, adversary,
column, epsilon (audit, exact and theory). The figure's footer (also logged, "footer: ...") states
the confidence with which every Private-kNN audit that was run holds at once, per dataset and
adversary (ppaudit.plots.knn.knn_confidence_footer: summary.csv simultaneous_confidence over
num_audits audits, issue 27 §1).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.plots.style import write_figure_outputs  # noqa: E402
from ppaudit.plots.knn import fig5_table, knn_confidence_footer, plot_knn_fig5  # noqa: E402

p = snakemake.params  # noqa: F821
summary = pd.read_csv(snakemake.input.summary)  # noqa: F821
table = fig5_table(summary, dict(p.labels))
footer = knn_confidence_footer(summary, dict(p.labels))
log.info("plotted:\n%s", table.to_string(index=False))
log.info("footer: %s", footer)
fig = plot_knn_fig5(table, p.title, floor=p.floor, footer=footer)
write_figure_outputs(fig, table, snakemake.output)  # noqa: F821
