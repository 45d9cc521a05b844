"""Rule paper_comparison: the papers' numbers next to ours.

Inputs: ``numbers`` (workflow/data/paper_numbers.csv), ``results`` (the result files the
workflow produces among those the list names). Output: ``table`` (CSV).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "paper_comparison")  # noqa: F821

from ppaudit.io import write_csv  # noqa: E402
from ppaudit.experiments.paper_comparison import compare_with_paper, read_paper_numbers  # noqa: E402

numbers = read_paper_numbers(snakemake.input.numbers)  # noqa: F821
table = compare_with_paper(numbers, ".", available=list(snakemake.input.results))  # noqa: F821
log.info("paper numbers vs ours:\n%s", table[["id", "paper_value", "ours", "status", "detail"]].to_string(index=False))
log.info("status counts: %s", table["status"].value_counts().to_dict())
write_csv(table, snakemake.output.table)  # noqa: F821
