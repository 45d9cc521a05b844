"""Snakemake script of rule run_selfcheck: the auditor's self-check table and figure.

Params: repetitions, trials, confidence, slack_level, cases (empty = all), seed. Outputs:
``csv`` (one row per case), ``runs`` (one row per case and repetition), ``pdf``/``png``
(flag rate per case against the bars). The job does not fail when a bar is missed: the
table's ``passed`` column says so (``ppaudit selfcheck`` exits 1 in that case).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "run_selfcheck")  # noqa: F821

import matplotlib  # noqa: E402

matplotlib.use("Agg")

from ppaudit.rng import job_seed_sequence  # noqa: E402
from ppaudit.selfcheck import plot_selfcheck, run_selfcheck  # noqa: E402

p = snakemake.params  # noqa: F821
out = snakemake.output  # noqa: F821
seed = int(job_seed_sequence(p.seed, "selfcheck", "run_selfcheck").generate_state(1)[0])
log.info("self-check: %s repetitions x %s trials, confidence %s, seed %s", p.repetitions, p.trials, p.confidence, seed)
res = run_selfcheck(p.repetitions, p.trials, confidence=p.confidence, seed=seed, cases=list(p.cases) or None,
                    slack_level=p.slack_level)
res.table.to_csv(out.csv, index=False)
res.runs.to_csv(out.runs, index=False)
fig, _ = plot_selfcheck(res)
fig.savefig(out.pdf)
fig.savefig(out.png, dpi=150)
log.info("passed: %s\n%s", res.passed, res.table.to_string(index=False))
