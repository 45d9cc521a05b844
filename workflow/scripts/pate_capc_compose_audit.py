"""Snakemake script of rule compose_audit: compose per-query RDP over the queries, ε at δ,
worst and average case over the candidates (§4.2, §5.4, App. E).

Outputs: ``rdp`` and ``eps`` (compose_candidates), ``summary`` (summarize_candidates plus
the columns algo, dataset, model, adversary, sigma, num_teachers, trials, num_queries,
source, delta, eps_floor).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "compose_audit")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.experiments.private_prediction import compose_candidates, summarize_candidates  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
per_query = pd.read_csv(snakemake.input.per_query)  # noqa: F821
rdp, eps = compose_candidates(per_query, delta=p.delta)
summary = summarize_candidates(eps)
meta = {
    "algo": w.algo, "dataset": w.dataset, "model": w.model, "adversary": w.adversary, "sigma": float(w.sigma),
    "num_teachers": p.num_teachers, "trials": p.trials, "num_queries": p.num_queries, "source": p.source,
    "delta": p.delta, "eps_floor": p.floor,
}
for i, (k, v) in enumerate(meta.items()):
    summary.insert(i, k, v)
log.info("eps per candidate:\n%s", eps.to_string(index=False))
log.info("summary:\n%s", summary.to_string(index=False))
write_csv(rdp, snakemake.output.rdp)  # noqa: F821
write_csv(eps, snakemake.output.eps)  # noqa: F821
write_csv(summary, snakemake.output.summary)  # noqa: F821
