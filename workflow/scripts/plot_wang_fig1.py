"""Snakemake script of rule plot_wang_fig1: Wang et al. 2022 Fig. 1, PhD detection by low consensus on UCI Adult.

Input ``consensus`` (rule attack_adult_histograms). Params: threshold. Outputs ``pdf``/``png``
(:func:`ppaudit.plots.wang.plot_phd_consensus`) and ``csv`` (every plotted number), for the
true and the reconstructed histograms (:func:`ppaudit.plots.wang.phd_consensus_summaries`).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_wang_fig1")  # noqa: F821

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.plots.style import write_figure_outputs  # noqa: E402
from ppaudit.plots.wang import phd_consensus_summaries, plot_phd_consensus  # noqa: E402

p = snakemake.params  # noqa: F821
summaries = phd_consensus_summaries(pd.read_csv(snakemake.input.consensus), p.threshold)  # noqa: F821
log.info("summaries: %s", summaries)
fig, table = plot_phd_consensus(summaries, p.threshold)
write_figure_outputs(fig, table, snakemake.output)  # noqa: F821
plt.close(fig)
