"""Snakemake script of rule audit_synthetic_pair: every bound and audit of one histogram pair.

Inputs: none. Params: h_s, h_s_prime, sigma, methods, trials, orders, confidence, mode,
num_bootstrap, selection, seed. Outputs: ``table`` (CSV: order + one column per method)
and ``counts`` (JSON: the Monte Carlo counts and the settings that produced them).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "audit_synthetic_pair")  # noqa: F821

from ppaudit.experiments.chadha2024.synthetic import audit_histogram_pair  # noqa: E402
from ppaudit.io import write_csv, write_json  # noqa: E402
from ppaudit.montecarlo import device_scope  # noqa: E402
from ppaudit.rng import job_seed_sequence  # noqa: E402

experiment = snakemake.wildcards.experiment  # noqa: F821
p = snakemake.params  # noqa: F821
settings = {
    "experiment": f"chadha_{experiment}",
    "h_s": list(p.h_s),
    "h_s_prime": list(p.h_s_prime),
    "sigma": p.sigma,
    "methods": list(p.methods),
    "trials": p.trials,
    "orders": list(p.orders),
    "confidence": p.confidence,
    "mode": p.mode,
    "num_bootstrap": p.num_bootstrap,
    "selection": p.selection,
    "seed": p.seed,
}
log.info("auditing %s", settings)

rng = job_seed_sequence(p.seed, settings["experiment"], "audit_synthetic_pair")
with device_scope(p.audit_device):  # Monte Carlo device (numpy on cpu, float32 torch on cuda)
    table, counts0, counts1 = audit_histogram_pair(
        p.h_s,
        p.h_s_prime,
        p.sigma,
        p.trials,
        p.orders,
        methods=tuple(p.methods),
        confidence=p.confidence,
        mode=p.mode,
        num_bootstrap=p.num_bootstrap,
        selection=p.selection,
        rng=rng,
        progress=True,
    )
log.info("counts on H_S: %s", counts0.tolist())
log.info("counts on H_S': %s", counts1.tolist())
log.info("result:\n%s", table.to_string(index=False))

write_csv(table, snakemake.output.table)  # noqa: F821
write_json({**settings, "counts_h_s": counts0.tolist(), "counts_h_s_prime": counts1.tolist()}, snakemake.output.counts)  # noqa: F821
log.info("wrote %s and %s", snakemake.output.table, snakemake.output.counts)  # noqa: F821
