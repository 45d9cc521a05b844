"""Snakemake script of rule train_teachers: the teachers of S over N_g instantiations (§5.1–5.2).

PATE: k teachers on a fresh random partition per instantiation; CaPC: the k teachers of a
fixed partition, fresh training randomness per instantiation. Threads → n_jobs.
Output: ``votes`` (npz: ``votes_S`` (N_g, k, n_queries)).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "train_teachers")  # noqa: F821

import numpy as np  # noqa: E402

from ppaudit.io import atomic_path  # noqa: E402
from ppaudit.mechanisms.pate_capc import capc_teacher_votes, load_teacher_inputs, pate_teacher_votes  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
inputs = load_teacher_inputs(w.dataset, p.root, p.source, snakemake.input.queries)  # noqa: F821
x_query, num_classes = inputs.x_query, inputs.num_classes
train = pate_teacher_votes if w.algo == "pate" else capc_teacher_votes
log.info("%s on %s: %d teachers × %d instantiations, model %s %s, %d queries, n_jobs=%d",
         w.algo, w.dataset, p.num_teachers, p.num_instantiations, w.model, dict(p.teacher_params), len(x_query), snakemake.threads)  # noqa: F821
out = train(w.model, inputs.x_train, inputs.y_train, x_query, p.num_teachers, p.num_instantiations, num_classes, int(w.seed),
            experiment=f"chadha_{w.algo}_{w.dataset}", params=dict(p.teacher_params), n_jobs=snakemake.threads, progress=True)  # noqa: F821
votes = out["votes_S"]
log.info("teacher accuracy on the queries: %.3f", float((votes == inputs.query_labels[None, None, :]).mean()))
with atomic_path(snakemake.output.votes) as tmp:  # noqa: F821
    with open(tmp, "wb") as fh:
        np.savez(fh, votes_S=votes, num_classes=np.array(num_classes))
