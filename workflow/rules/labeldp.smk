# Label-DP audits: observational paper (Tables 1, 2, 4–7; Figs. 1–5) and Malek et al. 2021
# (App. C Table 5, App. D Table 6). Train → audit → table, each model trained once. Paths,
# constants and input functions: the label-DP section of workflow/rules/common.smk.


localrules:
    tabulate_labeldp_findings,


rule prepare_labeldp_data:
    input:
        labeldp_dataset_marker,
    output:
        data="results/labeldp/{dataset}/data.pkl",
    params:
        settings=lambda wildcards: labeldp_settings(wildcards.dataset),
        seed=get_config("seed"),
    wildcard_constraints:
        **LABELDP_WILDCARDS,
    log:
        "logs/prepare_labeldp_data/{dataset}.log",
    benchmark:
        "benchmarks/prepare_labeldp_data/{dataset}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=20,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/prepare_labeldp_data.py"


rule train_labeldp_reference:
    input:
        data="results/labeldp/{dataset}/data.pkl",
    output:
        probs="results/labeldp/{dataset}/reference.npz",
        metrics="results/labeldp/{dataset}/reference.json",
    params:
        settings=lambda wildcards: labeldp_settings(wildcards.dataset),
        delta=get_config("labeldp", "delta"),
        seed=get_config("seed"),
    wildcard_constraints:
        **LABELDP_WILDCARDS,
    log:
        "logs/train_labeldp_reference/{dataset}.log",
    benchmark:
        "benchmarks/train_labeldp_reference/{dataset}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/train_labeldp_reference.py"


rule train_labeldp_targets:
    input:
        data="results/labeldp/{dataset}/data.pkl",
    output:
        probs="results/labeldp/{dataset}/models.npz",
        metrics="results/labeldp/{dataset}/models.json",
    params:
        models=lambda wildcards: labeldp_models(wildcards.dataset),
        settings=lambda wildcards: labeldp_settings(wildcards.dataset),
        delta=get_config("labeldp", "delta"),
        seed=get_config("seed"),
    wildcard_constraints:
        **LABELDP_WILDCARDS,
    log:
        "logs/train_labeldp_targets/{dataset}.log",
    benchmark:
        "benchmarks/train_labeldp_targets/{dataset}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=240,  # every (mechanism, ε) model of the dataset in one job
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/train_labeldp_targets.py"


rule audit_labeldp_models:
    input:
        probs="results/labeldp/{dataset}/models.npz",
        metrics="results/labeldp/{dataset}/models.json",
        reference="results/labeldp/{dataset}/reference.npz",
    output:
        table="results/labeldp/{dataset}/audits.csv",
    params:
        models=lambda wildcards: labeldp_models(wildcards.dataset),
        audit={k: get_config("labeldp", k) for k in LABELDP_AUDIT_KEYS},
        seed=get_config("seed"),
    wildcard_constraints:
        **LABELDP_WILDCARDS,
    log:
        "logs/audit_labeldp_models/{dataset}.log",
    benchmark:
        "benchmarks/audit_labeldp_models/{dataset}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/audit_labeldp_models.py"


rule tabulate_labeldp:
    input:
        audits=get_labeldp_table_audits,
        paper_numbers=PAPER_NUMBERS,
    output:
        **figure_outputs("tabulate_labeldp"),
    params:
        title=lambda wildcards: labeldp_title(LABELDP_TABLE_TITLES[wildcards.table]),
    wildcard_constraints:
        **LABELDP_WILDCARDS,
    log:
        "logs/tabulate_labeldp/{table}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/tabulate_labeldp.py"


rule plot_labeldp_mia:
    input:
        audits=get_labeldp_mia_audits,
    output:
        **figure_outputs("plot_labeldp_mia"),
    params:
        attacks=lambda wildcards: list(LABELDP_MIA_FIGURES[wildcards.miafig][0]),
        title=lambda wildcards: labeldp_title(LABELDP_MIA_FIGURES[wildcards.miafig][2]),
    wildcard_constraints:
        **LABELDP_WILDCARDS,
    log:
        "logs/plot_labeldp_mia/{miafig}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/plot_labeldp_mia.py"


rule audit_rr_synthetic:
    output:
        long="results/labeldp/synthetic/rr.csv",
        summary="results/labeldp/synthetic/rr_summary.csv",
    params:
        settings=get_config("labeldp", "synthetic_rr"),
        delta=get_config("labeldp", "delta"),
        confidence=get_config("labeldp", "confidence"),
        t=get_config("labeldp", "t"),
        seed=get_config("seed"),
    log:
        "logs/audit_rr_synthetic/rr.log",
    benchmark:
        "benchmarks/audit_rr_synthetic/rr.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/audit_rr_synthetic.py"


rule audit_rr_tau_shift:
    output:
        long="results/labeldp/synthetic/tau_shift.csv",
        summary="results/labeldp/synthetic/tau_shift_summary.csv",
    params:
        settings=get_config("labeldp", "tau_shift"),
        delta=get_config("labeldp", "delta"),
        confidence=get_config("labeldp", "confidence"),
        t=get_config("labeldp", "t"),
        seed=get_config("seed"),
    log:
        "logs/audit_rr_tau_shift/tau.log",
    benchmark:
        "benchmarks/audit_rr_tau_shift/tau.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/audit_rr_tau_shift.py"


rule plot_obs_rr:
    input:
        summary="results/labeldp/synthetic/rr_summary.csv",
    output:
        **figure_outputs("plot_obs_rr"),
    params:
        guess_fraction=lambda wildcards: LABELDP_RR_FIGURES[wildcards.rrfig][0],
        title=lambda wildcards: labeldp_rr_title(wildcards.rrfig),
    wildcard_constraints:
        **LABELDP_WILDCARDS,
    log:
        "logs/plot_obs_rr/{rrfig}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/plot_obs_rr.py"


rule plot_obs_fig4:
    input:
        summary="results/labeldp/synthetic/tau_shift_summary.csv",
    output:
        **figure_outputs("plot_obs_fig4"),
    params:
        title=f"Obs. Fig. 4: binary RR with τ-shifted counterfactual labels, n = {get_config('labeldp', 'tau_shift', 'n')}",
    log:
        "logs/plot_obs_fig4/obs_fig4.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/plot_obs_fig4.py"


rule train_memorization_models:
    input:
        data="results/labeldp/image/data.pkl",
    output:
        canaries=[malek_run_file(*r[:3]) for r in malek_runs()],
    params:
        runs=malek_runs(),
        settings=labeldp_settings("image"),
        model=get_config("labeldp", "malek", "model"),
        blocks=get_config("labeldp", "malek", "blocks"),
        train_size=get_config("labeldp", "malek", "train_size"),
        delta=get_config("labeldp", "delta"),
        seed=get_config("seed"),
    log:
        "logs/train_memorization_models/malek.log",
    benchmark:
        "benchmarks/train_memorization_models/malek.tsv"
    threads: 2  # labeldp.malek.blocks stacked blocks, one process each (the bytes depend on blocks, not threads)
    resources:
        mem_mb=4000,
        runtime=240,  # every run of Tables 5 and 6 in one job
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/train_memorization_models.py"


rule tabulate_malek:
    input:
        runs=get_malek_runs,
        paper_numbers=PAPER_NUMBERS,
    output:
        **figure_outputs("tabulate_malek"),
    params:
        table=lambda wildcards: wildcards.malektable,
        levels=malek_levels(),
        games=get_config("labeldp", "malek", "games"),
        confidence=get_config("labeldp", "confidence"),
        title=lambda wildcards: labeldp_title(MALEK_TITLES[wildcards.malektable]),
    wildcard_constraints:
        **LABELDP_WILDCARDS,
    log:
        "logs/tabulate_malek/{malektable}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/tabulate_malek.py"


rule tabulate_labeldp_findings:
    input:
        rr="results/labeldp/synthetic/rr_summary.csv",
        tau="results/labeldp/synthetic/tau_shift_summary.csv",
        audits=labeldp_audit_files("image"),
        malek="results/tables/labeldp/malek_table6.csv",
        paper_numbers=PAPER_NUMBERS,
    output:
        **figure_outputs("tabulate_labeldp_findings"),
    params:
        settings=get_config("labeldp", "findings"),
    log:
        "logs/tabulate_labeldp_findings/findings.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/tabulate_labeldp_findings.py"
