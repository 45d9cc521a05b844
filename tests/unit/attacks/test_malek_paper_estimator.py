"""The authors' memorization-game estimator (Malek et al. 2021, App. B; label_dp_antipodes compute_eps)."""

from __future__ import annotations

import numpy as np
import pytest

from ppaudit.attacks.memorization import PAPER_THRESHOLDS, memorization_epsilon

C = 10


def authors_compute_eps(c1, c2):
    """Literal transcription of memorization_attack/attack.py::compute_eps (facebookresearch/label_dp_antipodes)."""

    def eps(acc):
        if acc <= 0.5:
            return 0
        if acc == 1:
            return np.inf
        return np.log(acc / (1 - acc))

    guesses = c1 > c2
    lows, highs = [], []
    for threshold in [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99]:
        dont_know = np.maximum(c1, c2) < threshold
        weights = np.sum(1 - dont_know.astype(np.float64), axis=-1)
        accs = np.sum(guesses * (1 - dont_know.astype(np.float64)), axis=-1)
        accs /= np.maximum(np.sum(1 - dont_know.astype(np.float64), axis=-1), 1)
        accs = accs[weights > 0]
        weights = weights[weights > 0]
        weights /= np.sum(weights)
        n_eff = len(accs)
        if n_eff:
            acc_mean = np.sum(accs * weights)
            v = np.sum(weights * (accs - acc_mean) ** 2) / (
                1 - np.sum(weights**2) + 1e-8
            )
            acc_std = np.sqrt(v / n_eff)
            acc_mean = max(acc_mean, 1 - acc_mean)
            acc_low, acc_high = (
                max(0.5, acc_mean - 1.96 * acc_std),
                min(1, acc_mean + 1.96 * acc_std),
            )
            if np.all(accs == 1) or np.all(
                accs == 0
            ):  # their `acc_mean == 1` after the flip, free of float rounding
                acc_low = min(acc_low, 1 - 3 / n_eff) if n_eff > 50 else 0.5
        else:
            acc_low, acc_high = 0.0, 1.0
        lows.append(eps(acc_low))
        highs.append(eps(acc_high))
    lo, hi = 0, 0
    for el, eh in zip(lows, highs):
        if el > lo:
            lo, hi = el, eh
        elif el == lo and eh > hi and eh != np.inf:
            hi = eh
    return lo, hi


def split_confidences(conf, canary, orig):
    n = conf.shape[0]
    c1 = conf[np.arange(n), canary][:, None]
    others = np.array([sorted(set(range(C)) - {a, b}) for a, b in zip(orig, canary)])
    return c1, conf[np.arange(n)[:, None], others]


def planted(n, memorized, wrong, rng, high=0.97):
    orig = rng.integers(0, C, n)
    canary = (orig + rng.integers(1, C, n)) % C
    other = (canary + rng.integers(1, C, n)) % C
    other = np.where(other == orig, (other + 1) % C, other)
    other = np.where(other == canary, (other + 1) % C, other)
    u = rng.random(n)
    top = np.where(u < memorized, canary, np.where(u < memorized + wrong, other, orig))
    conf = np.full((n, C), (1.0 - high) / (C - 1))
    conf[np.arange(n), top] = high
    return conf, canary, orig


@pytest.mark.parametrize("seed", range(6))
def test_paper_estimator_matches_the_authors_code(seed):
    rng = np.random.default_rng(seed)
    n = 400
    if seed < 3:
        conf = rng.dirichlet(np.full(C, 0.2 + 0.2 * seed), size=n)
        orig = rng.integers(0, C, n)
        canary = (orig + rng.integers(1, C, n)) % C
    else:
        conf, canary, orig = planted(
            n, 0.3 + 0.1 * seed, 0.1, rng, high=0.55 + 0.08 * seed
        )
    res = memorization_epsilon(conf, canary, orig, "paper")
    ref = authors_compute_eps(*split_confidences(conf, canary, orig))
    assert res.procedure == "paper" and res.method == "paper"
    np.testing.assert_allclose([res.epsilon_low, res.epsilon_high], ref, rtol=1e-9)


def test_all_correct_gives_a_finite_lower_end():
    # 200 canaries memorised with confidence 0.97, the rest predicted as their original label:
    # every guess is right at every τ. Their correction: CGR_low = 1 − 3/N' with N' = 200.
    rng = np.random.default_rng(3)
    conf, canary, orig = planted(1000, 0.2, 0.0, rng)
    res = memorization_epsilon(conf, canary, orig, "paper")
    n_guessing = int(np.sum(conf[np.arange(1000), canary] > 0.5))
    assert res.sample_size == n_guessing
    assert res.epsilon_low == pytest.approx(
        np.log((1 - 3 / n_guessing) / (3 / n_guessing)), rel=1e-12
    )
    assert np.isfinite(res.epsilon_low) and res.epsilon_high == np.inf
    # the failure mode of our Kish-normal variant: zero spread -> [inf, inf]
    ours = memorization_epsilon(conf, canary, orig, "ours_normal")
    assert ours.procedure == "ours" and ours.epsilon_low == np.inf
    cp = memorization_epsilon(
        conf, canary, orig, "ours_cp", rng=np.random.default_rng(0)
    )
    assert np.isfinite(cp.epsilon_low) and cp.epsilon_low < res.epsilon_low + 1.0


def test_few_memorised_canaries_are_discarded_as_a_fluke():
    # 3 of 1000 canaries memorised (the issue's example): N' = 3 <= 50 -> lower end 0.5, ε_low = 0.
    conf = np.full((1000, C), 0.1)
    orig = np.zeros(1000, dtype=int)
    canary = np.ones(1000, dtype=int)
    conf[:3] = 0.01
    conf[:3, 1] = 0.91
    res = memorization_epsilon(conf, canary, orig, "paper")
    assert res.epsilon_low == 0.0 and res.epsilon_high == 0.0
    assert authors_compute_eps(*split_confidences(conf, canary, orig)) == (0, 0)


def test_paper_grid_and_bad_method():
    np.testing.assert_array_equal(
        PAPER_THRESHOLDS, [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99]
    )
    conf, canary, orig = planted(100, 0.5, 0.1, np.random.default_rng(0))
    assert (
        memorization_epsilon(conf, canary, orig, "paper").threshold in PAPER_THRESHOLDS
    )
    assert memorization_epsilon(conf, canary, orig, "normal").method == "ours_normal"
    with pytest.raises(ValueError, match="method"):
        memorization_epsilon(conf, canary, orig, "kish")
