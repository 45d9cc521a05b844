"""Label-DP mechanisms: RR, RRWithPrior (LP-1ST/LP-2ST), ALIBI, AGIBI, PATE."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose
from scipy import stats

from ppaudit.attacks.one_run import gdp_delta
from ppaudit.mechanisms.labeldp import (
    agibi,
    agibi_posterior,
    agibi_sigma,
    alibi,
    alibi_posterior,
    gnmax_aggregate,
    lp_1st,
    lp_2st,
    pate_label_dp,
    randomized_response,
    rr_keep_probability,
    rr_with_prior,
)


def _z(successes: int, n: int, p: float) -> float:
    return (successes - n * p) / math.sqrt(n * p * (1 - p))


@pytest.mark.parametrize("k, eps", [(2, 0.5), (5, 1.0), (10, 3.0)])
def test_rr_keeps_with_the_right_probability(k, eps):
    # Reference: e^ε / (e^ε + k − 1). 200 000 seeded draws; |z| < 4.5 has two-sided
    # probability ≈ 7e-6 under the correct law, so the test is not flaky.
    rng = np.random.default_rng(k)
    n = 200_000
    y = rng.integers(0, k, n)
    out = randomized_response(y, eps, k, rng)
    p = math.exp(eps) / (math.exp(eps) + k - 1)
    assert_allclose(rr_keep_probability(eps, k), p, rtol=1e-12)
    assert abs(_z(int((out.labels == y).sum()), n, p)) < 4.5
    assert out.epsilon == eps and out.delta == 0.0
    if k > 2:
        # a flipped label is uniform over the other k − 1 classes: chi-square goodness of fit
        flipped = out.labels != y
        off = ((out.labels - y) % k)[flipped]
        counts = np.bincount(off, minlength=k)[1:]
        assert stats.chisquare(counts).pvalue > 1e-4


def test_rr_infinite_epsilon_is_identity():
    y = np.arange(20) % 4
    np.testing.assert_array_equal(randomized_response(y, np.inf, 4, np.random.default_rng(0)).labels, y)


def rr_with_prior_law(y: int, prior: np.ndarray, eps: float) -> np.ndarray:
    """Output law of RRWithPrior (Ghazi et al. 2021, Alg. 2), written out per class."""
    order = np.argsort(-prior, kind="stable")
    k = prior.size
    w = [math.exp(eps) / (math.exp(eps) + j - 1) * prior[order[:j]].sum() for j in range(1, k + 1)]
    kstar = int(np.argmax(w)) + 1
    top = order[:kstar]
    law = np.zeros(k)
    if y in top:
        law[top] = 1.0 / (math.exp(eps) + kstar - 1)
        law[y] = math.exp(eps) / (math.exp(eps) + kstar - 1)
    else:
        law[top] = 1.0 / kstar
    return law


def test_rr_with_prior_matches_its_law_and_is_dp():
    rng = np.random.default_rng(11)
    prior = np.array([0.05, 0.4, 0.3, 0.15, 0.1])
    eps = 1.0
    n = 100_000
    laws = np.stack([rr_with_prior_law(y, prior, eps) for y in range(5)])
    # ε-DP: every output probability ratio between two inputs is ≤ e^ε (or both are 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = laws[:, None, :] / laws[None, :, :]
    assert np.nanmax(ratio[np.isfinite(ratio)]) <= math.exp(eps) * (1 + 1e-12)
    for y in range(5):
        out, kstar = rr_with_prior(np.full(n, y), eps, np.tile(prior, (n, 1)), rng)
        freq = np.bincount(out, minlength=5)
        expected = laws[y] * n
        keep = expected > 0
        assert freq[~keep].sum() == 0
        assert stats.chisquare(freq[keep], expected[keep]).pvalue > 1e-4
    # by hand: w_k = e/(e + k − 1)·(top-k mass) = 0.400, 0.512, 0.490, 0.451, 0.406 → k* = 2
    assert np.all(kstar == 2)


def test_lp_1st_uniform_prior_is_rr():
    rng = np.random.default_rng(12)
    y = rng.integers(0, 4, 100_000)
    out = lp_1st(y, 2.0, 4, rng)
    assert np.all(out.details["k_star"] == 4)
    assert abs(_z(int((out.labels == y).sum()), y.size, rr_keep_probability(2.0, 4))) < 4.5


def test_lp_2st_stages_and_prior():
    rng = np.random.default_rng(13)
    n, k = 2000, 3
    x = rng.normal(size=(n, 2))
    y = rng.integers(0, k, n)
    calls = []

    def fit_predict_proba(x_train, y_train, x_predict):
        calls.append((x_train.shape[0], x_predict.shape[0]))
        p = np.zeros((x_predict.shape[0], k))
        p[:, 0] = 1.0  # a confident prior: stage 2 collapses to k* = 1
        return p

    out = lp_2st(x, y, 1.0, k, fit_predict_proba, rng, first_stage_fraction=0.3)
    stage = out.details["stage"]
    assert calls == [(600, 1400)]
    assert (stage == 1).sum() == 600
    assert np.all(out.labels[stage == 2] == 0)
    assert np.all(out.details["k_star"][stage == 1] == k)
    assert out.epsilon == 1.0


def brute_force_posterior(o: np.ndarray, prior: np.ndarray, density) -> np.ndarray:
    """Bayes' rule with the likelihood of each coordinate written out: p(o | y = c) = Π_j density(o_j − [j = c])."""
    k = o.size
    like = np.array([np.prod([density(o[j] - (1.0 if j == c else 0.0)) for j in range(k)]) for c in range(k)])
    post = prior * like
    return post / post.sum()


def test_alibi_posterior_is_bayes():
    rng = np.random.default_rng(14)
    eps = 1.5
    lam = 2.0 / eps
    for _ in range(20):
        o = rng.normal(0.3, 1.0, size=4)
        prior = rng.dirichlet(np.ones(4))
        ref = brute_force_posterior(o, prior, lambda v: stats.laplace.pdf(v, scale=lam))
        assert_allclose(alibi_posterior(o[None], eps, prior)[0], ref, rtol=1e-10)


def test_agibi_posterior_is_bayes_and_sigma_is_analytic_gaussian():
    rng = np.random.default_rng(15)
    sigma = agibi_sigma(2.0, 1e-5, calibration="analytic")
    # Balle & Wang 2018, Thm 8 with Δ = √2 (written out independently with scipy.stats.norm)
    d2 = math.sqrt(2.0)
    delta = stats.norm.cdf(d2 / (2 * sigma) - 2.0 * sigma / d2) - math.exp(2.0) * stats.norm.cdf(-d2 / (2 * sigma) - 2.0 * sigma / d2)
    assert_allclose(delta, 1e-5, rtol=1e-6)
    assert_allclose(gdp_delta(2.0, d2 / sigma), 1e-5, rtol=1e-6)
    for _ in range(20):
        o = rng.normal(0.3, 1.0, size=4)
        prior = rng.dirichlet(np.ones(4))
        ref = brute_force_posterior(o, prior, lambda v: stats.norm.pdf(v, scale=sigma))
        assert_allclose(agibi_posterior(o[None], sigma, prior)[0], ref, rtol=1e-10)


def test_alibi_and_agibi_noise_levels():
    rng = np.random.default_rng(16)
    y = rng.integers(0, 5, 40_000)
    a = alibi(y, 2.0, 5, rng)
    noise = a.details["noisy"] - np.eye(5)[y]
    assert_allclose(noise.std(), math.sqrt(2) * (2.0 / 2.0), rtol=0.02)  # Laplace(b): std = √2·b
    assert_allclose(a.soft_labels.sum(axis=1), 1.0)
    g = agibi(y, 4.0, 5, rng, delta=1e-5)
    assert_allclose((g.details["noisy"] - np.eye(5)[y]).std(), g.details["sigma"], rtol=0.02)
    assert g.delta == 1e-5 and g.epsilon == 4.0
    assert (g.labels == y).mean() > 0.3  # above chance (0.2); σ ≈ 1.66 at (4, 1e-5)


def test_pate_label_dp_consensus_and_accounting():
    rng = np.random.default_rng(17)
    n, k, q = 3000, 3, 200
    x = rng.normal(size=(n, 2))
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 1).astype(int)
    xq = rng.normal(size=(q, 2))

    def rule(x_train, y_train, x_predict):  # every teacher learns the same rule
        lab = (x_predict[:, 0] > 0).astype(int) + (x_predict[:, 1] > 1).astype(int)
        return np.eye(k)[lab]

    seen = {}

    def student(x_train, y_train, x_predict):
        seen["n"] = x_train.shape[0]
        return np.full((x_predict.shape[0], k), 1.0 / k)

    out = pate_label_dp(x, y, xq, k, 50, 5.0, rule, rng, student_fit_predict_proba=student)
    truth = (xq[:, 0] > 0).astype(int) + (xq[:, 1] > 1).astype(int)
    assert np.all(out.labels == truth)  # 50 votes vs 0, σ = 5
    assert out.details["votes"].sum(axis=1).tolist() == [50] * q
    assert out.epsilon <= out.details["epsilon_data_independent"]
    assert seen["n"] == q
    conf = pate_label_dp(x, y, xq, k, 50, 5.0, rule, rng, threshold=60.0, sigma_threshold=1.0)
    assert not conf.details["answered"].any() and np.all(conf.labels == -1)


def test_pate_label_dp_block_teachers_match_one_at_a_time():
    """The block form of the teachers' model gets the same parts in teacher order and gives the same release (ms)."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(300, 2))
    y = (x[:, 0] > 0).astype(int)
    xq = rng.normal(size=(40, 2))

    def one(xt, yt, xp):  # a teacher that depends on its part: nearest labelled point
        d = ((xp[:, None, :] - xt[None, :, :]) ** 2).sum(-1)
        return np.eye(2)[yt[d.argmin(axis=1)]]

    calls = []

    def block(xs, ys, xp):
        calls.append(len(xs))
        return [one(a, b, xp) for a, b in zip(xs, ys)]

    a = pate_label_dp(x, y, xq, 2, 7, 2.0, one, np.random.default_rng(9))
    b = pate_label_dp(x, y, xq, 2, 7, 2.0, None, np.random.default_rng(9), teachers_fit_predict_proba=block)
    assert calls == [7] and np.array_equal(a.details["votes"], b.details["votes"]) and np.array_equal(a.labels, b.labels)
    with pytest.raises(ValueError, match="one array per teacher"):
        pate_label_dp(x, y, xq, 2, 7, 2.0, None, np.random.default_rng(9), teachers_fit_predict_proba=lambda xs, ys, xp: block(xs, ys, xp)[:3])


def test_gnmax_aggregate_threshold():
    votes = np.array([[10, 0, 0], [4, 3, 3]])
    ans, answered = gnmax_aggregate(votes, 1e-3, np.random.default_rng(0), threshold=8.0, sigma_threshold=1e-3)
    np.testing.assert_array_equal(answered, [True, False])
    np.testing.assert_array_equal(ans, [0, -1])


def test_bad_input_raises():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        randomized_response([0, 1], -1.0, 2, rng)
    with pytest.raises(ValueError, match=r"labels must be integers in \[0, 2\]"):
        randomized_response([0, 3], 1.0, 3, rng)
    with pytest.raises(ValueError, match="num_classes"):
        randomized_response([0, 1], 1.0, 1, rng)
    with pytest.raises(ValueError, match="prior must"):
        lp_1st([0, 1], 1.0, 3, rng, prior=np.ones((2, 2)) / 2)
    with pytest.raises(ValueError, match="delta"):
        agibi([0, 1], 1.0, 2, rng, delta=2.0)
    with pytest.raises(ValueError, match="sigma_threshold"):
        pate_label_dp(np.zeros((4, 1)), [0, 1, 0, 1], np.zeros((2, 1)), 2, 2, 1.0, lambda a, b, c: np.ones((len(c), 2)) / 2, rng, threshold=1.0)
    with pytest.raises(ValueError, match="rng"):
        randomized_response([0, 1], 1.0, 2, 0)


@settings(max_examples=50, deadline=None)
@given(
    o=arrays(np.float64, (3, 4), elements=st.floats(-20, 20)),
    eps=st.floats(0.01, 50.0),
    sigma=st.floats(0.05, 10.0),
)
def test_property_posteriors_are_distributions(o, eps, sigma):
    for post in (alibi_posterior(o, eps), agibi_posterior(o, sigma)):
        assert np.all(post >= 0)
        assert_allclose(post.sum(axis=1), 1.0, rtol=1e-12)
    # adding the same constant to every coordinate does not change AGIBI's posterior (Eq. 5)
    assert_allclose(agibi_posterior(o + 1.7, sigma), agibi_posterior(o, sigma), rtol=1e-9, atol=1e-300)
