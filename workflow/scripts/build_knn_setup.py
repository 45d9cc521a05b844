"""Snakemake script of rule build_knn_setup: the natural queries, their exact neighbours (faiss)
and the vote model P_q, P^k_q of Private-kNN (Chadha et al. 2024, §6).

Params: k, gamma, num_queries, seed. Output: ``setup`` (ppaudit.adversaries.private_knn.save_setup).
The query set is drawn from the test subset with ``job_generator(seed, "knn-queries", dataset)``.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import numpy as np  # noqa: E402

from ppaudit.adversaries import sample_query_indices  # noqa: E402
from ppaudit.experiments.chadha2024.private_knn import KNN_DATASETS  # noqa: E402
from ppaudit.adversaries.private_knn import knn_setup, save_setup  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
xtr, xte = np.load(snakemake.input.train), np.load(snakemake.input.test)  # noqa: F821
with np.load(snakemake.input.labels) as z:  # noqa: F821
    ytr, yte = z["y_train"], z["y_test"]
queries = np.sort(sample_query_indices(len(yte), p.num_queries, job_generator(p.seed, "knn-queries", w.dataset)))
setup = knn_setup(xtr, ytr, xte, yte, queries, p.k, p.gamma, KNN_DATASETS[w.dataset][1])
acc = float(np.mean(setup.P.argmax(axis=1) == setup.query_labels))
log.info("%s/%s: %d train, %d test, n_Q = %d, k = %d, gamma = %g, J = %d neighbours; argmax P_q accuracy %.3f",
         w.dataset, w.encoder, len(ytr), len(yte), setup.num_queries, p.k, p.gamma, setup.neighbors.num_neighbors, acc)
save_setup(setup, snakemake.output.setup)  # noqa: F821
