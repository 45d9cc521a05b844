"""RDP audits from Monte Carlo counts (Chadha et al. 2024, §4.2, App. B, Eq. (1)).

Soundness is tested as a statistic: over many seeded repetitions a 95% lower bound may
exceed the exact RDP in at most ~5% of the runs (plus binomial slack).
"""

import numpy as np
import pytest
from scipy.stats import binom

from ppaudit.audit import (
    compose_rdp,
    dp_epsilon_lower_bound,
    k_cut_bootstrap_lower_bound,
    k_cut_lower_bound,
    split_counts,
    two_cut_bootstrap_lower_bound,
    two_cut_bound_from_intervals,
    two_cut_lower_bound,
)
from ppaudit.divergence import bernoulli_renyi_divergence, exact_rdp, renyi_divergence, two_cut
from ppaudit.montecarlo import noisy_argmax_counts_pair
from ppaudit.noisy_argmax import class_probabilities

ORDERS = np.array([1.5, 2.0, 4.0, 8.0, 16.0, 32.0])
H0, H1, SIGMA = [14, 12, 10, 8, 6], [13, 13, 10, 8, 6], 2.0


def _max_allowed(reps, rate=0.05, tail=1e-3):
    """Violations allowed: the 99.9% quantile of Binomial(reps, 5%)."""
    return int(binom.ppf(1 - tail, reps, rate))


def test_bound_formula_reduces_to_bernoulli_divergence_at_exact_proportions():
    p1, p2 = 0.37, 0.21
    got = two_cut_bound_from_intervals(p1, p1, p2, p2, ORDERS)
    np.testing.assert_allclose(got, bernoulli_renyi_divergence(p1, p2, ORDERS), rtol=1e-12)
    # Wider intervals can only lower the bound.
    wider = two_cut_bound_from_intervals(p1 - 0.01, p1 + 0.01, p2 - 0.01, p2 + 0.01, ORDERS)
    assert np.all(wider <= got)


def test_audit_approaches_truth_with_many_trials():
    truth = exact_rdp(H0, H1, SIGMA, ORDERS)
    c0, c1 = noisy_argmax_counts_pair(H0, H1, SIGMA, 10**9, rng=1, mode="exact")
    lb = two_cut_lower_bound(c0, c1, ORDERS).lower_bound
    p0, p1 = class_probabilities(H0, SIGMA), class_probabilities(H1, SIGMA)
    best_two_cut = np.maximum(two_cut(p0, p1, ORDERS), two_cut(p1, p0, ORDERS))
    assert np.all(lb <= truth)
    np.testing.assert_allclose(lb, best_two_cut, rtol=0.01)  # within 1% of the best 2-cut


@pytest.mark.parametrize("selection", ["split", "bonferroni"])
def test_two_cut_soundness_over_repetitions(selection):
    reps, trials = 300, 20_000
    truth = exact_rdp(H0, H1, SIGMA, ORDERS)
    violations = 0
    naive_violations = 0
    for r in range(reps):
        c0, c1 = noisy_argmax_counts_pair(H0, H1, SIGMA, trials, rng=np.random.SeedSequence([77, r]), mode="exact")
        audit = two_cut_lower_bound(c0, c1, ORDERS, 0.95, selection=selection, rng=r)
        violations += bool(np.any(audit.lower_bound > truth))
        # Power check: the plug-in 2-cut without intervals overshoots the truth often.
        q0, q1 = c0 / trials, c1 / trials
        plug = np.maximum(two_cut(q0, q1, ORDERS), two_cut(q1, q0, ORDERS))
        naive_violations += bool(np.any(plug > truth))
    assert violations <= _max_allowed(reps), violations
    assert naive_violations > reps * 0.2, naive_violations


def test_two_cut_soundness_with_sampled_counts_and_fixed_set():
    # Black-box sampling (not the exact-count mode) and a fixed output set O = {class 0}.
    reps, trials = 200, 5_000
    truth = exact_rdp(H0, H1, SIGMA, ORDERS)
    violations = 0
    for r in range(reps):
        c0, c1 = noisy_argmax_counts_pair(H0, H1, SIGMA, trials, rng=np.random.SeedSequence([5, r]))
        lb = two_cut_lower_bound(c0, c1, ORDERS, 0.95, output_set=[0]).lower_bound
        violations += bool(np.any(lb > truth))
    assert violations <= _max_allowed(reps), violations


def test_k_cut_goodman_mostly_sound():
    truth = exact_rdp(H0, H1, SIGMA, ORDERS)
    reps, trials, violations = 150, 200_000, 0
    for r in range(reps):
        c0, c1 = noisy_argmax_counts_pair(H0, H1, SIGMA, trials, rng=np.random.SeedSequence([9, r]), mode="exact")
        violations += bool(np.any(k_cut_lower_bound(c0, c1, ORDERS, method="goodman") > truth))
    # Asymptotically valid only (Chadha et al. 2024, Table 2): nominal rate with slack.
    assert violations <= _max_allowed(reps), violations


def test_k_cut_sison_glaz_close_to_truth():
    # statsmodels' Sison–Glaz takes ~0.5 s a call, so a few seeds only.
    truth = exact_rdp(H0, H1, SIGMA, ORDERS)
    for r in range(3):
        c0, c1 = noisy_argmax_counts_pair(H0, H1, SIGMA, 10**7, rng=np.random.SeedSequence([10, r]), mode="exact")
        lb = k_cut_lower_bound(c0, c1, ORDERS, method="sison-glaz")
        np.testing.assert_allclose(lb, truth, rtol=0.03)


def test_bootstrap_bounds_are_near_the_plugin_and_below_it():
    c0, c1 = noisy_argmax_counts_pair(H0, H1, SIGMA, 10**6, rng=3, mode="exact")
    truth = exact_rdp(H0, H1, SIGMA, ORDERS)
    b2 = two_cut_bootstrap_lower_bound(c0, c1, ORDERS, num_bootstrap=500, rng=1)
    bk = k_cut_bootstrap_lower_bound(c0, c1, ORDERS, num_bootstrap=500, rng=1)
    assert np.all(b2 > 0) and np.all(bk > 0)
    np.testing.assert_allclose(bk, truth, rtol=0.05)
    assert np.all(b2 <= bk * 1.02)
    # Reproducible with the same seed.
    np.testing.assert_array_equal(b2, two_cut_bootstrap_lower_bound(c0, c1, ORDERS, num_bootstrap=500, rng=1))


def test_split_counts_is_a_random_split_of_the_trials():
    rng = np.random.default_rng(0)
    c = np.array([700, 200, 100])
    parts = [split_counts(c, 0.1, rng) for _ in range(2000)]
    sel = np.array([p[0] for p in parts])
    assert all(np.array_equal(p[0] + p[1], c) for p in parts)
    np.testing.assert_allclose(sel.mean(axis=0), [70, 20, 10], rtol=0.03)
    # Works beyond numpy's hypergeometric limit of 1e9 trials.
    big = split_counts(np.array([6 * 10**9, 4 * 10**9]), 0.1, rng)[0]
    assert abs(big.sum() - 10**9) < 10**6


def test_dp_epsilon_audit():
    # Randomized response with ε = 1: outputs 1 w.p. e/(1+e) on S, 1/(1+e) on S'.
    rng = np.random.default_rng(4)
    p = np.e / (1 + np.e)
    t = 200_000
    k0, k1 = rng.binomial(t, p), rng.binomial(t, 1 - p)
    eps = dp_epsilon_lower_bound([k0, t - k0], [k1, t - k1], delta=0.0, output_set=[0])
    assert 0.95 < eps <= 1.0
    eps_split = dp_epsilon_lower_bound([k0, t - k0], [k1, t - k1], delta=0.0)
    assert 0.9 < eps_split <= 1.0
    # Identical mechanisms: nothing to conclude.
    assert dp_epsilon_lower_bound([k0, t - k0], [k0, t - k0], delta=1e-6, output_set=[0]) == 0.0


def test_compose():
    per_query = np.array([[0.1, 0.2], [0.3, 0.4]])
    np.testing.assert_allclose(compose_rdp(per_query), [0.4, 0.6])
    np.testing.assert_allclose(compose_rdp(per_query[0], repetitions=1000), [100, 200])
    np.testing.assert_allclose(compose_rdp(per_query, repetitions=[2, 3]), [1.1, 1.6])


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: two_cut_lower_bound([1, 2], [1, 2, 3], ORDERS), "same number of outputs"),
        (lambda: two_cut_lower_bound([1, -2], [1, 2], ORDERS), "non-negative integer"),
        (lambda: two_cut_lower_bound([1.5, 2], [1, 2], ORDERS), "non-negative integer"),
        (lambda: two_cut_lower_bound([0, 0], [1, 2], ORDERS), "at least one trial"),
        (lambda: two_cut_lower_bound([5, 5], [5, 5], [1.0]), "order must be > 1"),
        (lambda: two_cut_lower_bound([5, 5], [5, 5], ORDERS, confidence=1.5), "confidence"),
        (lambda: two_cut_lower_bound([5, 5], [5, 5], ORDERS, selection="magic"), "selection"),
        (lambda: two_cut_lower_bound([5, 5], [5, 5], ORDERS, output_set=[0, 1]), "proper subset"),
        (lambda: k_cut_lower_bound([5, 5], [5, 5], ORDERS, method="wald"), "method"),
        (lambda: compose_rdp([[-1.0, 0.2]]), ">= 0"),
        (lambda: dp_epsilon_lower_bound([5, 5], [5, 5], delta=2.0), "delta"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def _many_cell_pair(c):
    """Two laws on C cells: 30 % of the mass moves between cells 0 and 1, the rest is shared."""
    p = np.full(c, 0.5 / (c - 2))
    p[0], p[1] = 0.4, 0.1
    q = p.copy()
    q[0], q[1] = 0.1, 0.4
    return p, q


@pytest.mark.parametrize("c", [40, 55, 200])
def test_bonferroni_selection_works_for_any_number_of_cells(c):
    """issue 27 §5: with C ≥ 55 cells the per-set level 1 − β/(2(2^(C−1) − 1)) rounds to 1.0 in float64
    and raised ValueError; the miscoverage is now carried in log space. The bound stays valid: finite,
    and below the exact two-sided RDP in every one of 40 seeded runs (its family-wise level is 95 %;
    the 99.9 % binomial quantile of violations is allowed), and it still detects the shift."""
    p, q = _many_cell_pair(c)
    orders = np.array([1.5, 2.0, 8.0])
    truth = np.maximum(renyi_divergence(p, q, orders), renyi_divergence(q, p, orders))
    rng = np.random.default_rng(27)
    bounds = []
    for _ in range(40):
        c0, c1 = rng.multinomial(100_000, p), rng.multinomial(100_000, q)
        r = two_cut_lower_bound(c0, c1, orders, 0.95, selection="bonferroni")
        assert np.all(np.isfinite(r.lower_bound)) and np.all(r.lower_bound >= 0)
        bounds.append(r.lower_bound)
    bounds = np.array(bounds)
    assert np.sum(np.any(bounds > truth, axis=1)) <= _max_allowed(40)
    assert np.all(bounds > 0.4 * two_cut(p, q, orders))  # power: 1e5 trials resolve a 30 % shift even at C = 200
    assert r.details["family_size"] == pytest.approx(2.0 ** (c - 1) - 1, rel=1e-12)
    # the same bound as a fixed output set at the Bonferroni level, where that level is representable
    level = 1 - 0.05 / (2.0 ** (c - 1) - 1)
    if c == 40:
        for j, alpha in enumerate(orders):
            fixed = two_cut_lower_bound(c0, c1, [alpha], level, output_set=r.output_sets[j]).lower_bound[0]
            # 1 − level carries ~1e-3 relative rounding of the miscoverage 9e-14: equal to ~1e-6
            assert fixed == pytest.approx(r.lower_bound[j], rel=1e-5)
    else:  # the old route: the level is 1.0 in float64
        assert level == 1.0
        with pytest.raises(ValueError, match="confidence"):
            two_cut_lower_bound(c0, c1, orders, level, output_set=[0])


def test_clopper_pearson_miscoverage_below_float_resolution():
    from ppaudit.intervals import clopper_pearson

    lo, hi = clopper_pearson([5, 50], 100, miscoverage=1e-40)  # a level 1 − 1e-40, not representable as such
    assert np.all((0 < lo) & (lo < [0.05, 0.5]) & ([0.05, 0.5] < hi) & (hi < 1))
    lo2, hi2 = clopper_pearson([5, 50], 100, miscoverage=1e-20)
    assert np.all(lo <= lo2) and np.all(hi >= hi2)  # nested: a smaller miscoverage widens the interval
    z_lo, z_hi = clopper_pearson([5], 100, miscoverage=0.0)
    assert z_lo.tolist() == [0.0] and z_hi.tolist() == [1.0]
    with pytest.raises(ValueError, match="miscoverage must lie in \\[0, 1\\), got 1.5"):
        clopper_pearson([5], 100, miscoverage=1.5)
