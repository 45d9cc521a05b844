"""Snakemake script of rule tabulate_findings: the orderings of §5.4 checked for one algorithm
(ppaudit.experiments.chadha2024.pate_capc_findings.findings_rows), then one row per dataset with the
stand-in teachers' accuracy and consensus (teacher_properties / teacher_rows; inputs ``votes``
and ``queries`` in the order of params ``datasets``, with ``sigmas`` and ``models``), and the
canary teachers' poison success rate per dataset and adversary (canary_rows; inputs
``canary_votes`` and ``canaries``, dataset-major over params ``adversaries``).
Output: ``findings``."""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "tabulate_findings")  # noqa: F821

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.adversaries import CraftedCanaries, canary_vote_rates  # noqa: E402
from ppaudit.experiments.findings_causes import chadha_causes  # noqa: E402
from ppaudit.experiments.chadha2024.pate_capc_findings import canary_rows, findings_rows, teacher_properties, teacher_rows  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

algo = snakemake.wildcards.algo  # noqa: F821
summary = pd.read_csv(snakemake.input.summary)  # noqa: F821
other = pd.read_csv(snakemake.input.other[0]) if snakemake.input.other else None  # noqa: F821
rows = findings_rows(summary, algo, snakemake.params.floor, other=other, other_algo=snakemake.params.other_algo or None)  # noqa: F821
p = snakemake.params  # noqa: F821
props = {}
for ds, sigma, votes, queries in zip(p.datasets, p.sigmas, snakemake.input.votes, snakemake.input.queries):  # noqa: F821
    with np.load(votes) as z, np.load(queries) as q:
        props[ds] = teacher_properties(z["votes_S"], q["labels"], int(z["num_classes"]), sigma)
rates = {}
pairs = [(ds, adv) for ds in p.datasets for adv in p.adversaries]
for (ds, adv), votes, canaries in zip(pairs, snakemake.input.canary_votes, snakemake.input.canaries):  # noqa: F821
    crafted = CraftedCanaries.from_npz(canaries)
    with np.load(votes) as z:
        rates.setdefault(ds, {})[adv] = r = canary_vote_rates(z["votes_S_prime"], z["votes_twin"], crafted.canary_index, crafted.canary_label)
    log.info("%s %s %s: canary label rate (poison success for pois-*) %.3f, twin label rate %.3f, flip rate %.3f",
             algo, ds, adv, r["canary_label_rate"], r["twin_label_rate"], r["flip_rate"])
models = dict(zip(p.datasets, p.models))
rows = canary_rows(rows, rates, algo, models)
rows = pd.concat([rows, teacher_rows(props, algo, models)], ignore_index=True)
rows = chadha_causes(rows)  # issue #34 §3: why a row does not hold, from this part's own numbers
log.info("findings:\n%s", rows.to_string(index=False))
write_csv(rows, snakemake.output.findings)  # noqa: F821
