"""Snakemake script of rule tabulate_knn_findings: the Private-kNN claims of §6 checked on the
numbers (ppaudit.experiments.chadha2024.private_knn.knn_findings_table), with the Pois-NatQ poisons' expected top-k
inclusions (input ``crafted``) beside the embedding-vs-test/train rows. Output: ``findings`` (the
columns of ppaudit.experiments.chadha2024.pate_capc_findings.FINDINGS_COLUMNS)."""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.experiments.findings_causes import chadha_causes  # noqa: E402
from ppaudit.experiments.chadha2024.private_knn import knn_findings_table  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

summary = pd.read_csv(snakemake.input.summary)  # noqa: F821
inclusions = {}  # (dataset, adversary) → expected top-k inclusions of the poison (results/knn/{dataset}/…/crafted/{adversary}.npz)
for path in snakemake.input.crafted:  # noqa: F821
    with np.load(path) as z:
        inclusions[(Path(path).parts[2], str(z["adversary"]))] = float(np.max(z["expected_inclusions"]))
rows = knn_findings_table(summary, snakemake.params.floor, inclusions=inclusions)  # noqa: F821
rows = chadha_causes(rows)  # issue #34 §3: why a row does not hold, from this part's own numbers
log.info("findings (%d rows, %d hold):\n%s", len(rows), int(rows["holds"].sum()), rows.to_string(index=False))
write_csv(rows, snakemake.output.findings)  # noqa: F821
