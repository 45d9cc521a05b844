"""An attack's power with confidence intervals: TPR at a fixed FPR, AUROC, and the ε interval of a confusion matrix.

The score-based companions of the one-run audit (:mod:`.scores`): the numbers the
membership-inference literature reports (LiRA's TPR at low FPR, Carlini et al. 2022; the ROC
AUC) and the (ε, δ) interval that a binary attack's confusion matrix implies (the hypothesis-
testing view of DP, Kairouz et al. 2015; Dong et al. 2020, Prop. 2.4; as in privacy-estimates'
``compute_eps_lo_hi``, which reports both ends). Each comes with the confidence statement it
makes, in its docstring:

* :func:`tpr_at_fpr` — exact (Clopper–Pearson) intervals, valid in finite samples;
* :func:`auroc` — DeLong et al. (1988) variance with a normal approximation: *asymptotic*,
  not a certificate;
* :func:`epsilon_interval_from_confusion` — both ends from Clopper–Pearson intervals on FPR and
  FNR with Bonferroni over the two, valid in finite samples for the attack's own ε.

Clopper–Pearson intervals come from :func:`ppaudit.intervals.clopper_pearson`. Positive = the
canary is a member / the shown label is the training label; higher score = more positive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from .._validation import check_probability
from ..intervals import clopper_pearson
from .scores import check_scores_truth

__all__ = [
    "TprAtFpr",
    "Auroc",
    "EpsilonInterval",
    "tpr_at_fpr",
    "auroc",
    "epsilon_interval_from_confusion",
]


def _scores_truth(scores, truth) -> tuple[np.ndarray, np.ndarray]:
    s, t = check_scores_truth(scores, truth)
    if t.all() or not t.any():
        raise ValueError(f"truth must hold both positives and negatives, got {int(t.sum())} positives of {t.size}")
    return s, t


@dataclass(frozen=True)
class TprAtFpr:
    """True-positive rate of the rule "positive iff score > threshold" at an empirical FPR ≤ the target.

    Attributes:
        target_fpr: the FPR asked for.
        threshold: the rule's threshold (``-inf``: every canary guessed positive).
        tpr, fpr: empirical rates of the rule (``fpr ≤ target_fpr``).
        tpr_interval, fpr_interval: Clopper–Pearson intervals, each at ``confidence`` on its own.
        true_positives, false_positives, positives, negatives: the counts behind them.
        confidence: two-sided level of each interval.
    """

    target_fpr: float
    threshold: float
    tpr: float
    tpr_interval: tuple[float, float]
    fpr: float
    fpr_interval: tuple[float, float]
    true_positives: int
    false_positives: int
    positives: int
    negatives: int
    confidence: float

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def tpr_at_fpr(scores, truth, fpr: float, confidence: float = 0.95) -> TprAtFpr:
    """TPR at FPR ≤ ``fpr`` with Clopper–Pearson intervals.

    The threshold is chosen from the *negatives only*: ``u`` is the ``(k+1)``-th largest negative
    score with ``k = ⌊fpr · n₋⌋`` (``-inf`` when ``k ≥ n₋``), and the rule guesses positive iff
    ``score > u``. This is the largest TPR among threshold rules with empirical FPR ≤ ``fpr``
    (the same number as the ROC curve's ``max{tpr : fpr ≤ target}``).

    Confidence semantics (each interval at ``confidence`` on its own; not simultaneous):

    * ``tpr_interval`` — exact: given the negatives, ``u`` is fixed and the number of positives
      above it is Binomial(n₊, TPR(u)), so the Clopper–Pearson interval covers the rule's true
      TPR(u) with probability ≥ ``confidence``.
    * ``fpr_interval`` — Clopper–Pearson on the ``k`` false positives at ``u``. ``u`` is the
      ``(k+1)``-th largest negative score, so for continuous scores the true FPR(u) is
      Beta(k + 1, n₋ − k) distributed (an order statistic of uniforms); its central interval
      lies inside the Clopper–Pearson interval for ``k`` of ``n₋`` (same upper end, higher lower
      end), which therefore covers it with probability ≥ ``confidence`` (conservative).

    Args:
        scores: ``(m,)`` attack scores, higher = more likely positive.
        truth: ``(m,)`` booleans (or 0/1), True = positive (member); both classes must occur.
        fpr: target false-positive rate in [0, 1).
        confidence: two-sided level of each interval, in (0, 1).

    Returns:
        :class:`TprAtFpr`.

    Raises:
        ValueError: on mismatched / non-finite scores, non-binary truth, a single class, or
            ``fpr`` / ``confidence`` outside their ranges (the message names the value).

    Example:
        >>> r = tpr_at_fpr([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1], fpr=0.0)
        >>> r.tpr, r.fpr
        (0.5, 0.0)
    """
    s, t = _scores_truth(scores, truth)
    try:
        x = float(fpr)
    except (TypeError, ValueError):
        raise ValueError(f"fpr must be a number in [0, 1), got {fpr!r}") from None
    if not (0.0 <= x < 1.0):
        raise ValueError(f"fpr must be in [0, 1), got {fpr!r}")
    conf = check_probability(confidence, "confidence")
    neg = np.sort(s[~t])[::-1]
    pos = s[t]
    n_neg, n_pos = neg.size, pos.size
    k = int(math.floor(x * n_neg + 1e-9 * n_neg))
    while k > 0 and k / n_neg > x:
        k -= 1
    u = -math.inf if k >= n_neg else float(neg[k])
    fp = int(np.sum(neg > u))
    tp = int(np.sum(pos > u))
    tlo, thi = clopper_pearson(tp, n_pos, conf)
    flo, fhi = clopper_pearson(fp, n_neg, conf)
    return TprAtFpr(x, u, tp / n_pos, (float(tlo), float(thi)), fp / n_neg, (float(flo), float(fhi)), tp, fp, n_pos,
                    n_neg, conf)


@dataclass(frozen=True)
class Auroc:
    """Area under the ROC curve with a DeLong interval.

    Attributes:
        auroc: Mann–Whitney estimate ``Pr[S₊ > S₋] + ½ Pr[S₊ = S₋]`` (= scikit-learn's ``roc_auc_score``).
        interval: two-sided interval at ``confidence`` (DeLong variance, normal approximation, clipped to [0, 1]).
        std_error: DeLong standard error.
        positives, negatives: class sizes.
        confidence: the interval's nominal level.
        method: ``"delong"``.
    """

    auroc: float
    interval: tuple[float, float]
    std_error: float
    positives: int
    negatives: int
    confidence: float
    method: str = "delong"

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def auroc(scores, truth, confidence: float = 0.95) -> Auroc:
    """AUROC with a DeLong confidence interval (DeLong, DeLong & Clarke-Pearson 1988).

    The estimate is the Mann–Whitney statistic with ties counted ½. The interval is
    ``A ± z · SE`` with ``z = Φ⁻¹(1 − (1 − confidence)/2)`` and DeLong's variance
    ``SE² = Var(V₁₀)/n₊ + Var(V₀₁)/n₋`` of the structural components (``V₁₀(x)`` = share of
    negatives below positive ``x``, ties ½; ``V₀₁(y)`` = share of positives above negative
    ``y``), clipped to [0, 1].

    Confidence semantics: **asymptotic** (normal approximation of a U-statistic): its coverage
    approaches ``confidence`` as both classes grow; it is not a finite-sample certificate. At an
    AUROC of 0 or 1 the DeLong variance is 0 and the interval collapses to the point — use
    :func:`tpr_at_fpr` (exact intervals) when a guarantee is needed.

    Args:
        scores: ``(m,)`` attack scores, higher = more likely positive.
        truth: ``(m,)`` booleans (or 0/1), True = positive; both classes must occur, and at
            least 2 of each for a standard error.
        confidence: two-sided level in (0, 1).

    Returns:
        :class:`Auroc`.

    Raises:
        ValueError: on bad scores / truth (as :func:`tpr_at_fpr`), fewer than 2 positives or
            negatives, or a bad ``confidence``.
    """
    s, t = _scores_truth(scores, truth)
    conf = check_probability(confidence, "confidence")
    pos, neg = s[t], s[~t]
    n1, n0 = pos.size, neg.size
    if n1 < 2 or n0 < 2:
        raise ValueError(f"auroc needs at least 2 positives and 2 negatives, got {n1} and {n0}")
    neg_sorted = np.sort(neg)
    pos_sorted = np.sort(pos)
    below = np.searchsorted(neg_sorted, pos, side="left")  # negatives < x
    tie_n = np.searchsorted(neg_sorted, pos, side="right") - below
    v10 = (below + 0.5 * tie_n) / n0
    above = n1 - np.searchsorted(pos_sorted, neg, side="right")  # positives > y
    tie_p = np.searchsorted(pos_sorted, neg, side="right") - np.searchsorted(pos_sorted, neg, side="left")
    v01 = (above + 0.5 * tie_p) / n1
    a = float(v10.mean())
    se = float(math.sqrt(max(v10.var(ddof=1) / n1 + v01.var(ddof=1) / n0, 0.0)))
    z = float(ndtri(1.0 - (1.0 - conf) / 2.0))
    return Auroc(a, (max(0.0, a - z * se), min(1.0, a + z * se)), se, int(n1), int(n0), conf)


@dataclass(frozen=True)
class EpsilonInterval:
    """(ε, δ) interval of a binary attack from its confusion matrix.

    Attributes:
        epsilon_low, epsilon_high: the two ends (``epsilon_low`` is a lower bound on the
            mechanism's ε at δ; both together bracket the attack's own ε, see
            :func:`epsilon_interval_from_confusion`).
        epsilon_point: the plug-in value at the empirical FPR and FNR.
        fpr, fnr: empirical rates; fpr_interval, fnr_interval: their Clopper–Pearson intervals,
            each at ``1 − (1 − confidence)/2``.
        delta, confidence: as given.
    """

    epsilon_low: float
    epsilon_high: float
    epsilon_point: float
    fpr: float
    fpr_interval: tuple[float, float]
    fnr: float
    fnr_interval: tuple[float, float]
    delta: float
    confidence: float

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def _eps_of_rates(fpr: float, fnr: float, delta: float) -> float:
    """``max(0, log((1 − δ − FNR)/FPR), log((1 − δ − FPR)/FNR))`` (Kairouz et al. 2015; ``inf`` at a zero rate)."""
    best = 0.0
    for num, den in ((1.0 - delta - fnr, fpr), (1.0 - delta - fpr, fnr)):
        if num <= 0:
            continue
        best = max(best, math.inf if den <= 0 else math.log(num / den))
    return best


def epsilon_interval_from_confusion(tp: int, fp: int, tn: int, fn: int, delta: float = 0.0,
                                    confidence: float = 0.95) -> EpsilonInterval:
    """Two-sided ε interval of a membership-inference attack from its confusion matrix.

    An (ε, δ)-DP mechanism bounds every test's error rates by ``FPR + e^ε FNR ≥ 1 − δ`` and
    ``e^ε FPR + FNR ≥ 1 − δ`` (Kairouz et al. 2015; Dong et al. 2020, Prop. 2.4), so an attack with
    rates (FPR, FNR) has ``ε ≥ ε_attack(FPR, FNR) = max(0, log((1−δ−FNR)/FPR), log((1−δ−FPR)/FNR))``.
    ``ε_attack`` decreases in both rates. With Clopper–Pearson intervals on FPR (``fp`` of
    ``fp + tn`` negatives) and FNR (``fn`` of ``fn + tp`` positives), each two-sided at
    ``1 − (1 − confidence)/2`` (Bonferroni over the two), both hold together with probability
    ≥ ``confidence``, and then

    * ``epsilon_low = ε_attack(FPR_hi, FNR_hi)`` ≤ ``ε_attack`` ≤ the mechanism's ε at δ, and
    * ``epsilon_high = ε_attack(FPR_lo, FNR_lo)`` ≥ ``ε_attack``.

    So ``[epsilon_low, epsilon_high]`` covers the attack's own ε with probability ≥ ``confidence``
    (finite-sample, exact binomial), and ``epsilon_low`` is a valid lower bound on the
    mechanism's ε at δ. ``epsilon_high`` is **not** an upper bound on the mechanism's ε (a
    stronger attack may exist); it says how much the measurement of *this* attack can exceed its
    lower end. The counts must come from canaries that did not choose the attack's threshold
    (or from a threshold chosen on the negatives only, as :func:`tpr_at_fpr` does — its FPR
    interval is conservative for that choice). As privacy-estimates' ``compute_eps_lo_hi``
    (equal-tailed intervals on FPR and FNR), here with Clopper–Pearson via
    :func:`ppaudit.intervals.clopper_pearson`.

    Args:
        tp, fp, tn, fn: counts (non-negative integers; ``tp + fn ≥ 1`` positives and
            ``fp + tn ≥ 1`` negatives).
        delta: δ in [0, 1).
        confidence: simultaneous level of the two ends, in (0, 1).

    Returns:
        :class:`EpsilonInterval` (``inf`` where a rate's bound is 0).

    Raises:
        ValueError: naming the bad count, ``delta`` or ``confidence``.

    Example:
        >>> r = epsilon_interval_from_confusion(tp=900, fp=100, tn=900, fn=100)
        >>> round(r.epsilon_point, 3), r.epsilon_low < r.epsilon_point < r.epsilon_high
        (2.197, True)
    """
    counts = {}
    for name, v in (("tp", tp), ("fp", fp), ("tn", tn), ("fn", fn)):
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a non-negative integer count, got {v!r}") from None
        if not (math.isfinite(f) and f >= 0 and f == round(f)):
            raise ValueError(f"{name} must be a non-negative integer count, got {v!r}")
        counts[name] = int(f)
    n_pos = counts["tp"] + counts["fn"]
    n_neg = counts["fp"] + counts["tn"]
    if n_pos < 1:
        raise ValueError(f"tp + fn (positives) must be >= 1, got tp={tp!r}, fn={fn!r}")
    if n_neg < 1:
        raise ValueError(f"fp + tn (negatives) must be >= 1, got fp={fp!r}, tn={tn!r}")
    try:
        d = float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}") from None
    if not (0.0 <= d < 1.0):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    conf = check_probability(confidence, "confidence")
    each = 1.0 - (1.0 - conf) / 2.0
    flo, fhi = (float(v) for v in clopper_pearson(counts["fp"], n_neg, each))
    nlo, nhi = (float(v) for v in clopper_pearson(counts["fn"], n_pos, each))
    fpr, fnr = counts["fp"] / n_neg, counts["fn"] / n_pos
    return EpsilonInterval(_eps_of_rates(fhi, nhi, d), _eps_of_rates(flo, nlo, d), _eps_of_rates(fpr, fnr, d),
                           fpr, (flo, fhi), fnr, (nlo, nhi), d, conf)
