"""Snakemake script of rule train_wang_teachers: one PATE instantiation, its vote histograms.

Params: loader, train_size, test_size, num_teachers, model, source, root, seed.
Output ``histograms`` (npz): ``histograms`` (n_test, C) int64, ``y_test``, ``test_index``.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "train_wang_teachers")  # noqa: F821

import numpy as np  # noqa: E402

from ppaudit.data import load_dataset  # noqa: E402
from ppaudit.experiments.wang2022.reconstruction import vote_histograms  # noqa: E402
from ppaudit.io import atomic_path  # noqa: E402
from ppaudit.rng import job_generator, job_seed_sequence  # noqa: E402
from ppaudit.mechanisms.pate_capc import pate_teacher_votes  # noqa: E402

p = snakemake.params  # noqa: F821
dataset = snakemake.wildcards.dataset  # noqa: F821
experiment = f"wang2022_{dataset}"
kwargs = {"root": p.root} if p.source == "download" else {}
x_train, y_train, x_test, y_test = load_dataset(p.loader, source=p.source, **kwargs)
gen = job_generator(p.seed, experiment, "subsample")
train_idx = np.arange(len(x_train)) if p.train_size is None else np.sort(gen.choice(len(x_train), min(p.train_size, len(x_train)), replace=False))
test_idx = np.arange(len(x_test)) if p.test_size is None else np.sort(gen.choice(len(x_test), min(p.test_size, len(x_test)), replace=False))
log.info("%s: %d training points for %d teachers, %d test queries, model %s", dataset, len(train_idx), p.num_teachers, len(test_idx), p.model)
num_classes = int(y_train.max()) + 1
seed = int(job_seed_sequence(p.seed, experiment, "teachers").generate_state(1)[0])
out = pate_teacher_votes(
    p.model, x_train[train_idx], y_train[train_idx], x_test[test_idx], p.num_teachers, 1, num_classes,
    seed=seed, experiment=experiment, n_jobs=snakemake.threads, progress=True,  # noqa: F821
)
hist = vote_histograms(out["votes_S"][0], num_classes)
acc = float(np.mean(hist.argmax(1) == y_test[test_idx]))
log.info("plurality accuracy %.4f, mean max vote share %.4f", acc, float(np.mean(hist.max(1) / hist.sum(1))))
with atomic_path(snakemake.output.histograms) as tmp:  # noqa: F821
    with open(tmp, "wb") as fh:
        np.savez_compressed(fh, histograms=hist, y_test=y_test[test_idx], test_index=test_idx)
log.info("wrote %s", snakemake.output.histograms)  # noqa: F821
