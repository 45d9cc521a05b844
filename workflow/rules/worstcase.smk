# Worst-case (tight data-independent) exact RDP of the Gaussian noisy argmax over all
# neighbouring vote histograms (Chadha et al. 2024, §7 future work; issue 15 §4;
# ppaudit.accounting.gnmax_rdp_worst_case). Target chadha_worstcase.
#
#   results/chadha2024/worstcase/gnmax_worst_case.csv   one row per (setting, order): worst case
#                                                        found, certified upper bound, α/σ²,
#                                                        maximising pair, exhaustive/certified
#   results/figures/chadha2024/worstcase.pdf|png|csv     the figure and every plotted number
#   results/figures/chadha2024/worstcase_epsilon.csv     ε at δ per (setting, number of queries)


rule compute_gnmax_worst_case:
    output:
        table="results/chadha2024/worstcase/gnmax_worst_case.csv",
    params:
        settings=config["chadha2024"]["worstcase"]["settings"],
        orders=config["chadha2024"]["worstcase"]["orders"],
        max_exhaustive_pairs=config["chadha2024"]["worstcase"]["max_exhaustive_pairs"],
        grid_per_sigma=config["chadha2024"]["worstcase"]["grid_per_sigma"],
    log:
        "logs/compute_gnmax_worst_case/gnmax_worst_case.log",
    benchmark:
        "benchmarks/compute_gnmax_worst_case/gnmax_worst_case.tsv"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    conda:
        "../../envs/audit.yaml"
    script:
        "../scripts/compute_gnmax_worst_case.py"


rule plot_chadha_worstcase:
    input:
        table="results/chadha2024/worstcase/gnmax_worst_case.csv",
    output:
        **figure_outputs("plot_chadha_worstcase"),
    params:
        delta=config["chadha2024"]["worstcase"]["delta"],
        num_queries=config["chadha2024"]["worstcase"]["num_queries"],
    log:
        "logs/plot_chadha_worstcase/worstcase.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/plot_chadha_worstcase.py"
