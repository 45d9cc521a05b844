"""Snakemake script of rule compose_audit: compose per-query RDP over the queries, ε at δ,
worst and average case over the candidates (§4.2, §5.4, App. E).

Inputs: ``per_query`` and ``joint`` (the joint Pois-NatQ audit, empty for AdvQ; its rows
``two_cut_joint``, ``exact_joint``, ``joint_cap``, ``valid_eps_lower_joint``,
``exact_eps_pld_joint`` — "sound: joint transcript" — join the summary, worst case = the same
candidate as the per-query worst).
Outputs: ``rdp`` and ``eps`` (compose_candidates), ``summary`` (summarize_candidates plus
the columns algo, dataset, model, adversary, sigma, num_teachers, trials, num_queries,
source, delta, eps_floor, and from the per-query table: N_g, N_g' (num_instantiations,
num_canary_instantiations), fit_procedure, multiplicity, confidence_per_audit, the T actually
used (trials_used_min / _max over the simulated audits), count_modes, the smallest
effective confidence after pruning, the simultaneous confidence of every audit that was run
(simultaneous_confidence, union bound over the 2-cut, k-cut and transcript audits of each
(candidate, query), of its null-canary control and the joint audits; num_audits of them), and how the sound transcript audits were made
(transcript_audit_methods, transcript_trials_max: M training draws or T transcripts)).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "compose_audit")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.audit import compose_candidates, count_audits, simultaneous_confidence, summarize_candidates  # noqa: E402
from ppaudit.experiments.chadha2024.pate_capc_joint import joint_summary_rows  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
per_query = pd.read_csv(snakemake.input.per_query)  # noqa: F821
rdp, eps = compose_candidates(per_query, delta=p.delta)
summary = summarize_candidates(eps)
# the joint Pois-NatQ audit (one training draw for all natural queries), for the same worst candidate
joint = pd.read_csv(snakemake.input.joint)  # noqa: F821
if not joint.empty:
    worst = summary.loc[(summary["case"] == "worst") & (summary["column"] == "two_cut_cp"), "candidate"]
    summary = pd.concat([summary, joint_summary_rows(joint, p.delta, int(worst.iloc[0]) if len(worst) else None)], ignore_index=True)
meta = {
    "algo": w.algo, "dataset": w.dataset, "model": w.model, "adversary": w.adversary, "sigma": float(w.sigma),
    "num_teachers": p.num_teachers, "trials": p.trials, "num_queries": p.num_queries, "source": p.source,
    "delta": p.delta, "eps_floor": p.floor,
}
for i, (k, v) in enumerate(meta.items()):
    summary.insert(i, k, v)
simulated = per_query[per_query["trials"] > 0]
extra = {
    "num_instantiations": per_query["num_instantiations"].iloc[0],
    "num_canary_instantiations": per_query["num_canary_instantiations"].iloc[0],
    "fit_procedure": per_query["fit_procedure"].iloc[0],
    "multiplicity": per_query["multiplicity"].iloc[0],
    "confidence_per_audit": per_query["confidence_per_audit"].iloc[0],
    "trials_used_min": int(simulated["trials"].min()) if len(simulated) else 0,
    "trials_used_max": int(simulated["trials"].max()) if len(simulated) else 0,
    "count_modes": "+".join(sorted(set(per_query["count_mode"]))),
    "effective_confidence_min": float(per_query["effective_confidence"].min()),
    # every audit that was run at once (union bound over the 2-cut, k-cut and transcript audits of
    # each pair, of its null-canary control, and the joint audits): the confidence of everything plotted
    "simultaneous_confidence": simultaneous_confidence(per_query, joint),
    "num_audits": count_audits(per_query, joint),
    # how the sound transcript audits were made (rao-blackwell: M training draws; sampled: T transcripts)
    "transcript_audit_methods": "+".join(sorted(set(per_query.get("transcript_audit_method", pd.Series(["none"])).astype(str)))),
    "transcript_trials_max": int(per_query["transcript_trials"].max()) if "transcript_trials" in per_query else 0,
}
for k, v in extra.items():
    summary[k] = v
log.info("eps per candidate:\n%s", eps.to_string(index=False))
log.info("summary:\n%s", summary.to_string(index=False))
write_csv(rdp, snakemake.output.rdp)  # noqa: F821
write_csv(eps, snakemake.output.eps)  # noqa: F821
write_csv(summary, snakemake.output.summary)  # noqa: F821
