# PromptPATE audits (Chadha et al. 2024, §5.3–5.4; App. D.2, E.3): packaged Gemma-3-270M
# GGUF → one-time safetensors conversion → LLM teacher votes (query grid and the
# adversaries' prompts, cached on disk) → exact-histogram audit per adversary → the
# PromptPATE panel of Figs. 3/4, Figs. 17–24 (rule plot_chadha_appendix, pate_capc.smk) and
# the PromptPATE findings.
# Paths, constants and helpers: the PromptPATE section of workflow/rules/common.smk.
#
# Priority: assemble_gguf → convert_llm → prompt_teachers is the longest chain of one-core jobs
# of the default (about 240 s of the run's 730 s of work per core on 2 cores). Started when the
# run starts, it runs beside the rest; started late, it ends the run with one core idle.
# Measured (bench/replay_schedule.py on a 2026-11-29 `make run` log whose scheduler started
# assemble_gguf at 355 s): 788 s as it ran, 738 s with this priority, against a bound of 730 s
# (all job-seconds over 2 cores); 1576 → 1475 s on a 2× slower machine (--scale 0.5).
PROMPT_CHAIN_PRIORITY = 10


rule assemble_gguf:
    output:
        gguf=PROMPTPATE_GGUF,
    log:
        "logs/assemble_gguf/gemma3-270m.log",
    priority: PROMPT_CHAIN_PRIORITY
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../../envs/llm.yaml"
    script:
        "../scripts/assemble_gguf.py"


rule convert_llm:
    input:
        gguf=PROMPTPATE_GGUF,
    output:
        folder=directory(PROMPTPATE_CONVERTED),
    log:
        "logs/convert_llm/gemma3-270m.log",
    benchmark:
        "benchmarks/convert_llm/gemma3-270m.tsv"
    threads: 1  # parsing the GGUF is one Python thread: a second reserved core would idle
    priority: PROMPT_CHAIN_PRIORITY
    resources:
        mem_mb=6000,
        runtime=30,
    conda:
        "../../envs/llm.yaml"
    script:
        "../scripts/convert_llm.py"


rule prompt_teachers:
    input:
        get_promptpate_model,
    output:
        votes="results/votes/promptpate/{dataset}/{model}/seed{seed}/votes.npz",
        accuracy="results/votes/promptpate/{dataset}/{model}/seed{seed}/teacher_accuracy.csv",
    params:
        source=promptpate_model_source(),
        cache=PROMPTPATE_CACHE,
        **config_params(
            PROMPTPATE, "num_teachers", "num_queries", "test_size", "text_data_dir", "natq_variants",
            "all_same_targets", "batch_size", "device", "dtype"
        ),
        chunk=get_config(*PROMPTPATE, "progress_chunk"),
        calibration=get_config(*PROMPTPATE, "calibration"),
        answers=get_config(*PROMPTPATE, "answers"),
        seed=get_config("seed"),
    wildcard_constraints:
        **PROMPTPATE_WILDCARDS,
    log:
        "logs/prompt_teachers/{dataset}/{model}/seed{seed}.log",
    benchmark:
        "benchmarks/prompt_teachers/{dataset}/{model}/seed{seed}.tsv"
    threads: get_config(*PROMPTPATE, "threads")
    priority: PROMPT_CHAIN_PRIORITY
    resources:
        mem_mb=6000,
        runtime=240,
        gpu=promptpate_uses_gpu(),
    conda:
        "../../envs/llm.yaml"
    script:
        "../scripts/prompt_teachers.py"


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
        **config_params(PROMPTPATE, "trials", "orders", "confidence", "delta"),
        seed=get_config("seed"),
        floor=epsilon_floor_of(*PROMPTPATE),
    wildcard_constraints:
        **PROMPTPATE_WILDCARDS,
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
        "../scripts/audit_promptpate.py"


rule collect_promptpate_summary:
    input:
        summaries=promptpate_audit_summaries(),
    output:
        summary=PROMPTPATE_SUMMARY,
        variants=PROMPTPATE_SUMMARY_VARIANTS,
    params:
        fig4_variant=get_config(*PROMPTPATE, "fig4_variant"),
    log:
        "logs/collect_promptpate_summary/promptpate.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/collect_promptpate_summary.py"


rule tabulate_promptpate_findings:
    input:
        summary=PROMPTPATE_SUMMARY,
        variants=PROMPTPATE_SUMMARY_VARIANTS,
        # Pois-NatQ across algorithms (§5.4: PATE ≪ CaPC < PromptPATE).
        others=[algo_summary(algo) for algo in ("pate", "capc")],
        # Teacher accuracy, majority-class rate and vote entropy per dataset (issue: teachers that classify).
        votes=promptpate_votes(),
    output:
        findings=PROMPTPATE_FINDINGS,
    params:
        floor=epsilon_floor_of(*PROMPTPATE),
        datasets=get_config(*PROMPTPATE, "datasets"),
    log:
        "logs/tabulate_promptpate_findings/promptpate.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/llm.yaml"  # reads the PromptPATE votes (ppaudit.mechanisms.promptpate)
    script:
        "../scripts/tabulate_promptpate_findings.py"
