"""Snakemake script of rule fit_vote_model: MLE of P_q and P'_q (PATE) or P^i_q and P^{1'}_q (CaPC).

Output: ``fit`` (ppaudit.vote_models.save_fit).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "fit_vote_model")  # noqa: F821

import numpy as np  # noqa: E402

from ppaudit.vote_models import fit_capc, fit_pate, save_fit  # noqa: E402

w = snakemake.wildcards  # noqa: F821
with np.load(snakemake.input.votes_S) as z:  # noqa: F821
    votes_S, num_classes = z["votes_S"], int(z["num_classes"])
with np.load(snakemake.input.votes_S_prime) as z:  # noqa: F821
    votes_S_prime = z["votes_S_prime"]
fitter = fit_pate if w.algo == "pate" else fit_capc
fit = fitter(votes_S, votes_S_prime, num_classes, smoothing=snakemake.params.smoothing)  # noqa: F821
log.info("fitted %s: votes_S %s, votes_S_prime %s", type(fit).__name__, votes_S.shape, votes_S_prime.shape)
save_fit(fit, snakemake.output.fit)  # noqa: F821
