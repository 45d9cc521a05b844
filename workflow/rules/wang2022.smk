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


rule train_wang_teachers:
    output:
        histograms="results/wang2022/histograms/{dataset}.npz",
    params:
        loader=lambda wildcards: WANG_DATASETS[wildcards.dataset][0],
        train_size=lambda wildcards: wang_dataset(wildcards.dataset)["train_size"],
        test_size=lambda wildcards: wang_dataset(wildcards.dataset)["test_size"],
        num_teachers=wang_settings("histograms")["num_teachers"],
        model=wang_settings("histograms")["teacher_model"],
        source=wang_settings("histograms")["data_source"],
        root=wang_settings("histograms")["data_root"],
        seed=config["seed"],
    wildcard_constraints:
        dataset=WANG_DATASET_PATTERN,
    log:
        "logs/train_wang_teachers/{dataset}.log",
    benchmark:
        "benchmarks/train_wang_teachers/{dataset}.tsv"
    threads: wang_settings("histograms")["threads"]
    resources:
        mem_mb=4000,
        runtime=120,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/wang2022_train_teachers.py"


rule attack_wang_histograms:
    input:
        histograms="results/wang2022/histograms/{dataset}.npz",
    output:
        attacks="results/wang2022/attacks/{dataset}.csv",
        selection="results/wang2022/selection/{dataset}.csv",
    params:
        per_level=wang_settings("attack")["per_level"],
        sigmas=wang_settings("attack")["sigmas"],
        num_queries=wang_settings("attack")["num_queries"],
        budget_sigma=wang_settings("attack")["budget_sigma"],
        budget=lambda wildcards: wang_dataset(wildcards.dataset)["budget"],
        delta=lambda wildcards: wang_dataset(wildcards.dataset)["delta"],
        accountant=wang_settings("attack")["accountant"],
        threshold=lambda wildcards: wang_dataset(wildcards.dataset)["threshold"],
        sigma_threshold=lambda wildcards: wang_dataset(wildcards.dataset)["sigma_threshold"],
        solvers=wang_solvers(),
        paper_max_iterations=wang_settings("attack")["paper_max_iterations"],
        seed=config["seed"],
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
        "../scripts/wang2022_attack_histograms.py"


rule train_adult_ensemble:
    output:
        votes="results/wang2022/adult/votes.csv",
    params:
        settings=wang_settings("adult"),
        root=wang_settings("histograms")["data_root"],
        seed=config["seed"],
    log:
        "logs/train_adult_ensemble/adult.log",
    benchmark:
        "benchmarks/train_adult_ensemble/adult.tsv"
    threads: wang_settings("histograms")["threads"]
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/wang2022_train_adult.py"


rule attack_adult_histograms:
    input:
        votes="results/wang2022/adult/votes.csv",
    output:
        consensus="results/wang2022/adult/consensus.csv",
    params:
        sigma=wang_settings("adult")["sigma"],
        num_queries=wang_settings("adult")["num_queries"],
        seed=config["seed"],
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
        "../scripts/wang2022_attack_adult.py"


rule audit_wang_caching:
    output:
        reconstruction="results/wang2022/defence/reconstruction.csv",
        audits="results/wang2022/defence/audits.csv",
    params:
        settings=wang_settings("defence"),
        seed=config["seed"],
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
        "../scripts/wang2022_caching_defence.py"


rule audit_wang_caching_pate:
    input:
        **wang_pate_defence_inputs(),
    output:
        transcripts="results/wang2022/defence/pate_transcripts.csv",
    params:
        settings=wang_settings("defence")["pate"],
        adversaries=["nat-advq", "pois-advq"],
        dataset=pc_panel_dataset(),
        sigma=float(pc_dataset(pc_panel_dataset())["sigma"]),
        orders=pc_config()["orders"],
        confidence=wang_settings("defence")["confidence"],
        delta=pc_config()["delta"],
        seed=config["seed"],
    log:
        "logs/audit_wang_caching_pate/defence.log",
    benchmark:
        "benchmarks/audit_wang_caching_pate/defence.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/wang2022_caching_pate.py"


rule plot_wang_fig1:
    input:
        consensus="results/wang2022/adult/consensus.csv",
    output:
        **figure_outputs("plot_wang_fig1"),
    params:
        figure="fig1",
        threshold=wang_settings("adult")["threshold"],
    log:
        "logs/plot_wang_fig1/fig1.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/wang2022_plot.py"


rule plot_wang_fig3:
    input:
        histograms=expand("results/wang2022/histograms/{dataset}.npz", dataset=WANG_DATASETS),
    output:
        **figure_outputs("plot_wang_fig3"),
    params:
        figure="fig3",
        titles=[v[1] for v in WANG_DATASETS.values()],
    log:
        "logs/plot_wang_fig3/fig3.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/wang2022_plot.py"


rule plot_wang_fig4:
    input:
        attacks=expand("results/wang2022/attacks/{dataset}.csv", dataset=WANG_DATASETS),
    output:
        **figure_outputs("plot_wang_fig4"),
    params:
        figure="fig4",
        titles=[v[1] for v in WANG_DATASETS.values()],
    log:
        "logs/plot_wang_fig4/fig4.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/wang2022_plot.py"


rule plot_wang_fig5:
    input:
        attacks=expand("results/wang2022/attacks/{dataset}.csv", dataset=WANG_DATASETS),
    output:
        **figure_outputs("plot_wang_fig5"),
    params:
        figure="fig5",
        titles=[v[1] for v in WANG_DATASETS.values()],
    log:
        "logs/plot_wang_fig5/fig5.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/wang2022_plot.py"


rule plot_wang_fig6:
    input:
        attacks=f"results/wang2022/attacks/{WANG_SIGMA_FIGURES['fig6']}.csv",
    output:
        **figure_outputs("plot_wang_fig6"),
    params:
        figure="fig6",
        titles=[WANG_DATASETS[WANG_SIGMA_FIGURES["fig6"]][1]],
        num_queries=wang_settings("attack")["num_queries"],
    log:
        "logs/plot_wang_fig6/fig6.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/wang2022_plot.py"


rule plot_wang_fig7:
    input:
        attacks=f"results/wang2022/attacks/{WANG_SIGMA_FIGURES['fig7']}.csv",
    output:
        **figure_outputs("plot_wang_fig7"),
    params:
        figure="fig7",
        titles=[WANG_DATASETS[WANG_SIGMA_FIGURES["fig7"]][1]],
        num_queries=wang_settings("attack")["num_queries"],
    log:
        "logs/plot_wang_fig7/fig7.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/wang2022_plot.py"


rule plot_wang_defence_caching:
    input:
        reconstruction="results/wang2022/defence/reconstruction.csv",
        audits="results/wang2022/defence/audits.csv",
        pate="results/wang2022/defence/pate_transcripts.csv",
    output:
        **figure_outputs("plot_wang_defence_caching"),
    params:
        figure="defence_caching",
        floor=pc_epsilon_floor(),
    log:
        "logs/plot_wang_defence_caching/defence_caching.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/wang2022.yaml"
    script:
        "../scripts/wang2022_plot.py"


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
        "../scripts/wang2022_findings.py"
