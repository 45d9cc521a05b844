"""Snakemake script of rule attack_adult_histograms: consensus of true and reconstructed histograms.

Input ``votes`` (CSV). Params: sigma, num_queries, seed. Output ``consensus`` (CSV): the
votes plus ``consensus_true`` and ``consensus_reconstructed`` (App. E, end to end).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "attack_adult_histograms")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.attacks.histogram import max_vote_share  # noqa: E402
from ppaudit.experiments.wang2022.reconstruction import reconstruct_consensus  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402

p = snakemake.params  # noqa: F821
df = pd.read_csv(snakemake.input.votes)  # noqa: F821
hist = df[["votes_le50k", "votes_gt50k"]].to_numpy(dtype=float)
df["consensus_true"] = max_vote_share(hist)
df["consensus_reconstructed"] = reconstruct_consensus(hist, p.sigma, p.num_queries, job_generator(p.seed, "wang2022_adult", "queries"))
df["sigma"] = p.sigma
df["num_queries"] = p.num_queries
log.info("mean |consensus error| %.4f", float((df["consensus_true"] - df["consensus_reconstructed"]).abs().mean()))
write_csv(df, snakemake.output.consensus)  # noqa: F821
