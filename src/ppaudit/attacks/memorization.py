"""Memorization audit of label-DP training with mislabelled canaries (Malek et al. 2021, App. B).

Game 3 (Fig. 4): ``N`` canaries are drawn from the training set; canary ``i`` with original
label ``y_i`` gets two distinct labels ``y'_i, y''_i ∈ [C] \\ {y_i}`` and is trained with one of
them (the *canary label*, ``y'_i`` below, the one the model saw). The adversary, given the
model ``M`` and the pair, guesses which label was used::

    A = ⊥                                   if max(M(x)_{y'}, M(x)_{y''}) < τ
        "the more confident of the two"     otherwise

for a threshold τ ∈ [0.5, 0.99]. Theorem B.1: an ε-DP mechanism has
``CGR ≤ e^ε / (1 + e^ε)``, so ``ε ≥ ε_m = log(CGR / (1 − CGR))``.

Three estimators of CGR are offered (``method``); each result carries ``procedure``
(``"paper"`` or ``"ours"``):

* ``"paper"`` — the authors' estimator exactly as released with the paper
  (``memorization_attack/attack.py::compute_eps`` of facebookresearch/label_dp_antipodes,
  which App. B leaves open in four respects; we follow the code): every canary is scored
  against *all* ``C − 2`` alternatives; per canary ``m_i`` guesses and
  ``ACGR_i = k_i / m_i``; only canaries with ``m_i > 0`` enter; the weights
  ``w_i = m_i / Σ m`` give the mean ``μ = Σ w_i ACGR_i`` and the reliability-weights
  variance ``V = Σ w_i (ACGR_i − μ)² / (1 − Σ w_i² + 10⁻⁸)``; the **sample size is the
  number of guessing canaries** ``N'`` (not an effective size), ``se = √(V / N')``;
  ``μ ← max(μ, 1 − μ)`` (the DP definition is symmetric); the interval
  ``μ ± 1.96 se`` is clipped to ``[0.5, 1]``; **when every guess is right** (``μ = 1``,
  zero spread) the lower end becomes ``min(low, 1 − 3/N')`` (the "rule of three") if
  ``N' > 50`` and ``0.5`` otherwise (a fluke), so ε_m's lower end is finite (its upper end
  is ∞, CGR = 1 being inside the interval); no guessing canary gives CGR ∈ [0, 1]. Their
  ``compute_eps`` computes in float32, so when every guess is right the weighted accuracy is
  in general not exactly 1 (e.g. 1 − 6e-8) and their code returns ε_m ≈ [16.6, 16.6] where
  their stated rule gives [5.8, ∞] (N' = 1000); ours follows the stated rule, in float64.
  Thresholds: **their grid τ ∈ {0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99}** (App. B says
  "τ ∈ [0.5, 0.99]"); the τ with the highest ε-lower end wins, ties broken by the higher
  finite upper end, no correction for the choice of τ ("for simplicity, we omit
  corrections for multiple hypothesis testing"). Any confidence other than 0.95 uses the
  normal quantile in place of 1.96.
* ``"ours_normal"`` (alias ``"normal"``) — our reliability-weighted variant on the
  1 %-step grid 0.50, …, 0.99: the same weighted mean, the unbiased reliability-weights
  variance ``s² = Σ m_i (ACGR_i − mean)² / (V₁ − V₂/V₁)`` (``V₁ = Σ m_i``, ``V₂ = Σ m_i²``)
  over all canaries, the standard error ``s / √n_eff`` with **Kish's** effective size
  ``n_eff = V₁² / V₂``, interval ``mean ± z s / √n_eff``, no symmetrisation, best τ not
  corrected. The weighted mean is exactly the Game-2 CGR of the canaries. Zero spread
  (e.g. every guess correct) gives a zero-width interval, ε_m ∈ [∞, ∞] — the defect the
  paper's all-correct correction avoids; use ``"ours_cp"`` in that regime.
* ``"ours_cp"`` (alias ``"clopper_pearson"``) — the exact variant the appendix describes
  first: one alternative label ``y''_i`` per canary (Game 3 as drawn in Fig. 4; given, or
  drawn uniformly from ``[C] \\ {y_i, y'_i}`` with ``rng``), the number of correct guesses
  among the ``M ≤ N`` non-abstaining ones, and a two-sided Clopper–Pearson interval
  (statsmodels ``proportion_confint(method="beta")``) at level ``1 − (1 − confidence)/T``
  for each of the ``T`` thresholds — a Bonferroni correction for picking the best τ, so
  the reported interval holds at the nominal level. The Game-3 heuristic (canaries as
  independent Game-2 rounds, App. B/C) is still assumed.

Ties ``M(x)_{y'} = M(x)_{y''}`` (possible only when both equal τ = 0.5) count as wrong guesses
(the conservative choice; the paper's adversary resolves them by the presentation order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_probability
from ..intervals import clopper_pearson
from .._lazy import LazyImport

norm = LazyImport("scipy.stats", "norm")  # scipy.stats costs ≈ 1 s to import; loaded on first use

__all__ = [
    "DEFAULT_THRESHOLDS",
    "METHODS",
    "PAPER_THRESHOLDS",
    "Canaries",
    "MemorizationResult",
    "cgr_to_epsilon",
    "make_canaries",
    "memorization_epsilon",
    "per_canary_acgr",
]

#: τ grid of App. B: 0.50, 0.51, …, 0.99.
DEFAULT_THRESHOLDS = np.round(np.arange(50, 100) / 100.0, 2)

#: τ grid of the authors' code (label_dp_antipodes, memorization_attack/attack.py).
PAPER_THRESHOLDS = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99])

#: Estimators of :func:`memorization_epsilon` → their ``procedure`` label.
METHODS = {"paper": "paper", "ours_normal": "ours", "ours_cp": "ours"}
_ALIASES = {"normal": "ours_normal", "clopper_pearson": "ours_cp"}


@dataclass(frozen=True)
class MemorizationResult:
    """Result of :func:`memorization_epsilon`.

    Attributes:
        epsilon_low, epsilon_high: the interval for ε_m (logit of the CGR interval, the
            lower end clipped at 0).
        cgr: point estimate of the correct-guess rate at the chosen threshold.
        cgr_low, cgr_high: the CGR interval (clipped to [0, 1]).
        threshold: the chosen τ.
        num_guesses: non-abstaining guesses at that τ (Σ m_i for ``"paper"`` and
            ``"ours_normal"``, the number of canaries that got a guess for ``"ours_cp"``).
        num_correct: correct guesses among them.
        method: ``"paper"``, ``"ours_normal"`` or ``"ours_cp"``.
        confidence: nominal level of the interval.
        sample_size: the sample size of the interval: guessing canaries ``N'`` (paper),
            Kish's ``n_eff`` (ours_normal), guessing canaries (ours_cp).
        procedure: ``"paper"`` or ``"ours"``.
    """

    epsilon_low: float
    epsilon_high: float
    cgr: float
    cgr_low: float
    cgr_high: float
    threshold: float
    num_guesses: int
    num_correct: int
    method: str
    confidence: float
    sample_size: float = float("nan")
    procedure: str = "ours"


@dataclass(frozen=True)
class Canaries:
    """Canaries of Game 3 (Malek et al. 2021, Fig. 4).

    Attributes:
        indices: the ``N`` training indices ``I`` that become canaries.
        canary_labels: the label each canary is trained with (``y'_i`` if ``b_i = 0``,
            ``y''_i`` otherwise).
        alternative_labels: the other label of the pair (what the adversary compares with).
        original_labels: ``y_i``.
        training_labels: the full training label vector ``D*`` with the canaries planted.
    """

    indices: np.ndarray
    canary_labels: np.ndarray
    alternative_labels: np.ndarray
    original_labels: np.ndarray
    training_labels: np.ndarray


def _labels(arr, name: str, num_classes: int | None = None) -> np.ndarray:
    a = np.asarray(arr)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of class indices, got shape {a.shape}")
    f = a.astype(np.float64)
    if not np.all(np.isfinite(f)) or np.any(f < 0) or np.any(f != np.round(f)):
        raise ValueError(f"{name} must hold non-negative integer class indices, got {a[:10]}")
    a = a.astype(np.int64)
    if num_classes is not None and np.any(a >= num_classes):
        raise ValueError(f"{name} must be < num_classes={num_classes}, got {a[a >= num_classes][:5]}")
    return a


def make_canaries(labels, num_canaries: int, num_classes: int, rng: np.random.Generator) -> Canaries:
    """Draw the canaries of Game 3 (Fig. 4) and plant them in a copy of the labels.

    ``I`` is a uniform ``N``-subset; for each ``i ∈ I`` a uniform ordered pair of distinct
    labels from ``[C] \\ {y_i}`` and a uniform bit choose the training label.

    Args:
        labels: original training labels ``y`` (n,).
        num_canaries: ``N`` (≤ n).
        num_classes: ``C`` ≥ 3 (the game needs two labels other than ``y_i``).
        rng: numpy Generator.

    Returns:
        :class:`Canaries`.
    """
    if num_classes < 3:
        raise ValueError(f"Game 3 needs num_classes >= 3, got {num_classes}")
    y = _labels(labels, "labels", num_classes)
    n_can = int(num_canaries)
    if n_can < 1 or n_can > y.size:
        raise ValueError(f"num_canaries must be in [1, {y.size}], got {num_canaries}")
    idx = np.sort(rng.choice(y.size, size=n_can, replace=False))
    orig = y[idx]
    # Uniform ordered pair of distinct labels from the C - 1 labels != y_i: offsets in 1..C-1.
    o1 = rng.integers(1, num_classes, size=n_can)
    o2 = rng.integers(1, num_classes - 1, size=n_can)
    o2 = o2 + (o2 >= o1)
    y1 = (orig + o1) % num_classes
    y2 = (orig + o2) % num_classes
    b = rng.integers(0, 2, size=n_can).astype(bool)
    trained = np.where(b, y2, y1)
    other = np.where(b, y1, y2)
    planted = y.copy()
    planted[idx] = trained
    return Canaries(idx, trained, other, orig, planted)


def cgr_to_epsilon(cgr) -> np.ndarray:
    """``ε_m = log(CGR / (1 − CGR))`` (Theorem B.1), clipped below at 0; CGR = 1 gives ``inf``."""
    p = np.clip(np.asarray(cgr, dtype=np.float64), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        e = np.log(p) - np.log1p(-p)
    e = np.maximum(e, 0.0)
    return float(e) if e.ndim == 0 else e


def _check_inputs(confidences, canary_labels, original_labels):
    conf = np.asarray(confidences, dtype=np.float64)
    if conf.ndim != 2 or conf.shape[0] == 0:
        raise ValueError(f"confidences must have shape (N, C), got {conf.shape}")
    n, num_classes = conf.shape
    if num_classes < 3:
        raise ValueError(f"Game 3 needs at least 3 classes, got confidences with C={num_classes}")
    if not np.all(np.isfinite(conf)) or np.any(conf < 0) or np.any(conf > 1):
        raise ValueError(f"confidences must be probabilities in [0, 1], got {conf[~np.isfinite(conf) | (conf < 0) | (conf > 1)][:5]}")
    yc = _labels(canary_labels, "canary_labels", num_classes)
    yo = _labels(original_labels, "original_labels", num_classes)
    if yc.size != n or yo.size != n:
        raise ValueError(f"canary_labels and original_labels must have N={n} entries, got {yc.size} and {yo.size}")
    if np.any(yc == yo):
        k = np.flatnonzero(yc == yo)[0]
        raise ValueError(f"a canary label must differ from the original label, got {yc[k]} == {yo[k]} at canary {k}")
    return conf, yc, yo


def _check_thresholds(thresholds) -> np.ndarray:
    t = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    if t.ndim != 1 or t.size == 0 or np.any(np.isnan(t)) or np.any(t < 0.5) or np.any(t > 0.99):
        raise ValueError(f"thresholds must be a non-empty list of values in [0.5, 0.99], got {t}")
    return t


def per_canary_acgr(confidences, canary_labels, original_labels, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-canary ``(m_i, ACGR_i)`` over the ``C − 2`` alternatives (Malek et al. 2021, App. B).

    Args:
        confidences: ``(N, C)`` model probabilities on the canaries.
        canary_labels: ``y'_i`` the label each canary was trained with.
        original_labels: ``y_i``.
        threshold: τ.

    Returns:
        ``(m, acgr)``: number of non-abstaining guesses per canary and the fraction correct
        (0 when ``m_i = 0``).
    """
    conf, yc, yo = _check_inputs(confidences, canary_labels, original_labels)
    tau = float(threshold)
    n, num_classes = conf.shape
    rows = np.arange(n)
    p_can = conf[rows, yc]
    alt = np.ones((n, num_classes), dtype=bool)
    alt[rows, yc] = False
    alt[rows, yo] = False
    guess = alt & (np.maximum(conf, p_can[:, None]) >= tau)
    correct = guess & (p_can[:, None] > conf)
    m = guess.sum(axis=1)
    k = correct.sum(axis=1)
    acgr = np.divide(k, m, out=np.zeros(n), where=m > 0)
    return m, acgr


def _normal_interval(m: np.ndarray, acgr: np.ndarray, z: float):
    w = m.astype(np.float64)
    v1 = w.sum()
    if v1 == 0:
        return np.nan, np.nan, np.nan
    v2 = np.square(w).sum()
    mean = float((w * acgr).sum() / v1)
    denom = v1 - v2 / v1
    if denom <= 0:
        # A single canary guessed: no spread can be estimated; the interval is [0, 1].
        return mean, 0.0, 1.0
    var = float((w * np.square(acgr - mean)).sum() / denom)
    se = np.sqrt(var) * np.sqrt(v2) / v1
    return mean, max(0.0, mean - z * se), min(1.0, mean + z * se)


def _paper_eps(acc: float) -> float:
    """The authors' ``eps(acc)``: 0 for acc ≤ ½, ∞ for acc = 1, the logit otherwise."""
    if acc <= 0.5:
        return 0.0
    if acc >= 1.0:
        return float("inf")
    return float(np.log(acc / (1.0 - acc)))


def _paper_interval(m: np.ndarray, k: np.ndarray, z: float):
    """One τ of the authors' ``compute_eps``: ``(mean, low, high, N')`` on the CGR scale."""
    keep = m > 0
    n_eff = int(keep.sum())
    if n_eff == 0:
        return 0.5, 0.0, 1.0, 0
    acc = k[keep] / m[keep]
    w = m[keep] / m[keep].sum()
    mean = float(k[keep].sum() / m[keep].sum())  # = Σ w_i ACGR_i, exact (so "all right" is mean == 1)
    var = float(np.sum(w * (acc - mean) ** 2) / (1.0 - np.sum(w**2) + 1e-8))
    std = np.sqrt(var / n_eff)
    mean = max(mean, 1.0 - mean)
    low = max(0.5, mean - z * std)
    high = min(1.0, mean + z * std)
    if mean == 1.0:
        # every guess right: a Binomial with empirical rate 1 (rule of three) when N' > 50,
        # otherwise discarded as a fluke.
        low = min(low, 1.0 - 3.0 / n_eff) if n_eff > 50 else 0.5
    return mean, low, high, n_eff


def memorization_epsilon(
    confidences,
    canary_labels,
    original_labels,
    method: str = "paper",
    *,
    thresholds=None,
    confidence: float = 0.95,
    alternative_labels=None,
    rng: np.random.Generator | None = None,
) -> MemorizationResult:
    """ε_m interval from Game 3 with abstention threshold τ (Malek et al. 2021, App. B, Thm B.1).

    Args:
        confidences: ``(N, C)`` predicted probabilities of the trained model on the canaries.
        canary_labels: the label each canary was trained with (``y'_i``).
        original_labels: the canaries' original labels ``y_i``.
        method: ``"paper"`` — the authors' estimator (module docstring; their code
            ``compute_eps``); ``"ours_normal"`` (alias ``"normal"``) — reliability-weighted
            mean with Kish's effective size, best τ without correction;
            ``"ours_cp"`` (alias ``"clopper_pearson"``) — one alternative per canary, exact
            Clopper–Pearson interval, Bonferroni-corrected over the τ grid.
        thresholds: τ grid in [0.5, 0.99]; default :data:`PAPER_THRESHOLDS` for
            ``"paper"`` and :data:`DEFAULT_THRESHOLDS` (0.50, 0.51, …, 0.99) otherwise.
        confidence: two-sided level of the interval (0.95 in the paper).
        alternative_labels: for ``"ours_cp"``: the ``y''_i`` of Game 3. If omitted
            they are drawn uniformly from ``[C] \\ {y_i, y'_i}`` with ``rng``.
        rng: numpy Generator, needed by ``"ours_cp"`` without ``alternative_labels``.

    Returns:
        :class:`MemorizationResult` at the selected τ. ``"ours_*"``: the τ with the highest
        lower CGR bound; no τ with a guess gives ``ε_m ∈ [0, 0]`` with ``num_guesses = 0``.
        ``"paper"``: the τ with the highest ε-lower end (ties: higher finite upper end);
        when no τ has a positive lower end the result is ``[0, 0]`` as in their code.

    Raises:
        ValueError: on a bad method, thresholds outside [0.5, 0.99], fewer than 3 classes,
            a canary label equal to its original label, or mismatched lengths.

    Example:
        >>> conf = np.full((100, 10), 0.01); conf[:, 1] = 0.91  # every canary memorised
        >>> r = memorization_epsilon(conf, np.ones(100, int), np.zeros(100, int))
        >>> round(r.epsilon_low, 2), r.epsilon_high   # finite lower end: logit(1 - 3/100)
        (3.48, inf)
    """
    method = _ALIASES.get(method, method)
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)} (or 'normal' / 'clopper_pearson'), got {method!r}")
    conf_level = check_probability(confidence, "confidence")
    if thresholds is None:
        thresholds = PAPER_THRESHOLDS if method == "paper" else DEFAULT_THRESHOLDS
    taus = _check_thresholds(thresholds)
    conf, yc, yo = _check_inputs(confidences, canary_labels, original_labels)
    n, num_classes = conf.shape
    if method == "paper":
        z = 1.96 if conf_level == 0.95 else float(norm.ppf(0.5 + conf_level / 2.0))
        e_low, e_high, chosen = 0.0, 0.0, None
        for tau in taus:
            m, acgr = per_canary_acgr(conf, yc, yo, tau)
            k = np.rint(m * acgr)
            mean, lo, hi, n_eff = _paper_interval(m, k, z)
            el, eh = _paper_eps(lo), _paper_eps(hi)
            if el > e_low or (el == e_low and eh > e_high and np.isfinite(eh)):
                e_low, e_high = el, eh
                chosen = (float(tau), mean, lo, hi, int(m.sum()), int(k.sum()), n_eff)
        if chosen is None:
            return MemorizationResult(0.0, 0.0, float("nan"), 0.0, 1.0, float("nan"), 0, 0, method, conf_level, 0.0, "paper")
        tau, mean, lo, hi, guesses, k, n_eff = chosen
        return MemorizationResult(e_low, e_high, mean, lo, hi, tau, guesses, k, method, conf_level, float(n_eff), "paper")
    if method == "ours_normal":
        z = float(norm.ppf(0.5 + conf_level / 2.0))
        best = None
        for tau in taus:
            m, acgr = per_canary_acgr(conf, yc, yo, tau)
            mean, lo, hi = _normal_interval(m, acgr, z)
            if np.isnan(mean):
                continue
            if best is None or lo > best[2]:
                k = int(round(float((m * acgr).sum())))
                w = m.astype(np.float64)
                best = (tau, mean, lo, hi, int(m.sum()), k, float(w.sum() ** 2 / np.square(w).sum()))
    else:
        if alternative_labels is None:
            if rng is None:
                raise ValueError("method='ours_cp' needs alternative_labels (the y''_i of Game 3) or an rng to draw them")
            off = rng.integers(1, num_classes - 1, size=n)  # uniform among the C - 2 labels != y, y'
            mask = np.ones((n, num_classes), dtype=bool)
            mask[np.arange(n), yc] = False
            mask[np.arange(n), yo] = False
            # the off-th allowed label in increasing order (off in 1..C-2)
            csum = np.cumsum(mask, axis=1)
            ya = np.argmax((csum == off[:, None]) & mask, axis=1)
        else:
            ya = _labels(alternative_labels, "alternative_labels", num_classes)
            if ya.size != n:
                raise ValueError(f"alternative_labels must have N={n} entries, got {ya.size}")
            if np.any((ya == yc) | (ya == yo)):
                k = np.flatnonzero((ya == yc) | (ya == yo))[0]
                raise ValueError(
                    f"alternative label must differ from the canary and original labels, got {ya[k]} at canary {k}"
                )
        rows = np.arange(n)
        p_can, p_alt = conf[rows, yc], conf[rows, ya]
        level = 1.0 - (1.0 - conf_level) / taus.size
        best = None
        for tau in taus:
            guess = np.maximum(p_can, p_alt) >= tau
            trials = int(guess.sum())
            if trials == 0:
                continue
            k = int((guess & (p_can > p_alt)).sum())
            lo, hi = clopper_pearson(k, trials, level)
            lo, hi = float(lo), float(hi)
            if best is None or lo > best[2]:
                best = (tau, k / trials, lo, hi, trials, k, float(trials))
    if best is None:
        return MemorizationResult(0.0, 0.0, float("nan"), 0.0, 1.0, float(taus[0]), 0, 0, method, conf_level, 0.0, "ours")
    tau, mean, lo, hi, guesses, k, size = best
    return MemorizationResult(
        epsilon_low=float(cgr_to_epsilon(lo)),
        epsilon_high=float(cgr_to_epsilon(hi)),
        cgr=float(mean),
        cgr_low=float(lo),
        cgr_high=float(hi),
        threshold=float(tau),
        num_guesses=guesses,
        num_correct=k,
        method=method,
        confidence=conf_level,
        sample_size=size,
        procedure="ours",
    )
