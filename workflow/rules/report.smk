# The papers' explicitly stated numbers next to ours (for `snakemake --report`):
#
#   results/tables/paper_comparison.csv   one row per paper number: paper value, ours,
#                                         difference, status (computed / not computed / not found)
#
# Inputs: workflow/data/paper_numbers.csv and those result files named there that some
# rule of this workflow produces (get_paper_comparison_results, common.smk), so new
# targets are picked up as they are added.


localrules:
    paper_comparison,


rule paper_comparison:
    input:
        numbers=PAPER_NUMBERS,
        results=get_paper_comparison_results,
    output:
        **figure_outputs("paper_comparison"),
    log:
        "logs/paper_comparison/paper_comparison.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/paper_comparison.py"
