"""Snakemake script of rule plot_chadha_fig34 (Figs. 3 and 4): ε at δ, worst case, one panel
per algorithm.

Input: ``summaries`` — a list of per-algorithm summary CSVs (columns algo, dataset,
adversary, case, column, epsilon; PromptPATE adds its own to the list). Params:
``adversaries`` (Fig. 3: nat-advq, pois-advq; Fig. 4: pois-natq), ``floor``, ``title``.
Outputs: pdf, png, csv (algo, dataset, bar, adversary, column, epsilon) — the bars of
ppaudit.plots.pate_capc.fig34_table (the paper's per-query composition and, for PATE / CaPC,
the sound transcript-level values); the figure's footer (also logged, "footer: ...") states the confidence with
which every PATE / CaPC audit that was run holds at once (ppaudit.plots.pate_capc.confidence_footer).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.plots.style import write_figure_outputs  # noqa: E402
from ppaudit.plots.pate_capc import confidence_footer, fig34_table, plot_leakage_panels  # noqa: E402

p = snakemake.params  # noqa: F821
summaries = [pd.read_csv(path) for path in snakemake.input.summaries]  # noqa: F821
table = fig34_table(summaries, p.adversaries)
footer = confidence_footer(summaries, p.adversaries)
log.info("plotted:\n%s", table.to_string(index=False))
log.info("footer: %s", footer)
fig = plot_leakage_panels(table, p.title, floor=p.floor, footer=footer)
write_figure_outputs(fig, table, snakemake.output)  # noqa: F821
