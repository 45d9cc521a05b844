"""Snakemake script of rules plot_obs_fig1 / plot_obs_fig5: LIA vs MIA baselines from the audit CSVs.

Inputs: ``audits``. Params: attacks, title. Outputs: pdf, png, csv (every plotted number).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_labeldp_mia")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.experiments.labeldp_tables import algo_label  # noqa: E402
from ppaudit.io import save_figure, write_csv  # noqa: E402
from ppaudit.plots.labeldp import plot_mia_comparison  # noqa: E402

p = snakemake.params  # noqa: F821
a = pd.concat([pd.read_csv(f) for f in snakemake.input.audits], ignore_index=True)  # noqa: F821
a = a[a["attack"].isin(p.attacks)]
students = a["pate_student"] if "pate_student" in a else pd.Series("", index=a.index)
labels = [algo_label(al, ds, st if isinstance(st, str) else None) for al, ds, st in zip(a["algo"], a["dataset"], students)]
table = pd.DataFrame(
    dict(dataset=a["dataset"], algorithm=labels, epsilon_theory=a["epsilon"], claimed_epsilon=a["claimed_epsilon"],
         attack=a["attack"], epsilon_mean=a["epsilon_sweep_mean"], epsilon_std=a["epsilon_sweep_std"], repetitions=a["repetitions"],
         num_canaries=a["num_canaries"])
)  # fmt: skip
fig = plot_mia_comparison(table, list(p.attacks), p.title)
write_csv(table, snakemake.output.csv)  # noqa: F821
save_figure(fig, snakemake.output.pdf)  # noqa: F821
save_figure(fig, snakemake.output.png)  # noqa: F821
log.info("\n%s", table.to_string(index=False))
