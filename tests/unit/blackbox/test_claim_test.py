"""The exact test of a pure-DP claim (:mod:`ppaudit.blackbox.claim_test`): level at the boundary, power, errors.

Counts are drawn directly from their binomial laws (no mechanism), so the loops cost < 1 s.
"""

import math

import numpy as np
import pytest

from ppaudit.blackbox import Claim
from ppaudit.blackbox.claim_test import applies, choose_direction, claim_test


def _reject_rate(p0, p1, t, eps, reps, level, seed):
    ss = np.random.SeedSequence(seed)
    g = np.random.default_rng(ss)
    k0 = g.binomial(t, p0, size=reps)
    k1 = g.binomial(t, p1, size=reps)
    return np.mean([claim_test(int(a), int(b), t, eps, g) <= level for a, b in zip(k0, k1)])


@pytest.mark.parametrize("eps,p1,t", [(0.1, 0.3, 2000), (1.0, 0.02, 5000), (0.0, 0.5, 500)])
def test_level_at_the_boundary_of_the_null(eps, p1, t):
    """p0 = e^eps·p1 exactly (the worst case of H0): rejections at level 0.05 within 3 standard errors of 0.05."""
    reps = 3000
    rate = _reject_rate(math.exp(eps) * p1, p1, t, eps, reps, 0.05, seed=int(eps * 100) + t)
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps), rate


def test_planted_violation_is_detected_and_beats_the_interval_test():
    """p0 = e^0.25·p1 against a claim eps0 = 0.1: the exact test rejects far more often than 5 %."""
    rate = _reject_rate(math.exp(0.25) * 0.3, 0.3, 20_000, 0.1, 300, 0.05, seed=7)
    assert rate >= 0.8, rate


def test_direction_is_chosen_on_the_pilot():
    assert choose_direction(0.4, 0.2, 1000, 0.1) == (False, False)
    assert choose_direction(0.2, 0.4, 1000, 0.1) == (False, True)
    assert choose_direction(0.9, 0.95, 1000, 0.1)[0] is True  # the complement carries the ratio


def test_applies_only_to_pure_dp_claims():
    assert applies(Claim.dp(0.5))
    assert not applies(Claim.dp(0.5, 1e-6))
    assert not applies(Claim.zcdp(0.5))
    assert not applies(None)


def test_bad_input_names_the_value():
    g = np.random.default_rng(0)
    with pytest.raises(ValueError, match="k0 must be .*got 11"):
        claim_test(11, 0, 10, 0.1, g)
    with pytest.raises(ValueError, match="epsilon must be .*got -1"):
        claim_test(1, 0, 10, -1.0, g)
    with pytest.raises(ValueError, match="trials must be .*got 0"):
        claim_test(0, 0, 0, 0.1, g)
