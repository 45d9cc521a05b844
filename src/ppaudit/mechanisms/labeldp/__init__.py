"""Label-DP training mechanisms: RR, RRWithPrior (LP-1ST, LP-2ST), ALIBI, AGIBI, PATE — one module per concept.

Every mechanism returns a :class:`LabelRelease` carrying the released labels (hard or soft)
and the (ε, δ) that *its own* analysis claims, so that audits can be set against it.

* :func:`randomized_response` — k-ary RR (Warner 1965): keep the label with probability
  ``e^ε/(e^ε + k − 1)``, otherwise a uniform one of the other ``k − 1``. ε-label-DP.
* :func:`rr_with_prior` / :func:`lp_1st` — RRWithPrior (Ghazi et al. 2021, Alg. 2): RR
  restricted to the ``k*`` most likely labels under a prior, ``k*`` maximising
  ``e^ε/(e^ε + k − 1) · (prior mass of the top k)``. The prior may come from any model that
  does not see the private labels (in-domain or out-of-domain): it is passed as a matrix.
  ε-label-DP.
* :func:`lp_2st` — LP-MST with two stages (Ghazi et al. 2021, Alg. 3): the data are split;
  stage 1 runs RRWithPrior with the given prior on the first part; a model fitted on the
  stage-1 noisy labels supplies the prior of stage 2 on the second part. Each label is used
  once and the prior of stage 2 is post-processing of stage 1, so the release is ε-label-DP.
  The model enters as a ``fit_predict_proba`` callable.
* :func:`alibi` — ALIBI (Malek et al. 2021, §5.2): Laplace noise of scale ``λ = 2/ε`` on the
  one-hot label (ℓ1-sensitivity 2) and Bayesian post-processing into the soft label
  ``p(y = c | o) ∝ prior_c · exp(−‖o − e_c‖₁ / λ)`` (Eqs. (1)–(2)). ε-label-DP.
* :func:`agibi` — the Gaussian variant (Malek et al. 2021, App. D.2, Eqs. (4)–(5)):
  Gaussian noise σ on the one-hot label and ``p(y = c | o) = softmax(o_c/σ² + log prior_c)``.
  σ for a claimed (ε, δ) (:func:`agibi_sigma`): ``calibration="rdp"`` (default, what the
  ALIBI authors do: their ``RandomizedLabelPrivacy`` charges one Gaussian release of
  ℓ2-sensitivity √2 — noise multiplier σ/√2 — with the RDP accountant over orders
  1.1, 1.2, …, 99.9; here dp-accounting's ``RdpAccountant``) or ``"analytic"`` (ours: the
  exact analytic Gaussian mechanism, Balle & Wang 2018, Thm 8, ``σ = √2/μ``, the smallest
  σ that meets the claim). The labels are noised once, so there is no composition.
  δ defaults to 1e-5 (their ``LabelPrivacy.delta``).
* ALIBI's *iterative* Bayesian inference (Malek et al. 2021, §5.2, the authors' default
  ``post_process="mapwithprior"``): the prior of each posterior is the model's own current
  prediction. :func:`alibi_posterior` / :func:`agibi_posterior` take that prior; the
  training loop that refreshes it (every epoch) is
  :func:`ppaudit.models.soft_label.mlp_fit_predict_soft` with ``soft_label_fn``.
* :func:`rr_noise_correction` / :func:`lp_1st_noise_correction` — LP-1ST with noise
  correction (the "LP-1ST (noise correction)" rows of the observational paper's Tables 2
  and 5, after Wu et al. 2023): the labels are released by RR(WithPrior) exactly as
  LP-1ST, and the model's predicted distribution of the *noisy* label is mapped back to
  the clean label by inverting RR's transition matrix (post-processing, still ε-label-DP).
* :func:`pate_label_dp` — PATE for label DP (Papernot et al. 2017/2018; Malek et al. 2021,
  §4): teachers fitted on disjoint labelled subsets vote on query points, the votes are
  aggregated by GNMax (optionally Confident-GNMax with a noisy threshold), and the
  privacy cost of the answered queries is the data-dependent RDP of
  :func:`ppaudit.accounting.gnmax_rdp_data_dependent`, converted with
  :func:`ppaudit.accounting.rdp_to_dp`. A student with a pluggable model is fitted on the
  answered queries; PATE-FM's FixMatch student (semi-supervised, with unlabelled data) is
  :func:`ppaudit.mechanisms.fixmatch.fixmatch_fit_predict`, wired in by
  :func:`ppaudit.experiments.labeldp.release.fit_released`.

The ``fit_predict_proba`` callables have the signature
``fit_predict_proba(X_train, y_train, X_predict) -> (len(X_predict), num_classes)`` array of
class probabilities (all classes, also those absent from ``y_train``).

Modules: :mod:`.release` (:class:`LabelRelease`, the ``FitPredictProba`` type, input checks),
:mod:`.rr` (RR, RRWithPrior, RR's channel and its inversion),
:mod:`.lp_mst` (LP-1ST, LP-1ST with noise correction, LP-2ST), :mod:`.alibi_agibi` (ALIBI, AGIBI),
:mod:`.pate` (GNMax aggregation, PATE for label DP), :mod:`.fit_predict` (a default model).
Every public name is re-exported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30); the table of names is each
# module's __all__ (issue 37: derived, not repeated).
__getattr__, __dir__ = attach_modules(
    __name__,
    ("alibi_agibi", "pate", "release", "fit_predict", "lp_mst", "rr"),
)

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .alibi_agibi import (
        AGIBI_CALIBRATIONS,
        AGIBI_RDP_ORDERS,
        agibi,
        agibi_posterior,
        agibi_sigma,
        alibi,
        alibi_posterior,
    )
    from .fit_predict import logistic_regression_fit_predict_proba
    from .lp_mst import lp_1st, lp_1st_noise_correction, lp_2st
    from .pate import DEFAULT_ORDERS, gnmax_aggregate, pate_label_dp
    from .release import FitPredictProba, LabelRelease
    from .rr import (
        randomized_response,
        rr_keep_probability,
        rr_noise_correction,
        rr_transition_matrix,
        rr_with_prior,
    )
