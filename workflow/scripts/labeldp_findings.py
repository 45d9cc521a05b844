"""Snakemake script of rule labeldp_findings: the observational paper's three claims as numbers + booleans.

Inputs: ``rr`` (RR summary), ``tau`` (τ-shift summary), ``audits`` (image audit CSVs).
Params: settings (tight_tolerance, mia_tolerance). Output: ``csv``.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "labeldp_findings")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.experiments.labeldp_tables import findings  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

audits = pd.concat([pd.read_csv(f) for f in snakemake.input.audits], ignore_index=True)  # noqa: F821
df = findings(pd.read_csv(snakemake.input.rr), pd.read_csv(snakemake.input.tau), audits, dict(snakemake.params.settings))  # noqa: F821
log.info("\n%s", df.to_string(index=False))
write_csv(df, snakemake.output.csv)  # noqa: F821
