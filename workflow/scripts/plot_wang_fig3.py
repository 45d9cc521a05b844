"""Snakemake script of rule plot_wang_fig3: Wang et al. 2022 Fig. 3, the consensus distribution per dataset.

Inputs ``histograms`` (rule train_wang_teachers, one npz per figure dataset). Params: titles.
Outputs ``pdf``/``png`` (:func:`ppaudit.plots.wang.plot_consensus_distribution` of
:func:`ppaudit.plots.wang.consensus_levels`) and ``csv`` (bins, tertile cuts, level sizes).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_wang_fig3")  # noqa: F821

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ppaudit.plots.style import write_figure_outputs  # noqa: E402
from ppaudit.plots.wang import consensus_levels, plot_consensus_distribution  # noqa: E402

histograms = {title: np.load(path)["histograms"] for title, path in zip(snakemake.params.titles, snakemake.input.histograms)}  # noqa: F821
fig, table = plot_consensus_distribution(consensus_levels(histograms))
write_figure_outputs(fig, table, snakemake.output)  # noqa: F821
plt.close(fig)
