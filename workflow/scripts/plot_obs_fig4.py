"""Rule plot_obs_fig4: Obs. Fig. 4 — empirical ε of binary RR against the counterfactual shift τ.

Makes ``pdf``/``png`` (:func:`ppaudit.plots.labeldp.plot_tau_shift`) and ``csv``: the τ-shift
summary (every plotted number). Inputs: ``summary`` (audit_rr_tau_shift). Params: title.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_obs_rr")  # noqa: F821

import pandas as pd

from ppaudit.io import save_figure, write_csv
from ppaudit.plots.labeldp import plot_tau_shift

s = pd.read_csv(snakemake.input.summary)  # noqa: F821
fig = plot_tau_shift(s, snakemake.params.title)  # noqa: F821
write_csv(s, snakemake.output.csv)  # noqa: F821
save_figure(fig, snakemake.output.pdf)  # noqa: F821
save_figure(fig, snakemake.output.png)  # noqa: F821
