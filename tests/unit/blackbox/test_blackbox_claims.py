"""Claims and the upper bounds they imply (ppaudit.blackbox.claims)."""

import math

import dp_accounting
import numpy as np
import pytest
from numpy.testing import assert_allclose

from ppaudit.blackbox import Claim


def test_zcdp_and_gdp_rdp_curves_closed_form():
    a = np.array([1.5, 2.0, 10.0])
    assert_allclose(Claim.zcdp(0.3).rdp_curve(a), 0.3 * a)
    # mu-GDP = post-processing of (N(0,1), N(mu,1)): D_alpha = alpha mu^2 / 2 (closed form).
    assert_allclose(Claim.gdp(0.7).rdp_curve(a), a * 0.49 / 2)


def test_pure_dp_rdp_curve_is_min_of_eps_and_zcdp():
    c = Claim.dp(1.0, 0.0)
    assert_allclose(c.rdp_curve([1.5, 2.0, 4.0]), [0.75, 1.0, 1.0])
    assert np.all(np.isinf(Claim.dp(1.0, 1e-6).rdp_curve([2.0, 3.0])))


def test_rdp_claim_uses_next_larger_order_and_inf_above():
    c = Claim.rdp([2.0, 8.0], [0.5, 3.0])
    assert_allclose(c.rdp_curve([1.5, 2.0, 4.0, 8.0]), [0.5, 0.5, 3.0, 3.0])
    assert np.isinf(c.rdp_curve([9.0])[0])


def test_gdp_epsilon_matches_dp_accounting_gaussian():
    # Gaussian mechanism, sensitivity 1, sigma 2  <=>  0.5-GDP; dp_accounting's PLD is exact up to discretisation.
    sigma, delta = 2.0, 1e-5
    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(sigma))
    ref = acc.get_epsilon(delta)
    assert_allclose(Claim.gdp(1 / sigma).epsilon_at(delta), ref, rtol=2e-3)


def test_zcdp_epsilon_matches_dp_accounting_rdp():
    # rho-zCDP with rho = 1/(2 sigma^2) is the Gaussian mechanism's RDP curve; dp_accounting's RDP
    # accountant uses the same Balle et al. 2020 conversion on its own order grid.
    sigma, delta = 3.0, 1e-6
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(sigma))
    ref = acc.get_epsilon(delta)
    ours = Claim.zcdp(1 / (2 * sigma**2)).epsilon_at(delta)
    assert ours <= ref * (1 + 1e-3)  # our order grid is at least as fine
    assert_allclose(ours, ref, rtol=2e-2)


def test_dp_claim_epsilon_only_for_larger_delta():
    c = Claim.dp(2.0, 1e-5)
    assert c.epsilon_at(1e-4) == 2.0
    assert math.isinf(c.epsilon_at(1e-6))


@pytest.mark.parametrize("bad", [lambda: Claim.zcdp(-1), lambda: Claim.dp(1.0, 1.5), lambda: Claim.gdp("x"),
                                 lambda: Claim.rdp([0.5], [1.0]), lambda: Claim.rdp([2.0, 3.0], [1.0])])
def test_bad_claims_raise_value_error(bad):
    with pytest.raises(ValueError):
        bad()
