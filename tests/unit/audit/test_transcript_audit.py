"""Transcript-level audit of repeated queries (issue 13 §1): the demonstration that the paper's
per-query composition exceeds a valid upper bound while the transcript audit does not."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ppaudit.audit import (
    sample_transcript_counts,
    score_bin_edges,
    transcript_audit,
    two_cut_lower_bound,
)
from ppaudit.vote_models import (
    count_vectors,
    enumerate_output_distributions,
    pate_vote_model,
    repeated_query_analysis,
    transcript_law,
)


def test_paper_composition_exceeds_the_cap_and_the_transcript_audit_does_not():
    """Issue 13's example (k = 250, σ = 40, P_q = (.5, .5), P'_q = (.75, .25), n = 1000, α = 64):
    the paper's procedure — a 2-cut audit of one answer from T = 1e8 exact-count trials,
    composed n times — certifies > 0.682 = D_α(P_q ‖ P'_q), a valid *upper* bound on the
    RDP of everything the adversary sees; the transcript audit stays below the exact
    transcript RDP (0.033) and the cap."""
    orders = [8.0, 64.0]
    model = pate_vote_model([0.5, 0.5], [0.75, 0.25], 250)
    truth = repeated_query_analysis([0.5, 0.5], [0.75, 0.25], 250, 40.0, 1000, orders)
    enum = enumerate_output_distributions(model, 40.0)
    rng = np.random.default_rng(2024)
    c0 = rng.multinomial(10**8, enum.p)
    c1 = rng.multinomial(10**8, enum.q)
    per_answer = two_cut_lower_bound(c0, c1, orders, rng=rng).lower_bound
    paper_composed = 1000 * per_answer  # procedure: paper (per-query composition)
    assert paper_composed[1] > truth.vote_cap[1] > truth.histogram_cap_hi[1]
    sound = transcript_audit(model, 40.0, 1000, 4000, orders, rng=np.random.default_rng(7), delta=1e-5)
    assert sound.procedure == "ours" and sound.statistic == "exact"
    assert np.all(sound.rdp_lower_bound <= truth.vote_cap)
    assert np.all(sound.rdp_lower_bound <= truth.histogram_cap_hi)
    assert np.all(sound.rdp_lower_bound <= truth.rdp_hi)


def test_transcript_counts_follow_the_model():
    """Each transcript: one histogram, n i.i.d. answers of it; with the cache one answer repeated."""
    model = pate_vote_model([0.6, 0.3, 0.1], [0.1, 0.3, 0.6], 5)
    rng = np.random.default_rng(0)
    free = sample_transcript_counts(model.sampler("S"), 3, 1.5, 6, 20000, rng)
    cached = sample_transcript_counts(model.sampler("S"), 3, 1.5, 6, 20000, rng, cache_answers=True)
    assert np.all(free.sum(1) == 6) and np.all(cached.sum(1) == 6) and np.all((cached > 0).sum(1) == 1)
    enum = enumerate_output_distributions(model, 1.5)
    assert_allclose(free.sum(0) / free.sum(), enum.p, atol=0.01)
    assert_allclose(cached.sum(0) / cached.sum(), enum.p, atol=0.01)
    # shared histogram: answers within a transcript are positively correlated, so the
    # variance of a class count exceeds the binomial n p (1 − p)
    var = free[:, 0].var()
    assert var > 6 * enum.p[0] * (1 - enum.p[0]) * 1.05


def test_cache_and_pilot_statistic_and_edges():
    model = pate_vote_model([0.6, 0.4], [0.1, 0.9], 4)
    orders = [2.0, 8.0]
    cached = transcript_audit(model, 1.0, 6, 3000, orders, rng=1, cache_answers=True)
    assert cached.edges.size <= 1  # a cached transcript is one answer: C = 2 outcomes
    pilot = transcript_audit(model, 1.0, 6, 3000, orders, rng=1, statistic="pilot", delta=1e-3)
    assert pilot.statistic == "pilot" and np.isfinite(pilot.epsilon_lower_bound)
    assert_allclose(score_bin_edges([1.0, 1.0, 3.0], 4), [2.0])
    assert score_bin_edges(np.arange(1000.0), 8).size == 7
    # same seed, same bytes
    a = transcript_audit(model, 1.0, 6, 2000, orders, rng=5)
    b = transcript_audit(model, 1.0, 6, 2000, orders, rng=5)
    assert np.array_equal(a.counts0, b.counts0) and np.array_equal(a.rdp_lower_bound, b.rdp_lower_bound)


def test_bad_inputs():
    model = pate_vote_model([0.6, 0.4], [0.1, 0.9], 4)
    with pytest.raises(ValueError, match="num_repeats"):
        transcript_audit(model, 1.0, 0, 100, [2.0])
    with pytest.raises(ValueError, match="statistic"):
        transcript_audit(model, 1.0, 3, 100, [2.0], statistic="magic")
    with pytest.raises(ValueError, match="delta"):
        transcript_audit(model, 1.0, 3, 100, [2.0], delta=2.0)
    with pytest.raises(ValueError, match="num_bins"):
        score_bin_edges([1.0, 2.0], 1)
    with pytest.raises(ValueError, match="sigma"):
        sample_transcript_counts(model.sampler("S"), 2, 0.0, 3, 10, np.random.default_rng(0))


def _transcript_gof(counts: np.ndarray, law, n: int, c: int) -> float:
    """Chi-square p-value of sampled transcript counts against the exact law of the S side."""
    from scipy.stats import chisquare

    vecs = count_vectors(n, c)
    p = np.exp(law.log_likelihoods(vecs)[:, 0])
    radix = (n + 1) ** np.arange(c)
    index = {int(v @ radix): i for i, v in enumerate(vecs)}
    obs = np.bincount([index[int(k)] for k in counts @ radix], minlength=len(vecs))
    return float(chisquare(obs, p / p.sum() * obs.sum()).pvalue)


@pytest.mark.parametrize("answers", ["simulated", "quadrature"])
def test_both_answer_samplers_draw_the_exact_transcript_law(answers):
    """The counts of n answers on a shared histogram follow the exact transcript law (TranscriptLaw:
    the mixture over histograms of Multinomial(n, p(H))), whether the noise is simulated or the answers
    drawn from Eq. (4)'s law; a planted bug (the quadrature at a wrong σ) is rejected."""
    model = pate_vote_model([0.6, 0.3, 0.1], [0.1, 0.3, 0.6], 5)
    sigma, n = 1.5, 4
    law = transcript_law(model, sigma, n)
    pvals = [_transcript_gof(sample_transcript_counts(model.sampler("S"), 3, sigma, n, 20000, np.random.default_rng(s),
                                                      answers=answers), law, n, 3) for s in range(5)]
    assert min(pvals) > 1e-4, pvals  # 5 seeded runs of a sound sampler: P[min < 1e-4] < 5e-4
    bug = sample_transcript_counts(model.sampler("S"), 3, 1.2, n, 20000, np.random.default_rng(0), answers=answers)
    assert _transcript_gof(bug, law, n, 3) < 1e-6
    cached = sample_transcript_counts(model.sampler("S"), 3, sigma, n, 20000, np.random.default_rng(1), cache_answers=True, answers=answers)
    assert np.all(cached.sum(1) == n) and np.all((cached > 0).sum(1) == 1)
    assert_allclose(cached.sum(0) / cached.sum(), enumerate_output_distributions(model, sigma).p, atol=0.012)


def test_quadrature_answers_charge_their_certified_error():
    """The quadrature sampler's certified error (n·τ_q per transcript and side) is charged to the
    effective confidence; the simulated noise charges nothing."""
    from ppaudit.audit import answer_total_variation
    from ppaudit.quadrature_bound import quadrature_error_bound

    tau = quadrature_error_bound(2).total_variation
    assert answer_total_variation(2, 6) == 6 * tau and answer_total_variation(2, 6, answers="simulated") == 0.0
    assert tau < answer_total_variation(2, 6, cache_answers=True) < 2 * tau
    model = pate_vote_model([0.6, 0.4], [0.1, 0.9], 4)
    quad = transcript_audit(model, 1.0, 6, 2000, [2.0], rng=3)
    sim = transcript_audit(model, 1.0, 6, 2000, [2.0], rng=3, answers="simulated")
    # both charge the histogram samplers' distance; the quadrature also its answers' (both sides)
    assert_allclose(sim.effective_confidence - quad.effective_confidence, 2000 * 2 * 6 * tau, rtol=1e-6)
    with pytest.raises(ValueError, match="answers"):
        sample_transcript_counts(model.sampler("S"), 2, 1.0, 3, 10, np.random.default_rng(0), answers="exact")
