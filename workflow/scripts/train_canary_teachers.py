"""Snakemake script of rule train_canary_teachers: the canary-holding teacher on S' and its twin (§5.1–5.2).

Only the teacher whose data receives the canary is trained, N_g' times per candidate, with
its canary-free twin (ppaudit.mechanisms.pate_capc.canary_teacher_votes; CaPC: in the party chosen
by the crafter). Output: ``votes`` (npz: ``votes_S_prime``, ``votes_twin`` (n_candidates, N_g',
n_queries), ``slots`` (n_candidates, N_g'), ``party`` (n_candidates,)). The log states the
poison success rate (ppaudit.adversaries.canary_vote_rates: the share of canary teachers that
vote the canary's label on its query) with the twin's agreement and the flip rate.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "train_canary_teachers")  # noqa: F821

import numpy as np  # noqa: E402

from ppaudit.adversaries import CraftedCanaries, canary_vote_rates  # noqa: E402
from ppaudit.io import atomic_path  # noqa: E402
from ppaudit.mechanisms.pate_capc import canary_teacher_votes, load_teacher_inputs  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
inputs = load_teacher_inputs(w.dataset, p.root, p.source, snakemake.input.queries)  # noqa: F821
x_query = inputs.x_query
crafted = CraftedCanaries.from_npz(snakemake.input.canaries)  # noqa: F821
cx, cy = crafted.canaries(x_query)
log.info("%s %s on %s: %d candidates × %d instantiations (+ twins)", w.algo, w.adversary, w.dataset, crafted.num_candidates, p.num_instantiations)
out = canary_teacher_votes(w.algo, w.model, inputs.x_train, inputs.y_train, x_query, p.num_teachers, p.num_instantiations, inputs.num_classes, cx, cy, int(w.seed),
                           experiment=f"chadha_{w.algo}_{w.dataset}", canary_keys=crafted.keys, party=crafted.party if w.algo == "capc" else None,
                           params=dict(p.teacher_params), n_jobs=snakemake.threads, progress=True)  # noqa: F821
votes = out["votes_S_prime"]
own = votes[np.arange(crafted.num_candidates), :, crafted.canary_index]
log.info("canary teacher votes on its own point: %s (canary labels %s)", own.tolist(), crafted.canary_label.tolist())
rates = canary_vote_rates(votes, out["votes_twin"], crafted.canary_index, crafted.canary_label)
name = "poison_success_rate" if w.adversary.startswith("pois") else "canary_label_rate"
log.info("canary teachers (%s, %d candidate × instantiation pairs): %s = %.3f (vote the canary's label on its query); "
         "twin_label_rate = %.3f (the canary-free twin already votes it); flip_rate = %.3f (vote differs from the twin's; per candidate %s)",
         w.adversary, rates["num_pairs"], name, rates["canary_label_rate"], rates["twin_label_rate"], rates["flip_rate"],
         [round(f, 3) for f in rates["per_candidate_flip_rate"]])
with atomic_path(snakemake.output.votes) as tmp:  # noqa: F821
    with open(tmp, "wb") as fh:
        np.savez(fh, votes_S_prime=votes, votes_twin=out["votes_twin"], slots=out["slots"], party=crafted.party)
