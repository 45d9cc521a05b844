"""Snakemake script of rule compose_knn_audit: compose the per-query RDP over each candidate's
queries, ε at δ, worst / max / average case over the candidates (§4.2, §6, App. E.4).

Outputs: ``rdp`` and ``eps`` (ppaudit.experiments.chadha2024.private_knn.compose_knn), ``summary``
(summarize_knn plus the columns algo, encoder, sigma, k, gamma, trials (the configured T),
num_queries, source, delta, eps_floor, and the provenance of the audits,
ppaudit.experiments.chadha2024.private_knn.knn_audit_provenance: audit_method, trials_used, paper_trials,
multiplicity, confidence_per_audit, effective_confidence_min, num_audits — every audit run: the
2-cut, k-cut and per-query ε bound of each (candidate, query) and the whole-transcript audits — and
simultaneous_confidence, the union bound over them, issue 27 §1).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.experiments.chadha2024.private_knn import compose_knn, knn_audit_provenance, summarize_knn  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
per_query = pd.read_csv(snakemake.input.per_query)  # noqa: F821
rdp, eps = compose_knn(per_query, delta=p.delta)
einc = per_query.drop_duplicates("candidate").set_index("candidate")["expected_inclusions"]
eps["expected_inclusions"] = eps["candidate"].map(einc)
summary = summarize_knn({w.adversary: eps}, w.dataset)
meta = {"algo": "knn", "encoder": w.encoder, "sigma": float(w.sigma), "k": p.k, "gamma": p.gamma, "trials": p.trials,
        "num_queries": p.num_queries, "source": p.source, "delta": p.delta, "eps_floor": p.floor,
        **knn_audit_provenance(per_query, p.confidence)}
for i, (k, v) in enumerate(meta.items()):
    summary.insert(i, k, v)
log.info("eps per candidate:\n%s", eps.to_string(index=False, max_rows=40))
log.info("summary:\n%s", summary.to_string(index=False))
write_csv(rdp, snakemake.output.rdp)  # noqa: F821
write_csv(eps, snakemake.output.eps)  # noqa: F821
write_csv(summary, snakemake.output.summary)  # noqa: F821
