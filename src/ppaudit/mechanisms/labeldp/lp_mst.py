"""LP-1ST, LP-1ST with noise correction and LP-2ST (Ghazi et al. 2021, Algs. 2–3; observational paper §6.1).

* :func:`lp_1st` — one stage of RRWithPrior with a given prior (from any model that does not
  see the private labels, in-domain or out-of-domain, passed as a matrix). ε-label-DP.
* :func:`lp_1st_noise_correction` — the LP-1ST release with a uniform prior (= k-ary RR) plus
  the correction map of :func:`~.rr.rr_noise_correction` (the "LP-1ST (noise
  correction)" rows of the observational paper's Tables 2 and 5, after Wu et al. 2023).
* :func:`lp_2st` — LP-MST with two stages (Alg. 3): stage 1 runs RRWithPrior with the given
  prior on the first part; a model fitted on the stage-1 noisy labels (a ``fit_predict_proba``
  callable) supplies the prior of stage 2 on the second part. Each label is used once and
  the prior of stage 2 is post-processing of stage 1, so the release is ε-label-DP.
"""

from __future__ import annotations

import math

import numpy as np

from ..._validation import check_probability
from .release import (
    FitPredictProba,
    LabelRelease,
    _check_epsilon,
    _check_labels,
    _check_num_classes,
    _check_rng,
    _prior_matrix,
)
from .rr import rr_transition_matrix, rr_with_prior

__all__ = ["lp_1st", "lp_1st_noise_correction", "lp_2st"]


def lp_1st(labels, epsilon, num_classes, rng: np.random.Generator, prior=None) -> LabelRelease:
    """LP-1ST: one stage of RRWithPrior with a given prior (Ghazi et al. 2021; observational paper §6.1).

    The prior is any class-probability matrix computed without the private labels — from a
    pre-trained in-domain model, an out-of-domain model, or ``None`` for the uniform prior
    (which makes RRWithPrior plain k-ary RR).

    Args:
        labels: true labels ``(n,)``.
        epsilon: ε > 0 (``inf``: no noise).
        num_classes: K.
        rng: numpy Generator.
        prior: ``(n, K)`` or ``(K,)`` prior, or ``None`` (uniform).

    Returns:
        :class:`LabelRelease` (ε-label-DP, ``details["k_star"]``).
    """
    k = _check_num_classes(num_classes)
    y = _check_labels(labels, k)
    e = _check_epsilon(epsilon)
    p = _prior_matrix(prior, y.size, k)
    noisy, kstar = rr_with_prior(y, e, p, rng)
    return LabelRelease("lp_1st", e, 0.0, noisy, details={"k_star": kstar})


def lp_1st_noise_correction(labels, epsilon, num_classes, rng: np.random.Generator) -> LabelRelease:
    """LP-1ST (noise correction): the LP-1ST release with a uniform prior (= k-ary RR), plus the correction map.

    The release is exactly :func:`lp_1st` with ``prior=None`` (RRWithPrior with the uniform
    prior is k-ary RR, ``k* = k``), so the labels are ε-label-DP; ``details`` carries the
    transition matrix that :func:`rr_noise_correction` inverts on the trained model's
    predictions.

    Args:
        labels: true labels ``(n,)``.
        epsilon: ε > 0.
        num_classes: k.
        rng: numpy Generator.

    Returns:
        :class:`LabelRelease` (``mechanism="lp_1st_nc"``, ``details = {"k_star", "transition"}``).
    """
    rel = lp_1st(labels, epsilon, num_classes, rng)
    k = _check_num_classes(num_classes)
    trans = rr_transition_matrix(rel.epsilon, k) if math.isfinite(rel.epsilon) else np.eye(k)
    return LabelRelease("lp_1st_nc", rel.epsilon, 0.0, rel.labels, details={"k_star": rel.details["k_star"], "transition": trans})


def lp_2st(
    features,
    labels,
    epsilon,
    num_classes,
    fit_predict_proba: FitPredictProba,
    rng: np.random.Generator,
    first_stage_fraction: float = 0.5,
    prior=None,
) -> LabelRelease:
    """LP-2ST: LP-MST with two stages (Ghazi et al. 2021, Algorithm 3 with T = 2).

    1. Split the examples at random into stage 1 (a ``first_stage_fraction``) and stage 2.
    2. Stage 1: RRWithPrior with ``prior`` (uniform if ``None``) on the stage-1 labels.
    3. Fit ``fit_predict_proba`` on the stage-1 features and noisy labels and predict the
       stage-2 prior.
    4. Stage 2: RRWithPrior with that prior on the stage-2 labels.

    Every label is randomised once and the stage-2 prior only depends on stage-1 outputs
    and public features (post-processing), so the release is ε-label-DP.

    Args:
        features: ``(n, d)`` features (public under label DP).
        labels: true labels ``(n,)``.
        epsilon: ε > 0.
        num_classes: K.
        fit_predict_proba: ``(X_train, y_train, X_predict) -> (n_predict, K)`` probabilities.
        rng: numpy Generator.
        first_stage_fraction: fraction of examples in stage 1, in (0, 1).
        prior: stage-1 prior, ``(n, K)``/``(K,)`` or ``None``.

    Returns:
        :class:`LabelRelease` with the noisy labels of all examples and
        ``details = {"stage": 1 or 2 per example, "k_star", "stage2_prior"}``.
    """
    k = _check_num_classes(num_classes)
    y = _check_labels(labels, k)
    e = _check_epsilon(epsilon)
    frac = check_probability(first_stage_fraction, "first_stage_fraction")
    x = np.asarray(features)
    if x.shape[0] != y.size:
        raise ValueError(f"features must have {y.size} rows (one per label), got {x.shape[0]}")
    gen = _check_rng(rng)
    p1 = _prior_matrix(prior, y.size, k)
    n1 = int(round(frac * y.size))
    if n1 < 1 or n1 >= y.size:
        raise ValueError(f"first_stage_fraction={first_stage_fraction} leaves an empty stage for n={y.size}")
    perm = gen.permutation(y.size)
    s1, s2 = np.sort(perm[:n1]), np.sort(perm[n1:])
    noisy = np.empty_like(y)
    kstar = np.empty_like(y)
    noisy[s1], kstar[s1] = rr_with_prior(y[s1], e, p1[s1], gen)
    prior2 = np.asarray(fit_predict_proba(x[s1], noisy[s1], x[s2]), dtype=np.float64)
    if prior2.shape != (s2.size, k):
        raise ValueError(f"fit_predict_proba must return shape ({s2.size}, {k}), got {prior2.shape}")
    prior2 = np.clip(prior2, 0.0, None)
    prior2 = prior2 / prior2.sum(axis=1, keepdims=True)
    noisy[s2], kstar[s2] = rr_with_prior(y[s2], e, prior2, gen)
    stage = np.ones(y.size, dtype=np.int64)
    stage[s2] = 2
    return LabelRelease("lp_2st", e, 0.0, noisy, details={"stage": stage, "k_star": kstar, "stage2_prior": prior2})
