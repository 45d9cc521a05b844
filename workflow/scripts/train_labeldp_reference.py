"""Rule train_labeldp_reference: the reference model M' of one label-DP dataset (observational paper §6.2).

Makes ``probs`` (npz: probabilities on the target half and the test set) and ``metrics``
(JSON: claimed ε = inf, test accuracy and log-loss; the training time goes to the log, not to
the results, so the same config gives the same bytes) — M' fitted on the reference
half with its true labels (:func:`ppaudit.experiments.labeldp.models.train_reference_model`).
Inputs: ``data`` (prepare_labeldp_data). Params: settings, delta, seed.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "train_labeldp")  # noqa: F821

import pickle
import time

from ppaudit.experiments.labeldp.models import (
    train_reference_model,
    write_model_outputs,
)
from ppaudit.rng import job_generator

p = snakemake.params  # noqa: F821
data = pickle.loads(open(snakemake.input.data, "rb").read())  # noqa: F821
start = time.time()
res = train_reference_model(data, dict(p.settings, delta=p.delta), job_generator(p.seed, "labeldp_reference", snakemake.wildcards.dataset))  # noqa: F821
log.info("trained in %.1f s", time.time() - start)
log.info("%s", write_model_outputs(res, data, snakemake.output.probs, snakemake.output.metrics))  # noqa: F821
