"""An exact test of a pure-DP claim on one fixed output set: :func:`claim_test` (CONVENTIONS items 23–26).

The certification of :func:`~ppaudit.blackbox.search_mechanism` reduces each certified pair to
two counts: ``k0`` of ``T`` draws of ``M(D)`` and ``k1`` of ``T`` draws of ``M(D′)`` fall in an
output set ``E`` chosen on independent pilot draws. An ``(ε0, 0)``-DP claim implies

    H0:  p0 ≤ e^ε0 · p1,    p0 = P[M(D) ∈ E],  p1 = P[M(D′) ∈ E]

(Dwork & Roth 2014, Def. 2.4, with δ = 0). The ε lower bound of the audit (Eq. (1) on two
Clopper–Pearson intervals) answers "how large is ε at least"; as a test of H0 it spends its level
on two two-sided intervals. This module tests H0 itself, as StatDP does (Ding et al. 2018,
Sec. 4.2, "hypothesis testing": a one-sided Fisher exact test on the event count after thinning
the first count by e^-ε0):

1. **Binomial thinning** (``paper``, Ding et al. 2018): keep each of the ``k0`` hits independently
   with probability ``e^-ε0``: ``k0′ | k0 ~ Bin(k0, e^-ε0)``. Unconditionally ``k0′ ~ Bin(T, p0·e^-ε0)``
   (a thinned binomial is binomial), independent of ``k1 ~ Bin(T, p1)``; under H0, ``π0 := p0·e^-ε0 ≤ p1 =: π1``.
2. **Fisher's exact test, one-sided** on the 2×2 table ``[[k0′, T − k0′], [k1, T − k1]]`` of
   ``H0′: π0 ≤ π1`` against ``π0 > π1``: p-value ``P[X ≥ k0′]`` with ``X`` hypergeometric
   (population ``2T``, ``k0′ + k1`` successes, ``T`` drawn).

**Level (proof).** Condition on the margin ``s = k0′ + k1``. Given ``s``, ``k0′`` follows Fisher's
noncentral hypergeometric law with odds ratio ``ψ = π0(1 − π1) / (π1(1 − π0))``; ``ψ = 1`` gives
the central hypergeometric law, for which ``P[p-value ≤ a | s] ≤ a`` (a p-value computed from the
exact law of a discrete statistic). The noncentral family has monotone likelihood ratio in ``ψ``,
so for ``ψ ≤ 1`` (⇔ ``π0 ≤ π1``, i.e. H0) ``k0′`` is stochastically no larger than under ``ψ = 1``
and the upper-tail rejection region ``{p-value ≤ a}`` has conditional probability ``≤ a``.
Averaging over ``s`` and over the thinning keeps it ``≤ a``. The thinning draws come from a
generator the caller seeds: same seed → same p-value. (StatDP averages the p-value over several
thinnings; an average of p-values is not a p-value without a factor 2 — we use one thinning,
whose level is exact.) The level is tested at the boundary ``p0 = e^ε0·p1`` over seeded
repetitions in ``tests/unit/blackbox/test_claim_test.py``.

**Direction.** The claim holds for ``(D, D′)`` and ``(D′, D)`` and for ``E`` and its complement; which
of the four inequalities to test is chosen on the pilot (:func:`choose_direction`), so it costs
no level.

**δ > 0.** ``p0 ≤ e^ε0·p1 + δ`` has no exact thinning reduction; the test is used only for
``(ε0, 0)`` claims (``applies``). Other claims keep the Clopper–Pearson tests of the audit
(sound, less powerful) — said in the result's ``details``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["applies", "choose_direction", "claim_test"]


def applies(claim) -> bool:
    """True iff ``claim`` is a pure ``(ε0, 0)``-DP claim with finite ε0 (the case this test covers)."""
    return (claim is not None and claim.kind == "dp" and float(claim.delta or 0.0) == 0.0
            and math.isfinite(float(claim.epsilon)))


def _check_counts(k0, k1, trials):
    for name, k in (("k0", k0), ("k1", k1)):
        if isinstance(k, bool) or int(k) != k or not 0 <= int(k) <= int(trials):
            raise ValueError(f"{name} must be an integer in [0, trials={trials}], got {k!r}")


def claim_test(k0: int, k1: int, trials: int, epsilon: float, rng: np.random.Generator) -> float:
    """One-sided p-value of ``H0: p0 ≤ e^epsilon · p1`` from ``k0``, ``k1`` hits of ``trials`` draws each.

    Binomial thinning of ``k0`` by ``e^-epsilon`` then Fisher's exact test, one-sided (module
    docstring: the procedure is Ding et al. 2018's, ``paper``; its level is proved there).

    Args:
        k0, k1: hits of the event in ``trials`` draws of ``M(D)`` and of ``M(D′)``.
        trials: draws per side ``T`` (≥ 1).
        epsilon: the claim's ε0 ≥ 0.
        rng: generator of the thinning.

    Returns:
        The p-value in (0, 1]; reject H0 at level ``a`` iff ``p ≤ a``.
    """
    if isinstance(trials, bool) or int(trials) != trials or int(trials) < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    _check_counts(k0, k1, trials)
    eps = float(epsilon)
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    t, k0, k1 = int(trials), int(k0), int(k1)
    k0t = int(rng.binomial(k0, math.exp(-eps)))
    from scipy.stats import hypergeom

    # P[X >= k0t], X ~ Hypergeom(M=2T, n=k0t+k1 successes, N=T drawn)
    return float(min(1.0, hypergeom.sf(k0t - 1, 2 * t, k0t + k1, t)))


def choose_direction(p0: float, p1: float, n: int, epsilon: float) -> tuple[bool, bool]:
    """Pick on pilot proportions which of the four inequalities to test: ``(complement, swap)``.

    Candidates: ``E`` or its complement, ``(D, D′)`` or ``(D′, D)``; each scored by the normal
    z-statistic of ``pa − e^ε0·pb`` on ``n`` pilot draws per side. Selection only (pilot draws):
    no level is spent.
    """
    w = math.exp(float(epsilon))
    best, arg = -math.inf, (False, False)
    for comp in (False, True):
        a0, a1 = (1 - p0, 1 - p1) if comp else (p0, p1)
        for swap in (False, True):
            pa, pb = (a1, a0) if swap else (a0, a1)
            se = math.sqrt(max(pa * (1 - pa) + w * w * pb * (1 - pb), 1e-12) / max(n, 1))
            z = (pa - w * pb) / se
            if z > best:
                best, arg = z, (comp, swap)
    return arg
