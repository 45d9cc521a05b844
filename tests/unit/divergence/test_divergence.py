"""Rényi divergence, 2-cut, k-cut and exact RDP (Chadha et al. 2024, Eqs. (3)-(5))."""

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppaudit.divergence import bernoulli_renyi_divergence, exact_rdp, k_cut, renyi_divergence, two_cut
from ppaudit.noisy_argmax import class_probabilities

ORDERS = np.array([1.1, 1.5, 2.0, 3.0, 8.0, 32.0, 128.0])


def _naive_renyi(p, q, alpha):
    """Direct formula of Chadha et al. 2024, §2.1, in 50-digit arithmetic."""
    with mpmath.workdps(50):
        s = mpmath.fsum(mpmath.mpf(pi) ** alpha * mpmath.mpf(qi) ** (1 - alpha) for pi, qi in zip(p, q) if pi > 0)
        return float(mpmath.log(s) / (alpha - 1))


def test_closed_forms():
    # Bernoulli, α = 2: D = log(p²/q + (1−p)²/(1−q)).
    p, q = 0.3, 0.6
    assert bernoulli_renyi_divergence(p, q, [2.0])[0] == pytest.approx(math.log(p * p / q + (1 - p) ** 2 / (1 - q)), rel=1e-13)
    # Identical distributions: 0 at every order; disjoint support: inf.
    assert np.all(renyi_divergence([0.2, 0.8], [0.2, 0.8], ORDERS) == 0)
    assert np.all(np.isinf(renyi_divergence([1.0, 0.0], [0.0, 1.0], ORDERS)))
    # Max-divergence limit α = inf.
    assert renyi_divergence([0.5, 0.5], [0.25, 0.75], [np.inf])[0] == pytest.approx(math.log(2.0))
    # Two Gaussian-mechanism outputs discretised finely approach α μ²/2 (sanity of scale).
    x = np.linspace(-12, 13, 20001)
    p = np.exp(-0.5 * x**2); p /= p.sum()
    q = np.exp(-0.5 * (x - 1) ** 2); q /= q.sum()
    assert renyi_divergence(p, q, [3.0])[0] == pytest.approx(1.5, rel=1e-4)


def test_against_naive_formula():
    rng = np.random.default_rng(0)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        got = renyi_divergence(p, q, ORDERS)
        ref = [_naive_renyi(p, q, a) for a in ORDERS]
        np.testing.assert_allclose(got, ref, rtol=1e-11)


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 8), st.integers(0, 10_000))
def test_divergence_properties(c, seed):
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(c) * 0.7), rng.dirichlet(np.ones(c) * 0.7)
    d = renyi_divergence(p, q, ORDERS)
    assert np.all(d >= 0)
    assert np.all(np.diff(d) >= -1e-12)  # nondecreasing in the order
    tc = two_cut(p, q, ORDERS)
    assert np.all(tc <= d + 1e-12)  # 2-cut ≤ divergence
    kc = k_cut(p, q, ORDERS, max(2, c - 1))
    assert np.all(tc <= kc + 1e-12) and np.all(kc <= d + 1e-12)
    np.testing.assert_allclose(k_cut(p, q, ORDERS, c), d, rtol=1e-12)


def test_two_cut_equals_brute_force_over_all_subsets():
    rng = np.random.default_rng(7)
    for _ in range(15):
        c = 6
        p, q = rng.dirichlet(np.ones(c)), rng.dirichlet(np.ones(c))
        best = np.zeros(ORDERS.size)
        for r in range(1, c):
            for sub in itertools.combinations(range(c), r):
                idx = list(sub)
                best = np.maximum(best, bernoulli_renyi_divergence(p[idx].sum(), q[idx].sum(), ORDERS))
        np.testing.assert_allclose(two_cut(p, q, ORDERS), best, rtol=1e-12)


def test_k_cut_equals_brute_force_partitions():
    def partitions(items, k):
        if k == 1:
            yield [items]
            return
        if len(items) < k:
            return
        first, rest = items[0], items[1:]
        for part in partitions(rest, k - 1):
            yield [[first]] + part
        for part in partitions(rest, k):
            for i in range(len(part)):
                yield part[:i] + [[first] + part[i]] + part[i + 1 :]

    rng = np.random.default_rng(11)
    for _ in range(5):
        p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        for k in (2, 3, 4):
            best = np.full(ORDERS.size, -np.inf)
            for part in partitions(list(range(6)), k):
                pp = np.array([p[c].sum() for c in part])
                qq = np.array([q[c].sum() for c in part])
                best = np.maximum(best, [_naive_renyi(pp, qq, a) for a in ORDERS])
            np.testing.assert_allclose(k_cut(p, q, ORDERS, k), best, rtol=1e-10)


def test_exact_rdp_fig6_pair():
    h0, h1 = [14, 12, 10, 8, 6], [13, 13, 10, 8, 6]
    p0, p1 = class_probabilities(h0, 2.0), class_probabilities(h1, 2.0)
    ref = np.maximum([_naive_renyi(p0, p1, a) for a in ORDERS], [_naive_renyi(p1, p0, a) for a in ORDERS])
    got = exact_rdp(h0, h1, 2.0, ORDERS)
    np.testing.assert_allclose(got, ref, rtol=1e-9)
    # Symmetric in the pair, zero on identical histograms, and below the data-independent α/σ².
    np.testing.assert_allclose(exact_rdp(h1, h0, 2.0, ORDERS), got, rtol=1e-12)
    assert np.all(exact_rdp(h0, h0, 2.0, ORDERS) == 0)
    assert np.all(got <= ORDERS / 4.0)
    # Batched pairs.
    both = exact_rdp([h0, h0], [h1, h0], 2.0, ORDERS)
    np.testing.assert_allclose(both[0], got) and np.testing.assert_allclose(both[1], 0)


def test_exact_rdp_huge_orders_use_tiny_probabilities():
    # With a gap of 60σ the bottom class has Pr ~ 1e-400; the divergence must stay finite.
    r = exact_rdp([60, 0], [59, 1], 1.0, [2.0, 100.0, 1000.0])
    assert np.all(np.isfinite(r)) and np.all(np.diff(r) > 0)
    # Two classes: output Bernoulli(Φ(−gap/(σ√2))), compare with the Bernoulli formula in logs.
    from scipy.special import log_ndtr
    lp = np.array([log_ndtr(-60 / math.sqrt(2)), log_ndtr(60 / math.sqrt(2))])
    lq = np.array([log_ndtr(-58 / math.sqrt(2)), log_ndtr(58 / math.sqrt(2))])
    from ppaudit.divergence import renyi_divergence_from_log
    ref = np.maximum(renyi_divergence_from_log(lp, lq, [2.0, 100.0, 1000.0]), renyi_divergence_from_log(lq, lp, [2.0, 100.0, 1000.0]))
    np.testing.assert_allclose(r, ref, rtol=1e-7)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: renyi_divergence([0.5, 0.5], [0.5, 0.5], [1.0]), "order must be > 1"),
        (lambda: renyi_divergence([0.5, 0.5], [0.5, 0.5], [0.5, 2.0]), "order must be > 1"),
        (lambda: renyi_divergence([0.5, 0.6], [0.5, 0.5], [2.0]), "sum to 1"),
        (lambda: renyi_divergence([1.5, -0.5], [0.5, 0.5], [2.0]), "non-negative"),
        (lambda: renyi_divergence([0.5, 0.5], [0.2, 0.3, 0.5], [2.0]), "same number of outcomes"),
        (lambda: two_cut([0.5, 0.5], [0.2, 0.3, 0.5], [2.0]), "same length"),
        (lambda: k_cut([0.5, 0.5], [0.5, 0.5], [2.0], 1), "k must be an integer >= 2"),
        (lambda: exact_rdp([1, 2], [1, 2, 3], 1.0, [2.0]), "same shape"),
        (lambda: exact_rdp([1, 2], [1, 3], -1.0, [2.0]), "sigma"),
        (lambda: exact_rdp([1, -2], [1, 3], 1.0, [2.0]), "non-negative"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
