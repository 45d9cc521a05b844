"""Rao–Blackwellised draws of a repeated-query transcript (``ppaudit.vote_models.conditional``):
their means are the exact laws of the statistic (checked against the enumerated transcript law),
the constants of the sound bound hold, and bad input is refused."""

import numpy as np
import pytest

from ppaudit.audit import rao_blackwell_transcript_audit
from ppaudit.vote_models import (
    count_vectors,
    enumerate_output_distributions,
    pate_vote_model,
    transcript_law,
    transcript_rdp,
)
from ppaudit.vote_models.conditional import conditional_transcript_draws


def _statistic_law(model, sigma, n, j):
    """Exact laws of N_j from the enumerated answer-count laws (marginalised over the other classes)."""
    law = transcript_law(model, sigma, n)
    cv = count_vectors(n, model.num_classes)
    ll = law.log_likelihoods(cv)
    out = np.zeros((2, n + 1))
    for side in (0, 1):
        np.add.at(out[side], cv[:, j], np.exp(ll[:, side] - np.logaddexp.reduce(ll[:, side])))
    return out


def test_means_are_the_exact_law_of_the_class_count():
    model = pate_vote_model([0.5, 0.3, 0.2], [0.1, 0.2, 0.7], 6)
    sigma, n, m = 1.5, 5, 40_000
    d = conditional_transcript_draws(model, sigma, n, m, rng=3)
    exact = _statistic_law(model, sigma, n, d.statistic_class)
    assert d.statistic == f"count of class {d.statistic_class}"
    assert d.statistic_class == 2  # the class the canary vote moves most
    np.testing.assert_array_equal(d.bin_edges, np.arange(n + 2))
    for side, draws in enumerate((d.p, d.q)):
        se = draws.std(axis=0, ddof=1) / np.sqrt(m)
        assert np.all(np.abs(draws.mean(axis=0) - exact[side]) <= 5 * se + 1e-12), (draws.mean(axis=0), exact[side])
    assert np.allclose(d.p.sum(axis=1), 1.0) and np.allclose(d.q.sum(axis=1), 1.0)


def test_single_answer_draws_average_to_the_output_law():
    model = pate_vote_model([0.5, 0.3, 0.2], [0.1, 0.2, 0.7], 6)
    d = conditional_transcript_draws(model, 1.5, 1, 40_000, rng=4)
    enum = enumerate_output_distributions(model, 1.5)
    assert d.statistic == "answer" and d.p.shape[1] == 3
    np.testing.assert_allclose(d.p.mean(axis=0), enum.p, atol=5 * d.p.std(axis=0).max() / 200 + 1e-9)
    np.testing.assert_allclose(d.q.mean(axis=0), enum.q, atol=5 * d.q.std(axis=0).max() / 200 + 1e-9)


def test_difference_bound_is_the_total_variation_of_the_differing_vote_and_holds():
    model = pate_vote_model([0.6, 0.4], [0.2, 0.8], 8)
    d = conditional_transcript_draws(model, 1.0, 12, 5000, rng=0)
    assert d.difference_bound == pytest.approx(0.4)
    csum_p, csum_q = np.cumsum(d.p, axis=1), np.cumsum(d.q, axis=1)  # every prefix set of the statistic
    assert np.max(np.abs(csum_p - csum_q)) <= d.difference_bound + 1e-12
    assert 0 < d.bias < 1e-9


def test_large_n_is_binned_and_stays_a_law():
    model = pate_vote_model([0.5, 0.5], [0.75, 0.25], 250)
    d = conditional_transcript_draws(model, 40.0, 1000, 300, rng=1, max_outputs=64)
    assert d.p.shape[1] <= 64 and d.bin_edges[0] == 0 and d.bin_edges[-1] == 1001
    assert np.allclose(d.p.sum(axis=1), 1.0, atol=1e-9) and np.allclose(d.q.sum(axis=1), 1.0, atol=1e-9)


def test_issue_example_bound_below_the_exact_transcript_rdp():
    """Issue 13 §1: k = 250, σ = 40, P = (0.5, 0.5), P' = (0.75, 0.25), n = 1000 (exact 0.0333 at α = 64)."""
    model = pate_vote_model([0.5, 0.5], [0.75, 0.25], 250)
    orders = [8.0, 64.0]
    truth = transcript_rdp(transcript_law(model, 40.0, 1000), orders)
    res = rao_blackwell_transcript_audit(model, 40.0, 1000, 20_000, orders, rng=2, delta=1e-6)
    assert np.all(res.rdp_lower_bound <= truth.rdp_hi)
    assert res.rdp_lower_bound[1] > 0.2 * truth.rdp[1]  # informative at this M
    assert res.details["method"] == "rao-blackwell"


@pytest.mark.parametrize("kwargs, match", [
    ({"num_repeats": 0}, "num_repeats"),
    ({"draws": 1}, "draws"),
    ({"sigma": -1.0}, "sigma"),
])
def test_bad_input_named(kwargs, match):
    args = {"model": pate_vote_model([0.5, 0.5], [0.9, 0.1], 4), "sigma": 1.0, "num_repeats": 3, "draws": 100}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        conditional_transcript_draws(**args)


def test_identical_model_refused():
    with pytest.raises(ValueError, match="identical"):
        conditional_transcript_draws(pate_vote_model([0.5, 0.5], [0.5, 0.5], 4), 1.0, 3, 100)
