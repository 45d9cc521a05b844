# Wang et al. 2022, "In Differential Privacy, There is Truth: On Vote Leakage in Ensemble
# Private Learning": histogram reconstruction from noisy-argmax answers (Figs. 3–7), the
# PhD-detection attack on UCI Adult (Fig. 1, direct and end-to-end) and the answer-caching
# defence (§5).
#
#   results/wang2022/histograms/{dataset}.npz      vote histograms of one 250-teacher PATE
#   results/wang2022/attacks/{dataset}.csv         query-limit and budget attacks on L/M/H
#   results/wang2022/adult/votes.csv               RF-ensemble votes on the balanced test set
#   results/wang2022/adult/consensus.csv           + consensus of reconstructed histograms
#   results/wang2022/defence/{reconstruction,audits}.csv
#   results/figures/wang2022/{fig}.pdf|png|csv     figures and their plotted numbers
#   results/tables/wang2022_findings.csv           "error falls as σ grows", checked
#
# Constants and helpers (WANG_DATASETS, WANG_SIGMA_FIGURES, wang_solvers, …): the Wang section of
# common.smk; config checks: ppaudit.workflow.config_checks.check_wang2022. Script of rule R:
# workflow/scripts/R.py.


rule train_wang_teachers:
    output:
        histograms="results/wang2022/histograms/{dataset}.npz",
    params:
        loader=lambda wildcards: WANG_DATASETS[wildcards.dataset][0],
        train_size=lambda wildcards: get_config("wang2022", "datasets", wildcards.dataset, "train_size"),
        test_size=lambda wildcards: get_config("wang2022", "datasets", wildcards.dataset, "test_size"),
        num_teachers=get_config("wang2022", "histograms", "num_teachers"),
        model=get_config("wang2022", "histograms", "teacher_model"),
        source=get_config("wang2022", "histograms", "data_source"),
        root=get_config("wang2022", "histograms", "data_root"),
        seed=get_config("seed"),
    wildcard_constraints:
        dataset=WANG_DATASET_PATTERN,
    log:
        "logs/train_wang_teachers/{dataset}.log",
    benchmark:
        "benchmarks/train_wang_teachers/{dataset}.tsv"
    threads: get_config("wang2022", "histograms", "threads")
    resources:
        mem_mb=4000,
        runtime=120,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/train_wang_teachers.py"


rule attack_wang_histograms:
    input:
        histograms="results/wang2022/histograms/{dataset}.npz",
    output:
        attacks="results/wang2022/attacks/{dataset}.csv",
        selection="results/wang2022/selection/{dataset}.csv",
    params:
        **config_params(("wang2022", "attack"), "per_level", "sigmas", "num_queries", "budget_sigma"),
        budget=lambda wildcards: get_config("wang2022", "datasets", wildcards.dataset, "budget"),
        delta=lambda wildcards: get_config("wang2022", "datasets", wildcards.dataset, "delta"),
        accountant=get_config("wang2022", "attack", "accountant"),
        threshold=lambda wildcards: get_config("wang2022", "datasets", wildcards.dataset, "threshold"),
        sigma_threshold=lambda wildcards: get_config("wang2022", "datasets", wildcards.dataset, "sigma_threshold"),
        solvers=wang_solvers(),
        paper_max_iterations=get_config("wang2022", "attack", "paper_max_iterations"),
        seed=get_config("seed"),
    wildcard_constraints:
        dataset=WANG_DATASET_PATTERN,
    log:
        "logs/attack_wang_histograms/{dataset}.log",
    benchmark:
        "benchmarks/attack_wang_histograms/{dataset}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=120,  # both solvers; the paper's loop runs up to paper_max_iterations steps
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/attack_wang_histograms.py"


rule train_adult_ensemble:
    output:
        votes="results/wang2022/adult/votes.csv",
    params:
        settings=get_config("wang2022", "adult"),
        root=get_config("wang2022", "histograms", "data_root"),
        seed=get_config("seed"),
    log:
        "logs/train_adult_ensemble/adult.log",
    benchmark:
        "benchmarks/train_adult_ensemble/adult.tsv"
    threads: get_config("wang2022", "histograms", "threads")
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/train_adult_ensemble.py"


rule attack_adult_histograms:
    input:
        votes="results/wang2022/adult/votes.csv",
    output:
        consensus="results/wang2022/adult/consensus.csv",
    params:
        sigma=get_config("wang2022", "adult", "sigma"),
        num_queries=get_config("wang2022", "adult", "num_queries"),
        seed=get_config("seed"),
    log:
        "logs/attack_adult_histograms/adult.log",
    benchmark:
        "benchmarks/attack_adult_histograms/adult.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/attack_adult_histograms.py"


rule audit_wang_caching:
    output:
        reconstruction="results/wang2022/defence/reconstruction.csv",
        audits="results/wang2022/defence/audits.csv",
    params:
        settings=get_config("wang2022", "defence"),
        seed=get_config("seed"),
    log:
        "logs/audit_wang_caching/defence.log",
    benchmark:
        "benchmarks/audit_wang_caching/defence.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/audit_wang_caching.py"


rule audit_wang_caching_pate:
    input:
        **wang_pate_defence_inputs(),
    output:
        transcripts="results/wang2022/defence/pate_transcripts.csv",
    params:
        settings=get_config("wang2022", "defence", "pate"),
        adversaries=list(WANG_DEFENCE_ADVERSARIES),
        dataset=panel_dataset("chadha2024", "pate_capc"),
        sigma=float(get_config("chadha2024", "pate_capc", "dataset_settings", panel_dataset("chadha2024", "pate_capc"), "sigma")),
        orders=get_config("chadha2024", "pate_capc", "orders"),
        confidence=get_config("wang2022", "defence", "confidence"),
        delta=get_config("chadha2024", "pate_capc", "delta"),
        seed=get_config("seed"),
    log:
        "logs/audit_wang_caching_pate/defence.log",
    benchmark:
        "benchmarks/audit_wang_caching_pate/defence.tsv"
    # a long single-core job on the PATE fits: start it as soon as they exist, so that it runs
    # beside the rest of the workflow rather than alone at the end (measured: ≈ 90 s of an idle core)
    priority: 20
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/audit_wang_caching_pate.py"


rule plot_wang_fig1:
    input:
        consensus="results/wang2022/adult/consensus.csv",
    output:
        **figure_outputs("plot_wang_fig1"),
    params:
        threshold=get_config("wang2022", "adult", "threshold"),
    log:
        "logs/plot_wang_fig1/fig1.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/plot_wang_fig1.py"


rule plot_wang_fig3:
    input:
        histograms=expand("results/wang2022/histograms/{dataset}.npz", dataset=WANG_DATASETS),
    output:
        **figure_outputs("plot_wang_fig3"),
    params:
        titles=[v[1] for v in WANG_DATASETS.values()],
    log:
        "logs/plot_wang_fig3/fig3.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/plot_wang_fig3.py"


rule plot_wang_fig4:
    input:
        attacks=expand("results/wang2022/attacks/{dataset}.csv", dataset=WANG_DATASETS),
    output:
        **figure_outputs("plot_wang_fig4"),
    params:
        titles=[v[1] for v in WANG_DATASETS.values()],
    log:
        "logs/plot_wang_fig4/fig4.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/plot_wang_fig4.py"


rule plot_wang_fig5:
    input:
        attacks=expand("results/wang2022/attacks/{dataset}.csv", dataset=WANG_DATASETS),
    output:
        **figure_outputs("plot_wang_fig5"),
    params:
        titles=[v[1] for v in WANG_DATASETS.values()],
    log:
        "logs/plot_wang_fig5/fig5.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/plot_wang_fig5.py"


rule plot_wang_error_per_sigma:
    input:
        attacks=lambda wildcards: f"results/wang2022/attacks/{WANG_SIGMA_FIGURES[wildcards.sigmafig]}.csv",
    output:
        **figure_outputs("plot_wang_error_per_sigma"),
    params:
        title=lambda wildcards: WANG_DATASETS[WANG_SIGMA_FIGURES[wildcards.sigmafig]][1],
        num_queries=get_config("wang2022", "attack", "num_queries"),
    wildcard_constraints:
        sigmafig="|".join(WANG_SIGMA_FIGURES),
    log:
        "logs/plot_wang_error_per_sigma/{sigmafig}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/plot_wang_error_per_sigma.py"


rule plot_wang_defence_caching:
    input:
        reconstruction="results/wang2022/defence/reconstruction.csv",
        audits="results/wang2022/defence/audits.csv",
        pate="results/wang2022/defence/pate_transcripts.csv",
    output:
        **figure_outputs("plot_wang_defence_caching"),
    params:
        floor=epsilon_floor_of("chadha2024", "pate_capc"),
    log:
        "logs/plot_wang_defence_caching/defence_caching.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/plot_wang_defence_caching.py"


rule tabulate_wang_findings:
    input:
        attacks=expand("results/wang2022/attacks/{dataset}.csv", dataset=WANG_DATASETS),
        pate="results/wang2022/defence/pate_transcripts.csv",
    output:
        **figure_outputs("tabulate_wang_findings"),
    params:
        datasets=list(WANG_DATASETS),
        paper=[wang_paper_error(d) for d in WANG_DATASETS],
    log:
        "logs/tabulate_wang_findings/findings.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/tabulate_wang_findings.py"
