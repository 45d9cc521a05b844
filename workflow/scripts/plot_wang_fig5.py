"""Snakemake script of rule plot_wang_fig5: Wang et al. 2022 Fig. 5, reconstruction error against privacy cost.

Inputs ``attacks`` (rule attack_wang_histograms, one CSV per figure dataset). Params: titles.
Outputs ``pdf``/``png`` (:func:`ppaudit.plots.wang.plot_error_vs_cost`) and ``csv`` (every point).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_wang_fig5")  # noqa: F821

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.plots.style import write_figure_outputs  # noqa: E402
from ppaudit.plots.wang import plot_error_vs_cost  # noqa: E402

attacks = {title: pd.read_csv(path) for title, path in zip(snakemake.params.titles, snakemake.input.attacks)}  # noqa: F821
fig, table = plot_error_vs_cost(attacks)
write_figure_outputs(fig, table, snakemake.output)  # noqa: F821
plt.close(fig)
