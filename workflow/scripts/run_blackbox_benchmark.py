"""Snakemake script of rule run_blackbox_benchmark: StatDP's and DP-Sniper's mechanisms through our search (table + figure).

Params: settings (list of {epsilon, trials}), seeds, confidence, slack_level, cases (empty = all),
pilot_fraction, certify_top, seed. Outputs: ``csv`` (one row per ε0 and mechanism, with the peers'
published values and their sources), ``runs`` (one row per seed), ``plotted`` (every plotted number),
``pdf``/``png``. The job does not fail when a bar is missed: the table's ``passed`` column says so.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "run_blackbox_benchmark")  # noqa: F821

import matplotlib  # noqa: E402

matplotlib.use("Agg")

from ppaudit.experiments.blackbox.benchmark import run_blackbox_benchmark  # noqa: E402
from ppaudit.io import save_figure, write_csv  # noqa: E402
from ppaudit.plots.blackbox import plot_blackbox_benchmark  # noqa: E402
from ppaudit.rng import job_seed_sequence  # noqa: E402
from ppaudit.selfcheck import false_alarm_limit  # noqa: E402

p = snakemake.params  # noqa: F821
out = snakemake.output  # noqa: F821
seed = int(job_seed_sequence(p.seed, "blackbox", "run_blackbox_benchmark").generate_state(1)[0])
settings = [{"epsilon": float(s["epsilon"]), "trials": int(s["trials"]), **({"cases": list(s["cases"])} if s.get("cases") else {})}
            for s in p.settings]
log.info("black-box benchmark: settings %s, %s seeds, confidence %s, seed %s", settings, p.seeds, p.confidence, seed)
res = run_blackbox_benchmark(settings, p.seeds, confidence=p.confidence, seed=seed, cases=list(p.cases) or None,
                             slack_level=p.slack_level,
                             search_options={"pilot_fraction": p.pilot_fraction, "certify_top": p.certify_top})
write_csv(res.table, out.csv)
write_csv(res.runs, out.runs)
bar = false_alarm_limit(p.seeds, 1.0 - p.confidence, p.slack_level) / p.seeds
fig, plotted = plot_blackbox_benchmark(res.table, false_alarm_bar=bar)
write_csv(plotted, out.plotted)
save_figure(fig, out.pdf)
save_figure(fig, out.png)
log.info("wall time %.1f s; all bars met: %s\n%s", res.seconds, res.passed, res.table.to_string(index=False))
