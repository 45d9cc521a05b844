"""Snakemake script of rule plot_chadha_worstcase: the worst-case exact RDP of the noisy
argmax against α/σ², and ε at δ after 1 … 10^4 composed queries (target chadha_worstcase).

Input: ``table`` (CSV of rule compute_gnmax_worst_case). Params: ``delta``, ``num_queries``.
Outputs: ``pdf``, ``png``, ``csv`` (every plotted number, long format) and ``epsilon`` (ε per
setting and number of queries: worst case found, certified upper bound, α/σ²).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.accounting import worst_case_epsilon_table  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.plots.style import write_figure_outputs  # noqa: E402
from ppaudit.plots.worst_case import plot_gnmax_worst_case  # noqa: E402

params = snakemake.params  # noqa: F821
table = pd.read_csv(snakemake.input.table)  # noqa: F821
epsilon = worst_case_epsilon_table(table, params.num_queries, params.delta)
fig, plotted = plot_gnmax_worst_case(table, epsilon, params.delta)
write_figure_outputs(fig, plotted, snakemake.output)  # noqa: F821
write_csv(epsilon, snakemake.output.epsilon)  # noqa: F821
log.info("wrote %s", list(snakemake.output))  # noqa: F821
