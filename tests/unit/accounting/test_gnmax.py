"""GNMax theory (Papernot et al. 2018) and the RDP → DP conversion (Chadha et al. 2024, Thm 1)."""

import math

import mpmath
import numpy as np
import pytest
from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

from ppaudit.accounting import gnmax_log_q, gnmax_rdp_data_dependent, gnmax_rdp_data_independent, rdp_to_dp

ORDERS = np.array([1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0])


def test_data_independent_is_alpha_over_sigma_squared():
    np.testing.assert_allclose(gnmax_rdp_data_independent(40.0, ORDERS), ORDERS / 1600.0, rtol=0)


def test_log_q_union_bound_closed_form():
    # Prop. 7: q = Σ_{i≠i*} ½ erfc((n* − n_i)/(2σ)).
    counts, sigma = [200, 30, 20], 40.0
    q = 0.5 * math.erfc(170 / 80) + 0.5 * math.erfc(180 / 80)
    assert float(gnmax_log_q(counts, sigma)) == pytest.approx(math.log(q), rel=1e-12)
    # Capped at 1 - 1/C when the union bound exceeds it.
    assert float(gnmax_log_q([5, 5, 5, 5], 10.0)) == pytest.approx(math.log(0.75))


def _thm6_reference(counts, sigma, lam):
    """Papernot et al. 2018, Thm 6 with Prop. 10's μ1, μ2, computed in mpmath from the statement."""
    mpmath.mp.dps = 40
    counts = sorted(counts, reverse=True)
    q = sum(mpmath.erfc(mpmath.mpf(counts[0] - c) / (2 * sigma)) / 2 for c in counts[1:])
    mu2 = mpmath.sqrt(sigma**2 * mpmath.log(1 / q))
    mu1 = mu2 + 1
    e1, e2 = mu1 / sigma**2, mu2 / sigma**2
    assert lam <= mu1 and q <= mpmath.e ** ((mu2 - 1) * e2) / ((mu1 / (mu1 - 1)) * (mu2 / (mu2 - 1))) ** mu2
    A = (1 - q) / (1 - (q * mpmath.e**e2) ** ((mu2 - 1) / mu2))
    B = mpmath.e**e1 / q ** (1 / (mu1 - 1))
    val = mpmath.log((1 - q) * A ** (lam - 1) + q * B ** (lam - 1)) / (lam - 1)
    return float(min(val, lam / sigma**2))


@pytest.mark.parametrize("counts,sigma", [([240, 5, 5], 40.0), ([40, 8, 2, 0, 0], 6.0), ([230, 15, 5, 0], 40.0)])
def test_data_dependent_matches_theorem_6(counts, sigma):
    orders = np.array([2.0, 4.0, 8.0, 16.0])
    got = gnmax_rdp_data_dependent(counts, sigma, orders)
    ref = [_thm6_reference(counts, sigma, a) for a in orders]
    np.testing.assert_allclose(got, ref, rtol=1e-9)
    assert np.all(got < gnmax_rdp_data_independent(sigma, orders))


def test_data_dependent_never_above_data_independent_and_batched():
    rng = np.random.default_rng(1)
    h = rng.integers(0, 250, (30, 10))
    dd = gnmax_rdp_data_dependent(h, 40.0, ORDERS)
    assert dd.shape == (30, ORDERS.size)
    assert np.all(dd <= gnmax_rdp_data_independent(40.0, ORDERS) + 1e-15) and np.all(dd >= 0)
    np.testing.assert_allclose(dd[3], gnmax_rdp_data_dependent(h[3], 40.0, ORDERS))


def test_rdp_to_dp_matches_dp_accounting_and_formula():
    rdp = ORDERS / 1600.0 * 1000  # 1000 GNMax queries at σ = 40
    eps, order = rdp_to_dp(rdp, ORDERS, 1e-6, return_order=True)
    ref_eps, ref_order = compute_epsilon(ORDERS, rdp, 1e-6)
    assert eps == pytest.approx(ref_eps, rel=1e-12) and order == ref_order
    a = ORDERS
    direct = np.min(rdp + np.log((a - 1) / a) - (math.log(1e-6) + np.log(a)) / (a - 1))
    assert eps == pytest.approx(direct, rel=1e-12)
    classic = rdp_to_dp(rdp, ORDERS, 1e-6, method="classic")
    assert classic == pytest.approx(np.min(rdp + math.log(1e6) / (a - 1)), rel=1e-12)
    assert classic > eps  # Balle et al. 2020 improves on the classic conversion
    # Batched RDP curves.
    both = rdp_to_dp(np.stack([rdp, 2 * rdp]), ORDERS, 1e-6)
    assert both.shape == (2,) and both[1] > both[0]
    # Thm 1 at finite orders converts 0-RDP to a small positive ε (not 0): check the formula.
    zero = rdp_to_dp(np.zeros_like(ORDERS), ORDERS, 1e-6)
    assert zero == pytest.approx(np.min(np.log((a - 1) / a) - (math.log(1e-6) + np.log(a)) / (a - 1)))


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: gnmax_rdp_data_independent(0.0, [2.0]), "sigma"),
        (lambda: gnmax_rdp_data_independent(1.0, [1.0]), "order must be > 1"),
        (lambda: gnmax_rdp_data_dependent([1, -1], 1.0, [2.0]), "non-negative"),
        (lambda: rdp_to_dp([0.1], [2.0], 0.0), "delta"),
        (lambda: rdp_to_dp([0.1], [2.0], 1.5), "delta"),
        (lambda: rdp_to_dp([0.1, 0.2], [2.0], 1e-5), "one value per order"),
        (lambda: rdp_to_dp([-0.1], [2.0], 1e-5), ">= 0"),
        (lambda: rdp_to_dp([0.1], [2.0], 1e-5, method="zcdp"), "method"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
