"""Snakemake script of rules audit_rr_synthetic / audit_rr_tau_shift (observational paper §6.6, App. C).

Params: kind ("rr" or "tau"), settings, audit, seed. Outputs: ``long`` (one row per
repetition) and ``summary`` (mean ± std over repetitions).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "audit_rr")  # noqa: F821

from ppaudit.experiments.synthetic_rr import rr_audit_experiment, summarize, tau_shift_experiment  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

p = snakemake.params  # noqa: F821
s = dict(p.settings)
common = dict(n=s["n"], epsilons=s["epsilons"], guess_fractions=s["guess_fractions"], num_repetitions=s["repetitions"], delta=p.delta, confidence=p.confidence, t=p.t, seed=p.seed)
if p.kind == "rr":
    df = rr_audit_experiment(num_classes=s["num_classes"], counterfactuals=s["counterfactuals"], proxy_train_size=s["proxy_train_size"], **common)
else:
    df = tau_shift_experiment(taus=s["taus"], **common)
summary = summarize(df)
log.info("\n%s", summary.to_string(index=False))
write_csv(df, snakemake.output.long)  # noqa: F821
write_csv(summary, snakemake.output.summary)  # noqa: F821
