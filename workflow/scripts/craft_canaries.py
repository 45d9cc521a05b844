"""Snakemake script of rule craft_canaries: candidate canaries of one adversary (§4.1, §5.1).

Candidates: ``num_candidates`` query-set points chosen by ``selection``
(ppaudit.experiments.chadha2024.pate_capc_findings.select_candidates); the AdvQ adversaries ask their
point n_Q times, Pois-NatQ asks the n_Q natural queries once each. Poisons are mislabelled
(the most-voted label other than the true one); CaPC canaries go to the party whose teacher
votes differently from the canary label (ppaudit.adversaries.choose_capc_party).
Output: ``canaries`` (CraftedCanaries.to_npz).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "craft_canaries")  # noqa: F821

import numpy as np  # noqa: E402

from ppaudit.adversaries import choose_capc_party, craft  # noqa: E402
from ppaudit.experiments.chadha2024.pate_capc_findings import select_candidates  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
with np.load(snakemake.input.votes) as z:  # noqa: F821
    votes = z["votes_S"]
    num_classes = int(z["num_classes"])
with np.load(snakemake.input.queries) as q:  # noqa: F821
    labels = q["labels"]
cand = select_candidates(votes, num_classes, p.num_candidates, p.selection)
crafted = craft(w.adversary, votes, labels, num_classes, p.num_queries, candidates=cand)
if w.algo == "capc":  # the party whose teacher votes differently from the canary label on its query
    crafted = crafted.with_party(choose_capc_party(votes, crafted.canary_index, crafted.canary_label))
    log.info("CaPC parties: %s", crafted.party.tolist())
log.info("%s: candidates %s labels %s (true %s)", w.adversary, crafted.canary_index.tolist(), crafted.canary_label.tolist(), labels[cand].tolist())
crafted.to_npz(snakemake.output.canaries)  # noqa: F821
