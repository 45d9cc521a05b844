# ppaudit workflow: every figure and table of the papers in shared/papers is a named
# target. `snakemake -c2` builds them all (rule `all`); `snakemake -c2 chadha_fig6` one.
# The stages live in workflow/rules/*.smk; the config is validated when this file is
# parsed (workflow/rules/common.smk) against workflow/schemas/config.schema.yaml.

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/synthetic.smk"
include: "workflow/rules/pate_capc_common.smk"
include: "workflow/rules/prompts_common.smk"
include: "workflow/rules/knn_common.smk"
include: "workflow/rules/pate_capc.smk"
include: "workflow/rules/prompts.smk"
include: "workflow/rules/features.smk"
include: "workflow/rules/knn.smk"
include: "workflow/rules/wang2022_common.smk"
include: "workflow/rules/wang2022.smk"
include: "workflow/rules/labeldp_common.smk"
include: "workflow/rules/labeldp.smk"
include: "workflow/rules/report_common.smk"
include: "workflow/rules/report.smk"


localrules:
    all,


rule all:
    default_target: True
    input:
        chadha_figure_targets(),
        chadha_pate_capc_targets(),
        chadha_promptpate_targets(),
        chadha_knn_targets(),
        wang_figure_targets(),
        labeldp_targets(),
        paper_comparison_targets(),
