"""Rule audit_labeldp_model: observational LIA, calibrated MIA and RMIA on one target model.

Inputs: ``target`` / ``reference`` (npz of probabilities), ``metrics`` (JSON of the target).
Output: ``table`` (CSV, one row per attack with ε sweep/fixed mean and std, claimed ε, test metrics).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "audit_labeldp_model")  # noqa: F821

import json  # noqa: E402

import numpy as np  # noqa: E402

from ppaudit.experiments.labeldp_data import parse_epsilon  # noqa: E402
from ppaudit.experiments.labeldp_tables import audit_model  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402

p = snakemake.params  # noqa: F821
wc = snakemake.wildcards  # noqa: F821
tgt = np.load(snakemake.input.target)  # noqa: F821
ref = np.load(snakemake.input.reference)  # noqa: F821
metrics = json.loads(open(snakemake.input.metrics).read())  # noqa: F821
rng = job_generator(p.seed, "labeldp_audit", wc.dataset, wc.algo, wc.eps)
df = audit_model(tgt["y_target"], tgt["target_probs"], ref["target_probs"], tgt["y_test"], tgt["test_probs"], ref["test_probs"], dict(p.audit), rng)
df.insert(0, "epsilon", parse_epsilon(wc.eps))
df.insert(0, "algo", wc.algo)
df.insert(0, "dataset", wc.dataset)
df["claimed_epsilon"] = float(metrics["claimed_epsilon"])
df["test_accuracy"] = metrics["test_accuracy"]
df["test_log_loss"] = metrics["test_log_loss"]
for key in ("pate_student", "alibi_prior", "agibi_calibration"):
    df[key] = metrics.get(key, "")
log.info("\n%s", df.to_string(index=False))
write_csv(df, snakemake.output.table)  # noqa: F821
