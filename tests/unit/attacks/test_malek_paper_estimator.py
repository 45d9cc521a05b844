"""The authors' memorization-game estimator (Malek et al. 2021, App. B; label_dp_antipodes compute_eps)."""

from __future__ import annotations

import numpy as np
import pytest

from ppaudit.attacks.memorization import PAPER_THRESHOLDS, memorization_epsilon

C = 10


def authors_compute_eps(c1, c2, float32=False):
    """Transcription of memorization_attack/attack.py::compute_eps (facebookresearch/label_dp_antipodes).

    Their code casts the abstention mask with ``astype(np.float32)``, so weights and accuracies are
    float32, and tests ``acc_mean == 1``. ``float32=True`` is that literal code; by default float64 and
    an exact all-correct test (their stated rule, which ``method="paper"`` follows)."""
    flt = np.float32 if float32 else np.float64

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
        weights = np.sum(1 - dont_know.astype(flt), axis=-1)
        accs = np.sum(guesses * (1 - dont_know.astype(flt)), axis=-1)
        accs /= np.maximum(np.sum(1 - dont_know.astype(flt), axis=-1), 1)
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
            if (acc_mean == 1) if float32 else (np.all(accs == 1) or np.all(accs == 0)):
                # their `acc_mean == 1` after the flip; by default free of float rounding
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


def test_the_authors_float32_code_differs_from_their_rule_when_every_guess_is_right():
    """issue 27 §5: compute_eps sums the weighted accuracy in float32, so when every guess is right it is
    not 1: here it rounds to 1 − 2^-24 ≈ 1 − 6e-8 and their code returns ε_m = [16.6, 16.6] =
    log(2^24 − 1) at both ends, where their stated rule (CGR_low = 1 − 3/N', upper end CGR = 1) gives
    [logit(0.997), ∞] = [5.8, ∞] at N' = 1000. Ours follows the stated rule."""
    rng = np.random.default_rng(1)
    n = 1000
    c1 = rng.uniform(0.5, 1.0, (n, 1))  # the canary label's confidence, above every alternative: all guesses right
    c2 = rng.random((n, C - 2)) * c1 * rng.uniform(0, 1, (n, 1))
    orig = rng.integers(0, C, n)
    canary = (orig + rng.integers(1, C, n)) % C
    others = np.array([sorted(set(range(C)) - {a, b}) for a, b in zip(orig, canary)])
    conf = np.zeros((n, C))
    conf[np.arange(n), canary] = c1[:, 0]
    conf[np.arange(n)[:, None], others] = c2
    with np.errstate(invalid="ignore"):  # at other τ the float32 mean rounds to 1 + 1.2e-7: log of a negative, NaN
        literal = authors_compute_eps(c1, c2, float32=True)
    np.testing.assert_allclose(literal, [np.log(2.0**24 - 1)] * 2, rtol=1e-6)  # 16.64, 16.64
    assert authors_compute_eps(c1, c2) == pytest.approx((np.log(997 / 3), np.inf))
    res = memorization_epsilon(conf, canary, orig, "paper")
    assert res.num_correct == res.num_guesses == n * (C - 2) and res.sample_size == n
    assert res.epsilon_low == pytest.approx(np.log(0.997 / 0.003), rel=1e-12) and res.epsilon_high == np.inf  # 5.81, ∞


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
