"""Snakemake script of rule plot_wang_defence_caching: the answer-caching defence of Wang et al. 2022, §5.

Inputs ``reconstruction``, ``audits`` (rule audit_wang_caching) and ``pate`` (rule
audit_wang_caching_pate). Params: floor (ε of an all-zero RDP curve). Outputs ``pdf``/``png``
(:func:`ppaudit.plots.wang.plot_caching_defence`) and ``csv`` (every plotted number).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_wang_defence_caching")  # noqa: F821

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.plots.style import write_figure_outputs  # noqa: E402
from ppaudit.plots.wang import plot_caching_defence  # noqa: E402

inp = snakemake.input  # noqa: F821
fig, table = plot_caching_defence(pd.read_csv(inp.reconstruction), pd.read_csv(inp.audits), pd.read_csv(inp.pate), floor=snakemake.params.floor)  # noqa: F821
write_figure_outputs(fig, table, snakemake.output)  # noqa: F821
plt.close(fig)
