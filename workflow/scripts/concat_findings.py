"""Snakemake script of rule concat_findings: the parts of every algorithm in one table, with the
``cause`` of every row that does not hold computed over all parts together
(ppaudit.experiments.findings_causes.chadha_causes: a part's cause can use another part's numbers,
e.g. a poison success rate) and checked (``require_causes``: no unexplained False)."""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "concat_findings")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.experiments.findings_causes import cause_counts, chadha_causes, require_causes  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

table = pd.concat([pd.read_csv(f) for f in snakemake.input.parts], ignore_index=True)  # noqa: F821
table = chadha_causes(table)
require_causes(table, "chadha2024 findings")
log.info("findings (%d rows, %d hold; causes of the others: %s):\n%s", len(table), int(table["holds"].sum()), cause_counts([table]),
         table.to_string(index=False))
write_csv(table, snakemake.output.table)  # noqa: F821
