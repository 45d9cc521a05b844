"""Rule tabulate_labeldp: one paper table (CSV + markdown) from the audit CSVs.

Inputs: ``audits`` (audit CSVs), ``paper_numbers`` (workflow/data/paper_numbers.csv, the
``paper`` column). Output: ``csv``, ``md``. Wildcard: table.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "tabulate_labeldp")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.experiments.labeldp.tables import PATE_DATA_DEPENDENT_NOTE, build_table, read_paper_number_strings  # noqa: E402
from ppaudit.io import atomic_path, write_csv  # noqa: E402

audits = pd.concat([pd.read_csv(f) for f in snakemake.input.audits], ignore_index=True)  # noqa: F821
table = build_table(snakemake.wildcards.table, audits, read_paper_number_strings(snakemake.input.paper_numbers))  # noqa: F821
log.info("\n%s", table.to_string(index=False))
write_csv(table, snakemake.output.csv)  # noqa: F821
with atomic_path(snakemake.output.md) as tmp:  # noqa: F821
    # the measured numbers behind a far-off row go to paper_comparison.csv; the markdown stays the paper's table
    note = ""
    if "procedure" in table and ((table["algo"] == "pate") & (table["procedure"] == "paper")).any():
        note = f"\n{PATE_DATA_DEPENDENT_NOTE}\n"
    tmp.write_text(f"# {snakemake.params.title}\n\n" + table.drop(columns=["stand_in_measure"], errors="ignore").to_markdown(index=False) + "\n" + note)  # noqa: F821
