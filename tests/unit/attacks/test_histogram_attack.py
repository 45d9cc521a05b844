"""Tests of the vote-histogram reconstruction attack (Wang et al. 2022, §3–§5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from ppaudit.accounting import gnmax_rdp_data_dependent, rdp_to_dp
from ppaudit.attacks.histogram import (
    DEFAULT_ORDERS,
    HARD_QUERY_LIMIT,
    NoisyArgmaxInterface,
    answer_frequencies,
    attack_privacy_cost,
    class_probability_jacobian,
    consensus_tertiles,
    max_vote_share,
    normalised_l1_error,
    queries_within_budget,
    reconstruct_histogram,
    reconstruct_histogram_wang2022,
    sample_answer_counts,
    select_consensus_histograms,
    shift_to_teachers,
    wang2022_trapezoid_probabilities,
)
from ppaudit.noisy_argmax import class_probabilities
from ppaudit.rng import job_generator

SIGMAS = (40.0, 60.0, 80.0, 100.0)  # Wang et al. 2022, §4.1
TEACHERS = 250  # Papernot et al. 2018 ensembles used by Wang §4.1


def _histograms(num_classes: int, seed: int) -> list[np.ndarray]:
    """250-vote histograms from low to full consensus (Dirichlet–multinomial + extremes)."""
    rng = np.random.default_rng(seed)
    out = [rng.multinomial(TEACHERS, rng.dirichlet(np.full(num_classes, a))).astype(float) for a in (0.1, 0.5, 3.0)]
    unanimous = np.zeros(num_classes)
    unanimous[rng.integers(num_classes)] = TEACHERS
    out.append(unanimous)
    out.append(np.bincount(np.arange(TEACHERS) % num_classes, minlength=num_classes).astype(float))
    return out


# ------------------------------------------------------------------ Jacobian and Thm 2


@pytest.mark.parametrize("num_classes", [2, 3, 10, 20])
@pytest.mark.parametrize("sigma", [5.0, 40.0, 100.0])
def test_jacobian_matches_finite_differences(num_classes, sigma):
    # Reference: central differences of the exact Q (class_probabilities, abs. err ≤ 1e-12);
    # step 1e-3 vote → truncation O(1e-6·Q''') and rounding O(1e-9).
    rng = np.random.default_rng(num_classes)
    h = rng.multinomial(TEACHERS, rng.dirichlet(np.full(num_classes, 0.7))).astype(float) + rng.random(num_classes)
    jac = class_probability_jacobian(h, sigma)
    eps = 1e-3
    fd = np.empty((num_classes, num_classes))
    for j in range(num_classes):
        e = np.zeros(num_classes)
        e[j] = eps
        fd[:, j] = (class_probabilities(h + e, sigma) - class_probabilities(h - e, sigma)) / (2 * eps)
    assert_allclose(jac, fd, rtol=0, atol=5e-9)


def test_jacobian_batched_matches_single():
    rng = np.random.default_rng(3)
    hs = rng.multinomial(TEACHERS, np.full(10, 0.1), size=7).astype(float)
    batch = class_probability_jacobian(hs, 40.0)
    assert batch.shape == (7, 10, 10)
    for k in range(7):
        assert_allclose(batch[k], class_probability_jacobian(hs[k], 40.0), rtol=0, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(
    counts=st.lists(st.floats(0.0, 300.0), min_size=2, max_size=12),
    shift=st.floats(0.0, 500.0),
    sigma=st.floats(1.0, 200.0),
)
def test_shift_invariance_thm2(counts, shift, sigma):
    # Wang et al. 2022, Thm 2: Q(H + t·1) = Q(H); so is its Jacobian. Differentiating Thm 2
    # in t gives J·1 = 0 (rows sum to 0); J is symmetric (tie density of c and j).
    h = np.asarray(counts)
    assert_allclose(class_probabilities(h + shift, sigma), class_probabilities(h, sigma), rtol=0, atol=1e-11)
    jac = class_probability_jacobian(h, sigma)
    assert_allclose(class_probability_jacobian(h + shift, sigma), jac, rtol=0, atol=1e-11)
    assert_allclose(jac.sum(axis=1), 0.0, atol=1e-13)
    assert_allclose(jac, jac.T, rtol=0, atol=1e-13)
    assert np.all(np.diag(jac) >= -1e-15)


def test_shift_to_teachers_is_step3():
    est = np.array([10.0, -5.0, 3.0, 0.5])
    shifted = shift_to_teachers(est, TEACHERS)
    assert math.isclose(shifted.sum(), TEACHERS)
    assert_allclose(np.diff(shifted), np.diff(est))  # differences (hence Q, Thm 2) unchanged


# ------------------------------------------------------------------ reconstruction


@pytest.mark.parametrize("num_classes", [2, 3, 5, 10, 20])
@pytest.mark.parametrize("sigma", SIGMAS)
def test_noise_free_recovery(num_classes, sigma):
    # q = Q(H) exactly: the unique feasible zero of the residual is H (Q is one-to-one
    # modulo shifts), so the estimate must be H to solver precision (spec: < 0.5 vote).
    for h in _histograms(num_classes, seed=num_classes):
        info = reconstruct_histogram(class_probabilities(h, sigma), sigma, TEACHERS, return_info=True)
        assert info.converged, info.message
        assert_allclose(info.estimate, h, rtol=0, atol=1e-3)
        assert math.isclose(info.estimate.sum(), TEACHERS, rel_tol=1e-12)
        assert info.seconds < 1.0


def test_error_decreases_with_queries():
    # Monte Carlo: q̄ − Q(H) = O(1/√M), so the mean error over seeds must fall with M.
    hists = [np.array([150, 60, 25, 10, 5, 0, 0, 0, 0, 0.0]), np.array([60, 50, 40, 30, 25, 15, 10, 10, 5, 5.0])]
    budgets = (100, 1_000, 10_000)
    mean_err = []
    for m in budgets:
        errs = []
        for sigma in (40.0, 100.0):
            for k, h in enumerate(hists):
                for seed in range(5):
                    counts = sample_answer_counts(h, sigma, m, job_generator(seed, "test_wang_m", m, sigma, k))
                    errs.append(normalised_l1_error(h, reconstruct_histogram(counts, sigma, TEACHERS)))
        mean_err.append(np.mean(errs))
    assert mean_err[0] > mean_err[1] > mean_err[2]
    assert mean_err[2] < 0.05  # Wang §4.2: errors "often as low as 0.03" at 10^4 queries


def test_unanswered_classes_stop_at_zero():
    # Classes never answered target frequency 0: without the constraint they would drift to
    # −∞; here they stop on Ĥ_c = 0 and the estimate stays a valid histogram.
    counts = np.array([9_000, 900, 100, 0, 0, 0])
    info = reconstruct_histogram(counts, 40.0, TEACHERS, return_info=True)
    assert np.all(info.estimate >= 0) and math.isclose(info.estimate.sum(), TEACHERS)
    assert np.all(info.at_zero[3:]) and not np.any(info.at_zero[:3])
    assert_allclose(info.estimate[3:], 0.0, atol=1e-9)
    assert np.array_equal(info.unanswered, counts == 0)
    # a single answered class → the vertex N·e_k
    assert_allclose(reconstruct_histogram([0, 7, 0], 60.0, TEACHERS), [0, TEACHERS, 0])


def test_reconstruction_is_shift_free_and_count_scale_free():
    counts = np.array([5_000, 3_000, 1_500, 500])
    a = reconstruct_histogram(counts, 60.0, TEACHERS)
    b = reconstruct_histogram(answer_frequencies(counts), 60.0, TEACHERS)  # only q̄ matters
    assert_allclose(a, b, atol=1e-8)
    c = reconstruct_histogram(counts, 60.0, TEACHERS, initial=[10.0, 10.0, 10.0, 10.0])
    assert_allclose(a, c, atol=1e-6)  # unique minimiser, start-independent


# ------------------------------------------------------------------ the paper's procedure


def test_wang2022_trapezoid_and_loop():
    h = np.array([120, 70, 40, 20, 0, 0.0])
    # Fixed unit-step trapezoid over ±6σ vs the exact Q: truncation 2Φ(−6) ≈ 2e-9.
    q_paper = wang2022_trapezoid_probabilities(h, 40.0).numpy()
    assert_allclose(q_paper, class_probabilities(h, 40.0), rtol=0, atol=1e-8)
    res = reconstruct_histogram_wang2022(class_probabilities(h, 40.0), 40.0, TEACHERS, max_iterations=2_000)
    assert res.converged and res.loss <= 0.01
    assert math.isclose(res.estimate.sum(), TEACHERS)
    ours = reconstruct_histogram(class_probabilities(h, 40.0), 40.0, TEACHERS)
    assert normalised_l1_error(h, ours) <= normalised_l1_error(h, res.estimate)


# ------------------------------------------------------------------ caching defence


def test_caching_interface_holds_reconstruction_at_one_answer():
    h = np.array([110, 70, 40, 20, 10, 0.0])
    sigma = 60.0
    cached = NoisyArgmaxInterface(h, sigma, rng=job_generator(0, "test_wang_cache", "cached"), cache_answers=True)
    first = cached.query(0)
    assert all(cached.query(0) == first for _ in range(50))
    assert cached.fresh_answers == 1 and cached.queries_received == 51
    one = np.zeros(h.size)
    one[first] = 1
    no_info = reconstruct_histogram(one, sigma, TEACHERS)  # what one answer can tell
    for m in (10, 1_000, 10_000):
        counts = cached.answer_counts(0, m)
        assert counts[first] == m and counts.sum() == m
        assert_allclose(reconstruct_histogram(counts, sigma, TEACHERS), no_info)
    assert cached.fresh_answers == 1
    err_cached = normalised_l1_error(h, no_info)
    fresh = NoisyArgmaxInterface(h, sigma, rng=job_generator(0, "test_wang_cache", "fresh"))
    err_fresh = normalised_l1_error(h, reconstruct_histogram(fresh.answer_counts(0, 10_000), sigma, TEACHERS))
    assert fresh.fresh_answers == 10_000
    assert err_cached >= 0.5 and err_fresh < 0.1 * err_cached


def test_interface_single_queries_match_distribution():
    # 3000 single queries without cache: frequencies within 5 s.e. of the exact Q (Thm 1).
    h = np.array([30.0, 20.0, 10.0])
    api = NoisyArgmaxInterface(np.stack([h, h[::-1]]), 10.0, rng=1)
    answers = np.array([api.query(1) for _ in range(3_000)])
    p = class_probabilities(h[::-1], 10.0)
    freq = np.bincount(answers, minlength=3) / answers.size
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / answers.size))


def test_sample_answer_counts_reproducible():
    a = sample_answer_counts([100, 100, 50], 40.0, 5_000, np.random.default_rng(7))
    b = sample_answer_counts([100, 100, 50], 40.0, 5_000, np.random.default_rng(7))
    assert a.sum() == 5_000 and np.array_equal(a, b)


# ------------------------------------------------------------------ metrics and budgets


def test_normalised_l1_error_values():
    h = np.array([200.0, 50.0, 0.0])
    assert normalised_l1_error(h, h) == 0.0
    assert normalised_l1_error(h, [0.0, 0.0, 250.0]) == 1.0  # every vote miscounted
    assert math.isclose(normalised_l1_error(h, [190.0, 60.0, 0.0]), 20 / 500)
    assert_allclose(normalised_l1_error(np.stack([h, h]), np.stack([h, [190.0, 60.0, 0.0]])), [0.0, 0.04])


def test_attack_privacy_cost_composes_data_dependent_rdp():
    h = np.array([180, 40, 20, 10, 0.0])
    per_query = gnmax_rdp_data_dependent(h, 40.0, DEFAULT_ORDERS)
    expected = rdp_to_dp(1_000 * per_query, DEFAULT_ORDERS, 1e-5, method="classic")
    assert math.isclose(attack_privacy_cost(h, 40.0, 1_000, 1e-5), expected, rel_tol=1e-12)
    costs = attack_privacy_cost(h, 40.0, [0, 1, 10, 100, 1_000, 10_000], 1e-5)
    assert costs[0] == 0.0 and np.all(np.diff(costs) >= 0)
    tighter = attack_privacy_cost(h, 40.0, [10, 10_000], 1e-5, method="balle2020")
    assert np.all(tighter <= costs[[2, 5]])


@pytest.mark.parametrize("h", [[250, 0, 0, 0, 0, 0, 0, 0, 0, 0], [120, 80, 30, 20, 0, 0, 0, 0, 0, 0]])
def test_queries_within_budget_is_the_last_affordable_answer(h):
    # MNIST canonical budget (Wang §4.1): ε = 1.97 at δ = 1e-5, σ = 40, no hard limit.
    m = queries_within_budget(h, 40.0, 1.97, 1e-5, max_queries=None)
    assert m >= 1
    before, after = attack_privacy_cost(h, 40.0, [m, m + 1], 1e-5)
    assert before <= 1.97 < after
    assert queries_within_budget(h, 40.0, 1.97, 1e-5, max_queries=10) == min(m, 10)
    assert queries_within_budget(h, 40.0, math.inf, 1e-5) == HARD_QUERY_LIMIT


# ------------------------------------------------------------------ consensus levels


def test_consensus_tertiles_and_selection():
    rng = np.random.default_rng(5)
    hists = np.concatenate([
        rng.multinomial(TEACHERS, rng.dirichlet(np.full(10, a)), size=40) for a in (0.05, 0.3, 2.0)
    ])
    hists[:25] = 0
    hists[:25, 3] = TEACHERS  # many ties at full consensus
    share = max_vote_share(hists)
    assert_allclose(share, hists.max(axis=1) / TEACHERS)
    levels = consensus_tertiles(hists, rng=np.random.default_rng(0))
    assert np.array_equal(np.bincount(levels), [40, 40, 40])
    assert share[levels == 0].max() <= share[levels == 1].min() <= share[levels == 1].max() <= share[levels == 2].min()
    sel = select_consensus_histograms(hists, rng=job_generator(0, "test_wang_select"))
    again = select_consensus_histograms(hists, rng=job_generator(0, "test_wang_select"))
    assert sel.equals(again)
    assert list(sel["label"]) == [f"{p}{k}" for p in "LMH" for k in range(1, 6)]
    assert sel["index"].is_unique
    by_level = sel.groupby("level")["max_vote_share"]
    assert by_level.max()["low"] <= by_level.min()["medium"] and by_level.max()["medium"] <= by_level.min()["high"]
    assert_allclose(sel["max_vote_share"], share[sel["index"]])
    assert np.all(np.diff(sel["max_vote_share"].to_numpy().reshape(3, 5), axis=1) >= 0)  # L1 ≤ … ≤ L5


# ------------------------------------------------------------------ bad inputs


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: reconstruct_histogram([1, 2, 3], 0.0, TEACHERS), "sigma"),
        (lambda: reconstruct_histogram([1, 2, 3], 40.0, 0), "num_teachers"),
        (lambda: reconstruct_histogram([1, -2, 3], 40.0, TEACHERS), "output_counts"),
        (lambda: reconstruct_histogram([0, 0, 0], 40.0, TEACHERS), "output_counts"),
        (lambda: reconstruct_histogram([1, 2, 3], 40.0, TEACHERS, initial=[1, 2]), "initial"),
        (lambda: sample_answer_counts([10, 5], 40.0, 0, 0), "num_queries"),
        (lambda: sample_answer_counts([10, 5], 40.0, 10, 0, mode="fast"), "mode"),
        (lambda: class_probability_jacobian([10, -1], 40.0), "hist"),
        (lambda: normalised_l1_error([10, 5], [1, 2, 3]), "estimate"),
        (lambda: attack_privacy_cost([10, 5], 40.0, 10, 0.0), "delta"),
        (lambda: attack_privacy_cost([10, 5], 40.0, -1, 1e-5), "num_queries"),
        (lambda: attack_privacy_cost([10, 5], 40.0, 10, 1e-5, method="rdp"), "method"),
        (lambda: queries_within_budget([10, 5], 40.0, -1.0, 1e-5), "budget"),
        (lambda: queries_within_budget([10, 5], 40.0, 1.0, 1e-5, max_queries=0), "max_queries"),
        (lambda: max_vote_share([[0, 0], [1, 2]]), "histograms"),
        (lambda: consensus_tertiles([[1, 2], [3, 4]]), "histograms"),
        (lambda: select_consensus_histograms(np.eye(6) * 9 + 1, rng=0, per_level=3), "per_level"),
        (lambda: NoisyArgmaxInterface([10, 5], 40.0, rng=0).query(1), "query index"),
        (lambda: NoisyArgmaxInterface([10, 5], 40.0, rng="seed"), "rng"),
        (lambda: reconstruct_histogram_wang2022([1, 2, 3], 40.0, TEACHERS, threshold=0.0), "threshold"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_value(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def _fixed_pair_model(h0, h1):
    """A NeighbouringVoteModel whose H_S = h0 and H_S' = h1 exactly (one voter moves)."""
    from ppaudit.vote_models import NeighbouringVoteModel

    h0, h1 = np.asarray(h0), np.asarray(h1)
    base = np.minimum(h0, h1)
    return NeighbouringVoteModel(base, [], np.zeros((0, h0.size)), (h0 - base).astype(float), (h1 - base).astype(float))


def test_repeated_query_counts_cache_repeats_the_first_answer():
    from ppaudit.experiments.wang2022.caching import repeated_query_counts

    model = _fixed_pair_model([6, 5, 0], [5, 6, 0])
    rng = np.random.default_rng(3)
    free = repeated_query_counts(model.sampler("S"), 3, 2.0, 7, 5000, rng, cache_answers=False)
    cached = repeated_query_counts(model.sampler("S"), 3, 2.0, 7, 5000, rng, cache_answers=True)
    assert free.shape == cached.shape == (5000, 3)
    assert (free.sum(1) == 7).all() and (cached.sum(1) == 7).all()
    assert ((cached > 0).sum(1) == 1).all()  # one answer, repeated
    assert ((free > 0).sum(1) > 1).mean() > 0.5  # fresh noise: answers differ
    # without the cache the answers are i.i.d. given H: per-answer frequencies = Q(H)
    assert_allclose(free.sum(0) / free.sum(), class_probabilities([6, 5, 0], 2.0), atol=0.01)


def test_caching_transcript_audit_is_sound_and_the_cache_removes_the_repetition_gain():
    """Fixed histograms: the answers are i.i.d., so the uncached transcript of n answers has
    RDP n·ε₁(α) and the cached one ε₁(α) (Chadha Eq. 4). Over seeded repetitions the 95 %
    lower bounds exceed these at some order in at most ~5 % of runs, and the uncached audit
    is larger than the cached one on average."""
    from ppaudit.divergence import exact_rdp
    from ppaudit.experiments.wang2022.caching import caching_transcript_audit

    h0, h1, sigma, n, orders = [6, 5, 1], [5, 6, 1], 1.5, 8, [2.0, 8.0, 32.0]
    model = _fixed_pair_model(h0, h1)
    single = exact_rdp(h0, h1, sigma, orders)
    truth = {"single_answer": single, "cache": single, "no_cache": n * single}
    reps, bad = 40, {k: 0 for k in truth}
    means = {k: 0.0 for k in truth}
    for r in range(reps):
        df = caching_transcript_audit(model, sigma, n, 20000, orders, 0.95, job_generator(11, "caching_soundness", r))
        for view, t in truth.items():
            b = df.loc[df["view"] == view, "audit"].to_numpy()
            bad[view] += bool(np.any(b > t + 1e-12))
            means[view] += b[0] / reps
    for view in truth:
        assert bad[view] <= 5, (view, bad[view])  # binomial(40, 0.05): P(> 5) < 0.05
    assert means["no_cache"] > 2 * means["cache"] > 0, means
