"""Snakemake script of rule craft_knn_adversary: the candidate canaries (AdvQ) or poisons
(Pois-NatQ) of one adversary and their inclusion probabilities ν per query (§6, App. D.3).

Params: num_queries, advq_candidates, candidate_selection, natq_candidates, s_grid.
Output: ``crafted`` (ppaudit.adversaries.private_knn.save_crafted).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import numpy as np  # noqa: E402

from ppaudit.experiments.chadha2024.private_knn import select_knn_candidates  # noqa: E402
from ppaudit.adversaries.private_knn import craft_knn, load_setup, save_crafted  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
xtr, xte = np.load(snakemake.input.train), np.load(snakemake.input.test)  # noqa: F821
with np.load(snakemake.input.labels) as z:  # noqa: F821
    ytr, yte = z["y_train"], z["y_test"]
setup = load_setup(snakemake.input.setup, xtr, ytr, xte, yte)  # noqa: F821
advq = w.adversary.endswith("advq")
cands = select_knn_candidates(setup.P, p.advq_candidates, p.candidate_selection) if advq else None
crafted = craft_knn(w.adversary, setup, p.num_queries, cands, p.natq_candidates, tuple(p.s_grid))
log.info("%s on %s: %d candidates; E(x') = %s (max gamma*n_Q = %g); info %s", w.adversary, w.dataset, crafted.num_candidates,
         np.round(crafted.expected_inclusions[:10], 3).tolist(), setup.gamma * setup.num_queries,
         {k: v for k, v in crafted.info.items() if k != "embedding_scores"})
save_crafted(crafted, snakemake.output.crafted)  # noqa: F821
