"""Snakemake script of rule plot_wang_error_per_sigma: Wang et al. 2022 Fig. 6 or 7, error per σ and privacy cost of the query-limited attacker.

Wildcard ``sigmafig`` (fig6: the first of wang2022.figure_datasets, fig7: the second). Input
``attacks`` (rule attack_wang_histograms, that dataset). Params: title (the dataset's),
num_queries. Outputs ``pdf``/``png`` (:func:`ppaudit.plots.wang.plot_error_per_sigma`, titled
by :func:`ppaudit.plots.wang.error_per_sigma_title`) and ``csv`` (every bar and dot with its solver).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_wang_error_per_sigma")  # noqa: F821

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.plots.style import write_figure_outputs  # noqa: E402
from ppaudit.plots.wang import error_per_sigma_title, plot_error_per_sigma  # noqa: E402

p = snakemake.params  # noqa: F821
attacks = pd.read_csv(snakemake.input.attacks)  # noqa: F821
fig, table = plot_error_per_sigma(attacks, error_per_sigma_title(p.title, attacks, p.num_queries))
write_figure_outputs(fig, table, snakemake.output)  # noqa: F821
plt.close(fig)
