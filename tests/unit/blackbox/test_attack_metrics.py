"""TPR at FPR, AUROC and the confusion-matrix ε interval (ppaudit.blackbox.attack_metrics).

Independent references: scikit-learn's ``roc_curve`` / ``roc_auc_score``; Clopper–Pearson by
hand from ``scipy.stats.beta`` quantiles (Clopper & Pearson 1934: lower ``Beta(α/2; k, n−k+1)``,
upper ``Beta(1−α/2; k+1, n−k)``); DeLong's variance from the O(n₊n₋) pairwise kernel.
"""

import math

import numpy as np
import pytest
from scipy.stats import beta, binom, norm
from sklearn.metrics import roc_auc_score, roc_curve

from ppaudit.blackbox import auroc, epsilon_interval_from_confusion, tpr_at_fpr


def cp_by_hand(k, n, conf):
    a = 1.0 - conf
    lo = 0.0 if k == 0 else beta.ppf(a / 2, k, n - k + 1)
    hi = 1.0 if k == n else beta.ppf(1 - a / 2, k + 1, n - k)
    return lo, hi


def eps_by_hand(fpr, fnr, delta):
    vals = [0.0]
    for num, den in ((1 - delta - fnr, fpr), (1 - delta - fpr, fnr)):
        if num > 0:
            vals.append(math.inf if den == 0 else math.log(num / den))
    return max(vals)


def game(n, shift, rng, ties=False):
    b = rng.random(n) < 0.5
    s = shift * b + rng.standard_normal(n)
    return (np.round(s, 1) if ties else s), b


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("target", [0.0, 0.001, 0.01, 0.1, 0.37])
def test_tpr_at_fpr_matches_sklearn_roc_curve_and_cp_by_hand(ties, target):
    s, b = game(3000, 1.5, np.random.default_rng(11), ties)
    r = tpr_at_fpr(s, b, target, confidence=0.9)
    fpr_s, tpr_s, _ = roc_curve(b, s, drop_intermediate=False)
    assert r.tpr == pytest.approx(tpr_s[fpr_s <= target + 1e-12].max(), abs=1e-12)
    assert r.fpr <= target and r.false_positives == int(np.sum(s[~b] > r.threshold))
    # the threshold is a negative score (chosen on the negatives only) or -inf
    assert r.threshold == -np.inf or r.threshold in set(s[~b])
    assert (r.true_positives, r.positives) == (int(np.sum(s[b] > r.threshold)), int(b.sum()))
    np.testing.assert_allclose(r.tpr_interval, cp_by_hand(r.true_positives, r.positives, 0.9), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.fpr_interval, cp_by_hand(r.false_positives, r.negatives, 0.9), rtol=1e-9, atol=1e-12)


def test_tpr_at_fpr_intervals_cover_the_rules_true_rates():
    # Binormal scores: negatives N(0,1), positives N(1,1); the rule "score > u" has true
    # FPR = 1 - Phi(u) and TPR = 1 - Phi(u - 1). 300 seeded games, each interval at 0.9.
    reps, n, conf = 300, 400, 0.9
    gen = np.random.default_rng(12)
    cover_t = cover_f = 0
    for _ in range(reps):
        s, b = game(n, 1.0, gen)
        r = tpr_at_fpr(s, b, 0.05, confidence=conf)
        cover_t += r.tpr_interval[0] <= norm.sf(r.threshold - 1.0) <= r.tpr_interval[1]
        cover_f += r.fpr_interval[0] <= norm.sf(r.threshold) <= r.fpr_interval[1]
    bar = binom.ppf(0.001, reps, conf)
    assert cover_t >= bar and cover_f >= bar, (cover_t, cover_f, bar)


def delong_by_hand(s, b):
    pos, neg = s[b], s[~b]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    return psi.mean(), math.sqrt(v10.var(ddof=1) / pos.size + v01.var(ddof=1) / neg.size)


@pytest.mark.parametrize("ties", [False, True])
def test_auroc_matches_sklearn_and_pairwise_delong(ties):
    s, b = game(1500, 0.8, np.random.default_rng(13), ties)
    r = auroc(s, b, confidence=0.95)
    a_ref, se_ref = delong_by_hand(s, b)
    assert r.auroc == pytest.approx(roc_auc_score(b, s), abs=1e-12) == pytest.approx(a_ref, abs=1e-12)
    assert r.std_error == pytest.approx(se_ref, rel=1e-9)
    z = norm.ppf(0.975)
    np.testing.assert_allclose(r.interval, (a_ref - z * se_ref, a_ref + z * se_ref), rtol=1e-9)
    assert r.method == "delong" and (r.positives, r.negatives) == (int(b.sum()), int((~b).sum()))


def test_auroc_delong_interval_coverage_is_near_nominal():
    # Binormal, true AUROC = Phi(d / sqrt 2). The interval is asymptotic: at 300 canaries per game
    # its coverage over 300 seeded games must clear the binomial 0.1 % quantile of 0.93.
    reps, d = 300, 1.0
    truth = norm.cdf(d / math.sqrt(2))
    gen = np.random.default_rng(14)
    cover = 0
    for _ in range(reps):
        r = auroc(*game(300, d, gen))
        cover += r.interval[0] <= truth <= r.interval[1]
    assert cover >= binom.ppf(0.001, reps, 0.93), cover


@pytest.mark.parametrize("tp, fp, tn, fn, delta", [(900, 100, 900, 100, 0.0), (50, 0, 1000, 950, 1e-5),
                                                   (10, 3, 7, 0, 0.0), (400, 200, 300, 100, 0.01), (1, 1, 1, 1, 0.0)])
def test_epsilon_interval_is_cp_with_bonferroni_by_hand(tp, fp, tn, fn, delta):
    r = epsilon_interval_from_confusion(tp, fp, tn, fn, delta=delta, confidence=0.95)
    flo, fhi = cp_by_hand(fp, fp + tn, 0.975)
    nlo, nhi = cp_by_hand(fn, fn + tp, 0.975)
    np.testing.assert_allclose(r.fpr_interval, (flo, fhi), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.fnr_interval, (nlo, nhi), rtol=1e-9, atol=1e-12)
    assert r.epsilon_low == pytest.approx(eps_by_hand(fhi, nhi, delta), rel=1e-9, abs=1e-12)
    assert r.epsilon_high == pytest.approx(eps_by_hand(flo, nlo, delta), rel=1e-9, abs=1e-12)
    assert r.epsilon_low <= r.epsilon_point <= r.epsilon_high


def test_epsilon_interval_covers_the_attacks_epsilon():
    # An attack on RR at eps = 1 guessing the shown bit: FPR = FNR = 1/(1 + e), attack eps = 1.
    reps, n, conf = 300, 500, 0.9
    p = 1.0 / (1.0 + math.e)
    gen = np.random.default_rng(15)
    cover = above = 0
    for _ in range(reps):
        fp, fn = gen.binomial(n, p), gen.binomial(n, p)
        r = epsilon_interval_from_confusion(n - fn, fp, n - fp, fn, confidence=conf)
        cover += r.epsilon_low <= 1.0 <= r.epsilon_high
        above += r.epsilon_low > 1.0
    assert cover >= binom.ppf(0.001, reps, conf)
    assert above <= binom.ppf(0.999, reps, 1 - conf)


@pytest.mark.parametrize("call, match", [
    (lambda: tpr_at_fpr([0.1, 0.2, 0.3], [0, 1, 1], 1.0), "fpr must be in"),
    (lambda: tpr_at_fpr([0.1, 0.2, 0.3], [0, 1, 1], "low"), "fpr must be a number"),
    (lambda: tpr_at_fpr([0.1, 0.2, 0.3], [1, 1, 1], 0.1), "both positives and negatives"),
    (lambda: tpr_at_fpr([0.1, 0.2, 0.3], [0, 2, 1], 0.1), "truth must be booleans"),
    (lambda: tpr_at_fpr([0.1, np.nan, 0.3], [0, 1, 1], 0.1), "scores must be finite"),
    (lambda: tpr_at_fpr([0.1, 0.2, 0.3], [0, 1], 0.1), "truth must have the shape"),
    (lambda: tpr_at_fpr([0.1, 0.2, 0.3], [0, 1, 1], 0.1, confidence=1.5), "confidence"),
    (lambda: auroc([0.1, 0.2, 0.3], [0, 1, 1]), "at least 2 positives and 2 negatives"),
    (lambda: epsilon_interval_from_confusion(-1, 2, 3, 4), "tp must be a non-negative integer"),
    (lambda: epsilon_interval_from_confusion(1, 2.5, 3, 4), "fp must be a non-negative integer"),
    (lambda: epsilon_interval_from_confusion(0, 2, 3, 0), "positives"),
    (lambda: epsilon_interval_from_confusion(1, 0, 0, 4), "negatives"),
    (lambda: epsilon_interval_from_confusion(1, 2, 3, 4, delta=1.0), "delta must be in"),
    (lambda: epsilon_interval_from_confusion(1, 2, 3, 4, confidence=0.0), "confidence"),
])
def test_bad_inputs_raise_value_error_naming_the_value(call, match):
    with pytest.raises(ValueError, match=match):
        call()
