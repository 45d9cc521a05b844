# Private-kNN audit (Chadha et al. 2024, §6, App. D.3, App. E.4): features (features.smk)
# → query set, exact neighbours (faiss) and the vote model P_q, P^k_q → the five
# adversaries' canaries and ν(r_q) → Monte Carlo audit of the noisy argmax per query
# (k = 200, γ = 0.2, σ = 30 image / 20 text) next to the exact RDP of the model and the
# data-independent subsampled-Gaussian theory → composition over the n_Q queries, ε at δ
# → Fig. 5, Figs. 25–31 and the kNN rows of the findings table.
# Paths and helpers: workflow/rules/knn_common.smk.

KNN_WILDCARDS = dict(
    dataset="|".join(KNN_MODALITY),
    encoder="|".join(KNN_ENCODER_MODALITY),
    seed=r"\d+",
    adversary="|".join(KNN_ADVERSARY_NAMES),
    sigma=r"[0-9.e+-]+",
)


rule build_knn_setup:
    input:
        train="results/features/{dataset}/{encoder}/seed{seed}/train.npy",
        test="results/features/{dataset}/{encoder}/seed{seed}/test.npy",
        labels="results/features/{dataset}/{encoder}/seed{seed}/labels.npz",
    output:
        setup="results/knn/{dataset}/{encoder}/seed{seed}/setup.npz",
    params:
        k=knn_config()["k"],
        gamma=knn_config()["gamma"],
        num_queries=knn_config()["num_queries"],
        seed=lambda wildcards: int(wildcards.seed),
    wildcard_constraints:
        **KNN_WILDCARDS,
    log:
        "logs/build_knn_setup/{dataset}/{encoder}/seed{seed}.log",
    benchmark:
        "benchmarks/build_knn_setup/{dataset}/{encoder}/seed{seed}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../../envs/features.yaml"
    script:
        "../scripts/knn_build_setup.py"


rule craft_knn_adversary:
    input:
        train="results/features/{dataset}/{encoder}/seed{seed}/train.npy",
        test="results/features/{dataset}/{encoder}/seed{seed}/test.npy",
        labels="results/features/{dataset}/{encoder}/seed{seed}/labels.npz",
        setup="results/knn/{dataset}/{encoder}/seed{seed}/setup.npz",
    output:
        crafted="results/knn/{dataset}/{encoder}/seed{seed}/crafted/{adversary}.npz",
    params:
        num_queries=knn_config()["num_queries"],
        advq_candidates=lambda wildcards: knn_advq_candidates(wildcards.dataset),
        candidate_selection=knn_config()["candidate_selection"],
        natq_candidates=knn_config()["natq_candidates"],
        s_grid=knn_config()["s_grid"],
    wildcard_constraints:
        **KNN_WILDCARDS,
    log:
        "logs/craft_knn_adversary/{dataset}/{encoder}/seed{seed}/{adversary}.log",
    benchmark:
        "benchmarks/craft_knn_adversary/{dataset}/{encoder}/seed{seed}/{adversary}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../../envs/features.yaml"
    script:
        "../scripts/knn_craft_adversary.py"


rule audit_knn:
    input:
        crafted="results/knn/{dataset}/{encoder}/seed{seed}/crafted/{adversary}.npz",
    output:
        per_query="results/knn/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}/per_query.csv",
    params:
        sigma=lambda wildcards: float(wildcards.sigma),
        gamma=knn_config()["gamma"],
        trials=knn_config()["trials"],
        sample_trials=lambda wildcards: knn_config()["sample_trials_advq" if wildcards.adversary.endswith("advq") else "sample_trials_natq"],
        orders=knn_config()["orders"],
        confidence=knn_config()["confidence"],
        min_nu=knn_config()["min_nu"],
        bonferroni=knn_config()["bonferroni"],
        exact=knn_config()["exact"],
        exact_draws=knn_config()["exact_draws"],
        max_support=knn_config()["max_support"],
        audit_device=knn_config()["audit_device"],
        seed=lambda wildcards: int(wildcards.seed),
    wildcard_constraints:
        **KNN_WILDCARDS,
    log:
        "logs/audit_knn/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}.log",
    benchmark:
        "benchmarks/audit_knn/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=720,
    conda:
        "../../envs/features.yaml"
    script:
        "../scripts/knn_audit.py"


rule compose_knn_audit:
    input:
        per_query="results/knn/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}/per_query.csv",
    output:
        rdp="results/knn/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}/rdp.csv",
        eps="results/knn/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}/eps.csv",
        summary="results/knn/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}/summary.csv",
    params:
        delta=knn_config()["delta"],
        k=knn_config()["k"],
        gamma=knn_config()["gamma"],
        trials=knn_config()["trials"],
        num_queries=knn_config()["num_queries"],
        source=knn_config()["source"],
        floor=knn_epsilon_floor(),
    wildcard_constraints:
        **KNN_WILDCARDS,
    log:
        "logs/compose_knn_audit/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/features.yaml"
    script:
        "../scripts/knn_compose_audit.py"


rule collect_knn_summaries:
    input:
        knn_summaries(),
    output:
        summary="results/chadha2024/private_prediction/knn/summary.csv",
    log:
        "logs/collect_knn_summaries/knn.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/pate_capc_collect_summaries.py"


rule tabulate_knn_findings:
    input:
        summary="results/chadha2024/private_prediction/knn/summary.csv",
    output:
        findings="results/tables/findings/knn.csv",
    params:
        floor=knn_epsilon_floor(),
    log:
        "logs/tabulate_knn_findings/knn.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/features.yaml"
    script:
        "../scripts/knn_tabulate_findings.py"


rule plot_chadha_fig5:
    input:
        summary="results/chadha2024/private_prediction/knn/summary.csv",
    output:
        **figure_outputs("plot_chadha_fig5"),
    params:
        floor=knn_epsilon_floor(),
        labels=KNN_ADVERSARY_LABELS,
        title="Fig. 5: Private-kNN (worst case)",
    log:
        "logs/plot_chadha_fig5/fig5.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/knn_plot_fig5.py"


rule plot_chadha_knn_appendix:
    input:
        summary="results/chadha2024/private_prediction/knn/summary.csv",
        rdp=lambda wildcards: f"{knn_audit_dir(knn_panel_dataset(), KNN_APPENDIX_FIGURES[wildcards.knnfig][0])}/rdp.csv",
    output:
        **figure_outputs("plot_chadha_knn_appendix"),
    params:
        adversary=lambda wildcards: KNN_APPENDIX_FIGURES[wildcards.knnfig][0],
        case=lambda wildcards: KNN_APPENDIX_FIGURES[wildcards.knnfig][1],
        panel_dataset=knn_panel_dataset(),
        floor=knn_epsilon_floor(),
        title=lambda wildcards: f"Fig. {wildcards.knnfig[3:]}: {knn_appendix_caption(wildcards.knnfig)}",
    wildcard_constraints:
        knnfig="|".join(KNN_APPENDIX_FIGURES),
    log:
        "logs/plot_chadha_knn_appendix/{knnfig}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/knn_plot_appendix.py"
