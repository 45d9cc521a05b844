"""Certified Rényi bounds of an enumerated vote model (issue 13 §3: no renormalisation of the
probability boxes) and the pruning budget of the exact-count audit (confidence ≥ 0.949 at T = 1e8)."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ppaudit.divergence import renyi_divergence, renyi_divergence_from_log
from ppaudit.noisy_argmax import quadrature_error_bound
from ppaudit.vote_models import (
    DEFAULT_MAX_TAIL_MASS,
    MIN_TAIL_BUDGET,
    QUADRATURE_ABS_ERROR,
    EnumeratedOutput,
    certified_mixture_rdp,
    effective_confidence,
    enumerate_output_distributions,
    exact_count_tail_budget,
    exact_count_total_variation,
    pate_vote_model,
)


def _enum(p_lo, q_lo, r):
    p_lo, q_lo = np.asarray(p_lo, float), np.asarray(q_lo, float)
    c = p_lo.size
    z = np.zeros((1, c), dtype=np.int64)
    return EnumeratedOutput(p_lo, q_lo, r, 1, z, np.ones(1), np.eye(c)[0], np.eye(c)[0])


def _box_distributions(lo, r, rng, m):
    """Distributions in ``[lo, lo + r]`` summing to 1: the box's vertices on the simplex
    (every coordinate at an end but one) and random points between them."""
    c = lo.size
    slack = 1.0 - lo.sum()
    out = []
    for perm in __import__("itertools").permutations(range(c)):
        x, left = lo.copy(), slack
        for i in perm:  # greedy water-filling in this order: a vertex of box ∩ simplex
            add = min(r, left)
            x[i] += add
            left -= add
        out.append(x)
    v = np.array(out)
    w = rng.dirichlet(np.ones(len(v)), size=m)
    return np.concatenate([v, w @ v])


def test_bounds_hold_for_every_distribution_in_the_boxes_where_renormalising_fails():
    """p_lo = (.5, .3), q_lo = (.3, .5), r = .2: the pair p = (.7, .3), q = (.3, .7) lies in the
    boxes; at α = 16 its divergence is dominated by .7^16 .3^-15, and dividing the corner sum
    by Σ p_hi = 1.2 (the old code's renormalisation) put the "upper bound" below the truth."""
    enum = _enum([0.5, 0.3], [0.3, 0.5], 0.2)
    orders = [1.5, 2.0, 4.0, 16.0, np.inf]
    cert = certified_mixture_rdp(enum, orders)
    truth = math.log(0.7**16 * 0.3**-15 + 0.3**16 * 0.7**-15) / 15
    assert_allclose(renyi_divergence([0.7, 0.3], [0.3, 0.7], [16.0])[0], truth, rtol=1e-12)
    e = QUADRATURE_ABS_ERROR
    old_hi = renyi_divergence_from_log(np.log([0.7 + e, 0.5 + e]), np.log([0.3 - e, 0.5 - e]), [16.0])[0]
    assert old_hi < truth  # the renormalised corner is not a bound
    assert cert["rdp_hi"][3] >= truth
    rng = np.random.default_rng(0)
    ps = _box_distributions(enum.p_lo, 0.2, rng, 300)
    qs = _box_distributions(enum.q_lo, 0.2, rng, 300)
    d = np.maximum(renyi_divergence(ps[:, None, :], qs[None, :, :], orders), renyi_divergence(qs[None, :, :], ps[:, None, :], orders))
    assert np.all(d <= cert["rdp_hi"] + 1e-12)
    assert np.all(d >= cert["rdp_lo"] - 1e-12)


def test_three_class_boxes_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(20):
        p = rng.dirichlet([2, 2, 2])
        q = rng.dirichlet([2, 2, 2])
        r = rng.uniform(0.01, 0.2)
        # retained masses: the truth minus a random split of the pruned mass r
        p_lo = np.maximum(p - r * rng.dirichlet([1, 1, 1]), 0)
        q_lo = np.maximum(q - r * rng.dirichlet([1, 1, 1]), 0)
        cert = certified_mixture_rdp(_enum(p_lo, q_lo, r), [2.0, 8.0])
        d = np.maximum(renyi_divergence(p, q, [2.0, 8.0]), renyi_divergence(q, p, [2.0, 8.0]))
        assert np.all(cert["rdp_lo"] <= d + 1e-12) and np.all(d <= cert["rdp_hi"] + 1e-12)


def test_effective_confidence_at_1e8_trials():
    """Exact-count audits at T = 1e8 keep ≥ 0.949 confidence for every C of the embedded default
    (2 … 10) with the default pruning and the proven quadrature error of Eq. (4); the total
    variation is computed from the constants, not typed in."""
    ten, ten_prime = np.zeros(10), np.zeros(10)  # C = 10 with a sparse P_q: enumerates in 0.2 s
    ten[:3], ten_prime[[0, 1, 3]] = [0.9, 0.07, 0.03], [0.6, 0.3, 0.1]
    for c, top in ((2, 0.6), (3, 0.8), (4, 0.97), (10, None)):
        if top is None:
            p, pp = ten, ten_prime
        else:
            p = np.full(c, (1.0 - top) / (c - 1))
            p[0] = top
            pp = np.roll(p, 1)
        enum = enumerate_output_distributions(pate_vote_model(p, pp, 250), 40.0)
        assert enum is not None and enum.tail_mass <= DEFAULT_MAX_TAIL_MASS
        tv = exact_count_total_variation(enum.tail_mass, c)
        assert tv == enum.total_variation_bound() == enum.tail_mass + quadrature_error_bound(c).total_variation
        assert effective_confidence(0.95, 10**8, tv) >= 0.949
    for c in range(2, 11):
        assert effective_confidence(0.95, 10**8, exact_count_total_variation(DEFAULT_MAX_TAIL_MASS, c)) >= 0.949
        # the budget of exact_count_tail_budget spends exactly 1e-3 at 95 % (not the floor)
        r = exact_count_tail_budget(10**8, c)
        assert r > MIN_TAIL_BUDGET
        assert 0.949 <= effective_confidence(0.95, 10**8, exact_count_total_variation(r, c)) < 0.949 + 1e-9
    assert_allclose(effective_confidence(0.95, 10**8, 5e-12), 0.949, rtol=1e-12)
    # the previous budget (1e-10) and the previous quadrature claim at C = 10 (C·1e-12/2) fail
    assert effective_confidence(0.95, 10**8, 1e-10) < 0.949
    assert effective_confidence(0.95, 10**8, DEFAULT_MAX_TAIL_MASS + 10 * 1e-12 / 2) < 0.949
    # a Bonferroni-level confidence cannot spend 2 % of its α at T = 1e8: the floor applies
    assert exact_count_tail_budget(10**8, 10, confidence=1 - 0.05 / 64) == MIN_TAIL_BUDGET
    with pytest.raises(ValueError, match="loss_fraction"):
        exact_count_tail_budget(10, 3, loss_fraction=1.5)
    with pytest.raises(ValueError, match="tail_mass"):
        exact_count_total_variation(-1e-3, 3)
    with pytest.raises(ValueError, match="trials"):
        effective_confidence(0.95, 0, 1e-12)
