"""Tests of the exact transcript RDP of repeated queries (issue 13 §1; Chadha et al. 2024 §5.1)."""

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ppaudit.accounting import exact_epsilon
from ppaudit.divergence import exact_rdp, renyi_divergence
from ppaudit.noisy_argmax import class_probabilities
from ppaudit.vote_models import (
    capc_vote_model,
    certified_mixture_rdp,
    count_vectors,
    enumerate_output_distributions,
    fixed_pair_transcript_law,
    pate_vote_model,
    repeated_query_analysis,
    repeated_query_rdp,
    transcript_exact_epsilon,
    transcript_law,
    transcript_rdp,
)


def _renyi_closed_form(p, q, alpha):
    p, q = np.asarray(p, float), np.asarray(q, float)
    return math.log(np.sum(p**alpha * q ** (1 - alpha))) / (alpha - 1)


def test_issue_13_numbers():
    """k = 250, σ = 40, P_q = (.5, .5), P'_q = (.75, .25), α = 64 (issue 13 §1): 1000 × the
    single-answer RDP is 1.434 > the vote cap 0.682, the exact 1000-answer transcript 0.033."""
    orders = [64.0]
    one = repeated_query_analysis([0.5, 0.5], [0.75, 0.25], 250, 40.0, 1, orders)
    full = repeated_query_analysis([0.5, 0.5], [0.75, 0.25], 250, 40.0, 1000, orders)
    cap = max(_renyi_closed_form([0.5, 0.5], [0.75, 0.25], 64), _renyi_closed_form([0.75, 0.25], [0.5, 0.5], 64))
    assert_allclose(cap, 62 / 63 * math.log(2), rtol=1e-12)  # closed form: (1/63) log(2^-64 (4^63 + (4/3)^63)) ≈ (62/63) log 2
    assert_allclose(full.vote_cap, cap, rtol=1e-12)
    assert_allclose(1000 * one.rdp, 1.434, atol=5e-4)
    assert_allclose(full.vote_cap, 0.682, atol=5e-4)
    assert_allclose(full.rdp, 0.0333, atol=1e-4)
    assert full.method == "enumerate"
    assert full.rdp_lo[0] - 1e-12 <= full.rdp[0] <= full.rdp_hi[0] + 1e-12 and full.rdp_hi[0] - full.rdp_lo[0] < 1e-9
    assert 1000 * one.rdp[0] > full.vote_cap[0] > full.histogram_cap[0] >= full.rdp[0]
    assert_allclose(repeated_query_rdp([0.5, 0.5], [0.75, 0.25], 250, 40.0, 1000, orders), full.rdp)


@pytest.mark.parametrize("p, pp, k, sigma", [([0.5, 0.3, 0.2], [0.1, 0.2, 0.7], 12, 3.0), ([0.6, 0.4], [0.1, 0.9], 30, 4.0)])
def test_single_answer_equals_mixture_rdp(p, pp, k, sigma):
    orders = [1.5, 2.0, 8.0, 32.0]
    one = repeated_query_analysis(p, pp, k, sigma, 1, orders)
    cert = certified_mixture_rdp(enumerate_output_distributions(pate_vote_model(p, pp, k), sigma), orders)
    assert_allclose(one.rdp, cert["rdp"], rtol=1e-8, atol=1e-12)
    assert np.all(one.rdp >= cert["rdp_lo"] - 1e-12) and np.all(one.rdp <= cert["rdp_hi"] + 1e-12)


def test_caps_and_monotone_in_n():
    """Data processing: transcript ≤ D_α(H_S ‖ H_S') ≤ D_α(P_q ‖ P'_q); the n-answer transcript is
    a post-processing of the (n+1)-answer one (non-decreasing). n × the single answer is no bound
    (test_transcript_can_exceed_n_times_one_answer)."""
    orders = [2.0, 8.0, 64.0]
    p, pp, k, sigma = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5], 20, 4.0
    one = repeated_query_analysis(p, pp, k, sigma, 1, orders)
    prev = one.rdp
    for n in (2, 5, 20, 60):
        r = repeated_query_analysis(p, pp, k, sigma, n, orders)
        assert np.all(r.rdp_lo <= r.histogram_cap_hi + 1e-12)
        assert np.all(r.histogram_cap <= r.vote_cap + 1e-12)
        assert np.all(r.rdp >= prev - 1e-10)
        prev = r.rdp
    # with many answers the transcript approaches the histogram cap (it identifies p(H))
    assert np.all(prev > 0.5 * r.histogram_cap)


def _brute_force_sequence_laws(model, sigma, n):
    """Laws of the answer *sequences* (C^n outcomes), by enumerating every voter's vote."""
    c = model.num_classes
    probs = [np.asarray(g) for cnt, g in zip(model.group_counts, model.group_probs) for _ in range(int(cnt))]
    laws = []
    for last in (model.last, model.last_prime):
        seq = np.zeros(c**n)
        for votes in itertools.product(range(c), repeat=len(probs) + 1):
            w = np.prod([pr[v] for pr, v in zip(probs + [last], votes)])
            if w == 0:
                continue
            h = np.bincount(votes, minlength=c) + model.constant
            q = class_probabilities(h.astype(float), sigma)
            for i, ans in enumerate(itertools.product(range(c), repeat=n)):
                seq[i] += w * np.prod(q[list(ans)])
        laws.append(seq)
    return laws


def _brute_force_pate_sequence_laws(p, pp, k, sigma, n):
    """PATE's answer-*sequence* laws (C^n outcomes), by summing over every histogram of the k − 1
    shared votes (multinomial weights, scipy) and the differing vote — independent of the library's
    enumeration and of its count-vector statistic."""
    from scipy.stats import multinomial

    c = len(p)
    bases = [np.array(b) for b in itertools.product(range(k), repeat=c) if sum(b) == k - 1]
    seqs = np.array(list(itertools.product(range(c), repeat=n)))
    laws = np.zeros((2, len(seqs)))
    for b in bases:
        w = multinomial.pmf(b, k - 1, p)
        for side, last in enumerate((p, pp)):
            for v in range(c):
                if last[v] > 0 and w > 0:
                    q = class_probabilities((b + np.eye(c, dtype=int)[v]).astype(float), sigma)
                    laws[side] += w * last[v] * np.prod(q[seqs], axis=1)
    return laws


@pytest.mark.parametrize(
    "p, pp, k, sigma, n, alpha, transcript, n_times_one, ratio",
    [
        # issue 27 §2: the values are this test's brute force over all 2^10 (resp. 3^5) answer sequences
        ((0.1, 0.9), (0.0, 1.0), 5, 4.0, 10, 24.0, 0.36684, 0.11022, 3.33),
        ((0.05, 0.45, 0.5), (0.0, 0.45, 0.55), 20, 4.0, 5, 64.0, 0.064139, 0.022293, 2.88),
        # the same with finite caps (P'_q = (0.01, 0.99)): above n × one, below the histogram cap 1.80 ≤ vote cap 2.20
        ((0.1, 0.9), (0.01, 0.99), 5, 4.0, 10, 24.0, 0.26489, 0.088099, 3.007),
    ],
)
def test_transcript_can_exceed_n_times_one_answer(p, pp, k, sigma, n, alpha, transcript, n_times_one, ratio):
    """Regression (issue 27 §2): n answers sharing one random histogram are not independent, and the
    transcript RDP can exceed n × the single-answer RDP (a rare mixture component — here the histograms
    with the differing vote in a class P'_q never votes for — builds up over the answers). Only the
    caps bound it."""
    r = repeated_query_analysis(p, pp, k, sigma, n, [alpha])
    one = repeated_query_analysis(p, pp, k, sigma, 1, [alpha])
    s0, s1 = _brute_force_pate_sequence_laws(p, pp, k, sigma, n)
    brute = max(renyi_divergence(s0, s1, [alpha])[0], renyi_divergence(s1, s0, [alpha])[0])
    assert_allclose(r.rdp[0], brute, rtol=1e-8)
    assert_allclose(r.rdp[0], transcript, rtol=1e-4)
    assert_allclose(n * one.rdp[0], n_times_one, rtol=1e-4)
    assert r.rdp[0] > n * one.rdp[0] and r.rdp[0] / (n * one.rdp[0]) == pytest.approx(ratio, abs=5e-3)
    # the caps still hold (infinite in the first two cases: P'_q puts no mass on class 0, where P_q does)
    assert r.rdp_lo[0] <= r.histogram_cap_hi[0] + 1e-12 and r.histogram_cap[0] <= r.vote_cap[0] + 1e-12
    assert r.rdp[0] <= r.histogram_cap[0] and r.rdp_hi[0] - r.rdp_lo[0] < 1e-9


def test_transcript_epsilon_can_exceed_independent_composition():
    """The same counterexample in (ε, δ): exact PLD ε of the 10-answer transcript 0.764 against 0.388 for
    ten independent answers of the single-answer mixture (dp-accounting PLD, δ = 1e-6)."""
    p, pp, k, sigma, n = (0.1, 0.9), (0.0, 1.0), 5, 4.0, 10
    model = pate_vote_model(p, pp, k)
    enum = enumerate_output_distributions(model, sigma)
    independent = exact_epsilon(enum.p, enum.q, 1e-6, num_compositions=n)
    transcript = transcript_exact_epsilon(transcript_law(model, sigma, n), 1e-6)
    assert_allclose(transcript, 0.764, atol=2e-3)
    assert_allclose(independent, 0.388, atol=3e-3)
    assert transcript > 1.9 * independent


@pytest.mark.parametrize("n", [1, 3])
def test_brute_force_against_sequences(n):
    model = pate_vote_model([0.5, 0.3, 0.2], [0.1, 0.1, 0.8], 3)
    sigma, orders = 1.0, [1.5, 4.0, 16.0, np.inf]
    s0, s1 = _brute_force_sequence_laws(model, sigma, n)
    want = np.maximum(renyi_divergence(s0, s1, orders), renyi_divergence(s1, s0, orders))
    got = transcript_rdp(transcript_law(model, sigma, n), orders, method="enumerate")
    assert_allclose(got.rdp, want, rtol=1e-9)
    assert_allclose(got.forward, renyi_divergence(s0, s1, orders), rtol=1e-9)


def test_capc_model_brute_force():
    """A CaPC model (one deterministic + two random teachers + the canary teacher)."""
    teachers = np.array([[0.7, 0.3], [1.0, 0.0], [0.4, 0.6], [0.4, 0.6]])
    model = capc_vote_model(teachers, [0.0, 1.0])
    sigma, n, orders = 1.0, 4, [2.0, 8.0]
    s0, s1 = _brute_force_sequence_laws(model, sigma, n)
    want = np.maximum(renyi_divergence(s0, s1, orders), renyi_divergence(s1, s0, orders))
    assert_allclose(transcript_rdp(transcript_law(model, sigma, n), orders).rdp, want, rtol=1e-9)


def test_fixed_pair_composes_exactly():
    """Fixed histograms: the answers are independent, so the transcript RDP is n × Eq. (4)'s."""
    h0, h1, sigma, n, orders = [14, 12, 10, 8, 6], [13, 13, 10, 8, 6], 2.0, 4, [2.0, 8.0]
    got = transcript_rdp(fixed_pair_transcript_law(h0, h1, sigma, n), orders)
    assert_allclose(got.rdp, n * exact_rdp(h0, h1, sigma, orders), rtol=1e-9)
    assert np.all(np.isnan(got.vote_cap))
    # exact ε of the transcript = PLD composition of the single answer (dp-accounting)
    p, q = class_probabilities(h0, sigma), class_probabilities(h1, sigma)
    want = exact_epsilon(p, q, 1e-5, num_compositions=n)
    assert_allclose(transcript_exact_epsilon(fixed_pair_transcript_law(h0, h1, sigma, n), 1e-5), want, atol=5e-3)


def test_transcript_epsilon_of_a_random_histogram_is_below_per_answer_composition():
    """Here (a canary that shifts half of one teacher's vote, 200 answers) the exact ε of the shared-histogram
    transcript is below the PLD composition of the single-answer mixture, which wrongly assumes independent
    answers. Not in general: test_transcript_epsilon_can_exceed_independent_composition."""
    p, pp, k, sigma, n = [0.5, 0.5], [0.95, 0.05], 40, 8.0, 200
    model = pate_vote_model(p, pp, k)
    enum = enumerate_output_distributions(model, sigma)
    composed = exact_epsilon(enum.p, enum.q, 1e-5, num_compositions=n)
    transcript = transcript_exact_epsilon(transcript_law(model, sigma, n), 1e-5)
    assert transcript < composed


def test_certified_interval_contains_the_tight_value_under_heavy_pruning():
    orders = [2.0, 16.0]
    loose = repeated_query_analysis([0.5, 0.5], [0.9, 0.1], 200, 10.0, 50, orders, max_tail_mass=1e-4)
    tight = repeated_query_analysis([0.5, 0.5], [0.9, 0.1], 200, 10.0, 50, orders)
    assert loose.tail_mass > 1e-12 and loose.support_size < tight.support_size
    assert np.all(loose.rdp_lo <= tight.rdp + 1e-12) and np.all(tight.rdp <= loose.rdp_hi + 1e-12)


def test_monte_carlo_agrees_with_enumeration():
    orders = [2.0, 4.0]
    law = transcript_law(pate_vote_model([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], 15), 3.0, 30)
    ex = transcript_rdp(law, orders, method="enumerate")
    mc = transcript_rdp(law, orders, method="monte_carlo", mc_draws=40_000, rng=3)
    assert mc.method == "monte_carlo" and np.all(np.isnan(mc.rdp_lo))
    assert np.all(np.abs(mc.rdp - ex.rdp) <= 5 * mc.rdp_se + 1e-9), (mc.rdp, ex.rdp, mc.rdp_se)


def test_count_vectors_and_log_likelihoods_sum_to_one():
    for n, c in ((5, 1), (7, 2), (6, 3), (4, 4)):
        v = count_vectors(n, c)
        assert v.shape == (math.comb(n + c - 1, c - 1), c) and np.all(v.sum(1) == n)
        assert np.unique(v, axis=0).shape[0] == v.shape[0]
    law = transcript_law(pate_vote_model([0.5, 0.3, 0.2], [0.2, 0.3, 0.5], 40), 4.0, 25)
    ll = law.log_likelihoods(count_vectors(25, 3))
    assert_allclose(np.exp(ll).sum(0), 1.0, atol=1e-10)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="num_repeats"):
        repeated_query_rdp([0.5, 0.5], [0.7, 0.3], 10, 2.0, 0, [2.0])
    with pytest.raises(ValueError, match="sigma"):
        repeated_query_rdp([0.5, 0.5], [0.7, 0.3], 10, -1.0, 3, [2.0])
    with pytest.raises(ValueError, match="order"):
        repeated_query_rdp([0.5, 0.5], [0.7, 0.3], 10, 2.0, 3, [1.0])
    with pytest.raises(ValueError, match="method"):
        repeated_query_rdp([0.5, 0.5], [0.7, 0.3], 10, 2.0, 3, [2.0], method="guess")
    law = transcript_law(pate_vote_model([0.5, 0.5], [0.7, 0.3], 10), 2.0, 3)
    with pytest.raises(ValueError, match="num_repeats"):
        law.log_likelihoods([[1, 1]])


def test_sampled_base_transcript_law_estimates_the_enumerated_one():
    """The sampled-base law (for bases that do not enumerate) converges to the certified one and errs upwards on average."""
    from ppaudit.vote_models import pate_vote_model, transcript_law, transcript_rdp
    from ppaudit.vote_models.repeated_query import sampled_transcript_law

    model = pate_vote_model([0.5, 0.3, 0.2], [0.1, 0.2, 0.7], 6)
    orders = [2.0, 8.0]
    truth = transcript_rdp(transcript_law(model, 1.5, 5), orders, method="enumerate").rdp
    big = transcript_rdp(sampled_transcript_law(model, 1.5, 5, 50_000, rng=0), orders, method="enumerate").rdp
    np.testing.assert_allclose(big, truth, rtol=0.03)
    small = np.mean([transcript_rdp(sampled_transcript_law(model, 1.5, 5, 30, rng=r), orders, method="enumerate").rdp for r in range(40)], axis=0)
    assert np.all(small >= truth * 0.98), (small, truth)  # joint convexity: the plug-in errs upwards on average
