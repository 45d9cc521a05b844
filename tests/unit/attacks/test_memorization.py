"""Memorization audit with mislabelled canaries (Malek et al. 2021, App. B, Game 3)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ppaudit.attacks.memorization import (
    DEFAULT_THRESHOLDS,
    cgr_to_epsilon,
    make_canaries,
    memorization_epsilon,
    per_canary_acgr,
)
from ppaudit.intervals import clopper_pearson

C = 10


def planted(n: int, memorized: float, wrong: float, rng: np.random.Generator, high: float = 0.97):
    """Confidences of a model that puts ``high`` on the canary label for a ``memorized``
    fraction of canaries, on another alternative label for a ``wrong`` fraction, and on the
    original label otherwise (then no guess is possible)."""
    orig = rng.integers(0, C, n)
    canary = (orig + rng.integers(1, C, n)) % C
    other = canary.copy()
    while True:
        bad = (other == canary) | (other == orig)
        if not bad.any():
            break
        other[bad] = rng.integers(0, C, bad.sum())
    u = rng.random(n)
    top = np.where(u < memorized, canary, np.where(u < memorized + wrong, other, orig))
    conf = np.full((n, C), (1.0 - high) / (C - 1))
    conf[np.arange(n), top] = high
    return conf, canary, orig


def brute_force_acgr(conf, canary, orig, tau):
    """Loop over canaries i and alternatives j of App. B literally."""
    n, k = conf.shape
    m = np.zeros(n, dtype=int)
    acgr = np.zeros(n)
    for i in range(n):
        correct = 0
        for j in range(k):
            if j in (canary[i], orig[i]):
                continue
            a, b = conf[i, canary[i]], conf[i, j]
            if max(a, b) < tau:
                continue  # abstain
            m[i] += 1
            correct += a > b
        acgr[i] = correct / m[i] if m[i] else 0.0
    return m, acgr


def test_per_canary_acgr_matches_brute_force():
    rng = np.random.default_rng(0)
    conf = rng.dirichlet(np.full(C, 0.3), size=200)
    orig = rng.integers(0, C, 200)
    canary = (orig + rng.integers(1, C, 200)) % C
    for tau in (0.5, 0.6, 0.9):
        m, acgr = per_canary_acgr(conf, canary, orig, tau)
        m_ref, acgr_ref = brute_force_acgr(conf, canary, orig, tau)
        np.testing.assert_array_equal(m, m_ref)
        assert_allclose(acgr, acgr_ref)


def test_normal_interval_is_reliability_weighted():
    # Reference: weighted mean, unbiased reliability-weighted variance, Kish effective size,
    # computed here from the brute-force per-canary values.
    rng = np.random.default_rng(1)
    conf, canary, orig = planted(500, 0.6, 0.3, rng, high=0.8)
    res = memorization_epsilon(conf, canary, orig, "ours_normal", thresholds=[0.7])
    m, acgr = brute_force_acgr(conf, canary, orig, 0.7)
    w = m.astype(float)
    mean = (w * acgr).sum() / w.sum()
    var = (w * (acgr - mean) ** 2).sum() / (w.sum() - (w**2).sum() / w.sum())
    se = np.sqrt(var) * np.sqrt((w**2).sum()) / w.sum()
    assert_allclose(res.cgr, mean)
    assert_allclose(res.cgr_low, mean - 1.959963984540054 * se, rtol=1e-9)
    assert_allclose(res.epsilon_low, np.log(res.cgr_low / (1 - res.cgr_low)), rtol=1e-9)
    assert res.num_guesses == int(m.sum())


def test_near_perfect_memorization_gives_large_epsilon():
    rng = np.random.default_rng(2)
    conf, canary, orig = planted(1000, 0.95, 0.05, rng)
    res = memorization_epsilon(conf, canary, orig, "ours_normal")
    # CGR = 8·950 / (8·950 + 50) ≈ 0.9935 → ε ≈ 5.0
    assert res.epsilon_low > 4.0
    assert res.threshold in DEFAULT_THRESHOLDS
    cp = memorization_epsilon(conf, canary, orig, method="clopper_pearson", rng=np.random.default_rng(3))
    assert 2.5 < cp.epsilon_low < cp.epsilon_high


def test_random_guessing_gives_epsilon_near_zero():
    # The model's confidences do not depend on the canary label: the adversary is a coin flip.
    rng = np.random.default_rng(4)
    n = 2000
    orig = rng.integers(0, C, n)
    canary = (orig + rng.integers(1, C, n)) % C
    conf = rng.dirichlet(np.full(C, 0.2), size=n)
    for method in ("paper", "normal", "clopper_pearson"):
        res = memorization_epsilon(conf, canary, orig, method=method, rng=np.random.default_rng(5))
        assert res.epsilon_low < 0.3, (method, res)


def test_clopper_pearson_is_bonferroni_corrected():
    rng = np.random.default_rng(6)
    conf, canary, orig = planted(400, 0.7, 0.2, rng, high=0.9)
    alt = np.array([next(j for j in range(C) if j not in (a, b)) for a, b in zip(canary, orig)])
    taus = [0.6, 0.8, 0.95]
    res = memorization_epsilon(conf, canary, orig, method="clopper_pearson", thresholds=taus, alternative_labels=alt)
    rows = np.arange(len(orig))
    guess = np.maximum(conf[rows, canary], conf[rows, alt]) >= res.threshold
    k = int((guess & (conf[rows, canary] > conf[rows, alt])).sum())
    lo, hi = clopper_pearson(k, int(guess.sum()), 1 - 0.05 / 3)
    assert (res.num_guesses, res.num_correct) == (int(guess.sum()), k)
    assert_allclose([res.cgr_low, res.cgr_high], [lo, hi])
    assert_allclose(res.epsilon_low, cgr_to_epsilon(lo))


def test_make_canaries_game3():
    rng = np.random.default_rng(7)
    y = rng.integers(0, C, 5000)
    can = make_canaries(y, 1000, C, rng)
    assert np.unique(can.indices).size == 1000
    assert np.all(can.canary_labels != can.original_labels)
    assert np.all(can.alternative_labels != can.original_labels)
    assert np.all(can.alternative_labels != can.canary_labels)
    np.testing.assert_array_equal(can.training_labels[can.indices], can.canary_labels)
    mask = np.ones(y.size, bool)
    mask[can.indices] = False
    np.testing.assert_array_equal(can.training_labels[mask], y[mask])
    # the trained label is uniform over the C - 1 labels != y (offset 1..C-1)
    off = (can.canary_labels - can.original_labels) % C
    counts = np.bincount(off, minlength=C)[1:]
    assert counts.min() > 1000 / (C - 1) * 0.6


def test_bad_input_raises():
    rng = np.random.default_rng(8)
    conf, canary, orig = planted(50, 0.9, 0.0, rng)
    with pytest.raises(ValueError, match="thresholds"):
        memorization_epsilon(conf, canary, orig, thresholds=[0.4])
    with pytest.raises(ValueError, match="method"):
        memorization_epsilon(conf, canary, orig, method="wald")
    with pytest.raises(ValueError, match="at least 3 classes"):
        memorization_epsilon(conf[:, :2] / conf[:, :2].sum(1, keepdims=True), canary % 2, orig % 2)
    with pytest.raises(ValueError, match="must differ"):
        memorization_epsilon(conf, orig, orig)
    with pytest.raises(ValueError, match="alternative_labels"):
        memorization_epsilon(conf, canary, orig, method="clopper_pearson")
    with pytest.raises(ValueError, match="canary_labels"):
        memorization_epsilon(conf, canary[:-1], orig)
