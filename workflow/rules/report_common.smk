# Functions of the report stage (rules in workflow/rules/report.smk): which result files
# the paper comparison can use. No rules here (snakemake --lint wants them apart).

import pandas as _pc_pd
from pathlib import Path as _PcPath

# The curated list of numbers the papers state explicitly (see its header and
# src/ppaudit/paper_comparison.py). Part of the workflow, not of resources/.
PAPER_NUMBERS = str(_PcPath(workflow.basedir) / "workflow" / "data" / "paper_numbers.csv")


def paper_comparison_files():
    """Result files named in workflow/data/paper_numbers.csv.

    Read when the DAG is built; a file is used only if some rule of the workflow produces
    it, so rows of targets that do not exist (yet) are reported as "not computed".
    """
    table = _pc_pd.read_csv(PAPER_NUMBERS, dtype=str, keep_default_na=False)
    files = list(dict.fromkeys(f.strip() for f in table["result_file"] if f.strip()))
    return [f for f in files if any(r.is_producer(f) for r in workflow.rules if r.name != "paper_comparison")]


def paper_comparison_inputs(wildcards):
    """Input function of the paper comparison (the producible result files)."""
    return paper_comparison_files()
