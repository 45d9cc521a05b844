"""Snakemake script of rule collect_summaries: every summary of one algorithm in one CSV.

``{algo}`` is pate, capc (summaries of rule compose_audit) or knn (rule compose_knn_audit);
the output is the input format of Figs. 3/4 and 5, the appendix figures and the findings checks.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "collect_summaries")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.io import write_csv  # noqa: E402

table = pd.concat([pd.read_csv(f) for f in snakemake.input], ignore_index=True)  # noqa: F821
log.info("%d rows from %d files", len(table), len(snakemake.input))  # noqa: F821
write_csv(table, snakemake.output.summary)  # noqa: F821
