"""Snakemake script of rule audit_wang_caching: the answer-caching defence (Wang §5).

Params: settings (wang2022.defence), seed. Outputs ``reconstruction`` and ``audits`` (CSV).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "audit_wang_caching")  # noqa: F821

from ppaudit.experiments.wang2022.caching import caching_audits, caching_reconstruction  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402

p = snakemake.params  # noqa: F821
s = p.settings
recon = caching_reconstruction(s["histograms"], s["sigma"], s["query_counts"], s["repeats"], job_generator(p.seed, "wang2022_defence", "reconstruction"))
log.info("reconstruction:\n%s", recon.to_string(index=False))
audits = caching_audits(
    s["audit_histogram"], s["audit_sigma"], s["trials"], s["orders"], s["num_repetitions"], s["confidence"],
    job_generator(p.seed, "wang2022_defence", "audits"),
)
log.info("audits:\n%s", audits.to_string(index=False))
write_csv(recon, snakemake.output.reconstruction)  # noqa: F821
write_csv(audits, snakemake.output.audits)  # noqa: F821
