"""Membership-inference baselines through the one-run audit (observational-auditing paper,
§6.5, App. E): the difficulty-calibrated loss (Watson et al. 2022) and offline RMIA with one
reference model (Zarifzadeh et al. 2024), and the repeated one-run MIA game
(:func:`audit_membership`). See :mod:`ppaudit.attacks.observational`.
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_positive_int
from .guess_audit import (
    DEFAULT_GUESS_FRACTIONS,
    ObservationalAudit,
    _labels,
    _probs,
    audit_scores,
)

__all__ = [
    "audit_membership",
    "calibrated_mia_scores",
    "rmia_offline_audit_scores",
    "rmia_offline_scores",
]


def _true_label_probs(probs, labels, name: str) -> np.ndarray:
    p = _probs(probs, name)
    y = _labels(labels, p.shape[0], p.shape[1], "labels")
    return p[np.arange(p.shape[0]), y]


def calibrated_mia_scores(target_probs, reference_probs, labels, eps: float = 1e-12) -> np.ndarray:
    """Difficulty-calibrated loss score (Watson et al. 2022; observational paper §6.5).

    ``score = ℓ(M'(x), y) − ℓ(M(x), y) = log M(x)[y] − log M'(x)[y]`` with the cross-entropy
    loss ℓ; larger means "member". Probabilities are floored at ``eps`` before the log.

    Args:
        target_probs, reference_probs: ``(m, C)`` predictions of ``M`` and ``M'``.
        labels: ``(m,)`` the canaries' labels.
        eps: floor on the probabilities.

    Returns:
        ``(m,)`` scores (centre 0).
    """
    a = _true_label_probs(target_probs, labels, "target_probs")
    b = _true_label_probs(reference_probs, labels, "reference_probs")
    return np.log(np.maximum(a, eps)) - np.log(np.maximum(b, eps))


def rmia_offline_scores(
    target_probs,
    reference_probs,
    labels,
    *,
    a: float = 0.3,
    gamma: float = 1.0,
    population_target_probs=None,
    population_reference_probs=None,
    population_labels=None,
    self_in_population=None,
) -> np.ndarray:
    """Offline RMIA with one reference model (Zarifzadeh et al. 2024; observational paper App. E).

    ``Pr(x | θ)`` is the target model's probability of the label, ``Pr(x | θ')`` the reference
    (OUT) model's; offline, ``Pr(x) ≈ ½((1 + a) Pr(x | θ') + (1 − a))``, ``LR(x) = Pr(x | θ)/Pr(x)``
    and ``score(x) = |{z : LR(x)/LR(z) ≥ γ}| / |Z|``. The population ``Z`` defaults to the
    candidates themselves (which uses no membership information). Zarifzadeh et al. tune
    ``a`` with a paired reference model; 0.3 is only a default.

    Args:
        target_probs, reference_probs: ``(m, C)`` predictions.
        labels: ``(m,)`` labels.
        a: offline coefficient in [0, 1].
        gamma: likelihood-ratio threshold γ > 0.
        population_target_probs, population_reference_probs, population_labels: the
            population ``Z`` (all three or none). Zarifzadeh et al. draw ``z`` from
            population data outside the target's training set (non-members); see
            :func:`rmia_offline_audit_scores`.
        self_in_population: ``(m,)`` bool, True where the candidate itself is a member of
            ``Z``; its self-comparison is left out (score over ``Z \\ {x}``).

    Returns:
        ``(m,)`` scores in [0, 1] (centre ½).
    """
    av = float(a)
    if not (0.0 <= av <= 1.0):
        raise ValueError(f"a must be in [0, 1], got {a!r}")
    g = float(gamma)
    if not (np.isfinite(g) and g > 0):
        raise ValueError(f"gamma must be > 0, got {gamma!r}")
    px_t = _true_label_probs(target_probs, labels, "target_probs")
    px_r = _true_label_probs(reference_probs, labels, "reference_probs")
    lr_x = px_t / (0.5 * ((1.0 + av) * px_r + (1.0 - av)))
    pop = (population_target_probs, population_reference_probs, population_labels)
    if all(p is None for p in pop):
        lr_z = lr_x
    elif any(p is None for p in pop):
        raise ValueError("give all of population_target_probs, population_reference_probs, population_labels or none")
    else:
        pz_t = _true_label_probs(population_target_probs, population_labels, "population_target_probs")
        pz_r = _true_label_probs(population_reference_probs, population_labels, "population_reference_probs")
        lr_z = pz_t / (0.5 * ((1.0 + av) * pz_r + (1.0 - av)))
    zs = np.sort(lr_z)
    counts = np.searchsorted(zs, lr_x / g, side="right").astype(np.float64)
    if self_in_population is None:
        return counts / zs.size
    own = np.asarray(self_in_population, dtype=bool)
    if own.shape != counts.shape:
        raise ValueError(f"self_in_population must have shape {counts.shape}, got {own.shape}")
    if zs.size < 2 and own.any():
        raise ValueError("a population of one cannot leave its own member out")
    counts = counts - (own & (g <= 1.0))  # LR(x)/LR(x) = 1 ≥ γ counted itself
    return counts / np.where(own, zs.size - 1, zs.size)


def rmia_offline_audit_scores(
    member_target_probs,
    member_reference_probs,
    member_labels,
    nonmember_target_probs,
    nonmember_reference_probs,
    nonmember_labels,
    *,
    a: float = 0.3,
    gamma: float = 1.0,
):
    """Offline RMIA scores of the member and non-member pools with a non-member population (observational paper App. E).

    The population ``Z`` of :func:`rmia_offline_scores` is the **non-member pool only** (in
    Zarifzadeh et al. 2024, ``z`` are population samples outside the target's training
    data); a non-member candidate is compared with ``Z`` minus itself (leave-one-out), so no
    candidate's score contains its own comparison and no member ever enters ``Z``.

    Args:
        member_target_probs, member_reference_probs, member_labels: the member pool
            (training points of ``M``): ``(n_m, C)``, ``(n_m, C)``, ``(n_m,)``.
        nonmember_target_probs, nonmember_reference_probs, nonmember_labels: the
            non-member pool (e.g. the test set).
        a, gamma: as in :func:`rmia_offline_scores`.

    Returns:
        ``(member_scores, nonmember_scores, population_index)``: the scores and the indices
        of ``Z`` into the non-member pool (all of it).
    """
    n_non = np.shape(nonmember_labels)[0]
    pop = dict(population_target_probs=nonmember_target_probs, population_reference_probs=nonmember_reference_probs,
               population_labels=nonmember_labels)  # fmt: skip
    sm = rmia_offline_scores(member_target_probs, member_reference_probs, member_labels, a=a, gamma=gamma, **pop)
    sn = rmia_offline_scores(nonmember_target_probs, nonmember_reference_probs, nonmember_labels, a=a, gamma=gamma,
                             self_in_population=np.ones(n_non, dtype=bool), **pop)  # fmt: skip
    return sm, sn, np.arange(n_non)


def audit_membership(
    member_scores,
    nonmember_scores,
    num_repetitions: int,
    rng: np.random.Generator,
    *,
    center: float = 0.0,
    num_canaries: int | None = None,
    guess_fractions=DEFAULT_GUESS_FRACTIONS,
    fixed_fraction: float = 0.01,
    delta: float = 1e-5,
    confidence: float = 0.95,
) -> ObservationalAudit:
    """One-run MIA audit with the same machinery (the baselines of §6.5 / App. E).

    Each repetition builds a one-run game: ``m`` canaries, each a member with probability
    1/2 (bit ``b_i``), drawn without replacement from the member pool if ``b_i = 1`` and from
    the non-member pool otherwise; then :func:`audit_scores`.

    Args:
        member_scores: scores of the pool of members (training points of ``M``).
        nonmember_scores: scores of the pool of non-members (e.g. the test set).
        num_repetitions: R.
        rng: numpy Generator.
        center: decision threshold of the score (0 for the calibrated loss, ½ for RMIA).
        num_canaries: m (default: the smaller pool size).
        guess_fractions, fixed_fraction, delta, confidence: as in :func:`audit_scores`.

    Returns:
        :class:`ObservationalAudit`.
    """
    sm = np.asarray(member_scores, dtype=np.float64).ravel()
    sn = np.asarray(nonmember_scores, dtype=np.float64).ravel()
    if sm.size == 0 or sn.size == 0:
        raise ValueError(f"both pools must be non-empty, got {sm.size} members and {sn.size} non-members")
    reps = check_positive_int(num_repetitions, "num_repetitions")
    m = min(sm.size, sn.size) if num_canaries is None else check_positive_int(num_canaries, "num_canaries")
    if m > min(sm.size, sn.size):
        raise ValueError(f"num_canaries must be <= the smaller pool ({min(sm.size, sn.size)}), got {num_canaries}")
    scores = np.empty((reps, m))
    truth = np.empty((reps, m), dtype=bool)
    for r in range(reps):
        b = rng.random(m) < 0.5
        nb = int(b.sum())
        scores[r, b] = sm[rng.choice(sm.size, nb, replace=False)]
        scores[r, ~b] = sn[rng.choice(sn.size, m - nb, replace=False)]
        truth[r] = b
    return audit_scores(
        scores,
        truth,
        center=center,
        guess_fractions=guess_fractions,
        fixed_fraction=fixed_fraction,
        delta=delta,
        confidence=confidence,
    )
