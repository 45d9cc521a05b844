"""Snakemake script of rule select_queries: the query set, n_Q distinct test points (§5.1, App. D.1).

Params: num_queries, source, root, seed. Output: ``queries`` (npz: ``test_index`` into the
test set, ``labels`` their true labels, ``num_classes``).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "select_queries")  # noqa: F821

import numpy as np  # noqa: E402

from ppaudit.adversaries import sample_query_indices  # noqa: E402
from ppaudit.data import load_dataset  # noqa: E402
from ppaudit.io import atomic_path  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402

p = snakemake.params  # noqa: F821
dataset = snakemake.wildcards.dataset  # noqa: F821
_, y_train, _, y_test = load_dataset(dataset, p.root, source=p.source)
num_classes = int(max(y_train.max(), y_test.max()) + 1)
idx = sample_query_indices(len(y_test), p.num_queries, job_generator(p.seed, "chadha_pate_capc", "queries", dataset))
log.info("%s: %d queries from %d test points, %d classes", dataset, idx.size, len(y_test), num_classes)
with atomic_path(snakemake.output.queries) as tmp:  # noqa: F821
    with open(tmp, "wb") as fh:
        np.savez(fh, test_index=idx, labels=y_test[idx], num_classes=np.array(num_classes))
