"""Black-box audits of mechanisms (ppaudit.blackbox.audit_mechanism / audit_counts)."""

import math

import numpy as np
import pytest
from scipy.stats import binom

from ppaudit.audit import dp_epsilon_lower_bound, two_cut_lower_bound
from ppaudit.blackbox import Claim, audit_counts, audit_mechanism

ORDERS = [1.5, 2.0, 4.0, 8.0]


def rr(eps):
    p = math.exp(eps) / (1 + math.exp(eps))

    def mech(bit, n, rng):
        return np.where(rng.random(n) < p, bit, 1 - bit)

    return mech


def test_false_alarms_at_most_beta_on_a_tight_claim():
    # Binary RR with eps = 1 is exactly (1, 0)-DP: the set {0} attains the ratio e^1, so the
    # Eq. (1) bound is close to the claim and a biased audit would cross it often.
    reps = 150
    seeds = np.random.SeedSequence(11).spawn(reps)
    flagged = sum(audit_mechanism(rr(1.0), 0, 1, 4000, ORDERS, rng=s, claim=Claim.dp(1.0)).violation for s in seeds)
    assert flagged <= binom.ppf(0.999, reps, 0.05)


def test_planted_bug_is_flagged():
    reps = 40
    seeds = np.random.SeedSequence(12).spawn(reps)
    flagged = sum(audit_mechanism(rr(1.0), 0, 1, 4000, ORDERS, rng=s, claim=Claim.dp(0.5)).violation for s in seeds)
    assert flagged >= 0.9 * reps


def test_same_seed_same_result_and_counts_match_components():
    a = audit_mechanism(rr(1.0), 0, 1, 5000, ORDERS, rng=3, claim=Claim.zcdp(0.4))
    b = audit_mechanism(rr(1.0), 0, 1, 5000, ORDERS, rng=3, claim=Claim.zcdp(0.4))
    assert a.counts0.tolist() == b.counts0.tolist() and a.counts1.tolist() == b.counts1.tolist()
    assert np.array_equal(a.rdp_lower_bound, b.rdp_lower_bound) and a.epsilon_lower_bound == b.epsilon_lower_bound
    assert a.counts0.sum() == 5000 and a.counts1.sum() == 5000
    assert a.outputs == [0, 1]
    assert a.details["tests"] == 2 and a.rdp_confidence == pytest.approx(0.975)


def test_audit_counts_uses_the_existing_audits():
    c0, c1 = np.array([700, 300]), np.array([300, 700])
    res = audit_counts(c0, c1, ORDERS, confidence=0.95, rng=5)
    # Without a claim both tests run at the full confidence; the bounds are those of ppaudit.audit.
    g = np.random.SeedSequence(5).spawn(2)
    ref = two_cut_lower_bound(c0, c1, ORDERS, confidence=0.95, rng=np.random.default_rng(g[0]))
    assert np.allclose(res.rdp_lower_bound, ref.lower_bound)
    ref_eps = dp_epsilon_lower_bound(c0, c1, delta=1e-5, confidence=0.95, rng=np.random.default_rng(g[1]))
    assert res.epsilon_lower_bound == pytest.approx(ref_eps)
    assert res.verdict == "no claim"


def test_epsilon_verdict_never_uses_converted_rdp_lower_bound():
    # A huge RDP lower bound with a claim that only constrains (eps, delta) with delta > 0:
    # the RDP test is not run (claim implies no RDP bound); only Eq. (1) decides.
    c0, c1 = np.array([9000, 1000]), np.array([1000, 9000])
    res = audit_counts(c0, c1, ORDERS, claim=Claim.dp(5.0, 1e-5), rng=0)
    assert res.details["tests"] == 1
    assert res.epsilon_lower_bound < 5.0 and res.verdict == "consistent"


def test_hashable_outputs_and_two_argument_protocol():
    def words(data, n):  # DP-Auditorium style: mechanism(data, num_samples)
        rng = np.random.default_rng(len(data))
        return np.array(["yes" if x else "no" for x in rng.random(n) < 0.5 + 0.1 * len(data)], dtype=object)

    res = audit_mechanism(words, [1], [1, 2], 3000, ORDERS, rng=0)
    assert res.outputs == ["no", "yes"]


def test_discretize_real_outputs_detects_gaussian_bug():
    def gauss(x, n, rng):
        return x + rng.standard_normal(n)

    res = audit_mechanism(gauss, 0.0, 1.0, 40_000, ORDERS, rng=1, claim=Claim.gdp(0.5), discretize=8)
    assert res.violation and res.bin_edges.size == 7 and res.discretize_trials == 4000
    ok = audit_mechanism(gauss, 0.0, 1.0, 40_000, ORDERS, rng=1, claim=Claim.gdp(1.0), discretize=8)
    assert not ok.violation


def test_errors_name_the_bad_value():
    with pytest.raises(ValueError, match="discretize"):
        audit_mechanism(lambda d, n, r: r.standard_normal(n), 0, 1, 100, ORDERS, rng=0)
    with pytest.raises(ValueError, match="trials"):
        audit_mechanism(rr(1.0), 0, 1, 0, ORDERS)
    with pytest.raises(ValueError, match="must return 10 outputs"):
        audit_mechanism(lambda d, n, r: np.zeros(3, dtype=int), 0, 1, 10, ORDERS)
    with pytest.raises(ValueError, match="discretize must be"):
        audit_mechanism(rr(1.0), 0, 1, 10, ORDERS, discretize=1)
    with pytest.raises(ValueError, match="claim must be"):
        audit_counts([1, 2], [2, 1], ORDERS, claim="1-DP")
