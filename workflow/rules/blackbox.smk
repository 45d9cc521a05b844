# The black-box benchmark (issue 28 §5; ppaudit.experiments.blackbox.benchmark): the mechanisms of
# StatDP's and DP-Sniper's evaluations (ppaudit.blackbox.catalogue), correct and buggy, searched by
# ppaudit.blackbox.search_mechanism once per seed at every claimed ε0 of `blackbox_benchmark.settings`,
# beside the peers' published values (ppaudit/blackbox/published_peers.csv). Target `blackbox_benchmark`.
#
#   results/blackbox/blackbox_benchmark.csv        one row per (ε0, mechanism): claim, true ε, verdict rate, bar,
#                                                   mean ε lower bound, draws, seconds, witness, peers' values + sources
#   results/blackbox/blackbox_benchmark_runs.csv   one row per (ε0, mechanism, seed)
#   results/blackbox/blackbox_benchmark_plot.csv   every plotted number
#   results/blackbox/blackbox_benchmark.pdf|png    verdict rates against the bars; ε lower bounds beside the peers'


rule run_blackbox_benchmark:
    output:
        **figure_outputs("run_blackbox_benchmark"),
    params:
        **config_params(
            ("blackbox_benchmark",), "settings", "seeds", "confidence", "slack_level", "cases",
            "pilot_fraction", "certify_top"
        ),
        seed=get_config("seed"),
    log:
        "logs/run_blackbox_benchmark/blackbox_benchmark.log",
    benchmark:
        "benchmarks/run_blackbox_benchmark/blackbox_benchmark.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/run_blackbox_benchmark.py"
