"""Rule audit_rr_synthetic: audits k-ary randomized response on synthetic data (observational paper §6.6, Figs. 2–3).

Makes ``long`` (one row per repetition, k, ε, counterfactual and guess fraction) and
``summary`` (mean ± std over repetitions) with
:func:`ppaudit.experiments.labeldp.synthetic_rr.rr_audit_experiment` and
:func:`~ppaudit.experiments.labeldp.synthetic_rr.summarize`.
Params: settings (labeldp.synthetic_rr), delta, confidence, t, seed.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "audit_rr")  # noqa: F821

from ppaudit.experiments.labeldp.synthetic_rr import rr_audit_experiment, summarize
from ppaudit.io import write_csv

p = snakemake.params  # noqa: F821
s = dict(p.settings)
df = rr_audit_experiment(n=s["n"], epsilons=s["epsilons"], guess_fractions=s["guess_fractions"], num_repetitions=s["repetitions"],
                         delta=p.delta, confidence=p.confidence, t=p.t, seed=p.seed, num_classes=s["num_classes"],
                         counterfactuals=s["counterfactuals"], proxy_train_size=s["proxy_train_size"])  # fmt: skip
summary = summarize(df)
log.info("\n%s", summary.to_string(index=False))
write_csv(df, snakemake.output.long)  # noqa: F821
write_csv(summary, snakemake.output.summary)  # noqa: F821
