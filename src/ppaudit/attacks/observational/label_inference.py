"""Observational label inference in one run (observational-auditing paper, Algorithm 2,
label case of §5, §6.2, App. C): the score ``s = s₁·s₂ᵗ``, the counterfactual labels of the
reference model, the game and its correct-guess counts, and the repeated audit
(:func:`audit_label_inference`). See :mod:`ppaudit.attacks.observational`.
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_positive_int, check_probability
from .guess_audit import (
    DEFAULT_GUESS_FRACTIONS,
    ObservationalAudit,
    _check_fractions,
    _check_t,
    _labels,
    _probs,
    _summarise,
    correct_guess_counts,
    num_guesses_for_fractions,
)

__all__ = [
    "audit_label_inference",
    "label_inference_counts",
    "label_inference_score_table",
    "label_inference_scores",
    "observational_label_game",
    "sample_counterfactual_labels",
]

_TABLE_LIMIT = 40_000_000  # m·C above which the per-repetition argsort path is used


def label_inference_score_table(target_probs, reference_probs, t: float = 2.0) -> np.ndarray:
    """``s(x_i, c)`` for every sample and every candidate label c (§6.2).

    ``s = (M(x)[c] − M'(x)[c]) · (1 − M'(x)[c])ᵗ``.

    Args:
        target_probs: ``(m, C)`` predictions of the target model ``M``.
        reference_probs: ``(m, C)`` predictions of the reference model ``M'``.
        t: exponent t ≥ 0 (2 in the paper).

    Returns:
        ``(m, C)`` scores.
    """
    pm = _probs(target_probs, "target_probs")
    pr = _probs(reference_probs, "reference_probs")
    if pm.shape != pr.shape:
        raise ValueError(f"target_probs and reference_probs must have the same shape, got {pm.shape} and {pr.shape}")
    tt = _check_t(t)
    weight = np.square(1.0 - pr) if tt == 2.0 else np.power(1.0 - pr, tt)
    return (pm - pr) * weight


def label_inference_scores(target_probs, reference_probs, shown_labels, t: float = 2.0) -> np.ndarray:
    """Adversary's score ``s(x, y^b) = s₁ · s₂ᵗ`` of the shown labels (§6.2).

    Args:
        target_probs: ``(m, C)`` predictions of ``M``.
        reference_probs: ``(m, C)`` predictions of ``M'``.
        shown_labels: ``(m,)`` labels ``y^b`` shown to the adversary.
        t: exponent (2 in the paper).

    Returns:
        ``(m,)`` scores; positive means "the shown label is the training label".
    """
    pm = _probs(target_probs, "target_probs")
    pr = _probs(reference_probs, "reference_probs")
    if pm.shape != pr.shape:
        raise ValueError(f"target_probs and reference_probs must have the same shape, got {pm.shape} and {pr.shape}")
    m, k = pm.shape
    y = _labels(shown_labels, m, k, "shown_labels")
    tt = _check_t(t)
    rows = np.arange(m)
    a, b = pm[rows, y], pr[rows, y]
    return (a - b) * np.power(1.0 - b, tt)


def _cdf_columns(p: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.cumsum(p, axis=1)[:, :-1].T)


def _sample_from_cdf(cdf_t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    u = 1.0 - rng.random(cdf_t.shape[1])  # in (0, 1]
    out = np.zeros(cdf_t.shape[1], dtype=np.int64)
    for row in cdf_t:
        out += row < u
    return out


def sample_counterfactual_labels(reference_probs, rng: np.random.Generator) -> np.ndarray:
    """``y¹_i ~ Multinoulli(M'(x_i))`` (§5, "obtaining approximate distributions"; §6.2).

    Inverse-CDF sampling, one uniform per sample.
    """
    p = _probs(reference_probs, "reference_probs")
    return _sample_from_cdf(_cdf_columns(p), rng)


def observational_label_game(labels, reference_probs, rng: np.random.Generator):
    """Steps 3–4 of Algorithm 2 for labels: bits, counterfactual labels, shown labels.

    Args:
        labels: ``(m,)`` training labels ``y⁰``.
        reference_probs: ``(m, C)`` predictions of ``M'`` (the proxy ``D' | x``).
        rng: numpy Generator.

    Returns:
        ``(shown_labels, bits, counterfactual_labels)`` with ``shown = y^b``.
    """
    p = _probs(reference_probs, "reference_probs")
    m, k = p.shape
    y0 = _labels(labels, m, k, "labels")
    y1 = _sample_from_cdf(_cdf_columns(p), rng)
    b = rng.random(m) < 0.5
    return np.where(b, y1, y0), b.astype(np.int64), y1


def label_inference_counts(
    labels,
    target_probs,
    reference_probs,
    num_guesses,
    num_repetitions: int,
    rng: np.random.Generator,
    *,
    t: float = 2.0,
    counterfactual_probs=None,
    num_canaries: int | None = None,
) -> np.ndarray:
    """Correct-guess counts of the observational label-inference game (Algorithm 2, §6.2).

    Each repetition draws fresh bits ``b`` and counterfactual labels
    ``y¹ ~ Multinoulli(counterfactual_probs)`` (default ``M'(x)``), shows ``y^b``, scores it
    with :func:`label_inference_scores` and counts the correct guesses among the ``c'``
    largest ``|s|``, for every requested ``c'``. The trained model is the same in every
    repetition, as in the paper.

    Implementation: the shown label of sample i is one of its C labels, so all ``m·C``
    possible ``|s|`` are ranked once and each repetition only sorts ``m`` integer keys
    (a per-repetition argsort is used when ``m·C`` is very large). Ties in ``|s|`` are broken
    by (sample, label) position.

    Args:
        labels: ``(m,)`` training labels ``y⁰`` (the label-DP mechanism's input).
        target_probs: ``(m, C)`` target-model predictions ``M(x)``.
        reference_probs: ``(m, C)`` reference-model predictions ``M'(x)`` (in the score).
        num_guesses: ``(K,)`` values of ``c'`` in ``[1, m]``.
        num_repetitions: R.
        rng: numpy Generator.
        t: score exponent (2 in the paper).
        counterfactual_probs: distribution of ``y¹`` when it differs from ``reference_probs``
            (App. C's τ-shift experiment).
        num_canaries: ``m' ≤ m`` canaries per repetition, a fresh uniform subset of the
            ``m`` candidates each time (§6.2: "the number of canaries is set to the size of
            the test sets", so that the LIA and the MIA baselines use the same number);
            ``None``: all ``m``. ``num_guesses`` must then lie in ``[1, m']``.

    Returns:
        ``(R, K)`` correct-guess counts.
    """
    pm = _probs(target_probs, "target_probs")
    pr = _probs(reference_probs, "reference_probs")
    if pm.shape != pr.shape:
        raise ValueError(f"target_probs and reference_probs must have the same shape, got {pm.shape} and {pr.shape}")
    m, k = pm.shape
    y0 = _labels(labels, m, k, "labels")
    reps = check_positive_int(num_repetitions, "num_repetitions")
    m_use = m if num_canaries is None else check_positive_int(num_canaries, "num_canaries")
    if m_use > m:
        raise ValueError(f"num_canaries must be <= the {m} candidates, got {num_canaries}")
    cuts = np.asarray(num_guesses, dtype=np.int64)
    if cuts.ndim != 1 or cuts.size == 0 or np.any(cuts < 1) or np.any(cuts > m_use):
        raise ValueError(f"num_guesses must be a 1-D list of integers in [1, {m_use}], got {cuts}")
    pc = pr if counterfactual_probs is None else _probs(counterfactual_probs, "counterfactual_probs")
    if pc.shape != pm.shape:
        raise ValueError(f"counterfactual_probs must have shape {pm.shape}, got {pc.shape}")
    table = label_inference_score_table(pm, pr, t)
    cdf_t = _cdf_columns(pc)
    use_table = m * k <= _TABLE_LIMIT
    if use_table:
        # key = 2·rank(|s|) + [s > 0]; per repetition the correctness bit is [s > 0] XOR b.
        flat_order = np.argsort(-np.abs(table).ravel(), kind="stable")
        keytab = np.empty(m * k, dtype=np.int32 if 2 * m * k < 2**31 else np.int64)
        keytab[flat_order] = 2 * np.arange(m * k, dtype=keytab.dtype)
        del flat_order
        keytab |= (table > 0).ravel().astype(keytab.dtype)
        offsets = np.arange(m, dtype=np.int64) * k
    else:
        rows = np.arange(m)
    counts = np.empty((reps, cuts.size), dtype=np.int64)
    for r in range(reps):
        y1 = _sample_from_cdf(cdf_t, rng)
        b = rng.random(m) < 0.5
        shown = np.where(b, y1, y0)
        sub = None if m_use == m else rng.choice(m, m_use, replace=False)
        if use_table:
            # correct iff the guess "training label" (b' = 0, made iff s > 0) matches b = 0;
            # the global ranks keep their order on any subset of the canaries
            if sub is None:
                key = np.take(keytab, offsets + shown)
                key ^= b.astype(key.dtype)
            else:
                key = np.take(keytab, offsets[sub] + shown[sub])
                key ^= b[sub].astype(key.dtype)
            key.sort()
            counts[r] = np.cumsum(key & 1)[cuts - 1]
        else:
            rr = rows if sub is None else sub
            counts[r] = correct_guess_counts(table[rr, shown[rr]], ~b[rr], cuts, 0.0)
    return counts


def audit_label_inference(
    labels,
    target_probs,
    reference_probs,
    num_repetitions: int,
    rng: np.random.Generator,
    *,
    t: float = 2.0,
    guess_fractions=DEFAULT_GUESS_FRACTIONS,
    fixed_fraction: float = 0.01,
    delta: float = 1e-5,
    confidence: float = 0.95,
    tau: float = 0.0,
    counterfactual_probs=None,
    num_canaries: int | None = None,
) -> ObservationalAudit:
    """Observational label-inference audit (Algorithm 2 + §6.2 + Theorem 5), repeated.

    :func:`label_inference_counts` at every ``c'`` of the sweep and at the fixed fraction,
    then ε at δ per repetition: the best over the sweep (Tables 1–2; not corrected for the
    choice of ``c'``, as in the paper) and at the fixed fraction (App. E, Table 6).

    Args:
        labels: ``(m,)`` training labels ``y⁰`` of the canaries (the mechanism's input).
        target_probs: ``(m, C)`` target-model predictions ``M(x)``.
        reference_probs: ``(m, C)`` reference-model predictions ``M'(x)``.
        num_repetitions: repetitions of the game (100 in the paper).
        rng: numpy Generator.
        t: score exponent (2).
        guess_fractions: the ``c'/m`` sweep (default 1 %, …, 100 %).
        fixed_fraction: the fixed ``c'/m`` of App. E (1 %).
        delta: δ of the reported ε (1e-5 in the paper).
        confidence: 1 − γ of Algorithm 3 (0.95).
        tau: TV bound τ of Theorem 5 (0 in the paper's main experiments).
        counterfactual_probs: distribution of ``y¹`` if not ``reference_probs``.
        num_canaries: canaries per repetition (a fresh random subset of the candidates;
            the paper uses the test-set size, as for the MIA baselines); ``None``: all.

    Returns:
        :class:`ObservationalAudit` (``num_samples`` = the canaries per repetition).
    """
    fr = _check_fractions(guess_fractions)
    ff = float(_check_fractions([fixed_fraction])[0])
    d = check_probability(delta, "delta")
    conf = check_probability(confidence, "confidence")
    m = np.shape(target_probs)[0] if num_canaries is None else check_positive_int(num_canaries, "num_canaries")
    cp_sweep = num_guesses_for_fractions(fr, m)
    cp_fixed = int(num_guesses_for_fractions([ff], m)[0])
    counts = label_inference_counts(
        labels,
        target_probs,
        reference_probs,
        np.concatenate([cp_sweep, [cp_fixed]]),
        num_repetitions,
        rng,
        t=t,
        counterfactual_probs=counterfactual_probs,
        num_canaries=num_canaries,
    )
    return _summarise(cp_sweep, counts[:, :-1], cp_fixed, counts[:, -1], m, fr, d, conf, tau)
