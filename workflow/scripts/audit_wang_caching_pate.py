"""Snakemake script of rule audit_wang_caching_pate: the answer-caching defence (Wang et al.
2022, §5) measured on the PATE/CaPC stage's fitted vote models.

For the worst (or every) candidate canary of Nat-AdvQ and Pois-AdvQ (Chadha et al. 2024, §5.1)
on the panel dataset: 2-cut audits of the transcript of ``n_Q`` repeated answers without and
with the answer cache and of one answer, next to the stage's own numbers for that candidate
(:func:`ppaudit.experiments.wang2022.caching.pate_caching_transcripts`).

Inputs: fits, canaries, rdp (lists, in the order of params.adversaries). Params: settings
(wang2022.defence.pate), adversaries, dataset, sigma, orders, confidence, delta, seed.
Output: ``transcripts`` (CSV).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.adversaries import CraftedCanaries  # noqa: E402
from ppaudit.experiments.wang2022.caching import pate_caching_transcripts  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402
from ppaudit.vote_models import load_fit  # noqa: E402

p, inp = snakemake.params, snakemake.input  # noqa: F821
s = p.settings
runs = [
    (adv, load_fit(fit), CraftedCanaries.from_npz(canaries), pd.read_csv(rdp))
    for adv, fit, canaries, rdp in zip(p.adversaries, inp.fits, inp.canaries, inp.rdp)
]
table = pate_caching_transcripts(
    runs, algo=s["algo"], dataset=p.dataset, sigma=p.sigma, orders=p.orders, delta=p.delta, confidence=p.confidence,
    trials=s["trials"], num_bins=s["num_bins"], candidates=s["candidates"],
    rng_for=lambda adv, key: job_generator(p.seed, "wang2022_defence_pate", s["algo"], p.dataset, adv, key),
)
write_csv(table, snakemake.output.transcripts)  # noqa: F821
