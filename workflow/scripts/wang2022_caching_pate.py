"""Snakemake script of rule audit_wang_caching_pate: the answer-caching defence (Wang et al.
2022, §5) measured on the PATE/CaPC stage's fitted vote models.

For the worst (or every) candidate canary of Nat-AdvQ and Pois-AdvQ (Chadha et al. 2024, §5.1) on the
panel dataset: 2-cut audits of the adversary's transcript of ``n_Q`` repeated answers
without and with the answer cache and of one answer
(:func:`ppaudit.experiments.wang2022.caching_transcript_audit`), next to the PATE/CaPC
stage's own numbers for that candidate (composed per-answer audit ``n_Q · b(α)`` and the
exact RDP composed, from its ``rdp.csv``). ε at δ per view via Balle et al. 2020.

Inputs: fits, canaries, rdp (lists, nat-advq then pois-advq). Output: ``transcripts`` (CSV).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.accounting import rdp_to_dp  # noqa: E402
from ppaudit.adversaries import CraftedCanaries  # noqa: E402
from ppaudit.experiments.private_prediction import vote_model_for  # noqa: E402
from ppaudit.experiments.wang2022 import caching_transcript_audit  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402
from ppaudit.vote_models import load_fit  # noqa: E402

p, inp = snakemake.params, snakemake.input  # noqa: F821
s = p.settings
orders = np.asarray(p.orders, dtype=float)
frames = []
for adv, fit_path, can_path, rdp_path in zip(p.adversaries, inp.fits, inp.canaries, inp.rdp):
    fit = load_fit(fit_path)
    crafted = CraftedCanaries.from_npz(can_path)
    stage = pd.read_csv(rdp_path)
    if "control" in stage:  # the stage also audits control (non-member) runs: keep the canary rows
        stage = stage[~stage["control"].astype(bool)]
    exact_eps = {int(c): float(rdp_to_dp(g["exact"].to_numpy(), g["order"].to_numpy(), p.delta)) for c, g in stage.groupby("candidate")}
    chosen = range(crafted.num_candidates) if s["candidates"] == "all" else [max(exact_eps, key=exact_eps.get)]
    log.info("%s: exact composed ε per candidate %s; auditing %s", adv, exact_eps, list(chosen))
    for i in chosen:
        q, reps = int(crafted.audit_queries[i][0]), int(crafted.repetitions[i][0])
        if len(crafted.audit_queries[i]) != 1:
            raise ValueError(f"{adv} candidate {i} asks {len(crafted.audit_queries[i])} distinct queries; the caching audit needs one repeated query")
        model = vote_model_for(fit, i, q)
        rng = job_generator(p.seed, "wang2022_defence_pate", s["algo"], p.dataset, adv, crafted.keys[i])
        df = caching_transcript_audit(model, p.sigma, reps, s["trials"], orders, p.confidence, rng, num_bins=s["num_bins"])
        own = stage[stage["candidate"] == i].set_index("order")
        df["stage_composed_audit"] = own.loc[df["order"], "two_cut_cp"].to_numpy()
        df["stage_exact_composed"] = own.loc[df["order"], "exact"].to_numpy()
        df["stage_exact_single"] = df["stage_exact_composed"] / reps
        # With the cache the stage's repeated-query audit composes over one fresh answer.
        df["stage_cached_audit"] = df["stage_composed_audit"] / reps
        eps = {view: float(rdp_to_dp(g["audit"].to_numpy(), g["order"].to_numpy(), p.delta)) for view, g in df.groupby("view")}
        df["epsilon"] = df["view"].map(eps)
        df.insert(0, "query", q)
        df.insert(0, "candidate", i)
        df.insert(0, "adversary", adv)
        df.insert(0, "dataset", p.dataset)
        df.insert(0, "algo", s["algo"])
        df["delta"] = p.delta
        log.info("%s candidate %d (query %d, n_Q = %d): ε at δ = %g: %s", adv, i, q, reps, p.delta, eps)
        frames.append(df)
table = pd.concat(frames, ignore_index=True)
write_csv(table, snakemake.output.transcripts)  # noqa: F821
