# ppaudit workflow: every figure and table of the papers in shared/papers is a named
# target, one row of workflow/figures.yaml. `snakemake -c2` builds them all (rule `all`);
# `snakemake -c2 chadha_fig6` one. The stages live in workflow/rules/*.smk; the config
# and the figure registry are validated when this file is parsed (workflow/rules/common.smk,
# against workflow/schemas/config.schema.yaml and by ppaudit.workflow.registry).

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/synthetic.smk"
include: "workflow/rules/pate_capc.smk"
include: "workflow/rules/prompts.smk"
include: "workflow/rules/features.smk"
include: "workflow/rules/knn.smk"
include: "workflow/rules/wang2022.smk"
include: "workflow/rules/labeldp.smk"
include: "workflow/rules/worstcase.smk"
include: "workflow/rules/selfcheck.smk"
include: "workflow/rules/blackbox.smk"
include: "workflow/rules/report.smk"


# Every figure/table target collects the files of its registry row: `snakemake -c2 chadha_fig3`.
# (A row whose producing rule carries the target's name, e.g. paper_comparison, needs none.)
for _target in FIGURES.generated_targets():

    rule:
        name:
            _target.id
        localrule: True
        input:
            figure_target_files(_target.id),


# `snakemake -c2` without a target: every figure and table, or those of the config key
# `targets` (config/slices/fmnist_gpu.yaml: chadha_fig3).
rule all:
    default_target: True
    localrule: True
    input:
        ALL_TARGET_FILES,


check_figure_registry()


# Before the first job: a local run's Python jobs fork from one server that has imported numpy, torch
# & co. once, instead of importing them once each (ppaudit.workflow.job_server; PPAUDIT_FORK_JOBS=0: off).
onstart:
    start_job_server(workflow)


# After the last job: end the scheduler's pending rate-limiter timers, so that the 10-s timespan of
# workflow/profiles/default (max-jobs-per-timespan) never delays the exit (ppaudit.workflow.scheduler_timers),
# and stop the job server.
onsuccess:
    cancel_pending_timers()
    stop_job_server()


onerror:
    cancel_pending_timers()
    stop_job_server()
