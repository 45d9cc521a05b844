"""Snakemake script of rule audit_noisy_argmax: per-query audits of every candidate (§4.2, §5.4).

Params: sigma, trials, sample_trials, orders, confidence, count_mode, exact, bonferroni, transcript,
transcript_max_work, transcript_mc_draws, transcript_trials, delta, seed. Every candidate's null-canary control is audited too
(rows ``control = True``).
Output: ``per_query`` (ppaudit.experiments.private_prediction.audit_crafted).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "audit_noisy_argmax")  # noqa: F821

from ppaudit.adversaries import CraftedCanaries  # noqa: E402
from ppaudit.experiments.private_prediction import audit_crafted  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.montecarlo import device_scope  # noqa: E402
from ppaudit.vote_models.twin import load_twin_fit  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
fit = load_twin_fit(snakemake.input.fit)  # noqa: F821
crafted = CraftedCanaries.from_npz(snakemake.input.canaries)  # noqa: F821
log.info("auditing %s %s %s: sigma=%g T=%d, %d candidates", w.algo, w.dataset, w.adversary, p.sigma, p.trials, crafted.num_candidates)
with device_scope(p.audit_device):  # Monte Carlo device (numpy on cpu, float32 torch on cuda)
    table = audit_crafted(
        fit, crafted, p.sigma, p.trials, list(p.orders), p.seed, f"chadha_{w.algo}_{w.dataset}_{w.adversary}",
        confidence=p.confidence, bonferroni=p.bonferroni, progress=True, count_mode=p.count_mode, exact=p.exact, sample_trials=p.sample_trials,
        control=True, transcript=p.transcript, transcript_max_work=p.transcript_max_work, transcript_mc_draws=p.transcript_mc_draws,
        transcript_trials=p.transcript_trials, delta=p.delta,
    )
log.info("audited %d (candidate, query) pairs; exact methods %s", table[["candidate", "query"]].drop_duplicates().shape[0],
         table["exact_method"].value_counts().to_dict())
write_csv(table, snakemake.output.per_query)  # noqa: F821
