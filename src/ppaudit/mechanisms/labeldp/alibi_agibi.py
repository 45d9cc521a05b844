"""ALIBI and AGIBI: noisy one-hot labels and their Bayesian posteriors (Malek et al. 2021, §5.2 and App. D.2).

* :func:`alibi` — Laplace noise of scale ``λ = 2/ε`` on the one-hot label (ℓ1-sensitivity 2)
  and Bayesian post-processing into the soft label ``p(y = c | o) ∝ prior_c · exp(−‖o − e_c‖₁ / λ)``
  (Eqs. (1)–(2)). ε-label-DP.
* :func:`agibi` — the Gaussian variant (Eqs. (4)–(5)): Gaussian noise σ on the one-hot label
  and ``p(y = c | o) = softmax(o_c/σ² + log prior_c)``. σ for a claimed (ε, δ)
  (:func:`agibi_sigma`): ``calibration="rdp"`` (default, what the ALIBI authors do: their
  ``RandomizedLabelPrivacy`` charges one Gaussian release of ℓ2-sensitivity √2 — noise
  multiplier σ/√2 — with the RDP accountant over orders 1.1, 1.2, …, 99.9; here
  dp-accounting's ``RdpAccountant``) or ``"analytic"`` (ours: the exact analytic Gaussian
  mechanism, Balle & Wang 2018, Thm 8, ``σ = √2/μ``, the smallest σ that meets the claim).
  The labels are noised once, so there is no composition. δ defaults to 1e-5 (their
  ``LabelPrivacy.delta``).
* ALIBI's *iterative* Bayesian inference (§5.2, the authors' default
  ``post_process="mapwithprior"``): the prior of each posterior is the model's own current
  prediction. :func:`alibi_posterior` / :func:`agibi_posterior` take that prior; the
  training loop that refreshes it (every epoch) is
  :func:`ppaudit.models.soft_label.mlp_fit_predict_soft` with ``soft_label_fn``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_softmax

from ..._validation import check_probability, check_sigma
from ...attacks.one_run import gdp_mu
from .release import (
    LabelRelease,
    _check_epsilon,
    _check_labels,
    _check_num_classes,
    _check_rng,
    _prior_matrix,
)

__all__ = ["AGIBI_CALIBRATIONS", "AGIBI_RDP_ORDERS", "agibi", "agibi_posterior", "agibi_sigma", "alibi", "alibi_posterior"]


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
