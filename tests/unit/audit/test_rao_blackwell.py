"""Tests of ppaudit.audit.rao_blackwell: empirical Bernstein bounds, the sound Rao–Blackwellised
2-cut (soundness over seeded repetitions, planted-bug detection), the binomial transcript ε and
the paper's "estimated law as exact counts" procedure.

The soundness model is a discrete mixture whose output laws are known exactly: draw an atom
``j`` with weight ``w_j`` (the "histogram"), whose conditional output laws on ``S`` and ``S'``
are ``p_j`` and ``q_j = (1 − ν) p_j + ν r_j`` (one displaced vote, as Private-kNN's model).
The truth of a returned audit is the 2-cut of the returned set ``O`` under the exact laws
``μ_S = Σ w_j p_j``, ``μ_S' = Σ w_j q_j`` — a lower bound must not exceed it in more than
5 % (+ binomial slack) of the runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from ppaudit.audit import (
    binomial_transcript_epsilon,
    empirical_bernstein_bounds,
    paper_counts_from_estimate,
    rao_blackwell_two_cut,
    two_cut_lower_bound,
)
from ppaudit.audit import rao_blackwell as rb
from ppaudit.divergence import bernoulli_renyi_divergence

ORDERS = np.array([2.0, 8.0, 32.0])
REPS = 200
# 99.9 % upper quantile of Bin(200, 0.05) / 200: the allowed exceed rate of a 95 % bound
SLACK_RATE = binom.ppf(0.999, REPS, 0.05) / REPS


def _mixture(seed=0, atoms=40, c=3, nu=0.3):
    """Atoms whose displaced vote goes to class 0 with probability 0.7, elsewhere otherwise:
    a heterogeneous paired difference (Monte Carlo error of the law matters)."""
    g = np.random.default_rng(seed)
    w = g.dirichlet(np.ones(atoms))
    p = g.dirichlet(np.full(c, 8.0), size=atoms)
    to = np.where(g.random(atoms) < 0.7, 0, g.integers(1, c, size=atoms))
    r = 0.8 * p + 0.2 * np.eye(c)[to]
    q = (1.0 - nu) * p + nu * r
    return w, p, q, float(np.abs(p - q).sum(1).max() / 2.0 + 1e-12)


def _truth(w, p, q, sets):
    mu_s, mu_t = w @ p, w @ q
    a, b = sets.astype(float) @ mu_s, sets.astype(float) @ mu_t
    return np.maximum(bernoulli_renyi_divergence(a, b, ORDERS), bernoulli_renyi_divergence(b, a, ORDERS))


def _exceed_rate(procedure, draws=600, seed=1):
    w, p, q, bnd = _mixture()
    g = np.random.default_rng(seed)
    idx = g.choice(w.size, size=(REPS, draws), p=w)  # all repetitions' draws at once
    exceed = np.zeros(REPS, dtype=bool)
    positive = 0
    for i in range(REPS):
        lb, sets = procedure(p[idx[i]], q[idx[i]], bnd, g)
        truth = np.diag(_truth(w, p, q, sets)) if sets.ndim == 2 else _truth(w, p, q, sets[None])[0]
        exceed[i] = bool(np.any(lb > truth * (1 + 1e-9) + 1e-15))
        positive += bool(np.any(lb > 0))
    return exceed.mean(), positive / REPS


def _ours(pd_, qd, bnd, g):
    r = rao_blackwell_two_cut(pd_, qd, ORDERS, 0.95, difference_bound=bnd, rng=g, max_cells=32)
    return r.lower_bound, r.output_sets


def _paper(pd_, qd, bnd, g):
    c0, c1 = paper_counts_from_estimate(pd_, qd, 10**8, g)
    a = two_cut_lower_bound(c0, c1, ORDERS, 0.95, rng=g)
    return a.lower_bound, a.output_sets


def test_sound_over_seeded_repetitions():
    rate, positive = _exceed_rate(_ours)
    assert rate <= SLACK_RATE, f"95 % bound above the truth in {rate:.1%} of {REPS} runs"
    assert positive >= 0.5, f"the audit detected leakage in only {positive:.0%} of runs: the test has no power"


def test_planted_bug_paper_procedure_is_caught():
    """The paper's procedure ignores the error of the estimated law: caught by the same test."""
    rate, _ = _exceed_rate(_paper)
    assert rate > SLACK_RATE, f"ignoring the Monte Carlo error exceeded the truth in only {rate:.1%} of runs"


def test_planted_bug_wrong_variance_is_caught(monkeypatch):
    """A normal approximation with the variance of the mean divided by n once too often."""

    def wrong_radius(var, n, delta, value_range):
        from scipy.stats import norm

        return norm.isf(delta) * np.sqrt(np.asarray(var)) / n

    monkeypatch.setattr(rb, "_eb_radius", wrong_radius)
    rate, _ = _exceed_rate(_ours)
    assert rate > SLACK_RATE, f"the planted bug exceeded the truth in only {rate:.1%} of runs"


def test_empirical_bernstein_coverage_and_formula():
    # formula (Maurer & Pontil 2009, Thm 4) at a hand-computed case
    z = np.array([0.0, 1.0, 0.0, 1.0])
    m, lo, hi = empirical_bernstein_bounds(z, 0.1, 1.0)
    rad = np.sqrt(2 * (1 / 3) * np.log(20) / 4) + 7 * np.log(20) / 9
    np.testing.assert_allclose([m, hi - m, m - lo], [0.5, rad, rad], rtol=1e-12)
    # one-sided coverage over many seeded repetitions (vectorised: columns are repetitions)
    g = np.random.default_rng(3)
    x = g.beta(0.5, 4.0, size=(200, 4000))
    _, lo, hi = empirical_bernstein_bounds(x, 0.05, 1.0)
    truth = 0.5 / 4.5
    assert np.mean(lo > truth) <= 0.05 and np.mean(hi < truth) <= 0.05
    with pytest.raises(ValueError, match="value_range"):
        empirical_bernstein_bounds(x * 3.0, 0.05, 1.0)
    with pytest.raises(ValueError, match="delta"):
        empirical_bernstein_bounds(x, 1.5, 1.0)


def test_binomial_transcript_epsilon_against_brute_force():
    from itertools import combinations

    n, p1, p2, delta = 6, 0.6, 0.3, 0.01
    pm, qm = binom.pmf(np.arange(n + 1), n, p1), binom.pmf(np.arange(n + 1), n, p2)
    best = 0.0
    for r in range(1, n + 2):  # every subset of the 7 outcomes, both directions
        for s in combinations(range(n + 1), r):
            for a, b in ((pm, qm), (qm, pm)):
                if a[list(s)].sum() > delta:
                    best = max(best, np.log((a[list(s)].sum() - delta) / b[list(s)].sum()))
    np.testing.assert_allclose(binomial_transcript_epsilon(p1, p2, n, delta), best, rtol=1e-10)
    assert binomial_transcript_epsilon(0.4, 0.4, 10, 1e-6) == 0.0


def test_epsilon_lower_bound_is_below_the_exact_transcript_epsilon():
    w, p, q, bnd = _mixture(nu=0.8)
    g = np.random.default_rng(5)
    idx = g.choice(w.size, size=4000, p=w)
    r = rao_blackwell_two_cut(p[idx], q[idx], ORDERS, 0.95, difference_bound=bnd, rng=g, num_repeats=200, delta=1e-5)
    mu_s, mu_t = w @ p, w @ q
    # the best set of the exact laws bounds every set's binomial ε from above
    from ppaudit.audit.bounds import _lr_prefix_sets

    sets = _lr_prefix_sets(mu_s, mu_t).astype(float)
    top = np.max(binomial_transcript_epsilon(sets @ mu_s, sets @ mu_t, 200, 1e-5))
    assert 0.0 < r.epsilon_lower_bound <= top


def test_bad_inputs_name_the_value():
    p = np.full((40, 3), 1 / 3)
    with pytest.raises(ValueError, match="selection"):
        rao_blackwell_two_cut(p, p, ORDERS, selection="nope")
    with pytest.raises(ValueError, match="same shape"):
        rao_blackwell_two_cut(p, p[:, :2], ORDERS)
    with pytest.raises(ValueError, match="difference_bound"):
        rao_blackwell_two_cut(p, p, ORDERS, difference_bound=0.0)
    # identical laws: the bound is 0 whatever the draws
    assert np.all(rao_blackwell_two_cut(p, p, ORDERS, rng=0).lower_bound == 0.0)


def test_region_minimum_is_rigorous_and_tight():
    """The convex minimisation over the confidence region against a fine grid of the library's
    Bernoulli Rényi divergence (``p_2 = p_1 − g``, both directions, the larger)."""
    g = np.random.default_rng(11)
    a = np.array([1.5, 2.0, 8.0, 64.0, np.inf])
    for _ in range(20):
        l1 = g.uniform(0.02, 0.8)
        u1 = min(l1 + g.uniform(0.0, 0.2), 0.98)
        gap = 10 ** g.uniform(-3, -1)
        sign = 1.0 if g.random() < 0.5 else -1.0
        ld, ud = (gap, gap + 0.01) if sign > 0 else (-gap - 0.01, -gap)
        got = rb._bound_from_region(np.array([l1]), np.array([u1]), np.array([ld]), np.array([ud]), a)[0]
        lo, hi = (max(l1, gap), u1) if sign > 0 else (l1, min(u1, 1 - gap))
        p = np.linspace(lo, hi, 4001)
        p = p[(p - sign * gap > 0) & (p - sign * gap < 1)]
        ref = np.maximum(bernoulli_renyi_divergence(p, p - sign * gap, a), bernoulli_renyi_divergence(p - sign * gap, p, a)).min(0)
        assert np.all(got <= ref * (1 + 1e-7)), (got, ref)
        # finite orders: tight (the minimum of the larger direction); D_∞: the larger of the two
        # directions' minima (valid, looser)
        np.testing.assert_allclose(got[:-1], ref[:-1], rtol=2e-3)


def test_counts_transcript_epsilon_is_sound_and_detects():
    """Over seeded repetitions: at most 5 % (+ slack) of the bounds exceed the largest true
    binomial ε over the likelihood-ratio sets (the best any set can give), and they detect."""
    from ppaudit.audit import counts_transcript_epsilon
    from ppaudit.audit.bounds import _lr_prefix_sets

    mu0, mu1 = np.array([0.5, 0.3, 0.2]), np.array([0.47, 0.31, 0.22])
    sets = _lr_prefix_sets(mu0, mu1).astype(float)
    top = float(np.max(binomial_transcript_epsilon(sets @ mu0, sets @ mu1, 300, 1e-5)))
    reps = 100
    g = np.random.default_rng(2)
    c0 = g.multinomial(20_000, mu0, size=reps)
    c1 = g.multinomial(20_000, mu1, size=reps)
    eps = np.array([counts_transcript_epsilon(c0[i], c1[i], 300, 1e-5, 0.95, rng=i) for i in range(reps)])
    slack = binom.ppf(0.999, reps, 0.05) / reps
    assert np.mean(eps > top) <= slack and np.mean(eps > 0) > 0.5, (top, np.quantile(eps, [0.5, 0.95]))


def _product_epsilon(p, q, delta):
    """Exact ε(δ) between two products of Bernoulli laws (brute force over the 2^n transcripts)."""
    from itertools import product

    best = 0.0
    outs = np.array(list(product((0, 1), repeat=len(p))))
    lp = np.prod(np.where(outs == 1, p, 1 - p), axis=1)
    lq = np.prod(np.where(outs == 1, q, 1 - q), axis=1)
    for a, b in ((lp, lq), (lq, lp)):
        order = np.argsort(-(np.log(a) - np.log(b)))
        ca, cb = np.cumsum(a[order]), np.cumsum(b[order])
        ok = ca > delta
        best = max(best, float(np.max(np.log(ca[ok] - delta) - np.log(cb[ok]))))
    return best


def test_poisson_binomial_pmf_against_binomial_and_brute_force():
    from itertools import product

    from ppaudit.divergence import poisson_binomial_pmf

    np.testing.assert_allclose(poisson_binomial_pmf(np.full(7, 0.3)), binom.pmf(np.arange(8), 7, 0.3), atol=1e-15)
    p = np.array([0.1, 0.5, 0.8, 0.35])
    ref = np.zeros(5)
    for out in product((0, 1), repeat=4):
        ref[sum(out)] += np.prod([pi if o else 1 - pi for pi, o in zip(p, out)])
    np.testing.assert_allclose(poisson_binomial_pmf(p[None, :])[0], ref, atol=1e-15)
    with pytest.raises(ValueError, match="probabilities"):
        poisson_binomial_pmf([0.5, 1.2])



def test_poisson_binomial_pmf_of_repeated_values_equals_the_recursion():
    """The product-of-binomials path (one law, few distinct values: repeated answers' bounds) against
    the exact recursion (the 2-D path), in absolute terms and relatively down to 1e-300 (the tails
    the event ε reads through their logarithms)."""
    from ppaudit.divergence import poisson_binomial_pmf

    rng = np.random.default_rng(5)
    for _ in range(12):
        values = rng.random(int(rng.integers(1, 10))) * rng.choice([0.3, 1.0])
        values[rng.random(values.size) < 0.15] = rng.choice([0.0, 1.0])
        p = np.repeat(values, rng.integers(20, 300, size=values.size))
        rng.shuffle(p)
        fast, slow = poisson_binomial_pmf(p), poisson_binomial_pmf(p[None, :])[0]
        assert fast.shape == (p.size + 1,)
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-14)
        tail = slow > 1e-300
        np.testing.assert_allclose(fast[tail], slow[tail], rtol=1e-11)

def test_composed_event_epsilon_reference_values():
    from ppaudit.audit import composed_event_epsilon

    delta = 1e-3
    # one answer: Eq. (1) on the event and on its complement
    ref = max(np.log((0.6 - delta) / 0.3), np.log((0.7 - delta) / 0.4))
    np.testing.assert_allclose(composed_event_epsilon([0.6], [0.3], delta), ref, rtol=1e-12)
    # n equal answers: the binomial transcript ε (its optimal sets are the threshold sets)
    np.testing.assert_allclose(composed_event_epsilon(np.full(40, 0.55), np.full(40, 0.5), 1e-5),
                               binomial_transcript_epsilon(0.55, 0.5, 40, 1e-5), rtol=1e-10)
    # different answers: never above the exact ε of the product laws, and using all answers
    # beats the best single one
    p, q = np.array([0.6, 0.55, 0.7, 0.52, 0.65, 0.58]), np.array([0.5, 0.5, 0.6, 0.5, 0.55, 0.5])
    got = composed_event_epsilon(p, q, delta)
    assert max(composed_event_epsilon([a], [b], delta) for a, b in zip(p, q)) < got <= _product_epsilon(p, q, delta) + 1e-12
    # answers that do not separate (or NaN) are left out
    assert composed_event_epsilon(np.r_[p, 0.4, np.nan], np.r_[q, 0.5, 0.1], delta) == got
    assert composed_event_epsilon([0.3, np.nan], [0.4, 0.2], delta) == 0.0
    with pytest.raises(ValueError, match="same length"):
        composed_event_epsilon([0.5, 0.6], [0.4], delta)


def test_composed_event_epsilon_is_sound_over_seeded_runs():
    """Per-query Clopper–Pearson event bounds (counts_transcript_epsilon, Bonferroni over the
    queries) composed over independent queries: ≤ 5 % (+ slack) of 200 runs above the exact ε of
    the transcript; and it detects where no single query does (planted bug: the point estimates
    in place of the bounds exceed the truth far more often)."""
    from ppaudit.audit import composed_event_epsilon, counts_transcript_epsilon

    mu0 = np.array([[0.6, 0.4], [0.55, 0.45], [0.62, 0.38], [0.58, 0.42], [0.6, 0.4], [0.57, 0.43]])
    mu1 = np.array([[0.52, 0.48], [0.5, 0.5], [0.55, 0.45], [0.5, 0.5], [0.54, 0.46], [0.5, 0.5]])
    delta, n, t = 1e-4, mu0.shape[0], 4000
    truth = _product_epsilon(mu0[:, 0], mu1[:, 0], delta)
    conf = 1 - 0.05 / n
    g = np.random.default_rng(7)
    ours, naive, single = [], [], []
    for r in range(REPS):
        lo, hi, pl, qh = [], [], [], []
        best = 0.0
        for i in range(n):
            c0, c1 = g.multinomial(t, mu0[i]), g.multinomial(t, mu1[i])
            det: dict = {}
            best = max(best, counts_transcript_epsilon(c0, c1, 1, delta, conf, rng=g, details=det))
            lo.append(det["epsilon_event"][0])
            hi.append(det["epsilon_event"][1])
            pl.append(c0[0] / t)
            qh.append(c1[0] / t)
        ours.append(composed_event_epsilon(lo, hi, delta))
        naive.append(composed_event_epsilon(pl, qh, delta))
        single.append(best)
    ours, naive, single = map(np.array, (ours, naive, single))
    assert np.mean(ours > truth * (1 + 1e-9)) <= SLACK_RATE
    assert np.mean(ours > single) > 0.9 and np.mean(ours) > 0.3 * truth, (np.mean(ours), np.mean(single), truth)
    assert np.mean(naive > truth) > 0.2  # the planted bug is caught
