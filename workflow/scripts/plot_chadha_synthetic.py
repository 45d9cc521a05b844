"""Snakemake script of rule plot_chadha_synthetic (Figs. 2 and 6, wildcard ``experiment``): RDP against the order α of one synthetic pair.

Input: ``table`` (CSV of rule audit_synthetic_pair). Params: ``methods`` (curves to draw),
``title`` (ppaudit.plots.chadha.synthetic_title). Outputs: ``pdf``, ``png`` and ``csv``
(every plotted number: the order and one column per drawn curve), from
ppaudit.plots.chadha.synthetic_figure.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.plots.style import write_figure_outputs  # noqa: E402
from ppaudit.plots.chadha import synthetic_figure  # noqa: E402

fig, plotted = synthetic_figure(pd.read_csv(snakemake.input.table), snakemake.params.methods, snakemake.params.title)  # noqa: F821
log.info("plotted %s", list(plotted.columns[1:]))
write_figure_outputs(fig, plotted, snakemake.output)  # noqa: F821
log.info("wrote %s", list(snakemake.output))  # noqa: F821
