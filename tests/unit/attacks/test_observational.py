"""Observational label-inference audit (Alg. 2, §6.2) and MIA baselines; App. C synthetic RR."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

import ppaudit.attacks.observational as obs
from ppaudit.attacks.observational import (
    audit_label_inference,
    audit_membership,
    calibrated_mia_scores,
    correct_guess_counts,
    label_inference_counts,
    label_inference_scores,
    observational_label_game,
    rmia_offline_scores,
    sample_counterfactual_labels,
)
from ppaudit.experiments.labeldp.synthetic_rr import rr_audit_experiment, summarize, tau_shift_experiment


def test_score_definition():
    # s = (M[y] − M'[y]) · (1 − M'[y])^t, by hand for one sample
    pm = np.array([[0.7, 0.2, 0.1]])
    pr = np.array([[0.2, 0.5, 0.3]])
    assert_allclose(label_inference_scores(pm, pr, [0]), (0.7 - 0.2) * 0.8**2)
    assert_allclose(label_inference_scores(pm, pr, [1], t=1.0), (0.2 - 0.5) * 0.5)
    assert_allclose(label_inference_scores(pm, pr, [2], t=0.0), 0.1 - 0.3)


def test_counterfactual_labels_follow_the_reference_model():
    rng = np.random.default_rng(0)
    p = np.array([0.1, 0.6, 0.3])
    y1 = sample_counterfactual_labels(np.tile(p, (60_000, 1)), rng)
    assert stats.chisquare(np.bincount(y1, minlength=3), 60_000 * p).pvalue > 1e-4
    shown, b, y1 = observational_label_game(np.zeros(60_000, int), np.tile(p, (60_000, 1)), rng)
    np.testing.assert_array_equal(shown, np.where(b == 1, y1, 0))
    assert abs(b.mean() - 0.5) < 0.01


def test_correct_guess_counts_brute_force():
    rng = np.random.default_rng(1)
    s = rng.normal(size=300)
    truth = rng.random(300) < 0.5
    cps = np.array([1, 10, 150, 300])
    got = correct_guess_counts(s, truth, cps, center=0.1)
    for cp, g in zip(cps, got):
        top = np.argsort(-np.abs(s - 0.1), kind="stable")[:cp]
        assert g == int(((s[top] > 0.1) == truth[top]).sum())


def test_table_path_equals_direct_path(monkeypatch):
    rng = np.random.default_rng(2)
    m, k = 3000, 4
    pm = rng.dirichlet(np.ones(k), m)
    pr = rng.dirichlet(np.ones(k), m)
    y = rng.integers(0, k, m)
    cps = np.array([30, 300, 3000])
    fast = label_inference_counts(y, pm, pr, cps, 3, np.random.default_rng(9))
    monkeypatch.setattr(obs.label_inference, "_TABLE_LIMIT", 0)
    slow = label_inference_counts(y, pm, pr, cps, 3, np.random.default_rng(9))
    np.testing.assert_array_equal(fast, slow)


def test_rr_audit_tight_ish_for_moderate_epsilon():
    # App. C at a small size: k = 10, n = 50 000, 1 % guesses, true-posterior counterfactuals.
    df = rr_audit_experiment(
        n=50_000, num_classes=(10,), epsilons=(1.0, 2.0, 4.0), guess_fractions=(0.01,),
        counterfactuals=("true_posterior",), num_repetitions=5, seed=1,
    )
    s = summarize(df).set_index("epsilon_theory")["epsilon_mean"]
    for eps, got in s.items():
        assert 0.7 * eps <= got <= eps + 0.3, (eps, got)


def test_no_leakage_gives_small_epsilon():
    # The "target model" ignores the training labels: its predictions are drawn from M'.
    rng = np.random.default_rng(3)
    m, k = 20_000, 5
    pr = rng.dirichlet(np.ones(k), m)
    y0 = sample_counterfactual_labels(pr, rng)
    pm = np.eye(k)[sample_counterfactual_labels(pr, rng)]
    res = audit_label_inference(y0, pm, pr, 5, rng, guess_fractions=np.arange(1, 11) / 10)
    assert res.epsilon_fixed_mean < 0.3
    assert res.per_repetition.shape[0] == 5


def test_tau_shift_lowers_epsilon():
    df = tau_shift_experiment(n=20_000, epsilons=(4.0,), taus=(1e-6, 1e-1), guess_fractions=(0.01,), num_repetitions=3)
    s = summarize(df).set_index("tau")["epsilon_mean"]
    assert s[1e-1] < s[1e-6]
    assert s[1e-1] < 0.2


def test_mia_baselines():
    rng = np.random.default_rng(4)
    n, k = 4000, 3
    y = rng.integers(0, k, n)
    ref = np.full((n, k), 1.0 / k)
    # members: the target is confident in the label; non-members: not
    member = np.arange(n) < n // 2
    tgt = np.where(member[:, None], 0.1 / (k - 1), 1.0 / k) * np.ones((n, k))
    tgt[np.arange(n)[member], y[member]] = 0.9
    cal = calibrated_mia_scores(tgt, ref, y)
    assert_allclose(cal[0], np.log(0.9) - np.log(1 / 3))
    rm = rmia_offline_scores(tgt, ref, y, a=0.3)
    assert rm.min() >= 0 and rm.max() <= 1 and rm[member].min() > rm[~member].max()
    res = audit_membership(cal[member], cal[~member], 3, rng, center=0.0, guess_fractions=[0.01, 0.1, 1.0])
    assert res.epsilon_sweep_mean > 2.0
    null = audit_membership(cal[~member], cal[~member][::-1] + 0.0, 3, rng, center=0.0, guess_fractions=[0.1, 1.0])
    assert null.epsilon_sweep_mean < 0.3


def test_bad_input_raises():
    pm = np.full((4, 2), 0.5)
    with pytest.raises(ValueError, match="target_probs must have shape"):
        label_inference_scores(np.ones(4), pm, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="shown_labels"):
        label_inference_scores(pm, pm, [0, 1, 0, 2])
    with pytest.raises(ValueError, match="t must be >= 0"):
        label_inference_scores(pm, pm, [0, 1, 0, 1], t=-1.0)
    with pytest.raises(ValueError, match="guess fractions"):
        audit_label_inference([0, 1, 0, 1], pm, pm, 1, np.random.default_rng(0), guess_fractions=[0.0])
    with pytest.raises(ValueError, match="reference_probs must sum to 1"):
        label_inference_scores(pm, np.full((4, 2), 0.7), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="a must be in"):
        rmia_offline_scores(pm, pm, [0, 1, 0, 1], a=2.0)
