"""Snakemake script of rules train_labeldp_reference / train_labeldp_target.

Reference (``params.role == "reference"``): M' fitted on the reference half with its true
labels. Target: labels released by ``wildcards.algo`` at ``wildcards.eps``, M fitted on them.
Outputs: ``probs`` (npz: probabilities on the target half and on the test set) and
``metrics`` (JSON: claimed ε, test accuracy and log-loss, mechanism extras).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "train_labeldp")  # noqa: F821

import io  # noqa: E402
import pickle  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from ppaudit.experiments.labeldp_data import fit_predict_soft, log_loss, parse_epsilon, train_target_model  # noqa: E402
from ppaudit.io import atomic_path, write_json  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402

p = snakemake.params  # noqa: F821
wc = snakemake.wildcards  # noqa: F821
data = pickle.loads(open(snakemake.input.data, "rb").read())  # noqa: F821
settings = dict(p.settings, delta=p.delta)
start = time.time()
if p.role == "reference":
    rng = job_generator(p.seed, "labeldp_reference", wc.dataset)
    target_probs, test_probs = fit_predict_soft(
        data.name, data.x_ref, data.y_ref, [data.x_target, data.x_test], data.num_classes, settings["model"], int(rng.integers(2**31 - 1))
    )
    res = dict(
        target_probs=target_probs,
        test_probs=test_probs,
        claimed_epsilon=float("inf"),
        test_accuracy=float(np.mean(test_probs.argmax(1) == data.y_test)),
        test_log_loss=log_loss(test_probs, data.y_test),
    )
else:
    rng = job_generator(p.seed, "labeldp_target", wc.dataset, wc.algo, wc.eps)
    res = train_target_model(data, wc.algo, parse_epsilon(wc.eps), settings, rng)
arrays = {k: res.pop(k) for k in ("target_probs", "test_probs")}
res["seconds"] = time.time() - start
log.info("%s", res)
with atomic_path(snakemake.output.probs) as tmp:  # noqa: F821
    buf = io.BytesIO()
    np.savez_compressed(buf, y_target=data.y_target, y_test=data.y_test, **arrays)
    tmp.write_bytes(buf.getvalue())
write_json({k: (v if not isinstance(v, float) or np.isfinite(v) else str(v)) for k, v in res.items()}, snakemake.output.metrics)  # noqa: F821
