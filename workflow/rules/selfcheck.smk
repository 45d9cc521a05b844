# The auditor checks itself (issue 15 §3; ppaudit.selfcheck): correct mechanisms and
# planted-bug twins, each audited `selfcheck.repetitions` times with `selfcheck.trials`
# black-box draws per side. Target `selfcheck`.
#
#   results/selfcheck/selfcheck.csv       one row per case: claim, mean lower bounds, flagged runs, bar, pass
#   results/selfcheck/selfcheck_runs.csv  one row per (case, repetition)
#   results/selfcheck/selfcheck.pdf|png   flag rate per case against the two bars


rule run_selfcheck:
    output:
        **figure_outputs("run_selfcheck"),
    params:
        repetitions=config["selfcheck"]["repetitions"],
        trials=config["selfcheck"]["trials"],
        confidence=config["selfcheck"]["confidence"],
        slack_level=config["selfcheck"]["slack_level"],
        cases=config["selfcheck"]["cases"],
        seed=config["seed"],
    log:
        "logs/run_selfcheck/selfcheck.log",
    benchmark:
        "benchmarks/run_selfcheck/selfcheck.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/run_selfcheck.py"
