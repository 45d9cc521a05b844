"""ppaudit.blackbox.catalogue: the mechanisms match their closed forms, the correct ones meet their
claim exactly there, and the buggy twins really differ (their true ε exceeds the claim)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from ppaudit.blackbox.catalogue import (
    benchmark_cases,
    float_lattice_view,
    float_laplace_mechanism,
    grid_view,
    noisy_histogram,
    position_value_view,
    report_noisy_max,
    sparse_vector,
    svt_true_epsilon,
)
from ppaudit.blackbox.neighbours import query_answers

EPS = 1.0
N = 200_000


def _lap(scale):
    return stats.laplace(scale=scale)


def rnm_index_probabilities(q, eps, noise):
    """P(argmax = i) = ∫ f(x − q_i) ∏_{j≠i} F(x − q_j) dx with noise of scale 2/ε."""
    dist = _lap(2 / eps) if noise == "laplace" else stats.expon(scale=2 / eps)
    lo, hi = (min(q) - 60 / eps, max(q) + 60 / eps)
    out = []
    for i in range(len(q)):
        f = lambda x, i=i: dist.pdf(x - q[i]) * np.prod([dist.cdf(x - q[j]) for j in range(len(q)) if j != i])  # noqa: E731
        pts = sorted(set(q))
        out.append(integrate.quad(f, lo, hi, points=pts, limit=200)[0])
    return np.array(out)


def svt1_first_top_probabilities(q, eps, threshold, c=1):
    """Lyu et al. Alg. 1 with c = 1: P(first ⊤ at k), k = 0..m−1, and P(no ⊤) (index m)."""
    rho, nu = _lap(1 / (eps / 2)), _lap(2 * c / (eps / 2))
    m = len(q)

    def p(k):
        def f(r):
            below = np.prod([nu.cdf(threshold + r - q[j]) for j in range(k)]) if k else 1.0
            top = 1.0 - nu.cdf(threshold + r - q[k]) if k < m else 1.0
            return rho.pdf(r) * below * top
        return integrate.quad(f, -80 / eps, 80 / eps, points=[0.0], limit=200)[0]

    return np.array([p(k) for k in range(m + 1)])


def _first_top(codes, m):
    """Position of the first ⊤ in the base-3 code of a bit-SVT answer vector (m if none)."""
    digits = (codes[:, None] // 3 ** np.arange(m)) % 3 - 1  # 1 = ⊤, 0 = ⊥, -1 = stopped
    top = digits == 1
    return np.where(top.any(1), top.argmax(1), m)


@pytest.mark.parametrize("noise", ["laplace", "exponential"])
def test_report_noisy_max_index_matches_closed_form_and_is_eps_dp(noise):
    mech = report_noisy_max(EPS, noise, "index")
    rng = np.random.default_rng(0)
    worst = 0.0
    for a, b in query_answers(3, 1.0):
        pa, pb = rnm_index_probabilities(a, EPS, noise), rnm_index_probabilities(b, EPS, noise)
        assert pa.sum() == pytest.approx(1.0, abs=1e-6)
        worst = max(worst, np.max(np.abs(np.log(pa) - np.log(pb))))
        freq = np.bincount(mech(a, N, rng), minlength=3) / N
        np.testing.assert_allclose(freq, pa, atol=4e-3)
    assert worst <= EPS + 1e-9  # correct: ε-DP on every pattern (Ding et al. Algs. 5, 6)
    assert worst > 0.3 * EPS     # and not vacuous


def test_report_noisy_max_value_true_epsilon_is_m_eps_over_two():
    m = 5
    mech = report_noisy_max(EPS, "laplace", "value")
    a, b = np.ones(m), 2 * np.ones(m)
    lap = _lap(2 / EPS)
    # lower tail of the max: P(max <= t) = ∏ F(t − q_i); the ratio tends to e^{m ε / 2}
    t = -40.0
    ratio = np.log(np.prod(lap.cdf(t - a)) / np.prod(lap.cdf(t - b)))
    assert ratio == pytest.approx(m * EPS / 2, rel=1e-9)
    case = {c.name: c for c in benchmark_cases(EPS)}["rnm_laplace_value"]
    assert case.true_epsilon == pytest.approx(m * EPS / 2) and case.buggy
    x = mech(a, N, np.random.default_rng(1))
    assert stats.kstest(x, lambda s: np.prod(lap.cdf(s[:, None] - a), axis=1)).pvalue > 1e-3


def test_svt1_matches_closed_form_and_is_eps_dp():
    m, thr = 4, 0.5
    mech = sparse_vector(1, EPS, 1, thr)
    rng = np.random.default_rng(2)
    worst = 0.0
    for a, b in query_answers(m, 1.0):
        pa, pb = svt1_first_top_probabilities(a, EPS, thr), svt1_first_top_probabilities(b, EPS, thr)
        assert pa.sum() == pytest.approx(1.0, abs=1e-6)
        worst = max(worst, np.max(np.abs(np.log(pa) - np.log(pb))))
        freq = np.bincount(_first_top(mech(a, N, rng), m), minlength=m + 1) / N
        np.testing.assert_allclose(freq, pa, atol=4e-3)
    assert 0.1 * EPS < worst <= EPS + 1e-9  # Lyu et al. 2017: Alg. 1 is ε-DP


def test_svt4_exceeds_its_claim_in_closed_form():
    """Lee & Clifton's SVT (Lyu Alg. 4): ε₁ = ε/4, query noise 1/ε₂ — loses more than ε (Lyu: (1+6c)ε/4)."""
    m, thr, c = 10, 1.0, 1
    b_rho, b_nu = 1 / (EPS / 4), 1 / (3 * EPS / 4)

    def nu_cdf(x):  # Laplace(0, b_nu) in closed form (scalar quad: scipy.stats' frozen cdf is ~20x slower)
        return 0.5 * math.exp(x / b_nu) if x < 0 else 1.0 - 0.5 * math.exp(-x / b_nu)

    def p_first(q, k):  # P(first ⊤ at k); k = m: no ⊤
        def f(r):
            below = math.prod(nu_cdf(thr + r - q[j]) for j in range(k))
            return math.exp(-abs(r) / b_rho) / (2 * b_rho) * ((1 - nu_cdf(thr + r - q[k])) if k < m else 1.0) * below
        return integrate.quad(f, -150, 150, points=[0.0], limit=300)[0]

    loss = max(abs(math.log(p_first(a, k) / p_first(b, k))) for a, b in query_answers(m, 1.0) for k in range(m + 1))
    assert loss > EPS  # the claim ε is false
    assert loss <= svt_true_epsilon(4, EPS, c) + 1e-9


def test_histograms_correct_and_buggy_in_closed_form():
    """Lap(1/ε) on one count: grid-cell ratio ≤ e^ε; Lap(ε) (Ding Alg. 10): up to e^{1/ε} > e^ε for ε < 1."""
    eps = 0.5
    for scale, true in ((1 / eps, eps), (eps, 1 / eps)):
        d = _lap(scale)
        edges = np.arange(-1, 3)  # the view's cells [-1, 0), [0, 1), [1, 2) for counts 0 vs 1
        p0 = np.diff(d.cdf(edges - 0.0))
        p1 = np.diff(d.cdf(edges - 1.0))
        loss = np.max(np.abs(np.log(p0) - np.log(p1)))
        assert loss <= true + 1e-9
    assert loss > eps  # the buggy twin's cells already separate by more than ε
    cases = {c.name: c for c in benchmark_cases(eps)}
    assert not cases["histogram"].buggy and cases["histogram_eps"].buggy
    assert not {c.name: c for c in benchmark_cases(1.0)}["histogram_eps"].buggy  # Lap(1) at ε0 = 1 is correct
    x = noisy_histogram(1 / eps)([0, 1, 0], N, np.random.default_rng(3))
    assert x.shape == (N, 3)
    assert stats.kstest(x[:, 1] - 1, _lap(1 / eps).cdf).pvalue > 1e-3


def test_svt5_has_outputs_impossible_on_the_neighbour():
    """No query noise (Lyu Alg. 5): the answer vector is a function of ρ alone, so a pattern can
    have probability 0 on one input and > 0 on the other: not ε-DP for any ε."""
    mech = sparse_vector(5, EPS, 1, 1.0)
    a, b = np.ones(10), np.r_[2 * np.ones(5), np.zeros(5)]
    ca = set(np.unique(mech(a, 50_000, np.random.default_rng(4))).tolist())
    cb = set(np.unique(mech(b, 50_000, np.random.default_rng(5))).tolist())
    assert cb - ca  # ⊤ on the first 5 only: impossible when all answers are equal
    assert svt_true_epsilon(5, EPS) == math.inf


def test_float_laplace_support_depends_on_the_input():
    """Mironov 2012: with f(D) = 1 every output in (0, 1/2) is a multiple of 2^-53; with f(D) = 0 almost none."""
    mech = float_laplace_mechanism(0.1)
    x1 = mech(1.0, 200_000, np.random.default_rng(6))
    x0 = mech(0.0, 200_000, np.random.default_rng(7))
    lat = lambda x: (x * 2.0**53) == np.floor(x * 2.0**53)  # noqa: E731
    in1, in0 = (x1 > 0) & (x1 < 0.5), (x0 > 0) & (x0 < 0.5)
    assert in1.sum() > 100 and lat(x1[in1]).all()
    assert in0.sum() > 100 and (~lat(x0[in0])).mean() > 0.3
    v = float_lattice_view(mech)
    assert v(1.0, 10, np.random.default_rng(0)).dtype.kind == "i"


def test_svt_variants_differ_from_the_correct_one():
    """The buggy SVTs (Algs. 3–6) are not Alg. 1 with other numbers: their outputs differ in distribution."""
    m, rng = 10, np.random.default_rng(8)
    a = np.ones(m)
    ref = _first_top(sparse_vector(1, EPS, 1, 1.0)(a, N, rng), m)
    for alg in (2, 4, 5, 6):
        other = _first_top(sparse_vector(alg, EPS, 1, 1.0)(a, N, rng), m)
        table = np.vstack([np.bincount(ref, minlength=m + 1), np.bincount(other, minlength=m + 1)])
        table = table[:, table.sum(0) > 0]
        p = stats.chi2_contingency(table)[1]
        assert p < 1e-6 or alg == 2, alg  # Alg. 2 (Dwork & Roth) is another correct SVT: may coincide in law here
    out3 = sparse_vector(3, EPS, 1, 1.0)(a, 1000, rng)
    assert out3.shape == (1000, 2) and np.isnan(out3[out3[:, 0] == m, 1]).all()
    codes = position_value_view(sparse_vector(3, EPS, 1, 1.0), 1.0, (-3, 3))(a, 1000, rng)
    assert codes.dtype.kind == "i"


def test_cases_are_consistent_and_reproducible():
    cases = benchmark_cases(0.1)
    names = [c.name for c in cases]
    assert len(names) == len(set(names)) == 14
    for c in cases:
        assert c.buggy == (c.true_epsilon > c.claim_epsilon), c.name
        pairs = list(c.neighbours())
        assert pairs and all(len(p) == 2 for p in pairs)
        d, nb = pairs[0]
        o1 = c.audited(d, 64, np.random.default_rng(9))
        o2 = c.audited(d, 64, np.random.default_rng(9))
        assert len(o1) == 64 and np.array_equal(np.asarray(o1), np.asarray(o2)), c.name
        assert np.asarray(o1).dtype.kind in "iu", c.name  # every audited output is countable
    assert sum(c.buggy for c in cases) == 8


def test_bad_arguments_name_the_argument():
    with pytest.raises(ValueError, match="noise"):
        report_noisy_max(1.0, "gaussian")
    with pytest.raises(ValueError, match="output"):
        report_noisy_max(1.0, "laplace", "both")
    with pytest.raises(ValueError, match="algorithm"):
        sparse_vector(7, 1.0)
    with pytest.raises(ValueError, match="width"):
        grid_view(lambda d, n, r: np.zeros(n), 0.0)
    with pytest.raises(ValueError, match="epsilon"):
        benchmark_cases(0.0)


def test_svt_answer_features_decode_the_code():
    """The classifier features of SVT's integer code (⊤ and ⊥ indicators per query) re-encode to the code,
    with and without a cutoff (Lyu et al. 2017, Algs. 4 and 6)."""
    from ppaudit.blackbox.catalogue import svt_answer_features

    for alg in (4, 6):
        codes = sparse_vector(alg, 1.0)(np.r_[np.full(5, 2.0), np.zeros(5)], 500, np.random.default_rng(alg))
        f = svt_answer_features(codes, 10)
        assert f.shape == (500, 20) and set(np.unique(f)) <= {0.0, 1.0}
        a = f[:, :10] - (1.0 - f[:, :10] - f[:, 10:])  # ⊤ → 1, ⊥ → 0, not answered → −1
        np.testing.assert_array_equal(((a + 1) * 3 ** np.arange(10)).sum(axis=1).astype(np.int64), codes)
    case = {c.name: c for c in benchmark_cases(0.1)}["svt6"]
    assert case.outputs.name() == "LogisticRegression"
    assert {c.name for c in benchmark_cases(0.1) if c.outputs != "auto"} == {"svt6"}
