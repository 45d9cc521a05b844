"""Worst-case exact RDP of the Gaussian noisy argmax (ppaudit.accounting.worst_case).

References used here:
* brute force: the exact RDP (Chadha et al. 2024, Eq. (4), both directions, via
  ``ppaudit.divergence.exact_rdp``) of *every* ordered neighbouring pair of histograms;
* C = 2 closed form: the two-class noisy argmax outputs class 0 with probability
  ``Φ((h_0 − h_1)/(σ√2))``, so the worst case is a maximum of Bernoulli Rényi divergences,
  evaluated here with mpmath at 50 digits (independent of the quadrature of Eq. (4)).
"""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest

from ppaudit.accounting import gnmax_rdp_data_independent, gnmax_rdp_worst_case
from ppaudit.accounting.worst_case import canonical_pairs, count_canonical_pairs
from ppaudit.divergence import exact_rdp

ORDERS = np.array([1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0])


def _all_histograms(k: int, c: int) -> np.ndarray:
    rows = [h for h in itertools.product(range(k + 1), repeat=c) if sum(h) == k]
    return np.asarray(rows, dtype=np.int64)


def _all_neighbour_pairs(k: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (h, h − e_i + e_j), i ≠ j, h_i ≥ 1."""
    h0, h1 = [], []
    for h in _all_histograms(k, c):
        for i, j in itertools.permutations(range(c), 2):
            if h[i] == 0:
                continue
            g = h.copy()
            g[i] -= 1
            g[j] += 1
            h0.append(h)
            h1.append(g)
    return np.asarray(h0), np.asarray(h1)


@pytest.mark.parametrize("k,c,sigma", [(12, 3, 2.0), (12, 4, 1.0), (10, 4, 4.0), (8, 4, 0.7), (12, 2, 3.0)])
def test_brute_force_over_all_neighbouring_pairs(k, c, sigma):
    h0, h1 = _all_neighbour_pairs(k, c)
    brute = exact_rdp(h0, h1, sigma, ORDERS).max(axis=0)
    res = gnmax_rdp_worst_case(k, c, sigma, ORDERS)
    assert res.exhaustive
    np.testing.assert_allclose(res.rdp, brute, rtol=1e-9, atol=0)
    # The returned pair attains the value and is a neighbouring pair summing to k.
    np.testing.assert_allclose(
        np.diagonal(exact_rdp(res.argmax_h, res.argmax_h_prime, sigma, ORDERS)), res.rdp, rtol=1e-9
    )
    assert np.all(res.argmax_h.sum(axis=1) == k) and np.all(res.argmax_h_prime.sum(axis=1) == k)
    assert np.all(np.abs(res.argmax_h - res.argmax_h_prime).sum(axis=1) == 2)
    # Certified bound: never below the brute-force worst case, never above α/σ².
    assert np.all(res.rdp_upper >= brute * (1 - 1e-9))
    assert np.all(res.rdp_upper <= gnmax_rdp_data_independent(sigma, ORDERS) * (1 + 1e-12))


@pytest.mark.parametrize("k,c,sigma", [(12, 4, 2.0), (11, 5, 1.5), (9, 6, 3.0)])
def test_reduced_search_finds_the_brute_force_maximum(k, c, sigma):
    """Numerical claim of the heuristic (C ≥ 4): it finds the maximum on small settings."""
    h0, h1 = _all_neighbour_pairs(k, c)
    brute = exact_rdp(h0, h1, sigma, ORDERS).max(axis=0)
    res = gnmax_rdp_worst_case(k, c, sigma, ORDERS, max_exhaustive_pairs=0)
    assert not res.exhaustive
    assert res.num_pairs_evaluated < count_canonical_pairs(k, c)
    np.testing.assert_allclose(res.rdp, brute, rtol=1e-9, atol=0)
    assert np.all(res.rdp_upper >= brute * (1 - 1e-9))


def test_canonical_pairs_cover_every_neighbouring_pair():
    k, c = 7, 4
    canon = {tuple(row) for row in canonical_pairs(k, c).tolist()}
    assert len(canon) == count_canonical_pairs(k, c) == canonical_pairs(k, c).shape[0]
    h0, h1 = _all_neighbour_pairs(k, c)
    reached = set()
    for h, g in zip(h0, h1):
        i = int(np.nonzero(g - h == -1)[0][0])
        j = int(np.nonzero(g - h == 1)[0][0])
        rest = sorted((h[m] for m in range(c) if m not in (i, j)), reverse=True)
        reached.add((int(h[i]), int(h[j]), *map(int, rest)))
    assert reached == canon


def _bernoulli_renyi_mp(p, q, alpha):
    return mpmath.log(p**alpha * q ** (1 - alpha) + (1 - p) ** alpha * (1 - q) ** (1 - alpha)) / (alpha - 1)


@pytest.mark.parametrize("k,sigma", [(30, 5.0), (250, 40.0), (11, 2.0)])
def test_two_classes_against_mpmath_closed_form(k, sigma):
    mpmath.mp.dps = 50
    orders = [2.0, 8.0, 32.0]
    ref = []
    for alpha in orders:
        best = mpmath.mpf(0)
        for a in range(1, k + 1):  # h = (a, k − a) → (a − 1, k − a + 1)
            p = mpmath.ncdf((2 * a - k) / (sigma * mpmath.sqrt(2)))
            q = mpmath.ncdf((2 * a - 2 - k) / (sigma * mpmath.sqrt(2)))
            best = max(best, _bernoulli_renyi_mp(p, q, alpha), _bernoulli_renyi_mp(q, p, alpha))
        ref.append(float(best))
    res = gnmax_rdp_worst_case(k, 2, sigma, orders)
    np.testing.assert_allclose(res.rdp, ref, rtol=1e-8)
    np.testing.assert_allclose(res.rdp_upper, ref, rtol=1e-6)


def test_paper_setting_bounds_and_random_pairs():
    """PATE on MNIST / Fashion-MNIST (Chadha §5.1): k = 250, C = 10, σ = 40."""
    k, c, sigma = 250, 10, 40.0
    orders = np.array([2.0, 16.0, 128.0])
    res = gnmax_rdp_worst_case(k, c, sigma, orders)
    di = gnmax_rdp_data_independent(sigma, orders)
    assert np.all(res.rdp <= res.rdp_upper * (1 + 1e-9))
    assert np.all(res.rdp_upper <= di * (1 + 1e-12))
    # Certified to within 1 % here, and well below α/σ² (≈ 2/π of it at α = 2).
    assert np.all(res.certified)
    assert abs(res.rdp[0] / di[0] - 2 / np.pi) < 2e-3
    # No random neighbouring pair exceeds the value found (both directions).
    rng = np.random.default_rng(np.random.SeedSequence(15))
    n = 300
    alpha = rng.uniform(0.05, 3.0, size=n)
    h = np.stack([rng.multinomial(k, rng.dirichlet(np.full(c, a))) for a in alpha])
    i = np.array([rng.choice(np.nonzero(row)[0]) for row in h])
    j = (i + rng.integers(1, c, size=n)) % c
    g = h.copy()
    g[np.arange(n), i] -= 1
    g[np.arange(n), j] += 1
    vals = exact_rdp(h, g, sigma, orders)
    assert np.all(vals <= res.rdp * (1 + 1e-9))
    # The maximising pair of the 2-class-like regime is attained exactly.
    np.testing.assert_allclose(
        np.diagonal(exact_rdp(res.argmax_h, res.argmax_h_prime, sigma, orders)), res.rdp, rtol=1e-9
    )


def test_frame_and_determinism():
    a = gnmax_rdp_worst_case(10, 3, 2.0, [2.0, 8.0])
    b = gnmax_rdp_worst_case(10, 3, 2.0, [2.0, 8.0])
    np.testing.assert_array_equal(a.rdp, b.rdp)
    frame = a.to_frame()
    assert list(frame["order"]) == [2.0, 8.0]
    assert set(frame["procedure"]) == {"ours"}
    assert {"rdp_worst_case", "rdp_upper", "data_independent", "h", "h_prime", "relative_gap"} <= set(frame)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"num_teachers": 0}, "num_teachers"),
        ({"num_classes": 1}, "num_classes"),
        ({"sigma": -1.0}, "sigma"),
        ({"orders": [0.5]}, "order"),
        ({"orders": [np.inf]}, "finite"),
        ({"rtol": 2.0}, "rtol"),
        ({"grid_per_sigma": 1}, "grid_per_sigma"),
    ],
)
def test_bad_input_names_the_value(kwargs, match):
    args = {"num_teachers": 5, "num_classes": 3, "sigma": 1.0, "orders": [2.0]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        gnmax_rdp_worst_case(**args)


def test_epsilon_over_queries_against_dp_accounting():
    """The data-independent column is dp-accounting's Gaussian (sensitivity √2) accountant."""
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant

    from ppaudit.accounting import worst_case_epsilon

    orders = [1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]
    res = gnmax_rdp_worst_case(30, 3, 5.0, orders)
    table = worst_case_epsilon(res, [1, 100, 10_000], 1e-6)
    for n, eps_di in zip(table["num_queries"], table["epsilon_data_independent"]):
        acc = rdp_privacy_accountant.RdpAccountant(orders)
        acc.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(5.0 / np.sqrt(2)), int(n)))
        np.testing.assert_allclose(eps_di, acc.get_epsilon(1e-6), rtol=1e-9)
    assert np.all(table["epsilon_worst_case"] <= table["epsilon_upper"] * (1 + 1e-12))
    assert np.all(table["epsilon_upper"] <= table["epsilon_data_independent"] * (1 + 1e-12))
    assert np.all(np.diff(table["epsilon_worst_case"]) > 0)
    with pytest.raises(ValueError, match="num_queries"):
        worst_case_epsilon(res, [0], 1e-6)
