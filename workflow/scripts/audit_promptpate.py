"""Rule audit_promptpate: the audit of one PromptPATE adversary (§4.2, §5.3–5.4).

``ppaudit.mechanisms.promptpate.audit_votes`` on the exact histograms of the LLM stage: per query the
2-cut (Clopper–Pearson) and k-cut audits from T exact-count noisy-argmax runs, the exact RDP
(Eq. 4), the data-dependent and data-independent theory; composed over the query sequence
(AdvQ: the query asked n_Q times; Pois-NatQ: the n_Q natural queries), ε at δ, worst /
max / average case over the candidates (AdvQ: every query; Pois-NatQ: per variant, All same
per target label, plus ``variant = best``).

Outputs: ``per_query``, ``rdp``, ``eps`` and ``summary`` (the columns of the PATE/CaPC
summaries — algo, dataset, model, adversary, sigma, num_teachers, trials, num_queries,
source, delta, eps_floor, case, column, epsilon, candidate — plus ``variant`` and
``best_variant``).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import numpy as np  # noqa: E402

from ppaudit.io import write_csv  # noqa: E402
from ppaudit.mechanisms.promptpate import PromptPateVotes, audit_votes  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
votes = PromptPateVotes.from_npz(snakemake.input.votes)  # noqa: F821
out = audit_votes(votes, p.sigma, p.trials, p.orders, p.seed, "chadha2024/promptpate/audit", confidence=p.confidence,
                  delta=p.delta, adversaries=[w.adversary])
summary = out["summary"]
if "best_variant" not in summary:
    summary["best_variant"] = ""
summary["best_variant"] = summary["best_variant"].fillna("")
meta = {
    "algo": "promptpate", "dataset": w.dataset, "model": w.model, "adversary": w.adversary, "sigma": float(w.sigma),
    "num_teachers": int(votes.teacher_votes.shape[0]), "trials": int(p.trials), "num_queries": votes.num_queries,
    # As in the PATE/CaPC summaries, source = where the data came from (the model is in "model").
    "source": "packaged" if w.dataset == "rotten-tomatoes" else "download", "delta": p.delta, "eps_floor": p.floor,
}
summary = summary.drop(columns=[c for c in meta if c in summary and c != "adversary"])
summary = summary.drop(columns="adversary")
for i, (k, v) in enumerate(meta.items()):
    summary.insert(i, k, v)
cols = list(meta) + ["case", "column", "epsilon", "candidate", "variant", "best_variant"]
summary = summary[cols]
pq = out["per_query"]
log.info("%d per-query audits (%d identical pairs), T = %d", len(pq) // len(p.orders), int(pq["identical"].sum()) // len(p.orders), p.trials)
log.info("eps per candidate:\n%s", out["eps"].to_string(index=False))
log.info("summary:\n%s", summary[summary["column"].isin(["two_cut_cp", "exact", "data_dependent", "data_independent"])].to_string(index=False))
if w.adversary == "pois-natq":
    log.info("best Pois-NatQ variant: %s", summary["best_variant"].replace("", np.nan).dropna().unique())
write_csv(pq, snakemake.output.per_query)  # noqa: F821
write_csv(out["rdp"], snakemake.output.rdp)  # noqa: F821
write_csv(out["eps"], snakemake.output.eps)  # noqa: F821
write_csv(summary, snakemake.output.summary)  # noqa: F821
