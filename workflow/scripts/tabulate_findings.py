"""Snakemake script of rule tabulate_findings: the orderings of §5.4 checked for one algorithm
(ppaudit.experiments.pate_capc_findings.findings_rows). Output: ``findings``."""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "tabulate_findings")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.experiments.pate_capc_findings import findings_rows  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

algo = snakemake.wildcards.algo  # noqa: F821
summary = pd.read_csv(snakemake.input.summary)  # noqa: F821
other = pd.read_csv(snakemake.input.other[0]) if snakemake.input.other else None  # noqa: F821
rows = findings_rows(summary, algo, snakemake.params.floor, other=other, other_algo=snakemake.params.other_algo or None)  # noqa: F821
log.info("findings:\n%s", rows.to_string(index=False))
write_csv(rows, snakemake.output.findings)  # noqa: F821
