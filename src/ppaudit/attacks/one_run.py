"""One-run f-DP audit (Algorithm 3): the family-free ε lower bound and the μ-GDP-family ε.

Two ε are computed from a game's counts, under two names that keep their meanings apart:

* :func:`epsilon_lower_bound` — the largest ε whose (ε, δ)-DP trade-off curve ``f_{ε,δ}``
  Algorithm 3 rejects: a lower bound on the mechanism's ε at δ, valid for *any* mechanism;
* :func:`epsilon_gdp_family` (with :func:`mu_lower_bound`) — the paper's report (Definition 8):
  the largest rejected μ of the μ-GDP family converted to ε at δ. It **assumes a Gaussian
  trade-off curve**: a mechanism whose curve has another shape (randomized response at exactly
  ε = 1) can be (1, δ)-DP while this number exceeds 1 in most games. It is at least the
  family-free ε up to the bisection tolerances (μ-GDP with ``ε_μ(δ)`` = the family-free ε
  implies ``f_{ε,δ}``, i.e. ``f_μ ≥ f_{ε,δ}``, and Algorithm 3 rejects a larger ``f`` more easily).

The audit of Mahloujifar et al. (2025b, "Auditing f-differential privacy in one run"),
Algorithm 3, as printed in App. B of the observational-auditing paper, with the
distribution-shift generalisation of its Theorem 5 / Theorem 9:

* a game with ``m`` samples in which the adversary makes ``c'`` guesses (abstaining on the
  rest) and ``c`` of them are correct;
* for a trade-off function ``f`` the mechanism is claimed to satisfy, Algorithm 3 decides
  whether ``Pr[C ≥ c] ≤ γ`` (γ = 1 − confidence) — i.e. whether the claim is rejected;
* the family is μ-GDP, ``f_μ(x) = Φ(Φ⁻¹(1 − x) − μ)`` (Dong et al. 2020), and the audit
  reports the smallest μ that is *not* rejected (Definition 8), converted to ε at δ with
  the exact GDP → (ε, δ) curve (Dong et al. 2020, Cor. 2.13);
* with a proxy distribution at total-variation distance ≤ τ from the data distribution the
  audit uses ``g(s) = f(min(1, s + τ))`` (Eq. (2)), i.e. ``ḡ⁻¹(r) = f⁻¹(1 − r) − τ``
  (Lemma 13), floored at 0 (the generalised inverse of the increasing ``ḡ``).

Reading of Algorithm 3 (App. B). Lines 2–3 are garbled in the print ("h[c] = γ·(c−c)/m");
we use ``r[c] = γ c / m`` and ``h[c] = γ (c' − c) / m``, which is what the proof uses
(``α_c ≥ c τ'/m``, ``β_c ≤ (c' − c) τ'/m``) and what the authors' reference implementation
does. Line 5 is used as ``h[i] = max(h[i+1], ḡ⁻¹(r[i+1]))``, again as in the reference
implementation. The maximum is a valid strengthening of the printed line: ``h[i]`` is a
lower bound on ``β_i = Σ_{j ≥ i} (c' − j)/m · p_j``, which is non-increasing in ``i``, so
``β_i ≥ β_{i+1} ≥ h[i+1]``; Lemma 13's telescoped form (Eq. (5)–(7)) only needs each
``h`` to be a lower bound on its ``β`` with non-negative coefficients, and the monotonicity
of Lemma 14 survives (moving mass from β to α never lowers ``r[0] + h[0]``). Without it the
printed recursion lets ``r`` fall below 0 or exceed 1 (``Φ⁻¹`` then returns NaN and the
audit silently accepts). With it, ``r`` and ``h`` are non-decreasing as ``i`` decreases,
which gives two exact shortcuts: once ``r[i] + h[i] ≥ c'/m`` the audit rejects, and once
``h[i] = h[i+1]`` the recursion is at a fixed point.

Speed (the issue asks for m = 10⁶, 100 repetitions and a 1–100 % sweep of ``c'`` in well
under a minute): the recursion is run in lock-step for all (c', c, μ) problems at once with
numpy; a problem leaves the batch when it crosses (reject), reaches a fixed point, or when a
geometric bound proves that it can no longer cross (accept; see ``_alg3_rejects``). μ is
found by a vectorised bisection; finished (c', c, m, γ, τ) results are memoised; and the
sweep (:func:`max_epsilon_gdp_family`) stops refining a ``c'`` whose bracket cannot beat
the best one of its repetition.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.special import log_ndtr, ndtr, ndtri

from .._validation import check_probability

__all__ = [
    "gdp_trade_off",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "dp_trade_off",
    "alg3_rejects",
    "alg3_rejects_tradeoff",
    "mu_lower_bound",
    "epsilon_gdp_family",
    "max_epsilon_gdp_family",
    "epsilon_lower_bound",
    "max_epsilon_lower_bound",
    "GDP_FAMILY_NOTE",
    "MU_TOL",
]

#: The label every printed or serialised GDP-family ε carries.
GDP_FAMILY_NOTE = ("assumes a Gaussian trade-off curve (mu-GDP family, Definition 8); "
                   "not a lower bound for mechanisms whose curve has another shape")

#: Absolute tolerance of the bisection on μ. The reported μ is the largest value shown to
#: be rejected, so the result errs on the low (conservative) side by at most this much,
#: i.e. by at most about ``(μ + 4.3)·MU_TOL`` in ε at δ = 1e-5.
MU_TOL = 1e-5

_MU_HI0 = 8.0
_MU_MAX = 1e3
_CACHE_MAX = 1 << 20
_MU_CACHE: dict[tuple, float] = {}


# --------------------------------------------------------------------------------------
# Gaussian differential privacy
# --------------------------------------------------------------------------------------


def gdp_trade_off(x, mu) -> np.ndarray:
    """Trade-off function of μ-GDP: ``f_μ(x) = Φ(Φ⁻¹(1 − x) − μ)`` (Dong et al. 2020, Def. 2.7).

    Args:
        x: type-I error(s) in [0, 1].
        mu: μ ≥ 0.

    Returns:
        Array of type-II errors, broadcast over ``x`` and ``mu``.
    """
    x = np.asarray(x, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    if np.any((x < 0) | (x > 1)) or np.any(np.isnan(x)):
        raise ValueError(f"x must be in [0, 1], got {x}")
    if np.any(mu < 0) or np.any(np.isnan(mu)):
        raise ValueError(f"mu must be >= 0, got {mu}")
    return ndtr(ndtri(1.0 - x) - mu)


def gdp_delta(epsilon, mu) -> np.ndarray:
    """δ(ε) of μ-GDP: ``Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` (Dong et al. 2020, Cor. 2.13).

    This is also the exact privacy profile of the Gaussian mechanism with sensitivity Δ
    and noise σ at ``μ = Δ/σ`` (the analytic Gaussian mechanism, Balle & Wang 2018, Thm 8).

    Args:
        epsilon: ε ≥ 0.
        mu: μ ≥ 0 (``μ = 0`` gives δ = 0).

    Returns:
        Array of δ, broadcast over the inputs.
    """
    eps = np.asarray(epsilon, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    if np.any(eps < 0) or np.any(np.isnan(eps)):
        raise ValueError(f"epsilon must be >= 0, got {eps}")
    if np.any(mu < 0) or np.any(np.isnan(mu)):
        raise ValueError(f"mu must be >= 0, got {mu}")
    eps, mu = np.broadcast_arrays(eps, mu)
    out = np.zeros(eps.shape)
    pos = mu > 0
    e, m = eps[pos], mu[pos]
    with np.errstate(over="ignore", invalid="ignore"):
        a = ndtr(-e / m + m / 2.0)
        b = np.exp(e + log_ndtr(-e / m - m / 2.0))
        d = np.where(np.isinf(e), 0.0, a - b)
        d = np.where(np.isinf(m) & np.isfinite(e), 1.0, d)
    out[pos] = np.clip(d, 0.0, 1.0)
    return out if out.ndim else out[()]


def _bisect_brackets(root_above, lo: np.ndarray, hi: np.ndarray, max_steps: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised bisection of brackets ``[lo, hi]`` to machine precision: at each step the
    midpoint replaces ``lo`` where ``root_above(mid)`` (the root lies above it) and ``hi`` elsewhere."""
    for _ in range(max_steps):
        mid = 0.5 * (lo + hi)
        up = root_above(mid)
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
        if np.all(hi - lo <= 4 * np.finfo(float).eps * np.maximum(hi, 1.0)):
            break
    return lo, hi


def gdp_epsilon(mu, delta: float) -> np.ndarray:
    """Smallest ε with μ-GDP ⇒ (ε, δ)-DP, i.e. the root of ``gdp_delta(ε, μ) = δ``.

    This is Definition 8's ``ε(δ) = max_x log((1 − f(x) − δ)/x)`` for ``f = f_μ``. Solved by
    a vectorised bisection to machine precision on the bracket
    ``[0, μ (μ/2 − Φ⁻¹(δ))]`` (at the right end ``Φ(−ε/μ + μ/2) = δ``).

    Args:
        mu: μ ≥ 0 (``inf`` gives ``inf``).
        delta: δ in (0, 1).

    Returns:
        ε ≥ 0 with the shape of ``mu`` (a float for scalar input).
    """
    d = check_probability(delta, "delta")
    mu = np.asarray(mu, dtype=np.float64)
    if np.any(mu < 0) or np.any(np.isnan(mu)):
        raise ValueError(f"mu must be >= 0, got {mu}")
    flat = mu.ravel()
    out = np.zeros(flat.shape)
    out[np.isinf(flat)] = np.inf
    # δ(0) = 2Φ(μ/2) − 1; ε = 0 already suffices when that is ≤ δ.
    need = np.isfinite(flat) & (flat > 0) & (2.0 * ndtr(flat / 2.0) - 1.0 > d)
    if np.any(need):
        m = flat[need]
        lo = np.zeros_like(m)
        hi = m * (m / 2.0 - ndtri(d))
        _, hi = _bisect_brackets(lambda x: gdp_delta(x, m) > d, lo, hi)  # δ(ε) decreases in ε
        out[need] = hi
    out = out.reshape(mu.shape)
    return float(out) if out.ndim == 0 else out


def gdp_mu(epsilon, delta: float) -> np.ndarray:
    """The μ for which μ-GDP is exactly (ε, δ)-DP: root in μ of ``gdp_delta(ε, μ) = δ``.

    ``gdp_delta`` is increasing in μ, so this is the largest μ whose GDP guarantee implies
    (ε, δ)-DP. With ``μ = Δ/σ`` it calibrates the Gaussian mechanism exactly (Balle & Wang
    2018, the analytic Gaussian mechanism).

    Args:
        epsilon: ε ≥ 0 (``inf`` gives ``inf``).
        delta: δ in (0, 1).

    Returns:
        μ with the shape of ``epsilon`` (a float for scalar input).
    """
    d = check_probability(delta, "delta")
    eps = np.asarray(epsilon, dtype=np.float64)
    if np.any(eps < 0) or np.any(np.isnan(eps)):
        raise ValueError(f"epsilon must be >= 0, got {eps}")
    flat = eps.ravel()
    out = np.full(flat.shape, np.inf)
    fin = np.isfinite(flat)
    if np.any(fin):
        e = flat[fin]
        lo = np.zeros_like(e)
        hi = np.ones_like(e)
        for _ in range(60):
            small = gdp_delta(e, hi) < d
            if not np.any(small):
                break
            hi = np.where(small, 2.0 * hi, hi)
        lo, _ = _bisect_brackets(lambda x: ~(gdp_delta(e, x) > d), lo, hi)  # δ(μ) increases in μ
        out[fin] = lo
    out = out.reshape(eps.shape)
    return float(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------------------
# Algorithm 3
# --------------------------------------------------------------------------------------


def _alg3_rejects(mu: np.ndarray, cp: np.ndarray, c: np.ndarray, m: np.ndarray, gamma: float, tau: float) -> np.ndarray:
    """Vectorised Algorithm 3 for the GDP family: True where it returns False (rejects μ).

    All arrays are 1-D float64 of the same length; ``c ≤ cp ≤ m``, ``c`` integral.

    Per problem, with ``F(r) = max(0, Φ(Φ⁻¹(r) − μ) − τ)`` (``= ḡ⁻¹``, Lemma 13) and
    ``w_i = i/(c' − i)``, for ``i = c − 1, …, 0``::

        h[i] = max(h[i+1], F(r[i+1]))
        r[i] = r[i+1] + w_i (h[i] − h[i+1])

    and reject iff ``r[0] + h[0] ≥ c'/m``. Exact exits: crossing (r, h only grow), fixed
    point (``h[i] = h[i+1]``), ``i = 0``. Bound exit (accept): ``F`` is convex with
    ``F'(r) ≤ exp(μ Φ⁻¹(r) − μ²/2)``, and ``h[j+1] ≥ F(r[j+2])``, so the increments
    ``Δ_j = h[j] − h[j+1]`` obey ``Δ_j ≤ F'(r[j+1]) w_{j+1} Δ_{j+1}``. If every later ``r``
    stays below ``R̄``, then ``Δ_j ≤ ρ Δ_i`` geometrically with ``ρ = F'(R̄) w_i`` (``w`` only
    decreases), so ``r`` grows by at most ``w_i Δ_i ρ/(1−ρ)`` and ``r + h`` by at most
    ``(1 + w_i) Δ_i ρ/(1−ρ)``. When ``ρ < 1``, the ``r`` bound is ≤ ``R̄`` (which makes the
    induction self-consistent) and ``r + h`` stays below ``c'/m``, the final answer is
    "accept" and the problem leaves the batch.
    """
    n = mu.size
    out = np.zeros(n, dtype=bool)
    target = cp / m
    r = gamma * c / m
    h = gamma * (cp - c) / m
    i = c - 1.0
    idx = np.flatnonzero(i >= 0)
    r, h, i, tgt, mu_, cp_ = r[idx], h[idx], i[idx], target[idx], mu[idx], cp[idx]
    step = 0
    while idx.size:
        step += 1
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            hn = ndtr(ndtri(r) - mu_)
            if tau > 0.0:
                hn -= tau
            np.maximum(hn, h, out=hn)
            d = hn - h
            w = i / (cp_ - i)
            rn = r + w * d
            sn = rn + hn
            crossed = sn >= tgt
            keep = ~crossed & (d > 0) & (i > 0)
            if step % 4 == 0:
                rbar = np.minimum(tgt - hn, rn + 0.5 * (tgt - sn))
                rho = np.exp(mu_ * ndtri(rbar) - 0.5 * mu_ * mu_) * w
                inc = np.where(rho < 1.0, d * rho / (1.0 - rho), np.inf)
                safe = (rn + w * inc <= rbar) & (sn + (1.0 + w) * inc < tgt * (1.0 - 1e-12))
                keep &= ~safe
        if np.any(crossed):
            out[idx[crossed]] = True
        if keep.all():
            r, h = rn, hn
            i -= 1.0
        else:
            idx = idx[keep]
            r, h, i = rn[keep], hn[keep], i[keep] - 1.0
            tgt, mu_, cp_ = tgt[keep], mu_[keep], cp_[keep]
    return out


def _as_problem(num_guesses, num_correct, num_samples, tau):
    cp = np.asarray(num_guesses)
    c = np.asarray(num_correct)
    m = np.asarray(num_samples)
    arrays = {}
    for name, arr in (("num_guesses", cp), ("num_correct", c), ("num_samples", m)):
        f = np.asarray(arr, dtype=np.float64)
        if f.size == 0:
            raise ValueError(f"{name} must not be empty, got {arr!r}")
        if not np.all(np.isfinite(f)) or np.any(f < 0) or np.any(f != np.round(f)):
            bad = f[~np.isfinite(f) | (f < 0) | (f != np.round(f))]
            raise ValueError(f"{name} must hold non-negative integers, got {bad[:5]}")
        arrays[name] = f
    cp, c, m = np.broadcast_arrays(arrays["num_guesses"], arrays["num_correct"], arrays["num_samples"])
    if np.any(c > cp):
        k = np.flatnonzero((c > cp).ravel())[0]
        raise ValueError(
            f"num_correct must be <= num_guesses, got num_correct={c.ravel()[k]:.0f} > num_guesses={cp.ravel()[k]:.0f}"
        )
    if np.any(cp > m):
        k = np.flatnonzero((cp > m).ravel())[0]
        raise ValueError(
            f"num_guesses must be <= num_samples, got num_guesses={cp.ravel()[k]:.0f} > num_samples={m.ravel()[k]:.0f}"
        )
    if np.any(m < 1):
        raise ValueError(f"num_samples must be >= 1, got {m[m < 1][:5]}")
    try:
        t = float(tau)
    except (TypeError, ValueError):
        raise ValueError(f"tau must be a number in [0, 1), got {tau!r}") from None
    if not (0.0 <= t < 1.0):
        raise ValueError(f"tau must be in [0, 1), got {tau!r}")
    return cp, c, m, t


def alg3_rejects(mu, num_guesses, num_correct, num_samples, confidence: float = 0.95, tau: float = 0.0) -> np.ndarray:
    """Algorithm 3 (App. B) for the μ-GDP trade-off function, shifted by τ (Theorem 5).

    Args:
        mu: the GDP parameter(s) μ ≥ 0 of the hypothesis.
        num_guesses: ``c'``, the number of non-abstaining guesses.
        num_correct: ``c``, the number of correct guesses (≤ ``c'``).
        num_samples: ``m``, the number of samples in the game (≥ ``c'``).
        confidence: ``1 − γ``; Algorithm 3 is run with γ = 1 − confidence.
        tau: total-variation bound τ of Theorem 5 (0 when the proxy is exact).

    Returns:
        Boolean array (broadcast shape): True where Algorithm 3 returns False, i.e. where
        ``Pr[C ≥ c] ≤ γ`` under μ-GDP, so the hypothesis "the mechanism is μ-GDP" is
        rejected at level γ.
    """
    conf = check_probability(confidence, "confidence")
    mu_arr = np.asarray(mu, dtype=np.float64)
    if np.any(np.isnan(mu_arr)) or np.any(mu_arr < 0):
        raise ValueError(f"mu must be >= 0, got {mu_arr}")
    cp, c, m, t = _as_problem(num_guesses, num_correct, num_samples, tau)
    mu_b, cp, c, m = np.broadcast_arrays(mu_arr, cp, c, m)
    out = _alg3_rejects(mu_b.ravel().copy(), cp.ravel().copy(), c.ravel().copy(), m.ravel().copy(), 1.0 - conf, t)
    out = out.reshape(mu_b.shape)
    return bool(out) if out.ndim == 0 else out


def _bisect(cp, c, m, gamma, tau, tol, group=None):
    """Vectorised bisection for μ* (the boundary between rejected and accepted μ).

    Returns ``(lo, hi)``: ``lo`` is rejected (or 0), ``hi`` is accepted. With ``group``
    (integer labels, e.g. repetitions) a problem stops being refined once its ``hi`` is
    ≤ the largest ``lo`` in its group: it can then never be the group's maximum.
    """
    n = cp.size
    lo = np.zeros(n)
    hi = np.full(n, _MU_HI0)
    # Make sure hi is accepted (doubling; large μ makes F ≈ 0 so every problem accepts).
    todo = np.flatnonzero(c > 0)
    while todo.size:
        rej = _alg3_rejects(hi[todo], cp[todo], c[todo], m[todo], gamma, tau)
        if not np.any(rej):
            break
        lo[todo[rej]] = hi[todo[rej]]
        hi[todo[rej]] *= 2.0
        todo = todo[rej]
        if np.any(hi[todo] > _MU_MAX):
            raise ValueError(f"Algorithm 3 still rejects mu={_MU_MAX}; check num_correct/num_guesses/num_samples")
    hi[c == 0] = 0.0  # no correct guess: nothing is ever rejected
    if group is not None:
        order = np.unique(group, return_inverse=True)[1]
        ngroups = order.max() + 1 if n else 0
    while True:
        active = hi - lo > tol
        if group is not None:
            best = np.full(ngroups, -np.inf)
            np.maximum.at(best, order, lo)
            active &= hi > best[order]
        act = np.flatnonzero(active)
        if act.size == 0:
            break
        mid = 0.5 * (lo[act] + hi[act])
        rej = _alg3_rejects(mid, cp[act], c[act], m[act], gamma, tau)
        lo[act[rej]] = mid[rej]
        hi[act[~rej]] = mid[~rej]
    return lo, hi


def _mu_exact(cp, c, m, gamma, tau, tol):
    """μ lower bounds for flat problem arrays, with de-duplication and memoisation."""
    keys = np.stack([cp, c, m], axis=1)
    uniq, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.ravel()
    res = np.empty(len(uniq))
    missing = []
    for j, (a, b, mm) in enumerate(uniq):
        key = (a, b, mm, gamma, tau, tol)
        v = _MU_CACHE.get(key)
        if v is None:
            missing.append(j)
        else:
            res[j] = v
    if missing:
        miss = np.asarray(missing)
        lo, _ = _bisect(uniq[miss, 0].copy(), uniq[miss, 1].copy(), uniq[miss, 2].copy(), gamma, tau, tol)
        res[miss] = lo
        if len(_MU_CACHE) + miss.size > _CACHE_MAX:
            _MU_CACHE.clear()
        for j, v in zip(miss, lo):
            a, b, mm = uniq[j]
            _MU_CACHE[(a, b, mm, gamma, tau, tol)] = float(v)
    return res[inv]


def mu_lower_bound(
    num_guesses, num_correct, num_samples, confidence: float = 0.95, tau: float = 0.0, mu_tol: float = MU_TOL
):
    """Largest μ that Algorithm 3 rejects (to within ``mu_tol``, from below).

    Every μ-GDP claim with μ ≤ the returned value is rejected at level γ = 1 − confidence
    (Theorem 5 with the GDP family), so the mechanism is not μ-GDP for those μ.

    Args:
        num_guesses, num_correct, num_samples: ``c'``, ``c``, ``m`` (broadcastable).
        confidence: 1 − γ.
        tau: the TV bound τ of Theorem 5.
        mu_tol: absolute bisection tolerance on μ.

    Returns:
        μ ≥ 0 (array of the broadcast shape, a float for scalar input).
    """
    conf = check_probability(confidence, "confidence")
    tol = float(mu_tol)
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"mu_tol must be > 0, got {mu_tol!r}")
    cp, c, m, t = _as_problem(num_guesses, num_correct, num_samples, tau)
    shape = cp.shape
    mu = _mu_exact(cp.ravel().copy(), c.ravel().copy(), m.ravel().copy(), 1.0 - conf, t, tol).reshape(shape)
    return float(mu) if mu.ndim == 0 else mu


def epsilon_gdp_family(num_guesses, num_correct, num_samples, delta=1e-5, confidence=0.95, tau=0.0):
    """The μ-GDP-family ε at δ of a one-run game (Mahloujifar et al. 2025b, Alg. 3; Theorem 5; Definition 8).

    The audit over the μ-GDP family: the largest rejected μ (Algorithm 3 with
    ``g(s) = f_μ(min(1, s + τ))``) converted to ε at δ with the GDP privacy profile
    (Definition 8) — the observational paper's report. The result is ``0`` when no μ > 0 is
    rejected. It **assumes a Gaussian trade-off curve**: it says that no μ-GDP mechanism with
    ε(δ) below it fits the game, not that the mechanism's ε at δ is above it (for that, see
    :func:`epsilon_lower_bound`, which is not larger up to the bisection tolerances).

    Args:
        num_guesses: ``c'``, non-abstaining guesses (integer array-like, ≤ ``num_samples``).
        num_correct: ``c``, correct guesses (≤ ``num_guesses``).
        num_samples: ``m``, samples (canaries) in the game.
        delta: δ of the reported (ε, δ).
        confidence: 1 − γ (default 0.95, the paper's γ = 0.05).
        tau: TV distance between the data distribution and the proxy (Theorem 5); 0 in
            the paper's main experiments.

    Returns:
        ε lower bound(s), broadcast over the inputs (a float for scalar input).

    Raises:
        ValueError: if a count is negative or non-integral, ``num_correct > num_guesses``,
            ``num_guesses > num_samples``, or δ, confidence, τ are out of range.

    Example:
        >>> round(epsilon_gdp_family(1000, 1000, 10**6), 2) > 3
        True
    """
    d = check_probability(delta, "delta")
    mu = mu_lower_bound(num_guesses, num_correct, num_samples, confidence=confidence, tau=tau)
    return gdp_epsilon(mu, d)


def max_epsilon_gdp_family(num_guesses, num_correct, num_samples, delta=1e-5, confidence=0.95, tau=0.0):
    """Best μ-GDP-family ε over a sweep of guess counts, per repetition (the c' sweep of §6.2).

    Assumes a Gaussian trade-off curve, as :func:`epsilon_gdp_family`.
    Equivalent to ``epsilon_gdp_family(...).max(axis=-1)`` (up to the μ tolerance) but much
    faster: a ``c'`` whose bracket on μ can no longer beat the best lower end of its row is
    not refined further. Like the paper, the maximum is not corrected for the multiple
    ``c'`` tried (App. E discusses this; use a fixed ``c'`` for a corrected audit).

    Args:
        num_guesses: ``(R, K)`` (or ``(K,)``) guess counts ``c'`` per repetition.
        num_correct: same shape, correct guesses.
        num_samples: ``m`` (broadcastable).
        delta, confidence, tau: as in :func:`epsilon_gdp_family`.

    Returns:
        ``(epsilon, best_index)``: arrays of shape ``(R,)`` (floats/ints for 1-D input) with
        the best ε and the column that achieves it.
    """
    d = check_probability(delta, "delta")
    conf = check_probability(confidence, "confidence")
    cp, c, m, t = _as_problem(num_guesses, num_correct, num_samples, tau)
    squeeze = cp.ndim == 1
    if cp.ndim not in (1, 2):
        raise ValueError(f"num_guesses must be 1-D or 2-D, got shape {cp.shape}")
    cp2, c2, m2 = (np.atleast_2d(a) for a in (cp, c, m))
    rows, cols = cp2.shape
    group = np.repeat(np.arange(rows), cols)
    lo, _ = _bisect(cp2.ravel().copy(), c2.ravel().copy(), m2.ravel().copy(), 1.0 - conf, t, MU_TOL, group=group)
    lo = lo.reshape(rows, cols)
    best = np.argmax(lo, axis=1)
    eps = np.atleast_1d(gdp_epsilon(lo[np.arange(rows), best], d))
    if squeeze:
        return float(eps[0]), int(best[0])
    return eps, best


def max_epsilon_lower_bound(num_guesses, num_correct, num_samples, delta=1e-5, confidence=0.95, tau=0.0):
    """Deprecated (removed in the next release): the best *family-free* ε over a ``c'`` sweep.

    Until this release this name returned the μ-GDP-family maximum, which is now
    :func:`max_epsilon_gdp_family`. Like every name with ``epsilon_lower_bound`` in it, it now
    holds the family-free :func:`epsilon_lower_bound` (so no caller silently keeps a
    Gaussian-curve number under this name), maximised over the sweep *without* correction for
    the ``c'`` tried — so it is not itself a valid bound. It warns on every call.

    Returns:
        ``(epsilon, best_index)`` as :func:`max_epsilon_gdp_family`.
    """
    warnings.warn("max_epsilon_lower_bound is deprecated; it now maximises the family-free epsilon_lower_bound "
                  "(uncorrected over the c' sweep); the paper's mu-GDP-family maximum, which "
                  f"{GDP_FAMILY_NOTE}, is max_epsilon_gdp_family", DeprecationWarning, stacklevel=2)
    cp, c, m, _ = _as_problem(num_guesses, num_correct, num_samples, tau)
    if cp.ndim not in (1, 2):
        raise ValueError(f"num_guesses must be 1-D or 2-D, got shape {cp.shape}")
    eps = np.atleast_2d(epsilon_lower_bound(cp, c, m, delta=delta, confidence=confidence, tau=tau))
    best = np.argmax(eps, axis=1)
    top = eps[np.arange(eps.shape[0]), best]
    if cp.ndim == 1:
        return float(top[0]), int(best[0])
    return top, best


# --------------------------------------------------------------------------------------
# Any trade-off function: the family-free (ε, δ) bound
# --------------------------------------------------------------------------------------


def dp_trade_off(x, epsilon: float, delta: float) -> np.ndarray:
    """Trade-off function of (ε, δ)-DP: ``max(0, 1 − δ − e^ε x, e^{−ε}(1 − δ − x))`` (Dong et al. 2020, Prop. 2.4)."""
    x = np.asarray(x, dtype=np.float64)
    e = float(epsilon)
    d = float(delta)
    return np.maximum(0.0, np.maximum(1.0 - d - math.exp(e) * x, math.exp(-e) * (1.0 - d - x)))


def alg3_rejects_tradeoff(f_of_one_minus, num_guesses: int, num_correct: int, num_samples: int,
                          confidence: float = 0.95, tau: float = 0.0) -> bool:
    """Algorithm 3 (App. B) for an arbitrary symmetric trade-off function ``f``.

    ``F(r) = max(0, f(1 − r) − τ)`` is ``ḡ⁻¹`` of Lemma 13 for a symmetric ``f``
    (``f⁻¹ = f``); the recursion, the ``max`` of line 5 and the exact exits are those of
    :func:`alg3_rejects` (which is the vectorised GDP case; the tests check that both agree
    on ``f_μ``).

    Args:
        f_of_one_minus: callable ``r ↦ f(1 − r)`` on [0, 1].
        num_guesses, num_correct, num_samples: ``c'``, ``c``, ``m``.
        confidence: 1 − γ.
        tau: the TV bound τ of Theorem 5.

    Returns:
        True iff Algorithm 3 returns False, i.e. the claim ``f`` is rejected at level γ.
    """
    gamma = 1.0 - check_probability(confidence, "confidence")
    cp, c, m = int(num_guesses), int(num_correct), int(num_samples)
    if not (0 <= c <= cp <= m and m >= 1):
        raise ValueError(f"need 0 <= num_correct <= num_guesses <= num_samples, got c={c}, c'={cp}, m={m}")
    if c == 0:
        return False  # Pr[C >= 0] = 1 > gamma: nothing can be rejected
    target = cp / m
    r = gamma * c / m
    h = gamma * (cp - c) / m
    for i in range(c - 1, -1, -1):
        hn = max(h, float(f_of_one_minus(min(r, 1.0))) - tau, 0.0)
        if hn <= h:
            break
        r = r + i / (cp - i) * (hn - h)
        h = hn
        if r + h >= target:
            return True
    return r + h >= target


def _dp_f_one_minus(epsilon: float, delta: float):
    """``r ↦ f_{ε,δ}(1 − r)`` with scalar math (the inner loop of the bisection below)."""
    up, down = math.exp(epsilon), math.exp(-epsilon)
    return lambda r: max(0.0, 1.0 - delta - up * (1.0 - r), down * (r - delta))


def _dp_epsilon_one(cp: int, c: int, m: int, delta: float, confidence: float, tau: float, tol: float) -> float:
    def rej(e):
        return alg3_rejects_tradeoff(_dp_f_one_minus(e, delta), cp, c, m, confidence, tau)

    if not rej(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while rej(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 1e3:
            return math.inf
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if rej(mid):
            lo = mid
        else:
            hi = mid
    return lo


def epsilon_lower_bound(num_guesses, num_correct, num_samples, delta=1e-5, confidence=0.95, tau=0.0, tol: float = 1e-4):
    """ε lower bound at δ from a one-run game, valid for any mechanism (Algorithm 3 on ``f_{ε,δ}``).

    The largest ε whose (ε, δ)-DP trade-off function ``f_{ε,δ}`` (Dong et al. 2020, Prop. 2.4)
    Algorithm 3 rejects, to within ``tol`` from below. Rejecting ``f_{ε,δ}`` at level γ means
    the mechanism is not (ε, δ)-DP (Theorem 5 with ``f = f_{ε,δ}``; rejection is monotone in ε
    because ``f_{ε,δ}`` decreases in ε), so with confidence ``1 − γ`` its ε at δ is above the
    result — whatever the shape of its trade-off curve. It is not above
    :func:`epsilon_gdp_family`, the paper's Gaussian-family report (up to the bisection tolerances).

    Args:
        num_guesses, num_correct, num_samples: ``c'``, ``c``, ``m`` (broadcastable integer counts).
        delta: δ of the bound.
        confidence: 1 − γ.
        tau: the TV bound τ of Theorem 5.
        tol: absolute bisection tolerance on ε.

    Returns:
        ε ≥ 0 (``inf`` beyond 1000), broadcast over the inputs (a float for scalar input).

    Raises:
        ValueError: as :func:`epsilon_gdp_family`.

    Example:
        >>> round(epsilon_lower_bound(1000, 950, 100_000), 2)  # the GDP-family report is 3.12
        2.69
    """
    d = check_probability(delta, "delta")
    conf = check_probability(confidence, "confidence")
    if not (math.isfinite(float(tol)) and tol > 0):
        raise ValueError(f"tol must be > 0, got {tol!r}")
    cp, c, m, t = _as_problem(num_guesses, num_correct, num_samples, tau)
    keys = np.stack([cp.ravel(), c.ravel(), m.ravel()], axis=1)
    uniq, inv = np.unique(keys, axis=0, return_inverse=True)
    vals = np.array([_dp_epsilon_one(int(a), int(b), int(mm), d, conf, t, float(tol)) for a, b, mm in uniq])
    out = vals[np.asarray(inv).ravel()].reshape(cp.shape)
    return float(out) if out.ndim == 0 else out
