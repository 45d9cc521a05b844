"""Snakemake script of rule audit_knn: per-query audits of every candidate of one adversary
(ppaudit.experiments.chadha2024.private_knn.audit_knn_crafted; §4.2, §6).

Params: sigma, gamma, trials, sample_trials, orders, confidence, min_nu, bonferroni, exact,
exact_draws, max_support, nonenumerable, rb_draws, rb_displaced, delta, seed. Output: ``per_query`` (+ column
``expected_inclusions`` of the candidate). Columns ``audit_method`` / ``trials`` / ``paper_trials``
say how each audit was made (exact-enumerated counts, Rao–Blackwellised draws, sampled runs);
``two_cut_cp`` is the sound audit (ours), ``two_cut_paper`` the paper's procedure.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

from ppaudit.experiments.chadha2024.private_knn import audit_knn_crafted  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.montecarlo import device_scope  # noqa: E402
from ppaudit.adversaries.private_knn import load_crafted  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
crafted = load_crafted(snakemake.input.crafted)  # noqa: F821
log.info("auditing %s %s: sigma=%g T=%d (sampled: %d), %d candidates x %d queries", w.dataset, w.adversary, p.sigma, p.trials,
         p.sample_trials, crafted.num_candidates, crafted.audit_queries.shape[1])
with device_scope(p.audit_device):  # Monte Carlo device (numpy on cpu, float32 torch on cuda)
    table = audit_knn_crafted(
        crafted, p.sigma, p.trials, list(p.orders), p.seed, f"knn-{w.dataset}", p.gamma, confidence=p.confidence, progress=True,
        sample_trials=p.sample_trials, min_nu=p.min_nu, bonferroni=p.bonferroni, exact=p.exact, exact_draws=p.exact_draws, max_support=p.max_support,
        nonenumerable=p.nonenumerable, rb_draws=p.rb_draws, rb_displaced=p.rb_displaced, delta=p.delta,
        transcript_event=p.transcript_event_audit,
    )
table["expected_inclusions"] = table["candidate"].map(dict(enumerate(crafted.expected_inclusions.tolist())))
first = table.drop_duplicates(["candidate", "query"])
log.info("Bonferroni over %d audits (2-cut, k-cut and per-query ε bound of each pair, whole-transcript audits): each at %.6g",
         int(table["bonferroni_audits"].iloc[0]), float(table["confidence_per_audit"].iloc[0]))
log.info("audited %d (candidate, query) pairs; audit methods %s; exact methods %s", len(first),
         first["audit_method"].value_counts().to_dict(), first["exact_method"].value_counts().to_dict())
write_csv(table, snakemake.output.per_query)  # noqa: F821
