"""Seeded, chunked Monte Carlo engine and the exact-count mode."""

import numpy as np
import pytest
from scipy.stats import chisquare

from ppaudit.montecarlo import (
    DiscreteHistogramModel,
    model_noisy_argmax_counts,
    noisy_argmax_counts,
    noisy_argmax_counts_pair,
)
from ppaudit.noisy_argmax import class_probabilities

H, SIGMA = np.array([14, 12, 10, 8, 6]), 2.0


def test_sample_mode_matches_exact_distribution():
    counts = noisy_argmax_counts(H, SIGMA, 400_000, rng=11, chunk_size=7_777)
    assert counts.sum() == 400_000
    p = class_probabilities(H, SIGMA)
    assert chisquare(counts, 400_000 * p).pvalue > 1e-4


def test_exact_mode_is_multinomial_and_fast_for_1e8():
    c = noisy_argmax_counts(H, SIGMA, 10**8, rng=1, mode="exact")
    assert c.sum() == 10**8
    p = class_probabilities(H, SIGMA)
    assert np.all(np.abs(c / 1e8 - p) < 6 * np.sqrt(p / 1e8))
    np.testing.assert_array_equal(c, noisy_argmax_counts(H, SIGMA, 1e8, rng=1, mode="exact"))


def test_reproducible_and_chunk_independent_totals():
    a = noisy_argmax_counts(H, SIGMA, 50_000, rng=5, chunk_size=1000)
    b = noisy_argmax_counts(H, SIGMA, 50_000, rng=5, chunk_size=1000)
    np.testing.assert_array_equal(a, b)
    s0, s1 = noisy_argmax_counts_pair(H, H, SIGMA, 10_000, rng=3)
    assert not np.array_equal(s0, s1)  # independent streams
    t0, t1 = noisy_argmax_counts_pair(H, H, SIGMA, 10_000, rng=3)
    np.testing.assert_array_equal(s0, t0) and np.testing.assert_array_equal(s1, t1)


def test_histogram_model_sampling_and_exact_mixture():
    hists = np.array([[10, 0, 0], [6, 5, 0], [2, 2, 7]])
    w = np.array([0.5, 0.3, 0.2])
    model = DiscreteHistogramModel(hists, w)
    mix = w @ class_probabilities(hists, 3.0)
    sampled = model_noisy_argmax_counts(model, 3, 3.0, 300_000, rng=2, chunk_size=10_000)
    assert chisquare(sampled, 300_000 * mix).pvalue > 1e-4
    exact = model_noisy_argmax_counts(model, 3, 3.0, 300_000, rng=2, mode="exact")
    assert exact.sum() == 300_000 and chisquare(exact, 300_000 * mix).pvalue > 1e-4


def test_callable_model():
    def pate_like(rng, n):
        return rng.multinomial(20, [0.7, 0.2, 0.1], size=n)

    c = model_noisy_argmax_counts(pate_like, 3, 4.0, 20_000, rng=0, progress=False)
    assert c.sum() == 20_000 and c[0] > c[1] > c[2]
    with pytest.raises(ValueError, match="DiscreteHistogramModel"):
        model_noisy_argmax_counts(pate_like, 3, 4.0, 10, rng=0, mode="exact")
    with pytest.raises(ValueError, match="shape"):
        model_noisy_argmax_counts(lambda rng, n: np.zeros((n, 4)), 3, 4.0, 10, rng=0)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(trials=0), "trials"),
        (dict(trials=2.5), "trials"),
        (dict(trials=-5), "trials"),
        (dict(sigma=0.0), "sigma"),
        (dict(mode="fast"), "mode"),
        (dict(hist=[[1, 2], [3, 4]]), "shape"),
        (dict(chunk_size=0), "chunk_size"),
    ],
)
def test_bad_input(kwargs, match):
    args = dict(hist=H, sigma=SIGMA, trials=100, rng=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        noisy_argmax_counts(**args)
