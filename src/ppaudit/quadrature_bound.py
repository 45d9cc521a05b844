"""Proven error bound of the shared-grid quadrature of Eq. (4) (:mod:`ppaudit.noisy_argmax`).

:func:`ppaudit.noisy_argmax.class_probabilities` integrates Chadha et al. (2024), Eq. (4)
with the trapezoid rule on a grid of step ``h(C)`` over ``[−L(C), L(C)]``. This module
chooses ``h`` and ``L`` from a bound that is *proven*, not fitted to convergence runs, and
reports it (:func:`quadrature_error_bound`): the whole-line trapezoid error by Trefethen &
Weideman (2014, SIAM Review 56(3), Thm 5.1) on a strip where the integrand is bounded in
closed form (:func:`strip_error_bound`), the truncation of the grid, the table saturation and
a stated floating-point error model. The bound is uniform over histograms and noise scales.
It feeds the certified probability boxes and the total-variation discount of exact-count
audits (:mod:`ppaudit.vote_models.enumeration`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy.special import dawsn, ndtr

__all__ = ["SATURATION", "QuadratureErrorBound", "quadrature_error_bound", "strip_error_bound"]

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
#: Beyond this abscissa the lattice tables read Φ = 1 and φ = 0 (Φ(9) == 1.0 in double
#: precision and φ(9) < 1.1e-18); the saturation term of the bound accounts for it.
SATURATION = 9.0
#: Design targets of the shared grid: the certified whole-line trapezoid error per class
#: (:func:`strip_error_bound`) and the certified truncation error (all classes together).
_STRIP_TARGET = 1e-14
_TRUNCATION_TARGET = 1e-14
#: Largest step used (small C would allow more; this keeps the lattice tables small).
_MAX_STEP = 0.6
#: Rounding unit of the error model (the machine epsilon 2^-52, twice the unit roundoff).
_EPS = 2.0**-52
#: Strip half-widths ``a`` tried when minimising the Trefethen–Weideman bound over ``a``.
_STRIP_A = np.geomspace(1e-3, 30.0, 4001)


def _log_beta_and_denominator(step: float) -> tuple[np.ndarray, np.ndarray]:
    """``log β(a)`` and ``log(e^{2πa/h} − 1)`` on :data:`_STRIP_A`.

    ``K(a) = ∫_0^a e^{s²/2} ds = √2 e^{a²/2} D(a/√2)`` (D: Dawson's integral) and
    ``β(a) = sup_x Φ(x) + K φ(x) = Φ(1/K) + K φ(1/K)``, written as ``K (φ(t) + t Φ(t))`` with
    ``t = 1/K`` so that large ``a`` does not overflow.
    """
    a = _STRIP_A
    log_k = 0.5 * math.log(2.0) + 0.5 * a * a + np.log(dawsn(a / math.sqrt(2.0)))
    t = np.exp(-log_k)
    log_beta = log_k + np.log(np.exp(-0.5 * t * t) * _INV_SQRT_2PI + t * ndtr(t))
    x = 2.0 * math.pi * a / step
    return log_beta, x + np.log1p(-np.exp(-x))


def _log_strip_bounds(num_classes: int, step: float) -> np.ndarray:
    """log of ``2 e^{a²/2} β(a)^{C−1} / (e^{2πa/h} − 1)`` for every ``a`` in :data:`_STRIP_A`."""
    log_beta, log_den = _log_beta_and_denominator(step)
    a = _STRIP_A
    return math.log(2.0) + 0.5 * a * a + (num_classes - 1) * log_beta - log_den


def _second_order_strip_bound(num_classes: int, step: float) -> float:
    """Whole-line trapezoid error of ``G2 = Σ_c Σ_{i≠c} φ_c φ_i ∏_{j≠c,i} Φ_j`` (C(C−1) terms,
    each with ``M = e^{a²} φ(0) β(a)^{C−2}``), the weight of the abscissa errors."""
    c = num_classes
    log_beta, log_den = _log_beta_and_denominator(step)
    a = _STRIP_A
    logs = math.log(2.0 * c * (c - 1) * _INV_SQRT_2PI) + a * a + (c - 2) * log_beta - log_den
    return float(math.exp(float(np.min(logs)))) * (1.0 + 1e-9)


def strip_error_bound(num_classes: int, step: float) -> float:
    """Proven bound on the whole-line trapezoid error of one class of Eq. (4).

    For ``f_c(u) = φ(u + d_c) ∏_{i≠c} Φ(u + d_i)`` (any real shifts ``d``; Chadha et al.
    2024, Eq. (4) in the normalised variable), the trapezoid sum ``h Σ_k f_c(u_0 + k h)``
    over the whole line differs from ``∫ f_c`` by at most ``2M/(e^{2πa/h} − 1)`` for every
    ``a > 0`` (Trefethen & Weideman 2014, SIAM Review 56(3), Thm 5.1), where
    ``M ≥ ∫ |f_c(x + iy)| dx`` for ``|y| < a``. Since ``|φ(x + iy)| = φ(x) e^{y²/2}`` and
    ``|Φ(x + iy) − Φ(x)| = |∫_0^y φ(x + is) ds| ≤ φ(x) K(|y|)`` with
    ``K(a) = ∫_0^a e^{s²/2} ds``, every factor ``|Φ|`` is at most
    ``β(a) = max_x Φ(x) + K φ(x) = Φ(1/K) + K φ(1/K)``, so ``M = e^{a²/2} β(a)^{C−1}`` works
    for every histogram. The bound is minimised over a grid of ``a`` (each ``a`` gives a
    valid bound) and inflated by ``1e-9`` relative for the rounding of its own evaluation.

    Args:
        num_classes: ``C ≥ 1`` (``C = 1`` has no integral: bound 0).
        step: trapezoid step ``h > 0`` (the bound holds for every grid offset).

    Returns:
        The bound, uniform over histograms, noise scales and classes.

    Raises:
        ValueError: on ``num_classes < 1`` or ``step <= 0``.
    """
    c = _check_classes(num_classes)
    h = float(step)
    if not (h > 0 and math.isfinite(h)):
        raise ValueError(f"step must be > 0, got {step!r}")
    if c == 1:
        return 0.0
    return float(math.exp(float(np.min(_log_strip_bounds(c, h)))) * (1.0 + 1e-9))


def _check_classes(num_classes) -> int:
    c = int(num_classes)
    if c != num_classes or c < 1:
        raise ValueError(f"num_classes must be an integer >= 1, got {num_classes!r}")
    return c


def _truncation_bound(num_classes: int, step: float, half_width: float) -> float:
    """Bound on ``Σ_c |T_∞ − T_grid|``: nodes beyond ``±L`` and the half end-weights.

    ``Σ_c f_c(u)`` is the density of ``max_i (Z_i − d_i)`` (``d_i ≥ 0``, one ``d_a = 0``):
    above ``L`` it is at most ``C φ(u)`` (decreasing), below ``−L`` at most
    ``φ(u) + (C−1) φ(0) Φ(u)`` (increasing; ``f_a ≤ φ``, ``f_c ≤ φ(0) Φ(u + d_a)``). A
    monotone tail's nodes beyond the grid end sum to at most its integral, and
    ``∫_{−∞}^{−L} Φ = φ(L) − L Φ(−L)``.
    """
    c, h, L = num_classes, step, half_width
    phi0, phi_l, tail = _INV_SQRT_2PI, math.exp(-0.5 * L * L) * _INV_SQRT_2PI, float(ndtr(-L))
    ends = 0.5 * h * ((c + 1) * phi_l + (c - 1) * phi0 * tail)
    beyond = (c + 1) * tail + (c - 1) * phi0 * max(phi_l - L * tail, 0.0)
    return ends + beyond


@cache
def _design(num_classes: int) -> tuple[float, float]:
    """Step ``h(C)`` and half-width ``L(C)`` of the shared grid, from the proven bounds.

    ``h`` is the largest step (≤ :data:`_MAX_STEP`) whose :func:`strip_error_bound` is at most
    :data:`_STRIP_TARGET`; ``L`` the smallest half-width whose truncation bound is at most
    :data:`_TRUNCATION_TARGET` (both by bisection; any smaller step or larger ``L`` is valid).
    """
    c = max(int(num_classes), 2)
    ok = lambda h: strip_error_bound(c, h) <= _STRIP_TARGET
    if ok(_MAX_STEP):
        h = _MAX_STEP
    else:
        lo, hi = 1e-3, _MAX_STEP
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if ok(mid) else (lo, mid)
        h = lo
    lo, hi = 1.0, 40.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _truncation_bound(c, h, mid) <= _TRUNCATION_TARGET else (mid, hi)
    return h, hi


@dataclass(frozen=True)
class QuadratureErrorBound:
    """Certified error of :func:`ppaudit.noisy_argmax.class_probabilities` for ``C`` classes
    (every histogram, every σ).

    Attributes:
        num_classes: ``C``.
        step, half_width: the grid's largest step ``h`` and half-width ``L``.
        strip: whole-line trapezoid error per class (:func:`strip_error_bound`).
        truncation: grid truncation, all classes together.
        rounding: floating-point allowance, all classes together.
        per_class: bound on ``|p̂_c − p_c|`` for every class of the returned vector.
        l1: bound on ``Σ_c |p̂_c − p_c|``.
        total_variation: ``l1 / 2``: the total variation between the returned law and Eq. (4).
    """

    num_classes: int
    step: float
    half_width: float
    strip: float
    truncation: float
    rounding: float
    per_class: float
    l1: float
    total_variation: float


@cache
def quadrature_error_bound(num_classes: int) -> QuadratureErrorBound:
    """Proven bound on the error of :func:`ppaudit.noisy_argmax.class_probabilities`
    (Chadha et al. 2024, Eq. (4)).

    Before the output is renormalised, class ``c`` is off by at most
    ``ε_c = strip + truncation + saturation_c + abscissa_c + ρ`` and the classes together by
    ``E = C·strip + truncation + C·saturation_c + abscissa + ρ``, where

    * ``strip``: :func:`strip_error_bound` at the grid's step (the lattice step of integer
      histograms is never larger);
    * ``truncation``: :func:`_truncation_bound` (grid ``⊇ [−L, L]``);
    * ``saturation_c = h φ(9) + C Φ(−9) + (2L + 1) φ(10)`` (tables read Φ = 1, φ = 0 beyond 9;
      the real-valued path caps gaps at ``L + 10``);
    * abscissae: every abscissa is computed with an absolute error at most
      ``Δ = (9L + 31)·eps`` (linspace, the gap ``/σ``, the sum, and ndtr's own argument
      scaling: the error model takes ``ndtr(x) = Φ(x + δ)(1 + η)`` with ``|δ| ≤ |x|·eps`` and
      ``|η| ≤ 4 eps``, which the tests check against mpmath), which moves ``φ(x_c)`` by ``|x_c| φ(x_c) Δ`` and each ``Φ(x_i)`` by ``φ(x_i) Δ``. Per
      class, ``abscissa_c = 1.01 Δ (0.8 + h + (C−1) φ(0)(1 + h φ(0)))`` (``Σ h |φ'| ≤ 0.8 + h``,
      ``Σ h φ ≤ 1 + h φ(0)``). Over all classes the ``Φ`` part is ``Δ`` times the trapezoid sum
      of ``G2 = Σ_c Σ_{i≠c} φ_c φ_i ∏ Φ_j ≥ 0``, and ``∫ G2 = E[Z_winner] ≤ E[max_i Z_i] ≤ √(2 ln C)``
      (differentiate ``Σ_c f_c = d/du ∏ Φ(u + d_i)`` once more), plus its strip error
      (:func:`_second_order_strip_bound`): ``abscissa = 1.01 Δ (C (0.8 + h) + √(2 ln C) + strip₂)``;
    * ``ρ = 1.01 (5C + (L + 1)² + m + 2)·eps``: relative error of each node's value
      (4 eps per ndtr value, ``(L+1)²`` eps for ``exp(−x²/2)``, the products, the weight) and
      of the sum of ``m`` positive terms, relative to ``p̂_c ≤ 1.01``.

    Clipping to ``[0, 1]`` cannot increase an error; dividing by the sum ``S`` (``|S − 1| ≤ E``)
    gives ``|p̂_c/S − p_c| ≤ (ε_c + E)/(1 − E)`` and ``Σ_c |p̂_c/S − p_c| ≤ 2E/(1 − E)``.

    Args:
        num_classes: ``C ≥ 1``.

    Returns:
        A :class:`QuadratureErrorBound` (all zeros for ``C = 1``, where ``Pr = 1`` exactly).

    Raises:
        ValueError: on ``num_classes`` not an integer ≥ 1.

    Example:
        >>> b = quadrature_error_bound(10)
        >>> bool(b.per_class < 1e-12 and b.total_variation < 1e-12)
        True
    """
    c = _check_classes(num_classes)
    if c == 1:
        return QuadratureErrorBound(1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    h, L = _design(c)
    m = math.ceil(2.0 * L / h) + 4
    phi0 = _INV_SQRT_2PI
    strip = strip_error_bound(c, h)
    trunc = _truncation_bound(c, h, L)
    sat_c = h * math.exp(-40.5) * phi0 + c * float(ndtr(-9.0)) + (2 * L + 1) * math.exp(-50.0) * phi0
    delta = (9.0 * L + 31.0) * _EPS
    absc_c = 1.01 * delta * (0.8 + h + (c - 1) * phi0 * (1.0 + h * phi0))
    absc = 1.01 * delta * (c * (0.8 + h) + math.sqrt(2.0 * math.log(c)) + _second_order_strip_bound(c, h))
    rho = 1.01 * (5 * c + (L + 1.0) ** 2 + m + 2) * _EPS * 1.01
    eps_c = strip + trunc + sat_c + absc_c + rho
    big_e = c * (strip + sat_c) + min(c * absc_c, absc) + trunc + rho
    if big_e >= 0.5:
        raise ValueError(f"no useful quadrature bound for num_classes={c} (E = {big_e:.3g})")
    per_class = (eps_c + big_e) / (1.0 - big_e)
    l1 = 2.0 * big_e / (1.0 - big_e)
    return QuadratureErrorBound(c, h, L, strip, trunc, min(c * absc_c, absc) + rho + c * sat_c, per_class, l1, 0.5 * l1)
