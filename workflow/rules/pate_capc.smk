# PATE and CaPC audits (Chadha et al. 2024, §5.1–5.2, §5.4; App. D.1, E.1–E.2):
# dataset → query set → teachers of S (N_g instantiations) → candidate canaries → the
# canary-holding teacher → parametric fit (P_q, P'_q) → Monte Carlo audit of the noisy
# argmax per query → composition over the queries, ε at δ → Figs. 3, 4, 7–16 and the
# findings table. Paths and helpers: workflow/rules/pate_capc_common.smk.


PC_WILDCARDS = dict(
    algo="pate|capc",
    dataset="[a-z0-9-]+",
    model="logreg|mlp|lenet5|wrn16-4",
    seed=r"\d+",
    adversary="nat-advq|pois-advq|pois-natq",
    sigma=r"[0-9.e+-]+",
)


rule select_queries:
    input:
        pc_dataset_inputs,
    output:
        queries="results/queries/{dataset}/seed{seed}.npz",
    params:
        num_queries=pc_config()["num_queries"],
        source=pc_config()["source"],
        root="resources/datasets",
        seed=config["seed"],
    wildcard_constraints:
        **PC_WILDCARDS,
    log:
        "logs/select_queries/{dataset}/seed{seed}.log",
    resources:
        mem_mb=4000,
        runtime=10,
    conda:
        "../../envs/teachers.yaml"
    script:
        "../scripts/pate_capc_select_queries.py"


rule train_teachers:
    input:
        pc_dataset_inputs,
        queries="results/queries/{dataset}/seed{seed}.npz",
    output:
        votes="results/votes/{algo}/{dataset}/{model}/seed{seed}/votes_S.npz",
    params:
        num_teachers=lambda wildcards: pc_dataset(wildcards.dataset)["num_teachers"],
        num_instantiations=lambda wildcards: pc_instantiations(wildcards.algo),
        teacher_params=lambda wildcards: {**pc_teacher_params(wildcards.model), "deterministic": pc_config()["deterministic"], "batch_teachers": pc_config()["batch_teachers"]},
        source=pc_config()["source"],
        root="resources/datasets",
    wildcard_constraints:
        **PC_WILDCARDS,
    log:
        "logs/train_teachers/{algo}/{dataset}/{model}/seed{seed}.log",
    benchmark:
        "benchmarks/train_teachers/{algo}/{dataset}/{model}/seed{seed}.tsv"
    threads: pc_config()["threads"]
    resources:
        mem_mb=8000,
        runtime=240,
        gpu=lambda wildcards: 1 if wildcards.model in ("lenet5", "wrn16-4") else 0,
    conda:
        "../../envs/teachers.yaml"
    script:
        "../scripts/pate_capc_train_teachers.py"


rule craft_canaries:
    input:
        queries="results/queries/{dataset}/seed{seed}.npz",
        votes="results/votes/{algo}/{dataset}/{model}/seed{seed}/votes_S.npz",
    output:
        canaries="results/canaries/{algo}/{dataset}/{model}/seed{seed}/{adversary}.npz",
    params:
        num_candidates=lambda wildcards: pc_config()["candidates"][wildcards.adversary],
        selection=pc_config()["candidate_selection"],
        num_queries=pc_config()["num_queries"],
    wildcard_constraints:
        **PC_WILDCARDS,
    log:
        "logs/craft_canaries/{algo}/{dataset}/{model}/seed{seed}/{adversary}.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/teachers.yaml"
    script:
        "../scripts/pate_capc_craft_canaries.py"


rule train_canary_teachers:
    input:
        pc_dataset_inputs,
        queries="results/queries/{dataset}/seed{seed}.npz",
        canaries="results/canaries/{algo}/{dataset}/{model}/seed{seed}/{adversary}.npz",
    output:
        votes="results/votes/{algo}/{dataset}/{model}/seed{seed}/{adversary}/votes_S_prime.npz",
    params:
        num_teachers=lambda wildcards: pc_dataset(wildcards.dataset)["num_teachers"],
        num_instantiations=pc_config()["canary_instantiations"],
        teacher_params=lambda wildcards: {**pc_teacher_params(wildcards.model), "deterministic": pc_config()["deterministic"], "batch_teachers": pc_config()["batch_teachers"]},
        source=pc_config()["source"],
        root="resources/datasets",
    wildcard_constraints:
        **PC_WILDCARDS,
    log:
        "logs/train_canary_teachers/{algo}/{dataset}/{model}/seed{seed}/{adversary}.log",
    benchmark:
        "benchmarks/train_canary_teachers/{algo}/{dataset}/{model}/seed{seed}/{adversary}.tsv"
    threads: pc_config()["threads"]
    resources:
        mem_mb=8000,
        runtime=240,
        gpu=lambda wildcards: 1 if wildcards.model in ("lenet5", "wrn16-4") else 0,
    conda:
        "../../envs/teachers.yaml"
    script:
        "../scripts/pate_capc_train_canary_teachers.py"


rule fit_vote_model:
    input:
        votes_S="results/votes/{algo}/{dataset}/{model}/seed{seed}/votes_S.npz",
        votes_S_prime="results/votes/{algo}/{dataset}/{model}/seed{seed}/{adversary}/votes_S_prime.npz",
    output:
        fit="results/fits/{algo}/{dataset}/{model}/seed{seed}/{adversary}.npz",
    params:
        smoothing=pc_config()["smoothing"],
        procedure=pc_config()["fit_procedure"],
    wildcard_constraints:
        **PC_WILDCARDS,
    log:
        "logs/fit_vote_model/{algo}/{dataset}/{model}/seed{seed}/{adversary}.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/pate_capc_fit_vote_model.py"


rule audit_noisy_argmax:
    input:
        fit="results/fits/{algo}/{dataset}/{model}/seed{seed}/{adversary}.npz",
        canaries="results/canaries/{algo}/{dataset}/{model}/seed{seed}/{adversary}.npz",
    output:
        per_query="results/audits/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/per_query.csv",
    params:
        sigma=lambda wildcards: float(wildcards.sigma),
        trials=pc_config()["trials"],
        sample_trials=pc_config()["sample_trials"],
        orders=pc_config()["orders"],
        confidence=pc_config()["confidence"],
        count_mode=pc_config()["count_mode"],
        exact=pc_config()["exact"],
        bonferroni=pc_config()["bonferroni"],
        transcript=pc_config()["transcript"],
        transcript_max_work=pc_config()["transcript_max_work"],
        transcript_mc_draws=pc_config()["transcript_mc_draws"],
        transcript_trials=pc_config()["transcript_trials"],
        delta=pc_config()["delta"],
        audit_device=pc_config()["audit_device"],
        seed=config["seed"],
    wildcard_constraints:
        **PC_WILDCARDS,
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
        "../scripts/pate_capc_audit_noisy_argmax.py"


rule compose_audit:
    input:
        per_query="results/audits/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/per_query.csv",
    output:
        rdp="results/audits/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/rdp.csv",
        eps="results/audits/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/eps.csv",
        summary="results/audits/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/summary.csv",
    params:
        delta=pc_config()["delta"],
        num_teachers=lambda wildcards: pc_dataset(wildcards.dataset)["num_teachers"],
        trials=pc_config()["trials"],
        num_queries=pc_config()["num_queries"],
        source=pc_config()["source"],
        floor=pc_epsilon_floor(),
    wildcard_constraints:
        **PC_WILDCARDS,
    log:
        "logs/compose_audit/{algo}/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/pate_capc_compose_audit.py"


rule collect_summaries:
    input:
        pc_algo_summaries,
    output:
        summary="results/chadha2024/private_prediction/{algo}/summary.csv",
    wildcard_constraints:
        algo="pate|capc",
    log:
        "logs/collect_summaries/{algo}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/pate_capc_collect_summaries.py"


rule tabulate_findings:
    input:
        summary="results/chadha2024/private_prediction/{algo}/summary.csv",
        # CaPC is compared with PATE ("CaPC ≥ PATE", §5.4).
        other=lambda wildcards: (
            ["results/chadha2024/private_prediction/pate/summary.csv"] if wildcards.algo == "capc" else []
        ),
    output:
        findings="results/tables/findings/{algo}.csv",
    params:
        floor=pc_epsilon_floor(),
        other_algo=lambda wildcards: "pate" if wildcards.algo == "capc" else "",
    wildcard_constraints:
        algo="pate|capc",
    log:
        "logs/tabulate_findings/{algo}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/pate_capc_tabulate_findings.py"


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
        "../scripts/pate_capc_concat_findings.py"


rule plot_chadha_fig34:
    input:
        summaries=chadha_fig34_summaries(),
    output:
        **figure_outputs("plot_chadha_fig34"),
    params:
        adversaries=lambda wildcards: ["nat-advq", "pois-advq"] if wildcards.fig34 == "fig3" else ["pois-natq"],
        floor=pc_epsilon_floor(),
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
        "../scripts/pate_capc_plot_fig34.py"


rule plot_chadha_appendix:
    input:
        summary=lambda wildcards: f"results/chadha2024/private_prediction/{PC_APPENDIX_FIGURES[wildcards.appfig][0]}/summary.csv",
        rdp=lambda wildcards: f"{pc_audit_dir(PC_APPENDIX_FIGURES[wildcards.appfig][0], pc_panel_dataset(), PC_APPENDIX_FIGURES[wildcards.appfig][1])}/rdp.csv",
    output:
        **figure_outputs("plot_chadha_appendix"),
    params:
        algo=lambda wildcards: PC_APPENDIX_FIGURES[wildcards.appfig][0],
        adversary=lambda wildcards: PC_APPENDIX_FIGURES[wildcards.appfig][1],
        case=lambda wildcards: PC_APPENDIX_FIGURES[wildcards.appfig][2],
        panel_dataset=pc_panel_dataset(),
        floor=pc_epsilon_floor(),
        title=lambda wildcards: f"Fig. {wildcards.appfig[3:]}: {pc_appendix_caption(wildcards.appfig)}",
    wildcard_constraints:
        appfig="|".join(PC_APPENDIX_FIGURES),
    log:
        "logs/plot_chadha_appendix/{appfig}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/pate_capc_plot_appendix.py"
