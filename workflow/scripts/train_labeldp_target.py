"""Rule train_labeldp_target: the target model M of one label-DP mechanism at one ε (observational paper §6.2).

Makes ``probs`` (npz: probabilities on the target half and the test set) and ``metrics``
(JSON: claimed ε, test accuracy and log-loss, the mechanism's extras, seconds) — labels
released by ``wildcards.algo`` at ``wildcards.eps`` and M fitted on them
(:func:`ppaudit.experiments.labeldp_data.train_target_model`).
Inputs: ``data`` (prepare_labeldp_data). Params: settings, delta, seed.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "train_labeldp")  # noqa: F821

import pickle
import time

from ppaudit.experiments.labeldp_data import parse_epsilon, train_target_model
from ppaudit.experiments.labeldp_models import write_model_outputs
from ppaudit.rng import job_generator

p = snakemake.params  # noqa: F821
wc = snakemake.wildcards  # noqa: F821
data = pickle.loads(open(snakemake.input.data, "rb").read())  # noqa: F821
start = time.time()
rng = job_generator(p.seed, "labeldp_target", wc.dataset, wc.algo, wc.eps)
res = train_target_model(data, wc.algo, parse_epsilon(wc.eps), dict(p.settings, delta=p.delta), rng)
res["seconds"] = time.time() - start
log.info("%s", write_model_outputs(res, data, snakemake.output.probs, snakemake.output.metrics))  # noqa: F821
