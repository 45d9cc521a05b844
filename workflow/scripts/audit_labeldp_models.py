"""Rule audit_labeldp_models: observational LIA, calibrated MIA and RMIA on every target model of one label-DP dataset.

Inputs: ``probs`` / ``metrics`` (the dataset's model bundle, train_labeldp_targets),
``reference`` (npz of M'). Output: ``table`` (CSV, one row per (model, attack) with ε
sweep/fixed mean and std, claimed ε, test metrics;
:func:`ppaudit.experiments.labeldp.tables.audit_target_models`). Params: models, audit, seed.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "audit_labeldp_models")  # noqa: F821

import numpy as np  # noqa: E402

from ppaudit.experiments.labeldp.models import read_model_bundle  # noqa: E402
from ppaudit.experiments.labeldp.tables import audit_target_models  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

p = snakemake.params  # noqa: F821
bundle = read_model_bundle(snakemake.input.probs, snakemake.input.metrics)  # noqa: F821
with np.load(snakemake.input.reference) as ref:  # noqa: F821
    reference = {k: ref[k] for k in ("target_probs", "test_probs")}
df = audit_target_models([tuple(m) for m in p.models], bundle, reference, snakemake.wildcards.dataset, dict(p.audit), p.seed)  # noqa: F821
log.info("\n%s", df.to_string(index=False))
write_csv(df, snakemake.output.table)  # noqa: F821
