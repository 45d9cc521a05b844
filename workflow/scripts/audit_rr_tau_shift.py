"""Rule audit_rr_tau_shift: audits binary randomized response with τ-shifted counterfactual labels (observational paper, App. C, Fig. 4).

Makes ``long`` (one row per repetition, τ, ε and guess fraction) and ``summary`` (mean ± std
over repetitions) with :func:`ppaudit.experiments.labeldp.synthetic_rr.tau_shift_experiment` and
:func:`~ppaudit.experiments.labeldp.synthetic_rr.summarize`.
Params: settings (labeldp.tau_shift), delta, confidence, t, seed.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "audit_rr")  # noqa: F821

from ppaudit.experiments.labeldp.synthetic_rr import summarize, tau_shift_experiment
from ppaudit.io import write_csv

p = snakemake.params  # noqa: F821
s = dict(p.settings)
df = tau_shift_experiment(n=s["n"], epsilons=s["epsilons"], guess_fractions=s["guess_fractions"], num_repetitions=s["repetitions"],
                          delta=p.delta, confidence=p.confidence, t=p.t, seed=p.seed, taus=s["taus"])  # fmt: skip
summary = summarize(df)
log.info("\n%s", summary.to_string(index=False))
write_csv(df, snakemake.output.long)  # noqa: F821
write_csv(summary, snakemake.output.summary)  # noqa: F821
