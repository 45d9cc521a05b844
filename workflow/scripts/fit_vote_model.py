"""Snakemake script of rule fit_vote_model: the twin-paired MLE of PATE's / CaPC's vote model.

``P_q`` (PATE) or ``P^i_q`` (CaPC) from the teachers of S, ``P'_q`` from the canary-holding
teachers, and the S-side law of that voter from their canary-free twins
(ppaudit.vote_models.twin.fit_twin; ``procedure: paper`` keeps the paper's P_q / P^j_q).
Output: ``fit`` (ppaudit.vote_models.twin.save_twin_fit).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "fit_vote_model")  # noqa: F821

import numpy as np  # noqa: E402

from ppaudit.vote_models.twin import fit_twin, save_twin_fit  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
with np.load(snakemake.input.votes_S) as z:  # noqa: F821
    votes_S, num_classes = z["votes_S"], int(z["num_classes"])
with np.load(snakemake.input.votes_S_prime) as z:  # noqa: F821
    votes_S_prime, votes_twin, party = z["votes_S_prime"], z["votes_twin"], z["party"]
fit = fit_twin(w.algo, votes_S, votes_S_prime, votes_twin, num_classes, party=party, procedure=p.procedure, smoothing=p.smoothing)
log.info("fitted %s (%s procedure): votes_S %s, votes_S_prime %s, parties %s", w.algo, fit.procedure, votes_S.shape, votes_S_prime.shape,
         party.tolist())
save_twin_fit(fit, snakemake.output.fit)  # noqa: F821
