"""Rule tabulate_malek: Malek et al. 2021 Table 5 (App. C) or Table 6 (App. D), ε_m intervals of the memorisation game.

Makes ``csv`` and ``md``: one row per (level, setting / algorithm, estimator) with the paper's
interval and accuracy next to ours (:func:`ppaudit.experiments.labeldp.malek_tables.malek_table`).
Inputs: ``runs`` (npz of train_memorization_models), ``paper_numbers``
(workflow/data/paper_numbers.csv). Params: table ("malek_table5"/"malek_table6"), levels
({level: {alibi: ε, agibi: ε}}), games, confidence, title.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "tabulate_malek")  # noqa: F821

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from ppaudit.experiments.labeldp.tables import read_paper_number_strings  # noqa: E402
from ppaudit.experiments.labeldp.malek_tables import malek_table  # noqa: E402
from ppaudit.io import atomic_path, write_csv  # noqa: E402

p = snakemake.params  # noqa: F821
runs = {Path(f).stem: np.load(f) for f in snakemake.input.runs}  # noqa: F821
table = malek_table(runs, p.table, p.levels, p.games, p.confidence, read_paper_number_strings(snakemake.input.paper_numbers))  # noqa: F821
log.info("\n%s", table.to_string(index=False))
write_csv(table, snakemake.output.csv)  # noqa: F821
with atomic_path(snakemake.output.md) as tmp:  # noqa: F821
    tmp.write_text(f"# {p.title}\n\n" + table.drop(columns=["stand_in_measure"]).to_markdown(index=False) + "\n")
