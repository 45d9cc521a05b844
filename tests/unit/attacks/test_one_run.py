"""One-run f-DP audit (Mahloujifar et al. 2025b, Alg. 3; observational paper App. B, Thm 5)."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numpy.testing import assert_allclose

from ppaudit.attacks.one_run import (
    MU_TOL,
    alg3_rejects,
    epsilon_gdp_family,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    gdp_trade_off,
    max_epsilon_gdp_family,
    mu_lower_bound,
)

_N = NormalDist()


def slow_alg3_rejects(mu: float, cp: int, c: int, m: int, gamma: float = 0.05, tau: float = 0.0) -> bool:
    """Independent scalar implementation: the full loop of Alg. 3, no early exit, stdlib normal.

    Lines 2–3 as ``r[c] = γc/m``, ``h[c] = γ(c'−c)/m``; line 5 as
    ``h[i] = max(h[i+1], ḡ⁻¹(r[i+1]))`` with ``ḡ⁻¹(r) = max(0, Φ(Φ⁻¹(r) − μ) − τ)``.
    """
    r = gamma * c / m
    h = gamma * (cp - c) / m
    for i in range(c - 1, -1, -1):
        if r <= 0.0:
            g_inv = 0.0
        elif r >= 1.0:
            g_inv = 1.0 - tau
        else:
            g_inv = max(0.0, _N.cdf(_N.inv_cdf(r) - mu) - tau)
        h_new = max(h, g_inv)
        r = r + i / (cp - i) * (h_new - h)
        h = h_new
    return r + h >= cp / m


def test_alg3_matches_slow_reference():
    rng = np.random.default_rng(20250101)
    for _ in range(150):
        m = int(rng.integers(5, 2000))
        cp = int(rng.integers(1, m + 1))
        c = int(rng.integers(0, cp + 1))
        mu = float(rng.uniform(0.0, 3.0))
        tau = float(rng.choice([0.0, 1e-4, 1e-2]))
        assert alg3_rejects(mu, cp, c, m, tau=tau) == slow_alg3_rejects(mu, cp, c, m, tau=tau), (mu, cp, c, m, tau)


def test_alg3_hand_derived_case_mu_zero():
    # At μ = 0, τ = 0 and c = c' = n: ḡ⁻¹(r) = r, so h[i] = r[i+1] and the increments
    # a_i = r[i] − r[i+1] satisfy a_i = w_i a_{i+1}, a_{n−1} = (n−1)γ n/m, giving
    # a_i = γ (n/m) C(n−1, i−1) and r[0] + h[0] = 2 r[0] = γ 2^n n/m. Alg. 3 rejects iff
    # γ 2^n ≥ 1, i.e. iff Pr[Bin(n, 1/2) = n] = 2^−n ≤ γ: the exact binomial test.
    for n in range(1, 12):
        for m in (n, 10 * n, 1000):
            for conf in (0.95, 0.9, 0.99):
                gamma = 1.0 - conf
                expected = 2.0**-n <= gamma
                assert alg3_rejects(0.0, n, n, m, confidence=conf) == expected, (n, m, conf)


def test_alg3_monotone_in_mu():
    mus = np.linspace(0.0, 4.0, 81)
    for cp, c, m in [(100, 90, 10_000), (1000, 700, 10**5), (50, 50, 50), (5000, 2600, 10**6)]:
        rej = alg3_rejects(mus, cp, c, m)
        # rejected for small μ, accepted for large μ: once False, stays False
        assert not np.any(rej[1:] & ~rej[:-1]), (cp, c, m, rej)


def test_epsilon_monotone_in_correct_guesses_and_tau():
    cp, m = 400, 40_000
    cs = np.arange(200, 401, 10)
    eps = epsilon_gdp_family(cp, cs, m)
    assert np.all(np.diff(eps) >= -1e-4)
    assert eps[0] == 0.0 and eps[-1] > 3.0
    taus = [0.0, 1e-6, 1e-5, 1e-4, 1e-3]
    e_tau = [epsilon_gdp_family(cp, 380, m, tau=t) for t in taus]
    assert np.all(np.diff(e_tau) <= 1e-4)


def test_mu_lower_bound_is_the_boundary():
    for cp, c, m in [(100, 95, 10_000), (10_000, 7500, 10**6), (1000, 1000, 10**6)]:
        mu = mu_lower_bound(cp, c, m)
        assert alg3_rejects(mu, cp, c, m)
        assert not alg3_rejects(mu + 2 * MU_TOL, cp, c, m)


def test_known_case_against_slow_bisection():
    # (c', c, m) = (100, 100, 10^4): 100 guesses, all correct. Independent computation:
    # bisection with the slow scalar Alg. 3, then ε from Definition 8 by a grid over x.
    cp, c, m = 100, 100, 10_000
    lo, hi = 0.0, 8.0
    while hi - lo > 1e-6:
        mid = 0.5 * (lo + hi)
        if slow_alg3_rejects(mid, cp, c, m):
            lo = mid
        else:
            hi = mid
    assert_allclose(mu_lower_bound(cp, c, m), lo, atol=2e-5)
    x = np.logspace(-12, -1, 4001)
    f = np.array([_N.cdf(_N.inv_cdf(1.0 - xi) - lo) for xi in x])
    gain = 1.0 - f - 1e-5
    eps_grid = np.max(np.log(gain[gain > 0] / x[gain > 0]))
    assert_allclose(epsilon_gdp_family(cp, c, m, delta=1e-5), eps_grid, rtol=2e-3)


def test_gdp_epsilon_is_definition_8():
    # ε(δ) = max_x log((1 − f_μ(x) − δ)/x), computed on a fine log grid (independent of the
    # closed-form δ(ε) curve that gdp_epsilon inverts).
    x = np.logspace(-16, -1e-12, 200_001)
    for mu in (0.3, 1.0, 2.5):
        for delta in (1e-5, 1e-3):
            with np.errstate(invalid="ignore", divide="ignore"):
                grid = np.nanmax(np.log((1.0 - gdp_trade_off(x, mu) - delta) / x))
            assert_allclose(gdp_epsilon(mu, delta), max(grid, 0.0), rtol=1e-3, atol=1e-6)
            assert_allclose(gdp_delta(gdp_epsilon(mu, delta), mu), delta, rtol=1e-8)
            assert_allclose(gdp_mu(gdp_epsilon(mu, delta), delta), mu, rtol=1e-8)


def test_sweep_max_equals_exact_max():
    rng = np.random.default_rng(3)
    m = 20_000
    cp = np.round(np.arange(1, 21) / 20 * m).astype(int)
    acc = 0.5 + 0.4 * np.exp(-4 * np.arange(1, 21) / 20)
    c = rng.binomial(np.tile(cp, (4, 1)), acc)
    exact = epsilon_gdp_family(np.tile(cp, (4, 1)), c, m)
    eps, best = max_epsilon_gdp_family(np.tile(cp, (4, 1)), c, m)
    assert_allclose(eps, exact.max(axis=1), atol=1e-3)
    assert_allclose(exact[np.arange(4), best], exact.max(axis=1), atol=1e-3)


def test_trivial_cases():
    assert epsilon_gdp_family(100, 0, 1000) == 0.0
    assert epsilon_gdp_family(0, 0, 1000) == 0.0
    assert epsilon_gdp_family(4, 4, 4) == 0.0  # 2^-4 > 0.05: nothing can be rejected
    assert epsilon_gdp_family(1000, 500, 10_000) == 0.0  # chance accuracy


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(num_guesses=10, num_correct=11, num_samples=100), "num_correct=11"),
        (dict(num_guesses=200, num_correct=1, num_samples=100), "num_guesses=200"),
        (dict(num_guesses=-1, num_correct=0, num_samples=100), "non-negative integers"),
        (dict(num_guesses=10.5, num_correct=1, num_samples=100), "non-negative integers"),
        (dict(num_guesses=10, num_correct=1, num_samples=100, delta=0.0), "delta"),
        (dict(num_guesses=10, num_correct=1, num_samples=100, confidence=1.0), "confidence"),
        (dict(num_guesses=10, num_correct=1, num_samples=100, tau=1.5), "tau"),
    ],
)
def test_bad_input_raises(kwargs, match):
    with pytest.raises(ValueError, match=match):
        epsilon_gdp_family(**kwargs)


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(20, 5000),
    frac=st.floats(0.01, 1.0),
    acc=st.floats(0.5, 1.0),
    mu1=st.floats(0.0, 3.0),
    mu2=st.floats(0.0, 3.0),
)
def test_property_rejection_is_monotone_in_mu(m, frac, acc, mu1, mu2):
    cp = max(1, int(frac * m))
    c = int(round(acc * cp))
    lo, hi = sorted((mu1, mu2))
    # rejecting a weaker claim (larger μ) implies rejecting every stronger one
    if alg3_rejects(hi, cp, c, m):
        assert alg3_rejects(lo, cp, c, m)


@settings(max_examples=40, deadline=None)
@given(mu=st.floats(0.0, 20.0), delta=st.floats(1e-10, 0.5))
def test_property_gdp_epsilon_valid(mu, delta):
    eps = gdp_epsilon(mu, delta)
    assert eps >= 0.0
    if eps > 0:
        assert_allclose(gdp_delta(eps, mu), delta, rtol=1e-6, atol=1e-15)
    assert gdp_epsilon(mu + 0.1, delta) >= eps
