"""Snakemake script of rule tabulate_repeated_query_example: issue 13 §1's repeated-query
example audited by the PATE stage's code and written as findings rows
(ppaudit.experiments.chadha2024.repeated_query). Output: ``findings``."""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "tabulate_repeated_query_example")  # noqa: F821

from ppaudit.experiments.chadha2024.repeated_query import repeated_query_example, repeated_query_example_rows  # noqa: E402
from ppaudit.experiments.findings_causes import chadha_causes  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

p = snakemake.params  # noqa: F821
ex = dict(p.example)
settings = {k: ex[k] for k in ("num_teachers", "sigma", "p_q", "p_q_prime", "num_repeats")}
per_query = repeated_query_example(**settings, orders=p.orders, seed=p.seed, trials=int(ex["trials"]), confidence=p.confidence,
                                   transcript_draws=ex["transcript_draws"])
rows = repeated_query_example_rows(per_query, p.delta, p.floor, settings)
rows = chadha_causes(rows)  # issue #34 §3: why a row does not hold, from this part's own numbers
log.info("findings:\n%s", rows.to_string(index=False))
write_csv(rows, snakemake.output.findings)  # noqa: F821
