"""Rule plot_obs_fig4: Obs. Fig. 4 — empirical ε of binary RR against the counterfactual shift τ.

Makes ``pdf``/``png`` (:func:`ppaudit.plots.labeldp.plot_tau_shift`) and ``csv``: the τ-shift
summary (every plotted number). Inputs: ``summary`` (audit_rr_tau_shift). Params: title.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_obs_rr")  # noqa: F821

import pandas as pd

from ppaudit.plots.style import write_figure_outputs
from ppaudit.plots.labeldp import plot_tau_shift

s = pd.read_csv(snakemake.input.summary)  # noqa: F821
fig = plot_tau_shift(s, snakemake.params.title)  # noqa: F821
write_figure_outputs(fig, s, snakemake.output)  # noqa: F821
