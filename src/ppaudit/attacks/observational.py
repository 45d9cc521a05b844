"""Observational label-inference audit and MIA baselines (observational-auditing paper, §5–6, App. C, E).

Label inference in one run (Algorithm 2, label case of §5):

1. the target model ``M`` is trained on ``D⁰ = ((x_i, y⁰_i))`` (``y⁰`` the training labels,
   i.e. the inputs of the label-DP mechanism);
2. the challenger draws ``b_i ~ Bernoulli(1/2)`` and a counterfactual label
   ``y¹_i ~ Multinoulli(M'(x_i))`` from a reference model ``M'`` fitted on disjoint data
   (§6.2), and shows the adversary ``y^{b_i}_i``;
3. the adversary scores (§6.2)

       s(x, y) = s₁ · s₂ᵗ,   s₁ = M(x)[y] − M'(x)[y],   s₂ = 1 − M'(x)[y],   t = 2,

   guesses ``b' = 0`` ("training label") when ``s > 0`` and ``b' = 1`` otherwise, on the
   ``c'`` samples with the largest ``|s|`` (abstaining on the rest);
4. the counts ``(c', c)`` go through the one-run f-DP audit
   (:func:`ppaudit.attacks.one_run.epsilon_lower_bound`, Theorem 5, μ-GDP family).

The paper sweeps ``c' ∈ {1 %, 2 %, …, 100 %}`` of the ``m`` canaries and reports the highest ε
at 95 % confidence (Table 1–2), or fixes ``c' = 1 %`` (App. E, Table 6); each is averaged
over 100 repetitions of the game with fresh counterfactual labels (mean ± std). Note that
when ``y¹ = y⁰`` the shown label is the same under both bits, so such samples are coin flips
for any adversary; ``s₂`` steers the guesses away from them.

MIA baselines through the same audit (§6.5, App. E): canaries are members (training
points of ``M``) or non-members with probability 1/2 each; the adversary guesses "member"
when its score exceeds a centre and abstains on all but the ``c'`` largest ``|score − centre|``:

* calibrated loss (Watson et al. 2022): ``score = ℓ(M'(x), y) − ℓ(M(x), y)`` (the paper's
  "difference in the loss between the target model and the reference model", signed so that
  a larger score means "member"), centre 0;
* offline RMIA with ``M'`` as the single (OUT) reference model (Zarifzadeh et al. 2024):
  ``LR(x) = Pr(x | θ) / Pr(x)`` with ``Pr(x) = ½((1 + a) Pr(x | θ') + (1 − a))`` (their offline
  approximation) and ``score(x) = Pr_z[LR(x)/LR(z) ≥ γ]`` over a population ``z`` of
  non-members (:func:`rmia_offline_audit_scores`); centre ½.

Every attack is run on the same number of canaries per repetition (§6.2: the test-set
size), the LIA on a fresh random subset of its candidates (``num_canaries``).

Models enter as predicted-probability arrays, so everything is testable on synthetic data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import as_distribution, check_positive_int, check_probability
from .one_run import epsilon_lower_bound, max_epsilon_lower_bound

__all__ = [
    "DEFAULT_GUESS_FRACTIONS",
    "ObservationalAudit",
    "audit_label_inference",
    "audit_membership",
    "audit_scores",
    "calibrated_mia_scores",
    "correct_guess_counts",
    "label_inference_counts",
    "label_inference_score_table",
    "label_inference_scores",
    "num_guesses_for_fractions",
    "observational_label_game",
    "rmia_offline_audit_scores",
    "rmia_offline_scores",
    "sample_counterfactual_labels",
]

#: ``c'`` sweep of §6.2: 1 %, 2 %, …, 100 % of the canaries.
DEFAULT_GUESS_FRACTIONS = np.arange(1, 101) / 100.0

_TABLE_LIMIT = 40_000_000  # m·C above which the per-repetition argsort path is used


@dataclass(frozen=True)
class ObservationalAudit:
    """Result of an observational (or MIA) one-run audit over repetitions.

    Attributes:
        per_repetition: DataFrame with one row per repetition: ``epsilon_sweep`` (best ε over
            the guess fractions), ``best_fraction``, ``epsilon_fixed`` (at the fixed
            fraction), ``num_guesses_fixed``, ``num_correct_fixed``.
        num_guesses: ``(K,)`` guess counts ``c'`` of the sweep.
        num_correct: ``(R, K)`` correct guesses per repetition and fraction.
        num_samples: ``m``.
        epsilon_sweep_mean, epsilon_sweep_std: mean and (sample, ddof=1) std over repetitions.
        epsilon_fixed_mean, epsilon_fixed_std: same for the fixed fraction.
    """

    per_repetition: pd.DataFrame
    num_guesses: np.ndarray
    num_correct: np.ndarray
    num_samples: int
    epsilon_sweep_mean: float
    epsilon_sweep_std: float
    epsilon_fixed_mean: float
    epsilon_fixed_std: float


# --------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------


def _probs(p, name: str) -> np.ndarray:
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] < 2:
        raise ValueError(f"{name} must have shape (m, C) with C >= 2, got {arr.shape}")
    return as_distribution(arr, name, atol=1e-4)


def _labels(y, m: int, num_classes: int, name: str) -> np.ndarray:
    a = np.asarray(y)
    f = a.astype(np.float64) if a.size else a
    if a.shape != (m,) or not np.all(np.isfinite(f)) or np.any(f != np.round(f)) or np.any(f < 0) or np.any(f >= num_classes):
        raise ValueError(f"{name} must be {m} integers in [0, {num_classes - 1}], got shape {a.shape} values {a[:5]}")
    return a.astype(np.int64)


def _check_t(t) -> float:
    try:
        v = float(t)
    except (TypeError, ValueError):
        raise ValueError(f"t must be a number >= 0, got {t!r}") from None
    if not (np.isfinite(v) and v >= 0):
        raise ValueError(f"t must be >= 0, got {t!r}")
    return v


def _check_fractions(fractions) -> np.ndarray:
    f = np.atleast_1d(np.asarray(fractions, dtype=np.float64))
    if f.ndim != 1 or f.size == 0 or np.any(~np.isfinite(f)) or np.any(f <= 0) or np.any(f > 1):
        raise ValueError(f"guess fractions must be in (0, 1], got {f}")
    return f


def num_guesses_for_fractions(fractions, num_samples: int) -> np.ndarray:
    """``c' = max(1, round(fraction · m))`` for each guess fraction."""
    f = _check_fractions(fractions)
    m = check_positive_int(num_samples, "num_samples")
    return np.clip(np.round(f * m).astype(np.int64), 1, m)


# --------------------------------------------------------------------------------------
# label inference
# --------------------------------------------------------------------------------------


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


def correct_guess_counts(scores, truth, num_guesses, center: float = 0.0) -> np.ndarray:
    """Correct guesses among the ``c'`` most confident guesses, for each ``c'``.

    The adversary guesses "positive" when ``score > center`` (negative otherwise) and guesses
    on the ``c'`` largest ``|score − center|`` (ties broken by position).

    Args:
        scores: ``(m,)`` or ``(R, m)`` scores.
        truth: same shape, booleans: True where the positive hypothesis holds (the shown
            label is the training label; the canary is a member).
        num_guesses: ``(K,)`` values of ``c'`` in ``[1, m]``.
        center: decision threshold.

    Returns:
        ``(K,)`` or ``(R, K)`` correct-guess counts.
    """
    s = np.asarray(scores, dtype=np.float64)
    tr = np.asarray(truth).astype(bool)
    if s.shape != tr.shape or s.ndim not in (1, 2) or s.shape[-1] == 0:
        raise ValueError(f"scores and truth must have the same shape (m,) or (R, m), got {s.shape} and {tr.shape}")
    if np.any(np.isnan(s)):
        raise ValueError("scores must not contain NaN")
    cp = np.asarray(num_guesses, dtype=np.int64)
    m = s.shape[-1]
    if cp.ndim != 1 or np.any(cp < 1) or np.any(cp > m):
        raise ValueError(f"num_guesses must be a 1-D list of integers in [1, {m}], got {cp}")
    s2 = np.atleast_2d(s)
    t2 = np.atleast_2d(tr)
    out = np.empty((s2.shape[0], cp.size), dtype=np.int64)
    for r in range(s2.shape[0]):
        correct = (s2[r] > center) == t2[r]
        order = np.argsort(-np.abs(s2[r] - center), kind="stable")
        out[r] = np.cumsum(correct[order])[cp - 1]
    return out[0] if s.ndim == 1 else out


def _summarise(num_guesses_sweep, correct_sweep, fixed_cp, correct_fixed, m, fractions, delta, confidence, tau):
    rows = correct_sweep.shape[0]
    cp2 = np.broadcast_to(num_guesses_sweep, correct_sweep.shape)
    eps_sweep, best = max_epsilon_lower_bound(cp2, correct_sweep, m, delta=delta, confidence=confidence, tau=tau)
    eps_fixed = np.atleast_1d(epsilon_lower_bound(np.full(rows, fixed_cp), correct_fixed, m, delta=delta, confidence=confidence, tau=tau))
    df = pd.DataFrame(
        {
            "repetition": np.arange(rows),
            "epsilon_sweep": np.atleast_1d(eps_sweep),
            "best_fraction": fractions[np.atleast_1d(best)],
            "best_num_guesses": np.asarray(num_guesses_sweep)[np.atleast_1d(best)],
            "epsilon_fixed": eps_fixed,
            "num_guesses_fixed": fixed_cp,
            "num_correct_fixed": correct_fixed,
        }
    )
    ddof = 1 if rows > 1 else 0
    return ObservationalAudit(
        per_repetition=df,
        num_guesses=np.asarray(num_guesses_sweep),
        num_correct=correct_sweep,
        num_samples=m,
        epsilon_sweep_mean=float(df["epsilon_sweep"].mean()),
        epsilon_sweep_std=float(df["epsilon_sweep"].std(ddof=ddof)),
        epsilon_fixed_mean=float(df["epsilon_fixed"].mean()),
        epsilon_fixed_std=float(df["epsilon_fixed"].std(ddof=ddof)),
    )


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


# --------------------------------------------------------------------------------------
# MIA baselines
# --------------------------------------------------------------------------------------


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


def audit_scores(
    scores,
    truth,
    *,
    center: float = 0.0,
    guess_fractions=DEFAULT_GUESS_FRACTIONS,
    fixed_fraction: float = 0.01,
    delta: float = 1e-5,
    confidence: float = 0.95,
    tau: float = 0.0,
) -> ObservationalAudit:
    """One-run audit of given scores (the shared back end of all attacks here).

    Args:
        scores: ``(m,)`` or ``(R, m)`` attack scores (one row per repetition).
        truth: same shape; True where the positive hypothesis holds.
        center: guess "positive" iff ``score > center``.
        guess_fractions, fixed_fraction, delta, confidence, tau: as in
            :func:`audit_label_inference`.

    Returns:
        :class:`ObservationalAudit`.
    """
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    fr = _check_fractions(guess_fractions)
    ff = float(_check_fractions([fixed_fraction])[0])
    d = check_probability(delta, "delta")
    conf = check_probability(confidence, "confidence")
    m = s.shape[1]
    cp_sweep = num_guesses_for_fractions(fr, m)
    cp_fixed = int(num_guesses_for_fractions([ff], m)[0])
    counts = np.atleast_2d(correct_guess_counts(s, np.atleast_2d(truth), np.concatenate([cp_sweep, [cp_fixed]]), center))
    return _summarise(cp_sweep, counts[:, :-1], cp_fixed, counts[:, -1], m, fr, d, conf, tau)


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
