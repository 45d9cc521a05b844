"""Snakemake script of rules plot_obs_rr (Figs. 2–3) and plot_obs_fig4 (τ shift).

Inputs: ``summary``. Params: kind ("rr"/"tau"), guess_fraction (rr), title. Outputs: pdf, png, csv.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_obs_rr")  # noqa: F821

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.io import save_figure, write_csv  # noqa: E402
from ppaudit.plots.labeldp import plot_rr, plot_tau_shift  # noqa: E402

p = snakemake.params  # noqa: F821
s = pd.read_csv(snakemake.input.summary)  # noqa: F821
if p.kind == "rr":
    fig = plot_rr(s, float(p.guess_fraction), p.title)
    s = s[np.isclose(s["guess_fraction"], float(p.guess_fraction))]
else:
    fig = plot_tau_shift(s, p.title)
write_csv(s, snakemake.output.csv)  # noqa: F821
save_figure(fig, snakemake.output.pdf)  # noqa: F821
save_figure(fig, snakemake.output.png)  # noqa: F821
