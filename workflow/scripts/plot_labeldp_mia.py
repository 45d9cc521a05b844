"""Rule plot_labeldp_mia: Obs. Fig. 1 (LIA vs calibration MIA) or Fig. 5 (+ offline RMIA) from the audit CSVs.

Makes ``pdf``/``png`` (:func:`ppaudit.plots.labeldp.plot_mia_comparison`) and ``csv``: every
plotted number (:func:`ppaudit.plots.labeldp.mia_comparison_table`).
Inputs: ``audits`` (audit_labeldp_models). Params: attacks, title.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_labeldp_mia")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.plots.style import write_figure_outputs  # noqa: E402
from ppaudit.plots.labeldp import mia_comparison_table, plot_mia_comparison  # noqa: E402

p = snakemake.params  # noqa: F821
audits = pd.concat([pd.read_csv(f) for f in snakemake.input.audits], ignore_index=True)  # noqa: F821
table = mia_comparison_table(audits, list(p.attacks))
fig = plot_mia_comparison(table, list(p.attacks), p.title)
write_figure_outputs(fig, table, snakemake.output)  # noqa: F821
log.info("\n%s", table.to_string(index=False))
