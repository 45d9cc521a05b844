"""Snakemake script of rule attack_wang_histograms: L/M/H selection and both attackers.

Input ``histograms`` (npz). Params: per_level, sigmas, num_queries, budget_sigma, budget,
delta, accountant, threshold, sigma_threshold, solvers, paper_max_iterations, seed. Outputs
``attacks`` (CSV, one row per histogram × attack × solver, ``procedure`` = paper / ours) and
``selection``.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "attack_wang_histograms")  # noqa: F821

import numpy as np  # noqa: E402

from ppaudit.attacks.histogram import select_consensus_histograms  # noqa: E402
from ppaudit.experiments.wang2022.reconstruction import attack_selected_histograms  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402

p = snakemake.params  # noqa: F821
dataset = snakemake.wildcards.dataset  # noqa: F821
hist = np.load(snakemake.input.histograms)["histograms"]  # noqa: F821
selection = select_consensus_histograms(hist, rng=job_generator(p.seed, f"wang2022_{dataset}", "select"), per_level=p.per_level)
log.info("selected:\n%s", selection.to_string(index=False))
attacks = attack_selected_histograms(
    hist, selection, p.sigmas, p.num_queries, p.delta, p.budget, p.budget_sigma,
    rng=job_generator(p.seed, f"wang2022_{dataset}", "attack"),
    accountant=p.accountant, threshold=p.threshold, sigma_threshold=p.sigma_threshold,
    solvers=p.solvers, paper_max_iterations=p.paper_max_iterations,
)
attacks.insert(0, "dataset", dataset)
log.info("attacks:\n%s", attacks.drop(columns=["true", "estimate"]).to_string(index=False))
write_csv(selection, snakemake.output.selection)  # noqa: F821
write_csv(attacks, snakemake.output.attacks)  # noqa: F821
