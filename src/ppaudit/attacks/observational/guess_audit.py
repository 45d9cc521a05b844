"""The one-run audit of guessing games, shared by the observational label-inference audit
and the MIA baselines (observational-auditing paper, §5–6, Algorithm 3, Theorem 5).

An attack contributes scores and the truth of each guess; this module ranks the guesses by
confidence, counts the correct ones among the ``c'`` most confident (:func:`correct_guess_counts`)
for the ``c'`` sweep of §6.2 and the fixed fraction of App. E, and turns the counts into ε
values with the one-run f-DP audit over the μ-GDP family as the paper reports them
(:func:`ppaudit.attacks.one_run.epsilon_gdp_family`; they assume a Gaussian trade-off curve)
— :func:`audit_scores`, summarised over repetitions as an :class:`ObservationalAudit`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._validation import as_distribution, check_positive_int, check_probability
from ..one_run import epsilon_gdp_family, max_epsilon_gdp_family

__all__ = [
    "DEFAULT_GUESS_FRACTIONS",
    "ObservationalAudit",
    "audit_scores",
    "correct_guess_counts",
    "num_guesses_for_fractions",
]

#: ``c'`` sweep of §6.2: 1 %, 2 %, …, 100 % of the canaries.
DEFAULT_GUESS_FRACTIONS = np.arange(1, 101) / 100.0


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
    eps_sweep, best = max_epsilon_gdp_family(cp2, correct_sweep, m, delta=delta, confidence=confidence, tau=tau)
    eps_fixed = np.atleast_1d(epsilon_gdp_family(np.full(rows, fixed_cp), correct_fixed, m, delta=delta, confidence=confidence, tau=tau))
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
