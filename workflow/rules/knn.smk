# Private-kNN audit (Chadha et al. 2024, §6, App. D.3, App. E.4): features (features.smk)
# → query set, exact neighbours (faiss) and the vote model P_q, P^k_q → the five
# adversaries' canaries and ν(r_q) → Monte Carlo audit of the noisy argmax per query
# (k = 200, γ = 0.2, σ = 30 image / 20 text) next to the exact RDP of the model and the
# data-independent subsampled-Gaussian theory → composition over the n_Q queries, ε at δ
# → Fig. 5, Figs. 25–31 (rule plot_chadha_appendix, pate_capc.smk) and the kNN rows of the
# findings table.
# Paths, constants and helpers: the Private-kNN section of workflow/rules/common.smk.
# Config: chadha2024.knn (get_config(*KNN, key)). The summaries are collected by rule
# collect_summaries (algo=knn, workflow/rules/pate_capc.smk).


rule build_knn_setup:
    input:
        train="results/features/{dataset}/{encoder}/seed{seed}/train.npy",
        test="results/features/{dataset}/{encoder}/seed{seed}/test.npy",
        labels="results/features/{dataset}/{encoder}/seed{seed}/labels.npz",
    output:
        setup="results/knn/{dataset}/{encoder}/seed{seed}/setup.npz",
    params:
        k=get_config(*KNN, "k"),
        gamma=get_config(*KNN, "gamma"),
        num_queries=get_config(*KNN, "num_queries"),
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
        "../scripts/build_knn_setup.py"


rule craft_knn_adversary:
    input:
        train="results/features/{dataset}/{encoder}/seed{seed}/train.npy",
        test="results/features/{dataset}/{encoder}/seed{seed}/test.npy",
        labels="results/features/{dataset}/{encoder}/seed{seed}/labels.npz",
        setup="results/knn/{dataset}/{encoder}/seed{seed}/setup.npz",
    output:
        crafted="results/knn/{dataset}/{encoder}/seed{seed}/crafted/{adversary}.npz",
    params:
        num_queries=get_config(*KNN, "num_queries"),
        advq_candidates=get_knn_advq_candidates,
        candidate_selection=get_config(*KNN, "candidate_selection"),
        natq_candidates=get_config(*KNN, "natq_candidates"),
        s_grid=get_config(*KNN, "s_grid"),
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
        "../scripts/craft_knn_adversary.py"


rule audit_knn:
    input:
        crafted="results/knn/{dataset}/{encoder}/seed{seed}/crafted/{adversary}.npz",
    output:
        per_query="results/knn/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}/per_query.csv",
    params:
        sigma=lambda wildcards: float(wildcards.sigma),
        gamma=get_config(*KNN, "gamma"),
        trials=get_config(*KNN, "trials"),
        sample_trials=lambda wildcards: get_config(*KNN, "sample_trials_advq" if wildcards.adversary.endswith("advq") else "sample_trials_natq"),
        **config_params(
            KNN, "orders", "confidence", "min_nu", "bonferroni", "exact", "exact_draws", "max_support",
            "nonenumerable", "rb_displaced", "transcript_event_audit"
        ),
        audit_device=knn_audit_device(),
        rb_draws=lambda wildcards: get_config(*KNN, "rb_draws_advq" if wildcards.adversary.endswith("advq") else "rb_draws_natq"),
        delta=get_config(*KNN, "delta"),
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
        gpu=knn_audit_gpu,
    conda:
        "../../envs/features.yaml"
    script:
        "../scripts/audit_knn.py"


rule compose_knn_audit:
    input:
        per_query="results/knn/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}/per_query.csv",
    output:
        rdp="results/knn/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}/rdp.csv",
        eps="results/knn/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}/eps.csv",
        summary="results/knn/{dataset}/{encoder}/seed{seed}/{adversary}/sigma{sigma}/summary.csv",
    params:
        **config_params(KNN, "delta", "k", "gamma", "trials", "num_queries", "source"),
        floor=epsilon_floor_of(*KNN),
        confidence=get_config(*KNN, "confidence"),
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
        "../scripts/compose_knn_audit.py"


rule tabulate_knn_findings:
    input:
        summary="results/chadha2024/private_prediction/knn/summary.csv",
        # the Pois-NatQ poisons' expected top-k inclusions (the crafters' objective), beside their ε
        crafted=[
            f"results/knn/{knn_prefix(ds)}/crafted/{adv}.npz"
            for ds in get_config(*KNN, "datasets")
            for adv in ("pois-natq-embedding", "pois-natq-test", "pois-natq-train")
        ],
    output:
        findings="results/tables/findings/knn.csv",
    params:
        floor=epsilon_floor_of(*KNN),
    log:
        "logs/tabulate_knn_findings/knn.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/features.yaml"
    script:
        "../scripts/tabulate_knn_findings.py"


rule plot_chadha_fig5:
    input:
        summary="results/chadha2024/private_prediction/knn/summary.csv",
    output:
        **figure_outputs("plot_chadha_fig5"),
    params:
        floor=epsilon_floor_of(*KNN),
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
        "../scripts/plot_chadha_fig5.py"
