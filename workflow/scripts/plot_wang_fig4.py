"""Snakemake script of rule plot_wang_fig4: Wang et al. 2022 Fig. 4, error of the budget-limited attacker per histogram.

Inputs ``attacks`` (rule attack_wang_histograms, one CSV per figure dataset). Params: titles.
Outputs ``pdf``/``png`` (:func:`ppaudit.plots.wang.plot_budget_errors`, one bar per solver)
and ``csv`` (every bar).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_wang_fig4")  # noqa: F821

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.plots.style import write_figure_outputs  # noqa: E402
from ppaudit.plots.wang import plot_budget_errors  # noqa: E402

attacks = {title: pd.read_csv(path) for title, path in zip(snakemake.params.titles, snakemake.input.attacks)}  # noqa: F821
fig, table = plot_budget_errors(attacks)
write_figure_outputs(fig, table, snakemake.output)  # noqa: F821
plt.close(fig)
