# Label-DP audits: observational paper (Tables 1, 2, 4–7; Figs. 1–5) and Malek et al. 2021
# (App. C Table 5, App. D Table 6). Train → audit → table, each model trained once:
#
#   results/labeldp/{dataset}/data.pkl                    split + features
#   results/labeldp/{dataset}/reference.npz|json          M' (reference half, true labels)
#   results/labeldp/{dataset}/models/{algo}_eps{eps}.*    M (target half, label-DP labels)
#   results/labeldp/{dataset}/audits/{algo}_eps{eps}.csv  LIA + calibrated MIA + RMIA
#   results/tables/labeldp/{table}.csv|md                 tables (with the paper's numbers)
#   results/figures/labeldp/{fig}.pdf|png|csv             figures + plotted numbers


wildcard_constraints:
    dataset="|".join(LABELDP_DATASETS),
    algo="|".join(LABELDP_ALGOS),
    eps=r"inf|[0-9]+(\.[0-9]+)?",
    table="|".join(LABELDP_TABLES),
    run=r"n1000|g[0-9]+",
    rrfig="obs_fig2|obs_fig3",
    miafig="obs_fig1|obs_fig5",
    malektable="malek_table5|malek_table6",


localrules:
    labeldp_findings,


rule prepare_labeldp_data:
    output:
        data="results/labeldp/{dataset}/data.pkl",
    params:
        settings=lambda wildcards: labeldp_dataset_settings(wildcards.dataset),
        seed=config["seed"],
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
        "../scripts/labeldp_prepare.py"


rule train_labeldp_reference:
    input:
        data="results/labeldp/{dataset}/data.pkl",
    output:
        probs="results/labeldp/{dataset}/reference.npz",
        metrics="results/labeldp/{dataset}/reference.json",
    params:
        role="reference",
        settings=lambda wildcards: labeldp_dataset_settings(wildcards.dataset),
        delta=labeldp()["delta"],
        seed=config["seed"],
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
        "../scripts/labeldp_train.py"


rule train_labeldp_target:
    input:
        data="results/labeldp/{dataset}/data.pkl",
    output:
        probs="results/labeldp/{dataset}/models/{algo}_eps{eps}.npz",
        metrics="results/labeldp/{dataset}/models/{algo}_eps{eps}.json",
    params:
        role="target",
        settings=lambda wildcards: labeldp_dataset_settings(wildcards.dataset),
        delta=labeldp()["delta"],
        seed=config["seed"],
    log:
        "logs/train_labeldp_target/{dataset}_{algo}_eps{eps}.log",
    benchmark:
        "benchmarks/train_labeldp_target/{dataset}_{algo}_eps{eps}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/labeldp_train.py"


rule audit_labeldp_model:
    input:
        target="results/labeldp/{dataset}/models/{algo}_eps{eps}.npz",
        metrics="results/labeldp/{dataset}/models/{algo}_eps{eps}.json",
        reference="results/labeldp/{dataset}/reference.npz",
    output:
        table="results/labeldp/{dataset}/audits/{algo}_eps{eps}.csv",
    params:
        audit={k: labeldp()[k] for k in ("repetitions", "t", "fixed_fraction", "delta", "confidence", "rmia_a")},
        seed=config["seed"],
    log:
        "logs/audit_labeldp_model/{dataset}_{algo}_eps{eps}.log",
    benchmark:
        "benchmarks/audit_labeldp_model/{dataset}_{algo}_eps{eps}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/labeldp_audit.py"


rule tabulate_labeldp:
    input:
        audits=labeldp_table_inputs,
        paper_numbers=LABELDP_PAPER_NUMBERS,
    output:
        **figure_outputs("tabulate_labeldp"),
    params:
        title=lambda wildcards: LABELDP_TABLE_TITLES[wildcards.table],
    log:
        "logs/tabulate_labeldp/{table}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/labeldp_table.py"


rule plot_labeldp_mia:
    input:
        audits=lambda wildcards: labeldp_audit_files("image") + (labeldp_audit_files("tabular") if wildcards.miafig == "obs_fig1" else []),
    output:
        **figure_outputs("plot_labeldp_mia"),
    params:
        attacks=lambda wildcards: ["lia", "calibrated_mia"] if wildcards.miafig == "obs_fig1" else ["lia", "calibrated_mia", "rmia"],
        title=lambda wildcards: (
            "Obs. Fig. 1: observational LIA vs calibration MIA (image: Fashion-MNIST MLP; tabular: Adult CatBoost)"
            if wildcards.miafig == "obs_fig1"
            else "Obs. Fig. 5: LIA vs calibration MIA vs offline RMIA (image: Fashion-MNIST MLP)"
        ),
    log:
        "logs/plot_labeldp_mia/{miafig}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/labeldp_plot_mia.py"


rule audit_rr_synthetic:
    output:
        long="results/labeldp/synthetic/rr.csv",
        summary="results/labeldp/synthetic/rr_summary.csv",
    params:
        kind="rr",
        settings=labeldp()["synthetic_rr"],
        delta=labeldp()["delta"],
        confidence=labeldp()["confidence"],
        t=labeldp()["t"],
        seed=config["seed"],
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
        "../scripts/labeldp_rr.py"


rule audit_rr_tau_shift:
    output:
        long="results/labeldp/synthetic/tau_shift.csv",
        summary="results/labeldp/synthetic/tau_shift_summary.csv",
    params:
        kind="tau",
        settings=labeldp()["tau_shift"],
        delta=labeldp()["delta"],
        confidence=labeldp()["confidence"],
        t=labeldp()["t"],
        seed=config["seed"],
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
        "../scripts/labeldp_rr.py"


rule plot_obs_rr:
    input:
        summary="results/labeldp/synthetic/rr_summary.csv",
    output:
        **figure_outputs("plot_obs_rr"),
    params:
        kind="rr",
        guess_fraction=lambda wildcards: 0.001 if wildcards.rrfig == "obs_fig2" else 0.01,
        title=lambda wildcards: (
            f"Obs. Fig. {wildcards.rrfig[-1]}: auditing k-ary RR, "
            f"{'0.1' if wildcards.rrfig == 'obs_fig2' else '1'}% guesses, n = {labeldp()['synthetic_rr']['n']}, "
            f"{labeldp()['synthetic_rr']['repetitions']} repetitions"
        ),
    log:
        "logs/plot_obs_rr/{rrfig}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/labeldp_plot_rr.py"


rule plot_obs_fig4:
    input:
        summary="results/labeldp/synthetic/tau_shift_summary.csv",
    output:
        **figure_outputs("plot_obs_fig4"),
    params:
        kind="tau",
        guess_fraction=None,
        title=f"Obs. Fig. 4: binary RR with τ-shifted counterfactual labels, n = {labeldp()['tau_shift']['n']}",
    log:
        "logs/plot_obs_fig4/obs_fig4.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/labeldp_plot_rr.py"


rule train_memorization_model:
    input:
        data="results/labeldp/image/data.pkl",
    output:
        canaries="results/labeldp/malek/{algo}_eps{eps}_{run}.npz",
    params:
        num_canaries=malek_num_canaries,
        settings=labeldp_dataset_settings("image"),
        model=labeldp()["malek"]["model"],
        delta=labeldp()["delta"],
        seed=config["seed"],
    log:
        "logs/train_memorization_model/{algo}_eps{eps}_{run}.log",
    benchmark:
        "benchmarks/train_memorization_model/{algo}_eps{eps}_{run}.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/labeldp_memorization.py"


rule tabulate_malek:
    input:
        runs=lambda wildcards: malek_runs(wildcards.malektable),
        paper_numbers=LABELDP_PAPER_NUMBERS,
    output:
        **figure_outputs("tabulate_malek"),
    params:
        table=lambda wildcards: wildcards.malektable,
        levels=malek_levels(),
        games=labeldp()["malek"]["games"],
        confidence=labeldp()["confidence"],
        title=lambda wildcards: (
            "Malek Table 5: ε_m 95% CI of ALIBI, one game of N canaries vs ten games of N/10 (Fashion-MNIST MLP stand-in)"
            if wildcards.malektable == "malek_table5"
            else "Malek Table 6: ALIBI vs AGIBI (Fashion-MNIST MLP stand-in), ε_m 95% CI"
        ),
    log:
        "logs/tabulate_malek/{malektable}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/labeldp_malek_table.py"


rule labeldp_findings:
    input:
        rr="results/labeldp/synthetic/rr_summary.csv",
        tau="results/labeldp/synthetic/tau_shift_summary.csv",
        audits=labeldp_audit_files("image"),
        malek="results/tables/labeldp/malek_table6.csv",
        paper_numbers=LABELDP_PAPER_NUMBERS,
    output:
        **figure_outputs("labeldp_findings"),
    params:
        settings=labeldp()["findings"],
    log:
        "logs/labeldp_findings/findings.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/labeldp.yaml"
    script:
        "../scripts/labeldp_findings.py"
