"""Rule plot_obs_rr: Obs. Fig. 2 (0.1 % guesses) or Fig. 3 (1 % guesses) — empirical vs theoretical ε of k-ary RR.

Makes ``pdf``/``png`` (:func:`ppaudit.plots.labeldp.plot_rr`) and ``csv``: the rows of the RR
summary at the figure's guess fraction (every plotted number).
Inputs: ``summary`` (audit_rr_synthetic). Params: guess_fraction, title.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_obs_rr")  # noqa: F821

import numpy as np
import pandas as pd

from ppaudit.plots.style import write_figure_outputs
from ppaudit.plots.labeldp import plot_rr

p = snakemake.params  # noqa: F821
s = pd.read_csv(snakemake.input.summary)  # noqa: F821
fig = plot_rr(s, float(p.guess_fraction), p.title)
write_figure_outputs(fig, s[np.isclose(s["guess_fraction"], float(p.guess_fraction))], snakemake.output)  # noqa: F821
