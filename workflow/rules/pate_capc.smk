# PATE and CaPC audits (Chadha et al. 2024, §5.1–5.2, §5.4; App. D.1, E.1–E.2):
# dataset → query set → teachers of S (N_g instantiations) → candidate canaries → the
# canary-holding teacher → parametric fit (P_q, P'_q) → Monte Carlo audit of the noisy
# argmax per query → composition over the queries, ε at δ → Figs. 3, 4, 7–16 and the
# findings table; rule plot_chadha_appendix also draws the appendix figures of PromptPATE
# (Figs. 17–24) and Private-kNN (25–31), one row of workflow/figures.yaml each. Paths,
# constants and helpers: the PATE/CaPC section of workflow/rules/common.smk.
# Config: chadha2024.pate_capc (get_config(*PATE_CAPC, key)).


rule select_queries:
    input:
        get_dataset_marker(*PATE_CAPC),
    output:
        queries="results/queries/{dataset}/seed{seed}.npz",
    params:
        num_queries=get_config(*PATE_CAPC, "num_queries"),
        source=get_config(*PATE_CAPC, "source"),
        root="resources/datasets",
        seed=get_config("seed"),
    wildcard_constraints:
        **PATE_CAPC_WILDCARDS,
    log:
        "logs/select_queries/{dataset}/seed{seed}.log",
    resources:
        mem_mb=4000,
        runtime=10,
    conda:
        "../../envs/teachers.yaml"
    script:
        "../scripts/select_queries.py"


rule train_teachers:
    input:
        get_dataset_marker(*PATE_CAPC),
        queries="results/queries/{dataset}/seed{seed}.npz",
    output:
        votes="results/votes/{algo}/{dataset}/{model}/seed{seed}/votes_S.npz",
    params:
        num_teachers=lambda wildcards: get_config(*PATE_CAPC, "dataset_settings", wildcards.dataset, "num_teachers"),
        num_instantiations=lambda wildcards: get_config(*PATE_CAPC, "num_instantiations", wildcards.algo),
        teacher_params=get_teacher_params,
        source=get_config(*PATE_CAPC, "source"),
        root="resources/datasets",
    wildcard_constraints:
        **PATE_CAPC_WILDCARDS,
    log:
        "logs/train_teachers/{algo}/{dataset}/{model}/seed{seed}.log",
    benchmark:
        "benchmarks/train_teachers/{algo}/{dataset}/{model}/seed{seed}.tsv"
    threads: get_config(*PATE_CAPC, "threads")
    resources:
        mem_mb=8000,
        runtime=240,
        gpu=get_teacher_gpu,
    conda:
        "../../envs/teachers.yaml"
    script:
        "../scripts/train_teachers.py"


rule craft_canaries:
    input:
        queries="results/queries/{dataset}/seed{seed}.npz",
        votes="results/votes/{algo}/{dataset}/{model}/seed{seed}/votes_S.npz",
    output:
        canaries="results/canaries/{algo}/{dataset}/{model}/seed{seed}/{adversary}.npz",
    params:
        num_candidates=lambda wildcards: get_config(*PATE_CAPC, "candidates", wildcards.adversary),
        selection=get_config(*PATE_CAPC, "candidate_selection"),
        num_queries=get_config(*PATE_CAPC, "num_queries"),
    wildcard_constraints:
        **PATE_CAPC_WILDCARDS,
    log:
        "logs/craft_canaries/{algo}/{dataset}/{model}/seed{seed}/{adversary}.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/teachers.yaml"
    script:
        "../scripts/craft_canaries.py"


rule train_canary_teachers:
    input:
        get_dataset_marker(*PATE_CAPC),
        queries="results/queries/{dataset}/seed{seed}.npz",
        canaries="results/canaries/{algo}/{dataset}/{model}/seed{seed}/{adversary}.npz",
    output:
        votes="results/votes/{algo}/{dataset}/{model}/seed{seed}/{adversary}/votes_S_prime.npz",
    params:
        num_teachers=lambda wildcards: get_config(*PATE_CAPC, "dataset_settings", wildcards.dataset, "num_teachers"),
        num_instantiations=get_config(*PATE_CAPC, "canary_instantiations"),
        teacher_params=get_teacher_params,
        source=get_config(*PATE_CAPC, "source"),
        root="resources/datasets",
    wildcard_constraints:
        **PATE_CAPC_WILDCARDS,
    log:
        "logs/train_canary_teachers/{algo}/{dataset}/{model}/seed{seed}/{adversary}.log",
    benchmark:
        "benchmarks/train_canary_teachers/{algo}/{dataset}/{model}/seed{seed}/{adversary}.tsv"
    threads: get_config(*PATE_CAPC, "threads")
    resources:
        mem_mb=8000,
        runtime=240,
        gpu=get_teacher_gpu,
    conda:
        "../../envs/teachers.yaml"
    script:
        "../scripts/train_canary_teachers.py"


rule fit_vote_model:
    input:
        votes_S="results/votes/{algo}/{dataset}/{model}/seed{seed}/votes_S.npz",
        votes_S_prime="results/votes/{algo}/{dataset}/{model}/seed{seed}/{adversary}/votes_S_prime.npz",
    output:
        fit="results/fits/{algo}/{dataset}/{model}/seed{seed}/{adversary}.npz",
    params:
        smoothing=get_config(*PATE_CAPC, "smoothing"),
        procedure=get_config(*PATE_CAPC, "fit_procedure"),
    wildcard_constraints:
        **PATE_CAPC_WILDCARDS,
    log:
        "logs/fit_vote_model/{algo}/{dataset}/{model}/seed{seed}/{adversary}.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/fit_vote_model.py"


rule audit_noisy_argmax:
    input:
        fit="results/fits/{algo}/{dataset}/{model}/seed{seed}/{adversary}.npz",
        canaries="results/canaries/{algo}/{dataset}/{model}/seed{seed}/{adversary}.npz",
        # the twin-paired joint vote vectors: the joint Pois-NatQ audit (one training draw for all queries)
        votes_S_prime="results/votes/{algo}/{dataset}/{model}/seed{seed}/{adversary}/votes_S_prime.npz",
    output:
        per_query="results/audits/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/per_query.csv",
        joint="results/audits/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/joint.csv",
    params:
        sigma=lambda wildcards: float(wildcards.sigma),
        **config_params(
            PATE_CAPC, "trials", "sample_trials", "orders", "confidence", "count_mode", "exact",
            "bonferroni", "transcript", "transcript_max_work", "transcript_mc_draws", "transcript_trials",
            "transcript_audit", "transcript_draws", "joint_draws",
            "delta", "audit_device"
        ),
        seed=get_config("seed"),
    wildcard_constraints:
        **PATE_CAPC_WILDCARDS,
    log:
        "logs/audit_noisy_argmax/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}.log",
    benchmark:
        "benchmarks/audit_noisy_argmax/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=720,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/audit_noisy_argmax.py"


rule compose_audit:
    input:
        per_query="results/audits/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/per_query.csv",
        joint="results/audits/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/joint.csv",
    output:
        rdp="results/audits/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/rdp.csv",
        eps="results/audits/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/eps.csv",
        summary="results/audits/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/summary.csv",
    params:
        delta=get_config(*PATE_CAPC, "delta"),
        num_teachers=lambda wildcards: get_config(*PATE_CAPC, "dataset_settings", wildcards.dataset, "num_teachers"),
        trials=get_config(*PATE_CAPC, "trials"),
        num_queries=get_config(*PATE_CAPC, "num_queries"),
        source=get_config(*PATE_CAPC, "source"),
        floor=epsilon_floor_of(*PATE_CAPC),
    wildcard_constraints:
        **PATE_CAPC_WILDCARDS,
    log:
        "logs/compose_audit/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/compose_audit.py"


rule collect_summaries:
    input:
        get_audit_summaries,
    output:
        summary="results/chadha2024/private_prediction/{algo}/summary.csv",
    wildcard_constraints:
        algo="pate|capc|knn",
    log:
        "logs/collect_summaries/{algo}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/collect_summaries.py"


rule tabulate_findings:
    input:
        summary="results/chadha2024/private_prediction/{algo}/summary.csv",
        # CaPC is compared with PATE ("CaPC ≥ PATE", §5.4).
        other=lambda wildcards: (
            ["results/chadha2024/private_prediction/pate/summary.csv"] if wildcards.algo == "capc" else []
        ),
        # the teachers of S and the query labels: the stand-ins' accuracy and consensus (issue 16 §3)
        votes=lambda wildcards: [f"results/votes/{pate_capc_prefix(wildcards.algo, ds)}/votes_S.npz" for ds in get_config(*PATE_CAPC, "datasets")],
        queries=lambda wildcards: [f"results/queries/{ds}/seed{get_config('seed')}.npz" for ds in get_config(*PATE_CAPC, "datasets")],
        # the canary-holding teachers' votes: the poison success rate (issue 34 §1), dataset-major
        canary_votes=lambda wildcards: [f"results/votes/{pate_capc_prefix(wildcards.algo, ds)}/{adv}/votes_S_prime.npz"
                                        for ds in get_config(*PATE_CAPC, "datasets") for adv in ADVERSARIES],
        canaries=lambda wildcards: [f"results/canaries/{pate_capc_prefix(wildcards.algo, ds)}/{adv}.npz"
                                    for ds in get_config(*PATE_CAPC, "datasets") for adv in ADVERSARIES],
    output:
        findings="results/tables/findings/{algo}.csv",
    params:
        floor=epsilon_floor_of(*PATE_CAPC),
        other_algo=lambda wildcards: "pate" if wildcards.algo == "capc" else "",
        datasets=get_config(*PATE_CAPC, "datasets"),
        sigmas=[float(get_config(*PATE_CAPC, "dataset_settings", ds, "sigma")) for ds in get_config(*PATE_CAPC, "datasets")],
        models=[get_config(*PATE_CAPC, "dataset_settings", ds, "model") for ds in get_config(*PATE_CAPC, "datasets")],
        adversaries=list(ADVERSARIES),
    wildcard_constraints:
        algo="|".join(PATE_CAPC_ALGOS),
    log:
        "logs/tabulate_findings/{algo}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/tabulate_findings.py"


rule tabulate_repeated_query_example:
    output:
        findings=findings_part("repeated_query_example"),
    params:
        example=get_config(*PATE_CAPC, "repeated_query_example"),
        orders=get_config(*PATE_CAPC, "orders"),
        delta=get_config(*PATE_CAPC, "delta"),
        confidence=get_config(*PATE_CAPC, "confidence"),
        floor=epsilon_floor_of(*PATE_CAPC),
        seed=get_config("seed"),
    log:
        "logs/tabulate_repeated_query_example/findings.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/tabulate_repeated_query_example.py"


rule concat_findings:
    input:
        parts=chadha_findings_parts(),
    output:
        **figure_outputs("concat_findings"),
    log:
        "logs/concat_findings/chadha2024.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/concat_findings.py"


rule plot_chadha_fig34:
    input:
        summaries=chadha_fig34_summaries(),
    output:
        **figure_outputs("plot_chadha_fig34"),
    params:
        adversaries=lambda wildcards: ["nat-advq", "pois-advq"] if wildcards.fig34 == "fig3" else ["pois-natq"],
        floor=epsilon_floor_of(*PATE_CAPC),
        title=lambda wildcards: (
            "Fig. 3: adversarial queries (worst case)" if wildcards.fig34 == "fig3" else "Fig. 4: Pois-NatQ (worst case)"
        ),
    wildcard_constraints:
        fig34="fig3|fig4",
    log:
        "logs/plot_chadha_fig34/{fig34}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/plot_chadha_fig34.py"


rule plot_chadha_appendix:
    input:
        summary=figure_param("plot_chadha_appendix", "summary"),
        rdp=get_appendix_rdp,
    output:
        **figure_outputs("plot_chadha_appendix"),
    params:
        figure=figure_params("plot_chadha_appendix"),
        panel_dataset=lambda wildcards: panel_dataset(*appendix_section(wildcards)),
        floor=lambda wildcards: epsilon_floor_of(*appendix_section(wildcards)),
        setting=appendix_setting,
    wildcard_constraints:
        appfig=figure_wildcard_pattern("plot_chadha_appendix", "appfig"),
    log:
        "logs/plot_chadha_appendix/{appfig}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/plot_chadha_appendix.py"
