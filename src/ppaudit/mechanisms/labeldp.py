"""Label-DP training mechanisms: RR, RRWithPrior (LP-1ST, LP-2ST), ALIBI, AGIBI, PATE.

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
  :func:`ppaudit.experiments.labeldp_data.mlp_fit_predict_soft` with ``soft_label_fn``.
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
  :func:`ppaudit.experiments.labeldp_data.fit_released`.

The ``fit_predict_proba`` callables have the signature
``fit_predict_proba(X_train, y_train, X_predict) -> (len(X_predict), num_classes)`` array of
class probabilities (all classes, also those absent from ``y_train``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from scipy.special import log_softmax

from .._validation import (
    as_distribution,
    check_positive_int,
    check_probability,
    check_sigma,
)
from ..accounting import gnmax_rdp_data_dependent, gnmax_rdp_data_independent, rdp_to_dp
from ..attacks.one_run import gdp_mu

__all__ = [
    "AGIBI_CALIBRATIONS",
    "AGIBI_RDP_ORDERS",
    "DEFAULT_ORDERS",
    "FitPredictProba",
    "LabelRelease",
    "agibi",
    "agibi_posterior",
    "agibi_sigma",
    "alibi",
    "alibi_posterior",
    "gnmax_aggregate",
    "logistic_regression_fit_predict_proba",
    "lp_1st",
    "lp_1st_noise_correction",
    "lp_2st",
    "pate_label_dp",
    "randomized_response",
    "rr_keep_probability",
    "rr_noise_correction",
    "rr_transition_matrix",
    "rr_with_prior",
]

FitPredictProba = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]

#: Rényi orders for the PATE accounting.
DEFAULT_ORDERS = np.unique(np.concatenate([np.linspace(1.1, 10.9, 99), np.arange(11.0, 101.0), np.geomspace(100.0, 1000.0, 21)]))


@dataclass(frozen=True)
class LabelRelease:
    """Output of a label-DP mechanism.

    Attributes:
        mechanism: name of the mechanism.
        epsilon: ε claimed by the mechanism's own analysis (``inf`` for no privacy).
        delta: δ of that claim (0 for pure ε-DP mechanisms).
        labels: released hard labels ``(n,)`` (for ALIBI/AGIBI the argmax of the soft
            labels; for PATE the answered queries' labels, −1 where unanswered).
        soft_labels: ``(n, C)`` soft labels (ALIBI/AGIBI) or ``None``.
        details: mechanism-specific extras (noisy vectors, ``k*``, stage split, votes, …).
    """

    mechanism: str
    epsilon: float
    delta: float
    labels: np.ndarray
    soft_labels: np.ndarray | None = None
    details: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------


def _check_epsilon(epsilon) -> float:
    try:
        e = float(epsilon)
    except (TypeError, ValueError):
        raise ValueError(f"epsilon must be a number > 0 (or inf), got {epsilon!r}") from None
    if math.isnan(e) or e <= 0:
        raise ValueError(f"epsilon must be > 0 (or inf), got {epsilon!r}")
    return e


def _check_labels(labels, num_classes: int, name: str = "labels") -> np.ndarray:
    a = np.asarray(labels)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {a.shape}")
    f = a.astype(np.float64)
    if not np.all(np.isfinite(f)) or np.any(f != np.round(f)) or np.any(f < 0) or np.any(f >= num_classes):
        bad = a[~np.isfinite(f) | (f != np.round(f)) | (f < 0) | (f >= num_classes)]
        raise ValueError(f"{name} must be integers in [0, {num_classes - 1}], got {bad[:5]}")
    return a.astype(np.int64)


def _check_num_classes(num_classes) -> int:
    return check_positive_int(num_classes, "num_classes", minimum=2)


def _prior_matrix(prior, n: int, num_classes: int) -> np.ndarray:
    if prior is None:
        return np.full((n, num_classes), 1.0 / num_classes)
    p = as_distribution(prior, "prior", atol=1e-6)
    if p.ndim == 1:
        p = np.broadcast_to(p, (n, p.size))
    if p.shape != (n, num_classes):
        raise ValueError(f"prior must have shape ({num_classes},) or ({n}, {num_classes}), got {np.shape(prior)}")
    return p


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


# --------------------------------------------------------------------------------------
# Randomized response and RRWithPrior
# --------------------------------------------------------------------------------------


def rr_keep_probability(epsilon, num_classes) -> float:
    """Probability that k-ary RR keeps the label: ``e^ε / (e^ε + k − 1)`` (1 for ε = ∞)."""
    e = _check_epsilon(epsilon)
    k = _check_num_classes(num_classes)
    return 1.0 / (1.0 + (k - 1) * math.exp(-e))


def randomized_response(labels, epsilon, num_classes, rng: np.random.Generator) -> LabelRelease:
    """k-ary randomized response (Warner 1965; the RR baseline of the observational paper, §6.1).

    Each label is kept with probability ``e^ε/(e^ε + k − 1)`` and otherwise replaced by a
    uniform draw from the other ``k − 1`` classes. This is ε-label-DP: the output
    probabilities of any two inputs differ by the factor ``e^ε`` at most.

    Args:
        labels: true labels ``(n,)`` in ``[0, k)``.
        epsilon: ε > 0 (``inf`` keeps every label).
        num_classes: k ≥ 2.
        rng: numpy Generator.

    Returns:
        :class:`LabelRelease` with ``labels`` the noisy labels, ``epsilon = ε``, ``delta = 0``.

    Example:
        >>> out = randomized_response([0, 1, 2], 1.0, 3, np.random.default_rng(0))
        >>> out.labels.shape, out.epsilon
        ((3,), 1.0)
    """
    k = _check_num_classes(num_classes)
    e = _check_epsilon(epsilon)
    y = _check_labels(labels, k)
    gen = _check_rng(rng)
    keep = gen.random(y.size) < rr_keep_probability(e, k)
    offset = gen.integers(1, k, size=y.size)
    noisy = np.where(keep, y, (y + offset) % k)
    return LabelRelease("rr", e, 0.0, noisy, details={"kept": keep})


def rr_with_prior(labels, epsilon, prior, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """RRWithPrior (Ghazi et al. 2021, Algorithm 2), vectorised over examples.

    For each example with prior ``p`` (sorted ``p_(1) ≥ … ≥ p_(K)``): choose
    ``k* = argmax_k e^ε/(e^ε + k − 1) · Σ_{j ≤ k} p_(j)`` (smallest k on ties), let ``Y_k*`` be
    the top-``k*`` labels (stable order on ties). If ``y ∈ Y_k*``, output ``y`` with
    probability ``e^ε/(e^ε + k* − 1)`` and each other member of ``Y_k*`` with probability
    ``1/(e^ε + k* − 1)``; otherwise output a uniform member of ``Y_k*``. The prior must not
    depend on the example's own label.

    Args:
        labels: true labels ``(n,)``.
        epsilon: ε > 0 (``inf`` returns the true labels).
        prior: ``(n, K)`` prior probabilities (rows sum to 1).
        rng: numpy Generator.

    Returns:
        ``(noisy_labels, k_star)``.
    """
    e = _check_epsilon(epsilon)
    p = np.asarray(prior, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"prior must have shape (n, K), got {p.shape}")
    n, k = p.shape
    p = _prior_matrix(p, n, k)
    y = _check_labels(labels, k)
    if y.size != n:
        raise ValueError(f"labels must have {n} entries (rows of prior), got {y.size}")
    gen = _check_rng(rng)
    if math.isinf(e):
        return y.copy(), np.full(n, k)
    order = np.argsort(-p, axis=1, kind="stable")
    mass = np.cumsum(np.take_along_axis(p, order, axis=1), axis=1)
    ks = np.arange(1, k + 1)
    keep_k = 1.0 / (1.0 + (ks - 1) * math.exp(-e))
    kstar = np.argmax(mass * keep_k[None, :], axis=1) + 1
    pos = np.argmax(order == y[:, None], axis=1)  # rank of the true label
    inside = pos < kstar
    u = gen.random(n)
    keep = inside & (u < keep_k[kstar - 1])
    # uniform over Y_k* \ {y} when inside, uniform over Y_k* when outside
    j = np.floor(gen.random(n) * np.where(inside, kstar - 1, kstar)).astype(np.int64)
    j = np.where(inside & (j >= pos), j + 1, j)
    j = np.minimum(j, kstar - 1)
    drawn = order[np.arange(n), j]
    noisy = np.where(keep, y, drawn)
    return noisy, kstar


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


def rr_transition_matrix(epsilon, num_classes) -> np.ndarray:
    """``T[y, ỹ] = Pr[RR outputs ỹ | label y]`` of k-ary RR: ``q`` on the diagonal, ``(1 − q)/(k − 1)`` elsewhere.

    Args:
        epsilon: ε > 0 (``q = e^ε/(e^ε + k − 1)``).
        num_classes: k ≥ 2.

    Returns:
        ``(k, k)`` row-stochastic matrix.
    """
    k = _check_num_classes(num_classes)
    q = rr_keep_probability(epsilon, k)
    t = np.full((k, k), (1.0 - q) / (k - 1))
    np.fill_diagonal(t, q)
    return t


def rr_noise_correction(noisy_label_probs, epsilon, num_classes) -> np.ndarray:
    """Map a model's distribution of the RR-noised label back to the clean label (noise correction).

    A model fitted on k-ary RR labels estimates ``p̃(x) = Tᵀ p(x)`` (``T`` of
    :func:`rr_transition_matrix`): ``p̃_c = q p_c + (1 − q)/(k − 1) (1 − p_c)``. Inverting,
    ``p_c = (p̃_c − r) / (q − r)`` with ``r = (1 − q)/(k − 1)``; the result is clipped at a
    floor of 1e-6 and renormalised (the inverse leaves the simplex where the estimate is
    noisier than RR allows). This is the "noise correction" of LP-1ST in the observational
    paper's Tables 2 and 5 (its reference: Wu et al. 2023, Criteo); we read it as this
    inverse of the known RR channel (the paper gives no formula). Post-processing of an
    ε-label-DP model, so the corrected model keeps the guarantee.

    Args:
        noisy_label_probs: ``(n, k)`` predicted probabilities of the noisy label.
        epsilon: the ε of the RR release (``inf``: returned unchanged).
        num_classes: k.

    Returns:
        ``(n, k)`` corrected class probabilities.

    Raises:
        ValueError: on a bad shape, ε ≤ 0 or k < 2.
    """
    k = _check_num_classes(num_classes)
    e = _check_epsilon(epsilon)
    p = np.asarray(noisy_label_probs, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != k:
        raise ValueError(f"noisy_label_probs must have shape (n, {k}), got {p.shape}")
    if math.isinf(e):
        return p.copy()
    q = rr_keep_probability(e, k)
    r = (1.0 - q) / (k - 1)
    out = np.clip((p - r) / (q - r), 1e-6, None)
    return out / out.sum(axis=1, keepdims=True)


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


# --------------------------------------------------------------------------------------
# ALIBI and AGIBI
# --------------------------------------------------------------------------------------


def _one_hot(y: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((y.size, k))
    out[np.arange(y.size), y] = 1.0
    return out


def _log_prior(prior, n: int, k: int) -> np.ndarray:
    p = _prior_matrix(prior, n, k)
    with np.errstate(divide="ignore"):
        return np.log(p)


def alibi_posterior(noisy, epsilon, prior=None) -> np.ndarray:
    """ALIBI's Bayesian post-processing (Malek et al. 2021, Eqs. (1)–(2)).

    With Laplace scale ``λ = 2/ε``: ``p(y = c | o) ∝ prior_c · exp(−‖o − e_c‖₁ / λ)``. Since
    ``‖o − e_c‖₁ = Σ_j |o_j| − |o_c| + |o_c − 1|`` the posterior is
    ``softmax_c(log prior_c + (|o_c| − |o_c − 1|)/λ)``, computed in log space.

    Args:
        noisy: ``(n, C)`` noisy one-hot vectors ``o``.
        epsilon: ε > 0.
        prior: ``(n, C)``/``(C,)`` prior or ``None`` (uniform). With the model's predictions
            as the prior this is the iterative step of ALIBI.

    Returns:
        ``(n, C)`` soft labels.
    """
    e = _check_epsilon(epsilon)
    o = np.asarray(noisy, dtype=np.float64)
    if o.ndim != 2 or o.shape[1] < 2:
        raise ValueError(f"noisy must have shape (n, C) with C >= 2, got {o.shape}")
    if math.isinf(e):
        raise ValueError("epsilon=inf has no noise to post-process; the soft label is the one-hot label")
    lam = 2.0 / e
    logits = _log_prior(prior, *o.shape) + (np.abs(o) - np.abs(o - 1.0)) / lam
    return np.exp(log_softmax(logits, axis=1))


def alibi(labels, epsilon, num_classes, rng: np.random.Generator, prior=None) -> LabelRelease:
    """ALIBI (Malek et al. 2021, §5.2, Algorithm 3's noising step).

    ``o = e_y + Laplace(0, 2/ε)^C`` (the one-hot label has ℓ1-sensitivity 2, so this is
    ε-label-DP), then :func:`alibi_posterior`.

    Args:
        labels: true labels ``(n,)``.
        epsilon: ε > 0 (``inf``: soft labels are the one-hot labels).
        num_classes: C.
        rng: numpy Generator.
        prior: prior of the post-processing (``None`` = uniform).

    Returns:
        :class:`LabelRelease` with ``soft_labels``, ``labels = argmax``,
        ``details["noisy"] = o``, ``details["scale"] = 2/ε``.
    """
    k = _check_num_classes(num_classes)
    y = _check_labels(labels, k)
    e = _check_epsilon(epsilon)
    gen = _check_rng(rng)
    onehot = _one_hot(y, k)
    if math.isinf(e):
        return LabelRelease("alibi", e, 0.0, y.copy(), onehot, {"noisy": onehot.copy(), "scale": 0.0})
    scale = 2.0 / e
    o = onehot + gen.laplace(0.0, scale, size=onehot.shape)
    soft = alibi_posterior(o, e, prior)
    return LabelRelease("alibi", e, 0.0, np.argmax(soft, axis=1), soft, {"noisy": o, "scale": scale})


#: σ calibrations of AGIBI: the ALIBI authors' RDP accountant, or the analytic Gaussian mechanism.
AGIBI_CALIBRATIONS = ("rdp", "analytic")

#: The RDP orders of the ALIBI authors' ``RandomizedLabelPrivacy`` (1.1, 1.2, …, 99.9).
AGIBI_RDP_ORDERS = tuple(i / 10.0 for i in range(11, 1000))


def _agibi_rdp_epsilon(sigma: float, delta: float) -> float:
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    acc = RdpAccountant(list(AGIBI_RDP_ORDERS))
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=sigma / math.sqrt(2.0)))
    return float(acc.get_epsilon(delta))


def agibi_sigma(epsilon, delta: float = 1e-5, calibration: str = "rdp") -> float:
    """σ of AGIBI for a claimed (ε, δ) (Malek et al. 2021, App. D.2).

    The one-hot label has ℓ2-sensitivity √2, so one release ``e_y + N(0, σ²I)`` is a
    Gaussian mechanism with noise multiplier ``σ/√2``.

    * ``"rdp"`` (the ALIBI authors' procedure, ``lib/alibi.py::RandomizedLabelPrivacy``):
      the smallest σ whose RDP curve ``α/σ²`` over the orders :data:`AGIBI_RDP_ORDERS`,
      converted by dp-accounting's ``RdpAccountant.get_epsilon`` (the improved conversion
      of Canonne, Kamath & Steinke 2020; the authors' opacus used the classic
      ``ε_α + log(1/δ)/(α − 1)``, which gives a slightly larger σ), is ≤ ε. Solved by
      bisection on σ to relative precision 1e-10.
    * ``"analytic"`` (ours): ``σ = √2 / μ(ε, δ)``, μ the GDP parameter whose (ε, δ) curve
      passes through the claim — the exact privacy profile of the Gaussian mechanism
      (Balle & Wang 2018, Thm 8; Dong et al. 2020, Cor. 2.13), hence the smallest valid σ.

    Args:
        epsilon: ε > 0 (``inf`` gives σ = 0).
        delta: δ in (0, 1).
        calibration: ``"rdp"`` or ``"analytic"``.

    Returns:
        σ ≥ 0.

    Raises:
        ValueError: on ε ≤ 0, δ outside (0, 1) or an unknown calibration.
    """
    e = _check_epsilon(epsilon)
    d = check_probability(delta, "delta")
    if calibration not in AGIBI_CALIBRATIONS:
        raise ValueError(f"calibration must be one of {AGIBI_CALIBRATIONS}, got {calibration!r}")
    if math.isinf(e):
        return 0.0
    if calibration == "analytic":
        return math.sqrt(2.0) / float(gdp_mu(e, d))
    lo, hi = 0.5, 1.0
    while _agibi_rdp_epsilon(lo, d) <= e:
        lo, hi = lo / 2.0, lo
        if lo < 1e-8:
            return hi
    while _agibi_rdp_epsilon(hi, d) > e:
        lo, hi = hi, hi * 2.0
        if hi > 1e8:
            raise ValueError(f"no σ ≤ 1e8 reaches epsilon={epsilon} at delta={delta}")
    while hi - lo > 1e-10 * hi:
        mid = 0.5 * (lo + hi)
        if _agibi_rdp_epsilon(mid, d) > e:
            lo = mid
        else:
            hi = mid
    return hi


def agibi_posterior(noisy, sigma, prior=None) -> np.ndarray:
    """AGIBI's post-processing: ``p(y = c | o) = softmax(o_c/σ² + log prior_c)`` (Malek et al. 2021, Eq. (5)).

    Args:
        noisy: ``(n, C)`` noisy one-hot vectors.
        sigma: σ > 0.
        prior: ``(n, C)``/``(C,)`` prior or ``None`` (uniform).

    Returns:
        ``(n, C)`` soft labels.
    """
    s = check_sigma(sigma)
    o = np.asarray(noisy, dtype=np.float64)
    if o.ndim != 2 or o.shape[1] < 2:
        raise ValueError(f"noisy must have shape (n, C) with C >= 2, got {o.shape}")
    logits = _log_prior(prior, *o.shape) + o / (s * s)
    return np.exp(log_softmax(logits, axis=1))


def agibi(labels, epsilon, num_classes, rng: np.random.Generator, delta: float = 1e-5, prior=None, calibration: str = "rdp") -> LabelRelease:
    """AGIBI: additive Gaussian noise + Bayesian inference (Malek et al. 2021, App. D.2).

    ``o = e_y + N(0, σ²)^C`` with ``σ = agibi_sigma(ε, δ, calibration)``, then
    :func:`agibi_posterior`. Claimed guarantee: (ε, δ)-label-DP.

    Args:
        labels: true labels ``(n,)``.
        epsilon: ε > 0 (``inf``: no noise).
        num_classes: C.
        rng: numpy Generator.
        delta: δ of the claim (default 1e-5; App. D.2 does not state it).
        prior: prior of the post-processing (``None`` = uniform).
        calibration: ``"rdp"`` (the authors' accountant, default) or ``"analytic"``.

    Returns:
        :class:`LabelRelease` with ``soft_labels``, ``details["noisy"]``, ``details["sigma"]``,
        ``details["calibration"]``.
    """
    k = _check_num_classes(num_classes)
    y = _check_labels(labels, k)
    e = _check_epsilon(epsilon)
    d = check_probability(delta, "delta")
    gen = _check_rng(rng)
    onehot = _one_hot(y, k)
    if math.isinf(e):
        return LabelRelease("agibi", e, d, y.copy(), onehot, {"noisy": onehot.copy(), "sigma": 0.0, "calibration": calibration})
    sigma = agibi_sigma(e, d, calibration)
    o = onehot + gen.normal(0.0, sigma, size=onehot.shape)
    soft = agibi_posterior(o, sigma, prior)
    return LabelRelease("agibi", e, d, np.argmax(soft, axis=1), soft, {"noisy": o, "sigma": sigma, "calibration": calibration})


# --------------------------------------------------------------------------------------
# PATE
# --------------------------------------------------------------------------------------


def gnmax_aggregate(votes, sigma, rng: np.random.Generator, threshold: float | None = None, sigma_threshold: float | None = None):
    """GNMax and Confident-GNMax aggregation (Papernot et al. 2018, §4.1 and Alg. 1).

    GNMax answers ``argmax_c (n_c + N(0, σ²))``. With a ``threshold`` T, a query is answered
    only if ``max_c n_c + N(0, σ₁²) ≥ T`` (Confident-GNMax).

    Args:
        votes: ``(Q, C)`` teacher vote histograms.
        sigma: σ of GNMax (σ₂ in Malek et al. 2021, Table 3).
        rng: numpy Generator.
        threshold: T, or ``None`` to answer every query.
        sigma_threshold: σ₁ of the threshold check (required with ``threshold``).

    Returns:
        ``(answers, answered)``: noisy argmax per query (−1 where not answered) and the mask.
    """
    s = check_sigma(sigma)
    h = np.asarray(votes, dtype=np.float64)
    if h.ndim != 2 or h.shape[1] < 2 or np.any(h < 0):
        raise ValueError(f"votes must be non-negative counts of shape (Q, C), got shape {h.shape}")
    gen = _check_rng(rng)
    if threshold is None:
        answered = np.ones(h.shape[0], dtype=bool)
    else:
        s1 = check_sigma(sigma_threshold, "sigma_threshold")
        answered = h.max(axis=1) + gen.normal(0.0, s1, size=h.shape[0]) >= float(threshold)
    noisy = h + gen.normal(0.0, s, size=h.shape)
    answers = np.where(answered, np.argmax(noisy, axis=1), -1)
    return answers, answered


def pate_label_dp(
    features,
    labels,
    query_features,
    num_classes,
    num_teachers: int,
    sigma: float,
    teacher_fit_predict_proba: FitPredictProba,
    rng: np.random.Generator,
    delta: float = 1e-5,
    orders=DEFAULT_ORDERS,
    threshold: float | None = None,
    sigma_threshold: float | None = None,
    student_fit_predict_proba: FitPredictProba | None = None,
    predict_features=None,
) -> LabelRelease:
    """PATE for label DP (Malek et al. 2021, §4; Papernot et al. 2018) with a plain student.

    1. Split the labelled examples uniformly at random into ``num_teachers`` disjoint parts.
    2. Teacher t is ``teacher_fit_predict_proba`` on part t; its vote on each query is the
       argmax of its probabilities.
    3. Aggregate the vote histograms with (Confident-)GNMax (:func:`gnmax_aggregate`).
    4. Privacy: changing one label changes one teacher's vote, i.e. two counts by one, on
       every query. Claimed ε (``epsilon``): the data-dependent RDP of GNMax at each answered
       query's histogram (:func:`ppaudit.accounting.gnmax_rdp_data_dependent`), summed, plus
       — with a threshold — the data-independent RDP ``α/(2σ₁²)`` of every threshold check
       (a Gaussian mechanism on the max count, sensitivity 1), converted by
       :func:`ppaudit.accounting.rdp_to_dp` (Balle et al. 2020). The data-independent ε
       (``α/σ²`` per answered query) is reported in ``details``. As in the papers, the
       data-dependent ε is itself a function of the data and is reported without the
       smooth-sensitivity release step.
    5. If ``student_fit_predict_proba`` is given, fit it on the answered queries and their
       noisy labels and predict ``predict_features`` (default: the queries). This is the
       plain supervised PATE student (PATE-FM's FixMatch student needs the unlabelled
       data too: :mod:`ppaudit.mechanisms.fixmatch`).

    Args:
        features: ``(n, d)`` labelled features (the private labels' examples).
        labels: ``(n,)`` private labels.
        query_features: ``(Q, d)`` public points to label.
        num_classes: C.
        num_teachers: number of teachers (≤ n).
        sigma: GNMax noise σ.
        teacher_fit_predict_proba: model of the teachers.
        rng: numpy Generator.
        delta: δ of the claimed guarantee.
        orders: Rényi orders for the accounting.
        threshold, sigma_threshold: Confident-GNMax parameters (T, σ₁), or ``None``.
        student_fit_predict_proba: model of the student, or ``None``.
        predict_features: points on which the student predicts (default ``query_features``).

    Returns:
        :class:`LabelRelease` with ``labels`` the answers (−1 where unanswered), ``epsilon``
        the data-dependent ε, ``delta``, and ``details`` holding ``votes``, ``answered``,
        ``teacher_assignment``, ``epsilon_data_independent``, ``rdp``, ``orders`` and
        ``student_proba``.
    """
    k = _check_num_classes(num_classes)
    y = _check_labels(labels, k)
    x = np.asarray(features)
    xq = np.asarray(query_features)
    if x.shape[0] != y.size:
        raise ValueError(f"features must have {y.size} rows (one per label), got {x.shape[0]}")
    t = check_positive_int(num_teachers, "num_teachers")
    if t > y.size:
        raise ValueError(f"num_teachers must be <= the number of labelled examples {y.size}, got {num_teachers}")
    s = check_sigma(sigma)
    d = check_probability(delta, "delta")
    gen = _check_rng(rng)
    if threshold is not None and sigma_threshold is None:
        raise ValueError("threshold needs sigma_threshold (the noise of the threshold check), got None")
    assignment = gen.permutation(y.size) % t
    votes = np.zeros((xq.shape[0], k), dtype=np.int64)
    for teacher in range(t):
        part = np.flatnonzero(assignment == teacher)
        proba = np.asarray(teacher_fit_predict_proba(x[part], y[part], xq))
        if proba.shape != (xq.shape[0], k):
            raise ValueError(f"teacher_fit_predict_proba must return shape ({xq.shape[0]}, {k}), got {proba.shape}")
        votes[np.arange(xq.shape[0]), np.argmax(proba, axis=1)] += 1
    answers, answered = gnmax_aggregate(votes, s, gen, threshold, sigma_threshold)
    a = np.asarray(orders, dtype=np.float64)
    rdp = np.zeros(a.size)
    if np.any(answered):
        rdp += gnmax_rdp_data_dependent(votes[answered], s, a).sum(axis=0)
    rdp_di = gnmax_rdp_data_independent(s, a) * int(answered.sum())
    if threshold is not None:
        check = a / (2.0 * float(sigma_threshold) ** 2) * votes.shape[0]
        rdp = rdp + check
        rdp_di = rdp_di + check
    eps = float(rdp_to_dp(rdp, a, d))
    eps_di = float(rdp_to_dp(rdp_di, a, d))
    student = None
    if student_fit_predict_proba is not None:
        if not np.any(answered):
            raise ValueError("no query was answered; the student has no training data")
        xp = xq if predict_features is None else np.asarray(predict_features)
        student = np.asarray(student_fit_predict_proba(xq[answered], answers[answered], xp))
        if student.shape != (xp.shape[0], k):
            raise ValueError(f"student_fit_predict_proba must return shape ({xp.shape[0]}, {k}), got {student.shape}")
    details = {
        "votes": votes,
        "answered": answered,
        "teacher_assignment": assignment,
        "epsilon_data_independent": eps_di,
        "rdp": rdp,
        "orders": a,
        "student_proba": student,
    }
    return LabelRelease("pate", eps, d, answers, details=details)


# --------------------------------------------------------------------------------------
# a default model
# --------------------------------------------------------------------------------------


def logistic_regression_fit_predict_proba(num_classes: int, **kwargs) -> FitPredictProba:
    """A ``fit_predict_proba`` callable backed by scikit-learn's ``LogisticRegression``.

    Columns are mapped to all ``num_classes`` classes (a class absent from the training
    labels gets probability 0). With a single class present the prediction is that class.

    Args:
        num_classes: C.
        **kwargs: passed to ``sklearn.linear_model.LogisticRegression``.

    Returns:
        ``fit_predict_proba(X_train, y_train, X_predict)``.
    """
    k = _check_num_classes(num_classes)

    def fit_predict_proba(x_train, y_train, x_predict):
        from sklearn.linear_model import LogisticRegression

        y_tr = np.asarray(y_train).astype(np.int64)
        xp = np.asarray(x_predict)
        out = np.zeros((xp.shape[0], k))
        present = np.unique(y_tr)
        if present.size == 1:
            out[:, present[0]] = 1.0
            return out
        model = LogisticRegression(**kwargs).fit(np.asarray(x_train), y_tr)
        out[:, model.classes_] = model.predict_proba(xp)
        return out

    return fit_predict_proba
