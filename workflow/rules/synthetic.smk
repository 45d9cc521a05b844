# Chadha et al. 2024, noisy argmax on fixed synthetic histogram pairs:
# Fig. 2 (§4.2: exact RDP, data-dependent and data-independent theory, 2-cut audit) and
# Fig. 6 (App. B: every audit method). One audit job and one plot job (plot_chadha_synthetic) per figure.
# Config: chadha2024.synthetic (get_config); titles: ppaudit.plots.chadha.synthetic_title.
#
#   results/chadha2024/synthetic/{experiment}.csv          order + one column per curve
#   results/chadha2024/synthetic/{experiment}.counts.json  the Monte Carlo counts + settings
#   results/figures/chadha2024/{experiment}.pdf|png|csv    the figure and its plotted numbers


rule audit_synthetic_pair:
    output:
        table="results/chadha2024/synthetic/{experiment}.csv",
        counts="results/chadha2024/synthetic/{experiment}.counts.json",
    params:
        h_s=lambda wildcards: get_config("chadha2024", "synthetic", wildcards.experiment, "h_s"),
        h_s_prime=lambda wildcards: get_config("chadha2024", "synthetic", wildcards.experiment, "h_s_prime"),
        sigma=lambda wildcards: get_config("chadha2024", "synthetic", wildcards.experiment, "sigma"),
        methods=lambda wildcards: get_config("chadha2024", "synthetic", wildcards.experiment, "methods"),
        **config_params(
            ("chadha2024", "synthetic"), "trials", "orders", "confidence", "mode", "num_bootstrap",
            "selection", "audit_device"
        ),
        seed=get_config("seed"),
    log:
        "logs/audit_synthetic_pair/{experiment}.log",
    benchmark:
        "benchmarks/audit_synthetic_pair/{experiment}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/audit_synthetic_pair.py"


rule plot_chadha_synthetic:
    input:
        table="results/chadha2024/synthetic/{experiment}.csv",
    output:
        **figure_outputs("plot_chadha_synthetic"),
    params:
        methods=lambda wildcards: get_config("chadha2024", "synthetic", wildcards.experiment, "methods"),
        title=lambda wildcards: synthetic_figure_title(wildcards.experiment),
    log:
        "logs/plot_chadha_synthetic/{experiment}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/plot_chadha_synthetic.py"
