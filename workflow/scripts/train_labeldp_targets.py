"""Rule train_labeldp_targets: every target model M of one label-DP dataset, one per (mechanism, ε) (observational paper §6.2).

Makes ``probs`` (npz: per model the probabilities on the target half and the test set, plus
the labels) and ``metrics`` (JSON: per model the claimed ε, test accuracy and log-loss, the
mechanism's extras) — for each ``(algo, ε)`` of ``params.models``, labels released by the
mechanism and M fitted on them, the soft-label MLPs as one stacked block
(:func:`ppaudit.experiments.labeldp.models.train_target_models`).
Inputs: ``data`` (prepare_labeldp_data). Params: models, settings, delta, seed.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "train_labeldp_targets")  # noqa: F821

import pickle  # noqa: E402
import time  # noqa: E402

from ppaudit.experiments.labeldp.models import train_target_models, write_model_bundle  # noqa: E402

p = snakemake.params  # noqa: F821
with open(snakemake.input.data, "rb") as fh:  # noqa: F821
    data = pickle.load(fh)
start = time.time()
results = train_target_models(data, [tuple(m) for m in p.models], dict(p.settings, delta=p.delta), p.seed)
metrics = write_model_bundle(results, data, snakemake.output.probs, snakemake.output.metrics)  # noqa: F821
for name, m in metrics.items():
    log.info("%s: %s", name, m)
log.info("%d models in %.1f s", len(metrics), time.time() - start)
