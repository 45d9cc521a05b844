"""Joint Pois-NatQ model (one training draw for all natural queries): exact law, cap, audit soundness.

References: the joint law of a single instantiation is a product of per-query fixed-vote laws,
whose divergences come from the independent enumeration code
(``enumerate_output_distributions`` + ``renyi_divergence``); the sampler simulates the
mechanism itself (multinomial base + Gaussian noise), so its frequencies check the exact law.
"""

import numpy as np
import pytest

from ppaudit.audit import TRUNCATION_RESERVE, transcript_audit
from ppaudit.divergence import renyi_divergence
from ppaudit.vote_models import NeighbouringVoteModel, enumerate_output_distributions
from ppaudit.vote_models.joint import (
    _enumerate_joint,
    joint_natural_query_model,
    joint_transcript_rdp,
)
from ppaudit.vote_models.twin import TwinFit

C, K, SIGMA = 3, 4, 1.0
ORDERS = np.array([1.5, 2.0, 4.0, 8.0])


def _fit(nq=3):
    base = np.array([[0.7, 0.2, 0.1], [0.3, 0.4, 0.3], [0.1, 0.1, 0.8], [0.5, 0.5, 0.0]])[:nq]
    marg = np.full((1, nq, C), 1.0 / C)  # the marginals are not used by the joint model's bases
    return TwinFit("pate", base, marg, marg, np.array([-1]), K, 2, 2)


def _point(v):
    p = np.zeros(C)
    p[v] = 1.0
    return p


def _three_instantiation_model():
    """Two queries, three paired instantiations: the model and its normalised log tables."""
    twin = np.array([[0, 1], [0, 2], [1, 1]])
    canary = np.array([[2, 1], [0, 0], [1, 2]])
    m = joint_natural_query_model(_fit(2), 0, twin, canary, [0, 1])
    lt, _ = m.log_tables(SIGMA)
    return twin, canary, m, lt - np.logaddexp.reduce(lt, axis=2, keepdims=True)


def test_single_instantiation_is_the_product_of_fixed_vote_laws():
    fit = _fit()
    twin, canary = np.array([[0, 1, 2]]), np.array([[1, 1, 0]])
    m = joint_natural_query_model(fit, 0, twin, canary, [0, 1, 2])
    assert m.num_queries == 2 and m.num_dropped == 1  # query 1: the same vote on both sides
    r = joint_transcript_rdp(m, SIGMA, ORDERS, delta=1e-6)
    assert r.method == "enumerate"
    fwd, rev = np.zeros(ORDERS.size), np.zeros(ORDERS.size)
    for q in (0, 2):
        b = fit.model(0, q)
        e = enumerate_output_distributions(NeighbouringVoteModel(b.constant, b.group_counts, b.group_probs, _point(twin[0, q]), _point(canary[0, q])),
                                           SIGMA, max_tail_mass=1e-14)
        fwd += renyi_divergence(e.p, e.q, ORDERS)
        rev += renyi_divergence(e.q, e.p, ORDERS)
    np.testing.assert_allclose(r.rdp, np.maximum(fwd, rev), rtol=1e-6)
    # one instantiation: the quasi-convexity cap is the exact value (up to the certified boxes)
    np.testing.assert_allclose(r.cap, r.rdp, rtol=1e-5)
    assert 0 < r.exact_eps < np.inf


def test_sampler_matches_the_exact_joint_law_and_cap_bounds_the_mixture():
    twin, canary, m, ln = _three_instantiation_model()
    for which, votes in (("S", twin), ("S_prime", canary)):
        law = np.exp(_enumerate_joint(ln, votes))  # row-major over (a_0, a_1)
        a = m.sample_transcripts(which, SIGMA, 1, 80_000, np.random.default_rng(3))
        freq = np.bincount(a[:, 0] * C + a[:, 1], minlength=C * C) / a.shape[0]
        se = np.sqrt(law * (1 - law) / a.shape[0])
        assert np.all(np.abs(freq - law) <= 5 * se + 1e-9), (freq, law)
    r = joint_transcript_rdp(m, SIGMA, ORDERS, delta=1e-6)
    assert np.all(r.cap >= r.rdp * (1 - 1e-9)) and np.all(r.rdp > 0)
    mc = joint_transcript_rdp(m, SIGMA, ORDERS[:2], max_outputs=1, mc_draws=40_000, rng=1)
    assert mc.method == "monte_carlo"
    assert np.all(np.abs(mc.rdp - r.rdp[:2]) <= 5 * mc.rdp_se + 1e-6), (mc.rdp, r.rdp[:2], mc.rdp_se)
    # bases that do not enumerate: laws estimated by Rao–Blackwellised draws, no certified cap
    est = joint_transcript_rdp(m, SIGMA, ORDERS[:2], max_support=1, estimate_draws=4000, mc_draws=40_000, rng=2)
    assert est.method == "monte_carlo (estimated laws)" and np.all(np.isnan(est.cap))
    np.testing.assert_allclose(est.rdp, r.rdp[:2], rtol=0.25)
    assert transcript_audit(m, SIGMA, 1, 1000, ORDERS, 0.95, rng=0, max_support=1).statistic == "pilot"


def test_joint_transcript_audit_is_sound_over_seeded_runs():
    fit = _fit(2)
    twin, canary = np.array([[0, 1], [0, 2]]), np.array([[2, 1], [1, 0]])
    m = joint_natural_query_model(fit, 0, twin, canary, [0, 1])
    exact = joint_transcript_rdp(m, SIGMA, ORDERS).rdp
    runs = 30
    above = sum(bool(np.any(transcript_audit(m, SIGMA, 1, 1000, ORDERS, 0.95, rng=s, num_bins=16).rdp_lower_bound > exact * (1 + 1e-9) + 1e-12))
                for s in range(runs))
    assert above <= 4  # 95 % bounds: ≤ 5 % of 30 runs + binomial slack
    # the bound detects the planted effect (power): a large T audit is above zero
    assert transcript_audit(m, SIGMA, 1, 8_000, ORDERS, 0.95, rng=99).rdp_lower_bound.max() > 0


def test_identical_joint_laws_and_bad_input():
    fit = _fit()
    twin = np.array([[0, 1, 2], [1, 1, 2]])
    m = joint_natural_query_model(fit, 0, twin, twin[::-1], [0, 1, 2])  # the same multiset of vote vectors
    assert m.identical
    r = joint_transcript_rdp(m, SIGMA, ORDERS, delta=1e-6)
    assert r.method == "identical" and np.all(r.rdp == 0) and r.exact_eps == 0.0
    with pytest.raises(ValueError, match="num_repeats"):
        joint_natural_query_model(fit, 0, twin, twin + (twin == 0), [0, 1]).sample_transcripts("S", SIGMA, 2, 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="votes_twin"):
        joint_natural_query_model(fit, 0, twin, twin[:1], [0])
    with pytest.raises(ValueError, match="queries"):
        joint_natural_query_model(fit, 0, twin, twin, [5])


def test_joint_natq_audit_table_bonferroni_and_identical_candidate():
    from ppaudit.adversaries import CraftedCanaries
    from ppaudit.experiments.chadha2024.pate_capc_joint import joint_natq_audit

    fit = TwinFit("pate", _fit(2).base, np.full((2, 2, C), 1.0 / C), np.full((2, 2, C), 1.0 / C), np.array([-1, -1]), K, 2, 2)
    crafted = CraftedCanaries("pois-natq", np.array([0, 1]), np.array([1, 2]), np.array([[0, 1], [0, 1]]), np.ones((2, 2), dtype=int))
    twin = np.array([[[0, 1], [0, 2]], [[0, 1], [1, 1]]])
    canary = np.array([[[2, 1], [1, 0]], [[1, 1], [0, 1]]])  # candidate 1: the twins' vectors permuted (identical law)
    t = joint_natq_audit(fit, crafted, twin, canary, SIGMA, ORDERS, 7, "t", trials=1000, delta=1e-6)
    np.testing.assert_allclose(t["confidence_per_audit"], 1 - (1 - TRUNCATION_RESERVE) * 0.025, rtol=1e-12)  # Bonferroni over the 2 candidates (reserve: issue 34 §5)
    c0, c1 = t[t["candidate"] == 0], t[t["candidate"] == 1]
    assert (c1["joint_method"] == "identical").all() and (c1[["two_cut_joint", "exact_joint", "joint_cap"]] == 0).all().all()
    assert (c0["joint_method"] == "enumerate").all() and (c0["two_cut_joint"] <= c0["joint_cap"] + 1e-12).all()
    assert (c0["joint_statistic"].str.startswith("rao-blackwell")).all() and (c0["transcript_trials"] == 100_000).all()
    s = joint_natq_audit(fit, crafted, twin, canary, SIGMA, ORDERS, 7, "t", trials=1000, delta=1e-6, audit_method="sampled")
    s0 = s[s["candidate"] == 0]
    assert (s0["transcript_trials"] == 1000).all() and (s0["two_cut_joint"] <= s0["joint_cap"] + 1e-12).all()
    # issue 27 §1: a sampled joint audit is two audits (2-cut and Eq. (1)); the per-query audits share the budget
    assert (s["num_audits"] == 2).all() and (t["num_audits"] == 1).all()
    np.testing.assert_allclose(s["confidence_per_audit"], 1 - (1 - TRUNCATION_RESERVE) * 0.05 / 4, rtol=1e-12)
    o = joint_natq_audit(fit, crafted, twin, canary, SIGMA, ORDERS, 7, "t", trials=1000, delta=1e-6, other_audits=6)
    np.testing.assert_allclose(o["confidence_per_audit"], 1 - (1 - TRUNCATION_RESERVE) * 0.05 / 8, rtol=1e-12)
    with pytest.raises(ValueError, match="votes_twin"):
        joint_natq_audit(fit, crafted, twin[:1], canary[:1], SIGMA, ORDERS, 7, "t")
    with pytest.raises(ValueError, match="'exact'"):
        joint_natq_audit(fit, crafted, twin, canary, SIGMA, ORDERS, 7, "t", audit_method="exact")


def test_rao_blackwellised_joint_draws_match_the_exact_law_and_audit_soundly():
    """The conditional laws of N (answers in the canary-favoured classes) average to its exact law
    (from the enumerated joint answer law), and the Rao–Blackwellised 2-cut stays below the exact RDP."""
    from ppaudit.audit import rao_blackwell_two_cut

    twin, canary, m, ln = _three_instantiation_model()
    r = np.exp(ln)
    qi = np.arange(m.num_queries)[None, :]
    sets = (r[qi, m.votes_prime].mean(axis=0) - r[qi, m.votes].mean(axis=0)) > 0  # A_q from the exact tables
    grid = np.stack(np.meshgrid(*[np.arange(C)] * m.num_queries, indexing="ij"), -1).reshape(-1, m.num_queries)
    n_of = sets[np.arange(m.num_queries)[None, :], grid].sum(axis=1)
    draws = 20_000
    p, q, tv, bias = m.conditional_statistic_draws(SIGMA, draws, np.random.default_rng(5), pilot_draws=4000)
    assert p.shape == q.shape == (draws, m.num_queries + 1) and 0 < tv <= 1 and 0 < bias < 1e-3
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
    for rows, votes in ((p, m.votes), (q, m.votes_prime)):
        exact = np.bincount(n_of, weights=np.exp(_enumerate_joint(ln, votes)), minlength=m.num_queries + 1)
        se = rows.std(axis=0) / np.sqrt(draws)
        assert np.all(np.abs(rows.mean(axis=0) - exact) <= 5 * se + 1e-6), (rows.mean(axis=0), exact)
    # every row's difference is within the stated bound (the constant of the empirical-Bernstein bound)
    assert np.all(np.abs(p - q) <= tv + 1e-12)
    exact_rdp = joint_transcript_rdp(m, SIGMA, ORDERS).rdp
    above = 0
    for s in range(30):
        pp, qq, tv, bias = m.conditional_statistic_draws(SIGMA, 2000, np.random.default_rng(100 + s))
        rb = rao_blackwell_two_cut(pp, qq, ORDERS, 0.95, difference_bound=tv, bias=bias, rng=np.random.default_rng(s), num_repeats=1)
        above += bool(np.any(rb.lower_bound > exact_rdp * (1 + 1e-9) + 1e-12))
    assert above <= 4
    pp, qq, tv, bias = m.conditional_statistic_draws(SIGMA, 40_000, np.random.default_rng(9))
    assert rao_blackwell_two_cut(pp, qq, ORDERS, 0.95, difference_bound=tv, bias=bias, rng=np.random.default_rng(1), num_repeats=1).lower_bound.max() > 0
