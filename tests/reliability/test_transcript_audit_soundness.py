"""Soundness of the transcript audits over seeded repetitions (issue 13 acceptance): their 95 %
RDP lower bound exceeds the exact transcript RDP, and their (ε, δ) lower bound the exact
transcript ε, in at most 5 % + binomial slack of the runs — for the sampled audit
(``transcript_audit``) and the Rao–Blackwellised one (``rao_blackwell_transcript_audit``); planted
bugs (the paper's per-answer audit composed n times on a shared histogram; the
Rao–Blackwellised answers treated as independent) are caught."""

import numpy as np
from scipy.stats import binom

from ppaudit.accounting import exact_epsilon
from ppaudit.audit import (
    dp_epsilon_lower_bound,
    rao_blackwell_transcript_audit,
    rao_blackwell_two_cut,
    transcript_audit,
    two_cut_lower_bound,
)
from ppaudit.rng import job_generator
from ppaudit.vote_models import (
    count_vectors,
    pate_vote_model,
    transcript_law,
    transcript_rdp,
)

REPS = 200
#: P(Bin(200, 0.05) > ALLOWED) < 0.001: the test fails a sound procedure < 0.1 % of the time.
ALLOWED = int(binom.ppf(0.999, REPS, 0.05))
ORDERS = [2.0, 8.0, 32.0]
DELTA = 1e-3


def _setting():
    model = pate_vote_model([0.6, 0.4], [0.1, 0.9], 4)
    return model, 1.0, 6


def test_transcript_rdp_and_epsilon_bounds_are_sound():
    model, sigma, n = _setting()
    law = transcript_law(model, sigma, n)
    truth = transcript_rdp(law, ORDERS)
    ll = law.log_likelihoods(count_vectors(n, 2))
    eps_truth = exact_epsilon(ll[:, 0], ll[:, 1], DELTA, log_pmf=True)
    over_rdp = over_eps = 0
    mean_bound = np.zeros(len(ORDERS))
    mean_eps = 0.0
    for r in range(REPS):
        res = transcript_audit(model, sigma, n, 1500, ORDERS, rng=job_generator(13, "transcript_soundness", r), delta=DELTA)
        over_rdp += bool(np.any(res.rdp_lower_bound > truth.rdp_hi + 1e-12))
        over_eps += bool(res.epsilon_lower_bound > eps_truth + 1e-9)
        mean_bound += res.rdp_lower_bound / REPS
        mean_eps += res.epsilon_lower_bound / REPS
    assert over_rdp <= ALLOWED, (over_rdp, ALLOWED)
    assert over_eps <= ALLOWED, (over_eps, ALLOWED)
    # informative, not trivially sound: the bounds are well off zero on average
    assert np.all(mean_bound[1:] > 0.2 * truth.rdp[1:]), (mean_bound, truth.rdp)  # α = 2: 2-cut weak at T = 1500
    assert mean_eps > 0.2 * eps_truth, (mean_eps, eps_truth)


def test_planted_bug_per_answer_composition_is_caught():
    """The paper's per-query composition (n × single-answer audit) on a shared histogram:
    with a strongly concentrated histogram law (k = 40 teachers, σ = 8) the n answers add
    little beyond the first, and n · b(α) exceeds the exact transcript RDP in most runs."""
    model = pate_vote_model([0.5, 0.5], [0.95, 0.05], 40)
    sigma, n, orders = 8.0, 200, [16.0]
    truth = transcript_rdp(transcript_law(model, sigma, n), orders)
    from ppaudit.vote_models import enumerate_output_distributions

    enum = enumerate_output_distributions(model, sigma)
    over = 0
    reps = 50
    for r in range(reps):
        g = job_generator(13, "planted_composition", r)
        c0, c1 = g.multinomial(10**8, enum.p), g.multinomial(10**8, enum.q)
        composed = n * two_cut_lower_bound(c0, c1, orders, rng=g).lower_bound
        over += bool(composed[0] > truth.rdp_hi[0])
    assert over > 0.5 * reps, (over, truth.rdp)
    # and the (ε, δ) audit of one answer is itself sound for one answer (sanity of the tool)
    eps1 = dp_epsilon_lower_bound(c0, c1, delta=1e-6, rng=0)
    assert eps1 <= exact_epsilon(enum.p, enum.q, 1e-6) + 1e-9


def test_rao_blackwell_transcript_bounds_are_sound_and_informative():
    """C = 2: the count of one class is sufficient, so the truth of the statistic is the
    transcript's and the check is as tight as it can be. RDP and ε bounds hold together."""
    model, sigma, n = _setting()
    law = transcript_law(model, sigma, n)
    truth = transcript_rdp(law, ORDERS)
    ll = law.log_likelihoods(count_vectors(n, 2))
    eps_truth = exact_epsilon(ll[:, 0], ll[:, 1], DELTA, log_pmf=True)
    over = 0
    mean_bound = np.zeros(len(ORDERS))
    mean_eps = 0.0
    for r in range(REPS):
        res = rao_blackwell_transcript_audit(model, sigma, n, 2000, ORDERS, rng=job_generator(13, "rb_transcript_soundness", r), delta=DELTA)
        over += bool(np.any(res.rdp_lower_bound > truth.rdp_hi + 1e-12) or res.epsilon_lower_bound > eps_truth + 1e-9)
        mean_bound += res.rdp_lower_bound / REPS
        mean_eps += res.epsilon_lower_bound / REPS
    assert over <= ALLOWED, (over, ALLOWED)
    assert np.all(mean_bound > 0.5 * truth.rdp), (mean_bound, truth.rdp)
    assert mean_eps > 0.5 * eps_truth, (mean_eps, eps_truth)


def test_planted_bug_rao_blackwell_answers_treated_as_independent_is_caught():
    """Feeding the Rao–Blackwellised single-answer draws to the engine as if the ``n`` answers
    were independent (``num_repeats = n``: a fresh training draw per answer) over-claims the ε of
    a shared-histogram transcript in most runs."""
    from ppaudit.vote_models.conditional import conditional_transcript_draws

    model = pate_vote_model([0.5, 0.5], [0.95, 0.05], 40)
    sigma, n, delta = 8.0, 200, 1e-3
    law = transcript_law(model, sigma, n)
    ll = law.log_likelihoods(count_vectors(n, 2))
    eps_truth = exact_epsilon(ll[:, 0], ll[:, 1], delta, log_pmf=True)
    over = 0
    reps = 30
    for r in range(reps):
        d = conditional_transcript_draws(model, sigma, 1, 5000, job_generator(13, "rb_planted", r))
        bug = rao_blackwell_two_cut(d.p, d.q, [2.0], difference_bound=d.difference_bound, bias=d.bias, rng=r,
                                    num_repeats=n, delta=delta)
        over += bool(bug.epsilon_lower_bound > eps_truth)
    assert over > 0.5 * reps, (over, eps_truth)
