"""k-ary randomized response and RRWithPrior, and the inverse of RR's label channel.

* :func:`randomized_response` — k-ary RR (Warner 1965): keep the label with probability
  ``e^ε/(e^ε + k − 1)`` (:func:`rr_keep_probability`), otherwise a uniform one of the other
  ``k − 1``. ε-label-DP.
* :func:`rr_with_prior` — RRWithPrior (Ghazi et al. 2021, Alg. 2): RR restricted to the
  ``k*`` most likely labels under a prior, ``k*`` maximising
  ``e^ε/(e^ε + k − 1) · (prior mass of the top k)``. ε-label-DP.
* :func:`rr_transition_matrix` / :func:`rr_noise_correction` — RR's transition matrix and
  the map of a model's predicted distribution of the *noisy* label back to the clean label
  (post-processing; the noise correction of the observational paper's "LP-1ST (noise
  correction)" rows, after Wu et al. 2023).
"""

from __future__ import annotations

import math

import numpy as np

from .release import (
    LabelRelease,
    _check_epsilon,
    _check_labels,
    _check_num_classes,
    _check_rng,
    _prior_matrix,
)

__all__ = ["randomized_response", "rr_keep_probability", "rr_noise_correction", "rr_transition_matrix", "rr_with_prior"]


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

