# PromptPATE audits (Chadha et al. 2024, §5.3–5.4; App. D.2, E.3): packaged Gemma-3-270M
# GGUF → one-time safetensors conversion → LLM teacher votes (query grid and the
# adversaries' prompts, cached on disk) → exact-histogram audit per adversary → the
# PromptPATE panel of Figs. 3/4, Figs. 17–24 and the PromptPATE findings.
# Paths and helpers: workflow/rules/prompts_common.smk.

PP_WILDCARDS = dict(
    dataset="rotten_tomatoes|sst2|agnews|dbpedia|trec",
    model=r"[A-Za-z0-9._-]+",
    seed=r"\d+",
    adversary="nat-advq|pois-advq|pois-natq",
    sigma=r"[0-9.e+-]+",
)


localrules:
    chadha_fig17,
    chadha_fig18,
    chadha_fig19,
    chadha_fig20,
    chadha_fig21,
    chadha_fig22,
    chadha_fig23,
    chadha_fig24,
    chadha_promptpate,


rule assemble_gguf:
    output:
        gguf=PP_GGUF,
    log:
        "logs/assemble_gguf/gemma3-270m.log",
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/llm.yaml"
    script:
        "../scripts/promptpate_assemble_gguf.py"


rule convert_llm:
    input:
        gguf=PP_GGUF,
    output:
        folder=directory(PP_CONVERTED),
    log:
        "logs/convert_llm/gemma3-270m.log",
    benchmark:
        "benchmarks/convert_llm/gemma3-270m.tsv"
    threads: 2
    resources:
        mem_mb=6000,
        runtime=30,
    conda:
        "../../envs/llm.yaml"
    script:
        "../scripts/promptpate_convert_llm.py"


rule prompt_teachers:
    input:
        pp_model_inputs,
    output:
        votes="results/votes/promptpate/{dataset}/{model}/seed{seed}/votes.npz",
        accuracy="results/votes/promptpate/{dataset}/{model}/seed{seed}/teacher_accuracy.csv",
    params:
        source=pp_model_source(),
        cache=PP_CACHE,
        num_teachers=pp_config()["num_teachers"],
        num_queries=pp_config()["num_queries"],
        test_size=pp_config()["test_size"],
        text_data_dir=pp_config()["text_data_dir"],
        natq_variants=pp_config()["natq_variants"],
        all_same_targets=pp_config()["all_same_targets"],
        batch_size=pp_config()["batch_size"],
        device=pp_config()["device"],
        dtype=pp_config()["dtype"],
        chunk=pp_config()["progress_chunk"],
        seed=config["seed"],
    wildcard_constraints:
        **PP_WILDCARDS,
    log:
        "logs/prompt_teachers/{dataset}/{model}/seed{seed}.log",
    benchmark:
        "benchmarks/prompt_teachers/{dataset}/{model}/seed{seed}.tsv"
    threads: pp_config()["threads"]
    resources:
        mem_mb=6000,
        runtime=240,
        gpu=pp_uses_gpu(),
    conda:
        "../../envs/llm.yaml"
    script:
        "../scripts/promptpate_prompt_teachers.py"


rule audit_promptpate:
    input:
        votes="results/votes/promptpate/{dataset}/{model}/seed{seed}/votes.npz",
    output:
        per_query="results/audits/promptpate/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/per_query.csv",
        rdp="results/audits/promptpate/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/rdp.csv",
        eps="results/audits/promptpate/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/eps.csv",
        summary="results/audits/promptpate/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}/summary.csv",
    params:
        sigma=lambda wildcards: float(wildcards.sigma),
        trials=pp_config()["trials"],
        orders=pp_config()["orders"],
        confidence=pp_config()["confidence"],
        delta=pp_config()["delta"],
        seed=config["seed"],
        floor=pp_epsilon_floor(),
    wildcard_constraints:
        **PP_WILDCARDS,
    log:
        "logs/audit_promptpate/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}.log",
    benchmark:
        "benchmarks/audit_promptpate/{dataset}/{model}/seed{seed}/{adversary}/sigma{sigma}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        "../../envs/llm.yaml"
    script:
        "../scripts/promptpate_audit.py"


rule collect_promptpate_summary:
    input:
        summaries=pp_all_audit_summaries(),
    output:
        summary=PP_SUMMARY,
        variants=PP_SUMMARY_VARIANTS,
    params:
        fig4_variant=pp_config()["fig4_variant"],
    log:
        "logs/collect_promptpate_summary/promptpate.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/promptpate_collect_summary.py"


rule promptpate_findings:
    input:
        summary=PP_SUMMARY,
        variants=PP_SUMMARY_VARIANTS,
        # Pois-NatQ across algorithms (§5.4: PATE ≪ CaPC < PromptPATE).
        others=[f"results/chadha2024/private_prediction/{algo}/summary.csv" for algo in PC_ALGOS],
    output:
        findings=PP_FINDINGS,
    params:
        floor=pp_epsilon_floor(),
    log:
        "logs/promptpate_findings/promptpate.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/promptpate_findings.py"


rule plot_promptpate_appendix:
    input:
        variants=PP_SUMMARY_VARIANTS,
        rdp=lambda wildcards: f"{pp_audit_dir(pp_panel_dataset(), PP_APPENDIX_FIGURES[wildcards.ppfig][0])}/rdp.csv",
    output:
        pdf=report(
            "results/figures/chadha2024/{ppfig}.pdf",
            caption="../report/promptpate_appendix.rst",
            category="Chadha et al. 2024",
            subcategory="App. E.3 (PromptPATE)",
            labels={"figure": "{ppfig}", "file": "PDF"},
        ),
        png=report(
            "results/figures/chadha2024/{ppfig}.png",
            caption="../report/promptpate_appendix.rst",
            category="Chadha et al. 2024",
            subcategory="App. E.3 (PromptPATE)",
            labels={"figure": "{ppfig}", "file": "PNG"},
        ),
        csv=report(
            "results/figures/chadha2024/{ppfig}.csv",
            caption="../report/promptpate_appendix.rst",
            category="Chadha et al. 2024",
            subcategory="App. E.3 (PromptPATE)",
            labels={"figure": "{ppfig}", "file": "CSV (plotted numbers)"},
        ),
    params:
        adversary=lambda wildcards: PP_APPENDIX_FIGURES[wildcards.ppfig][0],
        variant=lambda wildcards: PP_APPENDIX_FIGURES[wildcards.ppfig][1],
        case=lambda wildcards: PP_APPENDIX_FIGURES[wildcards.ppfig][2],
        panel_dataset=pp_panel_dataset(),
        floor=pp_epsilon_floor(),
        title=lambda wildcards: f"Fig. {wildcards.ppfig[3:]}: {pp_appendix_caption(wildcards.ppfig)}",
        model=pp_config()["model_name"],
        num_teachers=pp_config()["num_teachers"],
        num_queries=pp_config()["num_queries"],
        sigma=pp_sigma(),
    wildcard_constraints:
        ppfig="|".join(PP_APPENDIX_FIGURES),
    log:
        "logs/plot_promptpate_appendix/{ppfig}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/promptpate_plot_appendix.py"


# Named targets: `snakemake -c2 chadha_fig17` regenerates one figure.
rule chadha_fig17:
    input:
        expand("results/figures/chadha2024/fig17.{ext}", ext=("pdf", "png", "csv")),


rule chadha_fig18:
    input:
        expand("results/figures/chadha2024/fig18.{ext}", ext=("pdf", "png", "csv")),


rule chadha_fig19:
    input:
        expand("results/figures/chadha2024/fig19.{ext}", ext=("pdf", "png", "csv")),


rule chadha_fig20:
    input:
        expand("results/figures/chadha2024/fig20.{ext}", ext=("pdf", "png", "csv")),


rule chadha_fig21:
    input:
        expand("results/figures/chadha2024/fig21.{ext}", ext=("pdf", "png", "csv")),


rule chadha_fig22:
    input:
        expand("results/figures/chadha2024/fig22.{ext}", ext=("pdf", "png", "csv")),


rule chadha_fig23:
    input:
        expand("results/figures/chadha2024/fig23.{ext}", ext=("pdf", "png", "csv")),


rule chadha_fig24:
    input:
        expand("results/figures/chadha2024/fig24.{ext}", ext=("pdf", "png", "csv")),


rule chadha_promptpate:
    input:
        chadha_promptpate_targets(),
