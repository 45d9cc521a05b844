"""Snakemake script of the plot_wang_* rules: one Wang et al. 2022 figure (params.figure).

Inputs: per figure (see workflow/rules/wang2022.smk). Outputs: pdf, png and csv (every
plotted number).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "plot_wang")  # noqa: F821

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.experiments.wang2022_adult import consensus_rule_summary  # noqa: E402
from ppaudit.attacks.histogram import consensus_tertiles, max_vote_share  # noqa: E402
from ppaudit.io import save_figure, write_csv  # noqa: E402
from ppaudit.plots import wang  # noqa: E402

p = snakemake.params  # noqa: F821
inp = snakemake.input  # noqa: F821
figure = p.figure
if figure == "fig1":
    df = pd.read_csv(inp.consensus)
    summaries = {
        "vote histograms (direct access)": consensus_rule_summary(df["consensus_true"], df["phd"], p.threshold),
        f"reconstructed from {df['num_queries'].iloc[0]} noisy answers (σ = {df['sigma'].iloc[0]:g})": consensus_rule_summary(
            df["consensus_reconstructed"], df["phd"], p.threshold
        ),
    }
    log.info("summaries: %s", summaries)
    fig, table = wang.plot_phd_consensus(summaries, p.threshold)
elif figure == "fig3":
    data = {}
    for title, path in zip(p.titles, inp.histograms):
        h = np.load(path)["histograms"]
        data[title] = (max_vote_share(h), consensus_tertiles(h))
    fig, table = wang.plot_consensus_distribution(data)
elif figure in ("fig4", "fig5"):
    data = {title: pd.read_csv(path) for title, path in zip(p.titles, inp.attacks)}
    fig, table = (wang.plot_budget_errors if figure == "fig4" else wang.plot_error_vs_cost)(data)
elif figure in ("fig6", "fig7"):
    df = pd.read_csv(inp.attacks)
    fig, table = wang.plot_error_per_sigma(
        df, f"{p.titles[0]}: error of the {df['label'].nunique()} L/M/H histograms with {p.num_queries} queries (bars) and privacy cost (red, right axis)"
    )
elif figure == "defence_caching":
    fig, table = wang.plot_caching_defence(pd.read_csv(inp.reconstruction), pd.read_csv(inp.audits), pd.read_csv(inp.pate), floor=p.floor)
else:
    raise ValueError(f"unknown figure {figure!r}")
save_figure(fig, snakemake.output.pdf)  # noqa: F821
save_figure(fig, snakemake.output.png, dpi=150)  # noqa: F821
plt.close(fig)
write_csv(table, snakemake.output.csv)  # noqa: F821
log.info("wrote %s", list(snakemake.output))  # noqa: F821
