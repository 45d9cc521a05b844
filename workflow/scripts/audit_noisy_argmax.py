"""Snakemake script of rule audit_noisy_argmax: per-query audits of every candidate (§4.2, §5.4).

Params: sigma, trials, sample_trials, orders, confidence, count_mode, exact, bonferroni, transcript,
transcript_max_work, transcript_mc_draws, transcript_trials, transcript_audit, transcript_draws, joint_draws, delta, seed. Every candidate's null-canary control is audited too
(rows ``control = True``).
Every audit of the adversary (per-query, transcript, control, joint) shares one Bonferroni
budget: each runs at 1 − (1 − confidence)/N, N = all of them (issue 27 §1).
Outputs: ``per_query`` (ppaudit.experiments.chadha2024.private_prediction.audit_crafted); ``joint`` — for
Pois-NatQ with ``transcript`` on, the joint audit of all natural queries on one training draw
(ppaudit.experiments.chadha2024.pate_capc_joint.joint_natq_audit, from the twin-paired joint vote vectors
of input ``votes_S_prime``); an empty table (header only) for the AdvQ adversaries, whose
transcript audit is already in ``per_query``.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "audit_noisy_argmax")  # noqa: F821

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.adversaries import CraftedCanaries  # noqa: E402
from ppaudit.experiments.chadha2024.pate_capc_joint import JOINT_EPS_COLUMNS, JOINT_RDP_COLUMNS, joint_audit_count, joint_natq_audit  # noqa: E402
from ppaudit.experiments.chadha2024.private_prediction import audit_crafted, per_query_audit_count  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.montecarlo import device_scope  # noqa: E402
from ppaudit.vote_models.twin import load_twin_fit  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
fit = load_twin_fit(snakemake.input.fit)  # noqa: F821
crafted = CraftedCanaries.from_npz(snakemake.input.canaries)  # noqa: F821
log.info("auditing %s %s %s: sigma=%g T=%d, %d candidates, Monte Carlo on %s", w.algo, w.dataset, w.adversary, p.sigma, p.trials,
         crafted.num_candidates, p.audit_device)
# one Bonferroni budget for every audit of this adversary (issue 27 §1): the per-query table
# (pairs × (2-cut, k-cut, transcript) × (canary, control)) and, for Pois-NatQ, the joint audits
run_joint = w.adversary == "pois-natq" and p.transcript
n_joint = joint_audit_count(crafted, p.transcript_audit) if run_joint else 0
n_per_query = per_query_audit_count(crafted, p.transcript, p.transcript_audit, control=True)
log.info("Bonferroni over %d audits (%d per-query, %d joint)", n_per_query + n_joint, n_per_query, n_joint)
with device_scope(p.audit_device):  # Monte Carlo device (numpy on cpu, float32 torch on cuda)
    table = audit_crafted(
        fit, crafted, p.sigma, p.trials, list(p.orders), p.seed, f"chadha_{w.algo}_{w.dataset}_{w.adversary}",
        confidence=p.confidence, bonferroni=p.bonferroni, progress=True, count_mode=p.count_mode, exact=p.exact, sample_trials=p.sample_trials,
        control=True, transcript=p.transcript, transcript_max_work=p.transcript_max_work, transcript_mc_draws=p.transcript_mc_draws,
        transcript_trials=p.transcript_trials, delta=p.delta, transcript_audit_method=p.transcript_audit,
        transcript_draws=p.transcript_draws, other_audits=n_joint,
    )
log.info("audited %d (candidate, query) pairs; exact methods %s", table[["candidate", "query"]].drop_duplicates().shape[0],
         table["exact_method"].value_counts().to_dict())
write_csv(table, snakemake.output.per_query)  # noqa: F821
joint = None
if run_joint:
    with np.load(snakemake.input.votes_S_prime) as z:  # noqa: F821
        votes_twin, votes_canary = z["votes_twin"], z["votes_S_prime"]
    joint = joint_natq_audit(fit, crafted, votes_twin, votes_canary, p.sigma, list(p.orders), p.seed, f"chadha_{w.algo}_{w.dataset}_{w.adversary}",
                             trials=p.transcript_trials, confidence=p.confidence, bonferroni=p.bonferroni, delta=p.delta,
                             mc_draws=p.transcript_mc_draws, audit_method=p.transcript_audit, draws=p.joint_draws,
                             other_audits=n_per_query)
    log.info("joint transcript audit:\n%s", joint.to_string(index=False))
if joint is None or joint.empty:
    joint = pd.DataFrame(columns=["candidate", "key", "order", *JOINT_RDP_COLUMNS, *JOINT_EPS_COLUMNS])
write_csv(joint, snakemake.output.joint)  # noqa: F821
