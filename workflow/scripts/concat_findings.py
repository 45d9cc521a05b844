"""Snakemake script of rule concat_findings: the parts of every algorithm in one table."""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "concat_findings")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.io import write_csv  # noqa: E402

table = pd.concat([pd.read_csv(f) for f in snakemake.input.parts], ignore_index=True)  # noqa: F821
log.info("findings (%d rows, %d hold):\n%s", len(table), int(table["holds"].sum()), table.to_string(index=False))
write_csv(table, snakemake.output.table)  # noqa: F821
