"""Snakemake script of rule tabulate_wang_findings: "error falls as σ grows" (Wang §4.2), the
attack accuracy and costs, and the answer-caching defence on fitted PATE models (§5).

Inputs ``attacks`` (one CSV per dataset), ``pate`` (rule audit_wang_caching_pate). Params: datasets,
paper (per dataset: the paper dataset it stands for and the paper's mean budget-attack error, from
workflow/data/paper_numbers.csv). Output ``table`` (CSV): one row per check and solver
(``procedure`` = paper / ours) with the numbers and a boolean ``holds`` (a failing check is
reported, not hidden, with its ``cause``: :func:`ppaudit.experiments.findings_causes.wang_causes`): :func:`ppaudit.experiments.wang2022.reconstruction.sigma_findings`, ``budget_findings``,
``query_cost_findings`` per dataset, then
:func:`ppaudit.experiments.wang2022.caching.caching_findings`.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "tabulate_wang_findings")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.experiments.wang2022.reconstruction import (  # noqa: E402
    budget_findings,
    query_cost_findings,
    sigma_findings,
)
from ppaudit.experiments.findings_causes import require_causes, wang_causes  # noqa: E402
from ppaudit.experiments.wang2022.caching import caching_findings  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.plots.wang import pate_caching_epsilons  # noqa: E402

p = snakemake.params  # noqa: F821
tables = []
for dataset, (paper_dataset, paper_error), path in zip(p.datasets, p.paper, snakemake.input.attacks):  # noqa: F821
    attacks = pd.read_csv(path)
    tables += [sigma_findings(attacks, dataset), budget_findings(attacks, dataset, paper_error, paper_dataset), query_cost_findings(attacks, dataset)]
# The answer cache (Wang §5) on the PATE/CaPC stage's fitted models: the worst AdvQ candidate's
# repeated-query transcript, audited with and without the cache, against the exact ε of one answer.
tables.append(caching_findings(pate_caching_epsilons(pd.read_csv(snakemake.input.pate))))  # noqa: F821
table = wang_causes(pd.concat(tables, ignore_index=True))  # issue #34 §3: why a check fails
require_causes(table, "wang2022 findings")
log.info("findings:\n%s", table.to_string(index=False))
write_csv(table, snakemake.output.table)  # noqa: F821
