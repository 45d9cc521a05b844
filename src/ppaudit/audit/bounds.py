"""Audits of the RDP (and (ε, δ)-DP) of a mechanism from Monte Carlo output counts.

The inputs are the output counts of ``T_0`` runs on ``S`` (``counts0``) and ``T_1`` runs on
``S'`` (``counts1``) over the same ``C`` outputs. Every lower bound is returned for both
directions of the divergence and the larger one is reported, because RDP must hold for the
pair in both orders.

Methods (Chadha et al. 2024, §4.2 and App. B):

* :func:`two_cut_lower_bound` — 2-cut with Clopper–Pearson (App. B, first display). Always
  valid at the stated confidence, for every order at once.
* :func:`k_cut_lower_bound` — k-cut with Goodman or Sison–Glaz simultaneous intervals
  (App. B, second display); asymptotically valid.
* :func:`two_cut_bootstrap_lower_bound`, :func:`k_cut_bootstrap_lower_bound` — percentile
  bootstrap of the plug-in 2-cut / k-cut (App. B); asymptotic, unreliable near 0.
* :func:`dp_epsilon_lower_bound` — the (ε, δ) audit of Eq. (1).

Choice of the output set ``O`` (the paper searches for it but does not say on which data):
choosing ``O`` on the same trials that then give the intervals would bias the bound
upwards. We offer two valid ways and default to the first:

* ``selection="split"``: the trials are split at random into a selection part (a fraction
  ``selection_fraction``) and an evaluation part. Splitting the *counts* by a multivariate
  binomial thinning is exactly a random split of the trials, so the two parts are
  independent multinomial samples. ``O`` is chosen per order on the selection part among the
  likelihood-ratio sets (optimal for the 2-cut, Tsitsiklis 1993) to maximise the bound
  predicted for the evaluation size; the intervals use the evaluation part only, with a
  Bonferroni correction over the distinct sets chosen.
* ``selection="bonferroni"``: all trials are used for both; the intervals are widened by a
  Bonferroni correction over all ``2^(C−1) − 1`` distinct non-trivial sets.

Confidence bookkeeping for the 2-cut: the bound needs both ends of the intervals of
``p_1 = P(μ_1 ∈ O)`` and ``p_2 = P(μ_2 ∈ O)``; each gets a two-sided interval at level
``1 − β/2`` (``β = 1 − confidence``), so all hold together with probability ≥ 1 − β.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validation import as_orders, check_positive_int, check_probability
from ..divergence import bernoulli_renyi_divergence, renyi_divergence_from_log
from ..intervals import as_counts, clopper_pearson, multinomial_simultaneous

__all__ = [
    "TwoCutAudit",
    "two_cut_bound_from_intervals",
    "two_cut_lower_bound",
    "k_cut_lower_bound",
    "two_cut_bootstrap_lower_bound",
    "k_cut_bootstrap_lower_bound",
    "dp_epsilon_lower_bound",
    "dp_epsilon_for_set_counts",
    "dp_epsilon_from_intervals",
    "split_counts",
]


@dataclass
class TwoCutAudit:
    """Result of a 2-cut Clopper–Pearson audit.

    Attributes:
        orders: the orders α.
        lower_bound: the RDP lower bound per order (max over the two directions, ≥ 0).
        output_sets: per order, the boolean mask of the output set ``O`` that was used.
        direction: per order, 0 for ``D_α(μ_S || μ_S')`` and 1 for the reverse.
        confidence: the overall confidence level.
        evaluation_trials: the trials ``(T_0, T_1)`` that the intervals used.
    """

    orders: np.ndarray
    lower_bound: np.ndarray
    output_sets: np.ndarray
    direction: np.ndarray
    confidence: float
    evaluation_trials: tuple[int, int]
    details: dict = field(default_factory=dict)


def _check_pair(counts0, counts1) -> tuple[np.ndarray, np.ndarray]:
    c0 = as_counts(counts0, "counts0")
    c1 = as_counts(counts1, "counts1")
    if c0.shape != c1.shape:
        raise ValueError(f"counts0 and counts1 must have the same number of outputs, got {c0.size} and {c1.size}")
    return c0, c1


def split_counts(counts, fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Split the counts of ``T`` i.i.d. trials into two independent multinomial samples.

    Every trial is sent to the selection part independently with probability ``fraction``
    (binomial thinning of each count). The assignment is independent of the outcomes, so,
    given the random sizes, the two parts are independent i.i.d. samples of the mechanism:
    ``Multinomial(T_sel, p)`` and ``Multinomial(T − T_sel, p)``. No limit on ``T``.
    """
    c = as_counts(counts)
    f = check_probability(fraction, "selection_fraction")
    sel = rng.binomial(c, f)
    if sel.sum() == 0 or sel.sum() == c.sum():
        raise ValueError(
            f"the split of {int(c.sum())} trials with selection_fraction={fraction} left a part empty; use more trials"
        )
    return sel, c - sel


def two_cut_bound_from_intervals(p1_lo, p1_hi, p2_lo, p2_hi, orders) -> np.ndarray:
    """``(1/(α−1)) log((p1ˡ)^α (p2ᵘ)^{1−α} + (1 − p1ᵘ)^α (1 − p2ˡ)^{1−α})`` (Chadha App. B).

    Broadcast over the interval arrays; last axis of the result = orders. Clipped at 0.
    """
    a = as_orders(orders)
    p1_lo, p1_hi, p2_lo, p2_hi = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (p1_lo, p1_hi, p2_lo, p2_hi)))
    with np.errstate(divide="ignore"):
        l1, u2 = np.log(p1_lo)[..., None], np.log(p2_hi)[..., None]
        m1, m2 = np.log1p(-p1_hi)[..., None], np.log1p(-p2_lo)[..., None]
    out = np.empty(p1_lo.shape + (a.size,))
    for j, alpha in enumerate(a):
        if np.isinf(alpha):
            with np.errstate(invalid="ignore"):
                t1 = np.where(np.isfinite(l1), l1 - u2, -np.inf)
                t2 = np.where(np.isfinite(m1), m1 - m2, -np.inf)
            out[..., j] = np.maximum(t1, t2)[..., 0]
            continue
        with np.errstate(invalid="ignore"):
            t1 = np.where(np.isfinite(l1), alpha * l1 + (1 - alpha) * u2, -np.inf)
            t2 = np.where(np.isfinite(m1), alpha * m1 + (1 - alpha) * m2, -np.inf)
        out[..., j] = (np.logaddexp(t1, t2) / (alpha - 1.0))[..., 0]
    return np.maximum(np.nan_to_num(out, nan=0.0, neginf=0.0), 0.0)


def _lr_prefix_sets(p0: np.ndarray, p1: np.ndarray) -> np.ndarray:
    """The ``C − 1`` likelihood-ratio prefix sets (boolean masks) for estimates p0, p1."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lr = np.log(p0) - np.log(p1)
    order = np.argsort(-lr, kind="stable")
    c = p0.size
    masks = np.zeros((c - 1, c), dtype=bool)
    for j in range(c - 1):
        masks[j, order[: j + 1]] = True
    return masks


def _bounds_for_sets(c0, c1, sets, orders, per_interval_conf):
    """2-cut bound for every set and order, both directions; returns (bound, direction)."""
    t0, t1 = c0.sum(), c1.sum()
    k0 = sets @ c0
    k1 = sets @ c1
    lo0, hi0 = clopper_pearson(k0, t0, per_interval_conf)
    lo1, hi1 = clopper_pearson(k1, t1, per_interval_conf)
    fwd = two_cut_bound_from_intervals(lo0, hi0, lo1, hi1, orders)  # D(μ_S || μ_S')
    rev = two_cut_bound_from_intervals(lo1, hi1, lo0, hi0, orders)  # D(μ_S' || μ_S)
    return np.maximum(fwd, rev), (rev > fwd).astype(int)


def two_cut_lower_bound(
    counts0,
    counts1,
    orders,
    confidence: float = 0.95,
    output_set=None,
    selection: str = "split",
    selection_fraction: float = 0.1,
    rng: np.random.Generator | int | None = 0,
) -> TwoCutAudit:
    """2-cut Clopper–Pearson lower bound on the RDP (Chadha et al. 2024, §4.2, App. B).

    Args:
        counts0: output counts of the runs on ``S``.
        counts1: output counts of the runs on ``S'``.
        orders: orders α > 1.
        confidence: overall confidence of the bound (all orders at once), e.g. 0.95.
        output_set: a fixed output set (boolean mask or list of output indices); then no
            search is done and all trials are used.
        selection: ``"split"`` (default) or ``"bonferroni"``: how ``O`` is searched
            without biasing the bound (see the module docstring).
        selection_fraction: fraction of the trials used to choose ``O`` with ``"split"``.
        rng: generator or seed for the random split.

    Returns:
        A :class:`TwoCutAudit`.

    Raises:
        ValueError: on bad counts, orders ≤ 1, a confidence outside (0, 1), an unknown
            selection, or an output set that is empty or everything.
    """
    c0, c1 = _check_pair(counts0, counts1)
    a = as_orders(orders)
    conf = check_probability(confidence, "confidence")
    beta = 1.0 - conf
    c = c0.size
    if output_set is not None:
        mask = np.zeros(c, dtype=bool)
        arr = np.asarray(output_set)
        if arr.dtype == bool:
            if arr.shape != (c,):
                raise ValueError(f"output_set mask must have {c} entries, got shape {arr.shape}")
            mask = arr.copy()
        else:
            if arr.size and (arr.min() < 0 or arr.max() >= c):
                raise ValueError(f"output_set indices must lie in [0, {c}), got {arr}")
            mask[arr.astype(int)] = True
        if mask.all() or not mask.any():
            raise ValueError(f"output_set must be a non-empty proper subset of the outputs, got {output_set}")
        bound, direction = _bounds_for_sets(c0, c1, mask[None, :], a, 1.0 - beta / 2.0)
        return TwoCutAudit(a, bound[0], np.repeat(mask[None], a.size, 0), direction[0], conf, (int(c0.sum()), int(c1.sum())))
    if selection == "split":
        gen = np.random.default_rng(rng)
        s0, e0 = split_counts(c0, selection_fraction, gen)
        s1, e1 = split_counts(c1, selection_fraction, gen)
        # Candidate sets from the selection part (add-1/2 smoothing keeps empty cells usable).
        p0 = (s0 + 0.5) / (s0.sum() + 0.5 * c)
        p1 = (s1 + 0.5) / (s1.sum() + 0.5 * c)
        sets = _lr_prefix_sets(p0, p1)
        # Predict the bound at the evaluation size from the selection estimates.
        pseudo0 = np.round(s0 / s0.sum() * e0.sum()).astype(np.int64)
        pseudo1 = np.round(s1 / s1.sum() * e1.sum()).astype(np.int64)
        pseudo0[np.argmax(pseudo0)] += int(e0.sum() - pseudo0.sum())
        pseudo1[np.argmax(pseudo1)] += int(e1.sum() - pseudo1.sum())
        pseudo0, pseudo1 = np.maximum(pseudo0, 0), np.maximum(pseudo1, 0)
        predicted, _ = _bounds_for_sets(pseudo0, pseudo1, sets, a, 1.0 - beta / 2.0)
        chosen = np.argmax(predicted, axis=0)  # per order
        distinct = np.unique(chosen)
        per_conf = 1.0 - beta / (2.0 * distinct.size)
        bound_d, dir_d = _bounds_for_sets(e0, e1, sets[distinct], a, per_conf)
        pos = np.searchsorted(distinct, chosen)
        lb = bound_d[pos, np.arange(a.size)]
        direction = dir_d[pos, np.arange(a.size)]
        return TwoCutAudit(a, lb, sets[chosen], direction, conf, (int(e0.sum()), int(e1.sum())),
                           {"selection": "split", "distinct_sets": int(distinct.size)})
    if selection == "bonferroni":
        family = 2.0 ** (c - 1) - 1.0
        per_conf = 1.0 - beta / (2.0 * family)
        p0 = (c0 + 0.5) / (c0.sum() + 0.5 * c)
        p1 = (c1 + 0.5) / (c1.sum() + 0.5 * c)
        sets = _lr_prefix_sets(p0, p1)
        bound, direction = _bounds_for_sets(c0, c1, sets, a, per_conf)
        best = np.argmax(bound, axis=0)
        idx = np.arange(a.size)
        return TwoCutAudit(a, bound[best, idx], sets[best], direction[best, idx], conf, (int(c0.sum()), int(c1.sum())),
                           {"selection": "bonferroni", "family_size": family})
    raise ValueError(f"selection must be 'split' or 'bonferroni', got {selection!r}")


def k_cut_lower_bound(counts0, counts1, orders, confidence: float = 0.95, method: str = "goodman") -> np.ndarray:
    """k-cut lower bound with simultaneous multinomial intervals (Chadha et al. 2024, App. B).

    ``(1/(α−1)) log Σ_i p_1ˡ(i)^α p_2ᵘ(i)^{1−α}`` with the cells = the ``C`` outputs (the
    ``C``-cut equals the Rényi divergence of the output distributions). Each distribution's
    simultaneous intervals are taken at level ``1 − β/2``; both directions, the larger kept.
    Asymptotically valid only (Table 2 of the paper).

    Args:
        counts0, counts1: output counts on ``S`` and ``S'``.
        orders: orders α > 1.
        confidence: overall confidence.
        method: ``"goodman"`` or ``"sison-glaz"``.

    Returns:
        ``(len(orders),)`` lower bounds (≥ 0).
    """
    c0, c1 = _check_pair(counts0, counts1)
    a = as_orders(orders)
    conf = check_probability(confidence, "confidence")
    per = 1.0 - (1.0 - conf) / 2.0
    lo0, hi0 = multinomial_simultaneous(c0, per, method)
    lo1, hi1 = multinomial_simultaneous(c1, per, method)
    with np.errstate(divide="ignore"):
        fwd = _kcut_from_intervals(np.log(lo0), np.log(hi1), a)
        rev = _kcut_from_intervals(np.log(lo1), np.log(hi0), a)
    return np.maximum(fwd, rev)


def _kcut_from_intervals(log_lo: np.ndarray, log_hi: np.ndarray, orders: np.ndarray) -> np.ndarray:
    out = np.empty(orders.size)
    for j, alpha in enumerate(orders):
        if np.isinf(alpha):
            with np.errstate(invalid="ignore"):
                out[j] = np.max(np.where(np.isfinite(log_lo), log_lo - log_hi, -np.inf))
            continue
        with np.errstate(invalid="ignore"):
            terms = np.where(np.isfinite(log_lo), alpha * log_lo + (1 - alpha) * log_hi, -np.inf)
        top = terms.max()
        val = -np.inf if not np.isfinite(top) else top + math.log(np.exp(terms - top).sum())
        out[j] = val / (alpha - 1.0)
    return np.maximum(np.nan_to_num(out, nan=0.0, neginf=0.0), 0.0)


def _percentile_lower(samples: np.ndarray, confidence: float) -> np.ndarray:
    return np.quantile(samples, 1.0 - confidence, axis=0, method="lower")


def two_cut_bootstrap_lower_bound(
    counts0,
    counts1,
    orders,
    confidence: float = 0.95,
    num_bootstrap: int = 2000,
    output_set=None,
    rng: np.random.Generator | int | None = 0,
) -> np.ndarray:
    """Percentile-bootstrap lower bound on the 2-cut (Chadha et al. 2024, App. B).

    The set ``O`` is fixed first (given, or per order the likelihood-ratio set maximising
    the plug-in 2-cut); then the trials are resampled (for counts, a binomial draw of the
    same size with the observed proportion is exactly a nonparametric resample), the plug-in
    2-cut is recomputed, and the ``1 − confidence`` quantile is returned. Asymptotic only;
    the paper notes it fails when the true divergence is 0 and when it is below ~1/√T.

    Returns:
        ``(len(orders),)`` array.
    """
    c0, c1 = _check_pair(counts0, counts1)
    a = as_orders(orders)
    conf = check_probability(confidence, "confidence")
    nb = check_positive_int(num_bootstrap, "num_bootstrap")
    gen = np.random.default_rng(rng)
    t0, t1 = int(c0.sum()), int(c1.sum())
    p0, p1 = c0 / t0, c1 / t1
    if output_set is not None:
        mask = np.zeros(c0.size, dtype=bool)
        mask[np.asarray(output_set, dtype=int) if np.asarray(output_set).dtype != bool else np.nonzero(output_set)[0]] = True
        sets = np.repeat(mask[None], a.size, 0)
    else:
        cand = _lr_prefix_sets((c0 + 0.5) / (t0 + 0.5 * c0.size), (c1 + 0.5) / (t1 + 0.5 * c1.size))
        plug = np.maximum(
            bernoulli_renyi_divergence(cand @ p0, cand @ p1, a), bernoulli_renyi_divergence(cand @ p1, cand @ p0, a)
        )
        sets = cand[np.argmax(plug, axis=0)]
    out = np.empty(a.size)
    for j in range(a.size):
        q0, q1 = float(sets[j] @ p0), float(sets[j] @ p1)
        b0 = gen.binomial(t0, q0, size=nb) / t0
        b1 = gen.binomial(t1, q1, size=nb) / t1
        d = np.maximum(
            bernoulli_renyi_divergence(b0, b1, a[j : j + 1])[:, 0],
            bernoulli_renyi_divergence(b1, b0, a[j : j + 1])[:, 0],
        )
        out[j] = _percentile_lower(d, conf)
    return np.maximum(out, 0.0)


def k_cut_bootstrap_lower_bound(
    counts0,
    counts1,
    orders,
    confidence: float = 0.95,
    num_bootstrap: int = 2000,
    rng: np.random.Generator | int | None = 0,
) -> np.ndarray:
    """Percentile-bootstrap lower bound on the k-cut with the ``C`` outputs as cells (App. B).

    Multinomial resamples of each count vector, the plug-in Rényi divergence between the
    resampled empirical distributions (both directions, larger kept), ``1 − confidence``
    quantile. A resample with an empty cell where the other is not empty gives ``+inf`` for
    that replicate, as the plug-in estimator does.

    Returns:
        ``(len(orders),)`` array.
    """
    c0, c1 = _check_pair(counts0, counts1)
    a = as_orders(orders)
    conf = check_probability(confidence, "confidence")
    nb = check_positive_int(num_bootstrap, "num_bootstrap")
    gen = np.random.default_rng(rng)
    t0, t1 = int(c0.sum()), int(c1.sum())
    b0 = gen.multinomial(t0, c0 / t0, size=nb) / t0
    b1 = gen.multinomial(t1, c1 / t1, size=nb) / t1
    with np.errstate(divide="ignore"):
        l0, l1 = np.log(b0), np.log(b1)
    d = np.maximum(renyi_divergence_from_log(l0, l1, a), renyi_divergence_from_log(l1, l0, a))
    return np.maximum(_percentile_lower(d, conf), 0.0)


def dp_epsilon_for_set_counts(k0, n0, k1, n1, delta: float, confidence: float) -> np.ndarray:
    """Eq. (1) of Chadha et al. 2024 for given output sets, vectorised over the sets.

    ``log max{(p_1ˡ − δ)/p_0ᵘ, (p_0ˡ − δ)/p_1ᵘ}`` from ``k0`` of ``n0`` runs on ``S`` and ``k1``
    of ``n1`` runs on ``S'`` falling in each set; each proportion gets a two-sided
    Clopper–Pearson interval at ``1 − β/2``. ``-inf`` where nothing can be concluded. This is
    the one implementation behind :func:`dp_epsilon_lower_bound` (and the search's pilot
    predictions, :mod:`ppaudit.blackbox.search`).
    """
    per = 1.0 - (1.0 - float(confidence)) / 2.0
    lo0, hi0 = clopper_pearson(k0, n0, per)
    lo1, hi1 = clopper_pearson(k1, n1, per)
    return dp_epsilon_from_intervals(lo0, hi0, lo1, hi1, delta)


def dp_epsilon_from_intervals(p0_lo, p0_hi, p1_lo, p1_hi, delta: float) -> np.ndarray:
    """Eq. (1) from given interval ends: ``log max{(p_1ˡ − δ)/p_0ᵘ, (p_0ˡ − δ)/p_1ᵘ}`` (``-inf``: nothing)."""
    d = float(delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.maximum((np.asarray(p1_lo) - d) / p0_hi, (np.asarray(p0_lo) - d) / p1_hi)
        return np.where(r > 0, np.log(np.where(r > 0, r, 1.0)), -np.inf)


def dp_epsilon_lower_bound(
    counts0,
    counts1,
    delta: float = 0.0,
    confidence: float = 0.95,
    output_set=None,
    selection_fraction: float = 0.1,
    rng: np.random.Generator | int | None = 0,
) -> float:
    """(ε, δ) audit of Chadha et al. 2024, Eq. (1).

    ``εˡ = log max{(p_1ˡ − δ)/p_0ᵘ, (p_0ˡ − δ)/p_1ᵘ}`` with Clopper–Pearson bounds on
    ``p_0 = P(A(S) ∈ O)`` and ``p_1 = P(A(S') ∈ O)``. Eq. (1) is printed without the
    logarithm; ε is the log of the likelihood ratio (Definition 1), so we take the log.
    ``O`` is given, or chosen on a random split of the trials (as in
    :func:`two_cut_lower_bound`) among the likelihood-ratio sets and their complements.
    Each of the two proportions gets a two-sided interval at ``1 − β/2``.

    Returns:
        ``εˡ ≥ 0`` (0 when nothing can be concluded).
    """
    c0, c1 = _check_pair(counts0, counts1)
    conf = check_probability(confidence, "confidence")
    d = float(delta)
    if not (0.0 <= d < 1.0):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")

    def eps_for(k0, n0, k1, n1):
        return dp_epsilon_for_set_counts(k0, n0, k1, n1, d, conf)

    if output_set is not None:
        mask = np.zeros(c0.size, dtype=bool)
        arr = np.asarray(output_set)
        mask[np.nonzero(arr)[0] if arr.dtype == bool else arr.astype(int)] = True
        e = float(eps_for(mask @ c0, c0.sum(), mask @ c1, c1.sum()))
        return max(e, 0.0)
    gen = np.random.default_rng(rng)
    s0, e0 = split_counts(c0, selection_fraction, gen)
    s1, e1 = split_counts(c1, selection_fraction, gen)
    cand = _lr_prefix_sets((s0 + 0.5) / (s0.sum() + 0.5 * c0.size), (s1 + 0.5) / (s1.sum() + 0.5 * c1.size))
    cand = np.concatenate([cand, ~cand])
    pred = eps_for(cand @ s0, s0.sum(), cand @ s1, s1.sum())
    best = cand[int(np.argmax(pred))]
    return max(float(eps_for(best @ e0, e0.sum(), best @ e1, e1.sum())), 0.0)
