"""The one per-query audit core (ppaudit.audit.audit_query) and the composition helpers.

References: exact RDP from Eq. (4) (ppaudit.divergence.exact_rdp, itself tested against
mpmath quadrature); Bonferroni from its definition; the ε floor from Thm 1 (Balle et al.
2020) evaluated by hand.
"""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from ppaudit.audit import (
    HistogramPairSource,
    VoteModelSource,
    audit_query,
    bonferroni_confidence,
    compose_candidates,
    epsilon_floor,
    summarize_candidates,
)
from ppaudit.divergence import exact_rdp
from ppaudit.vote_models import pate_vote_model

ORDERS = np.array([1.5, 2.0, 4.0, 8.0, 16.0])


def test_pair_source_exact_and_theory_match_closed_form():
    h0, h1 = [14, 12, 10, 8, 6], [13, 13, 10, 8, 6]
    r = audit_query(HistogramPairSource(h0, h1), 2.0, 10**6, ORDERS, rng=1)
    assert_allclose(r.columns["exact"], exact_rdp(h0, h1, 2.0, ORDERS), rtol=0, atol=0)
    assert_allclose(r.columns["data_independent"], ORDERS / 4.0, rtol=1e-12)
    assert r.meta["count_mode"] == "exact" and r.meta["trials"] == 10**6 and r.meta["simulated"]
    assert r.counts0.sum() == 10**6 and r.counts1.sum() == 10**6


def test_same_seed_same_bytes_and_different_seed_differs():
    src = HistogramPairSource([30, 28, 5], [29, 29, 5])
    a = audit_query(src, 3.0, 10**5, ORDERS, rng=5).frame(["two_cut_cp", "k_cut"])
    b = audit_query(src, 3.0, 10**5, ORDERS, rng=5).frame(["two_cut_cp", "k_cut"])
    c = audit_query(src, 3.0, 10**5, ORDERS, rng=6).frame(["two_cut_cp", "k_cut"])
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert not np.array_equal(a["two_cut_cp"].to_numpy(), c["two_cut_cp"].to_numpy())


def test_two_cut_audit_is_sound_over_seeded_repetitions():
    """A 95 % lower bound exceeds the truth in ≤ 5 % + binomial slack of 200 seeded runs."""
    h0, h1 = [20, 18, 4], [19, 19, 4]
    truth = exact_rdp(h0, h1, 2.0, ORDERS)
    src = HistogramPairSource(h0, h1)
    above = np.array([np.any(audit_query(src, 2.0, 20_000, ORDERS, 0.95, rng=s, lower_bounds=("two_cut_cp",)).columns["two_cut_cp"] > truth + 1e-12)
                      for s in range(200)])
    # binomial(200, 0.05): mean 10, P(X > 19) < 0.5 %
    assert above.sum() <= 19, above.sum()


def test_planted_bug_is_detected():
    """Counts drawn from a pair far more distinguishable than the one claimed: the audit
    exceeds the claimed exact RDP (the auditor can fail)."""

    class Planted(HistogramPairSource):
        def exact_counts(self, enum, sigma, trials, gens):
            return HistogramPairSource([20, 2, 1], [2, 20, 1]).exact_counts(enum, sigma, trials, gens)

    r = audit_query(Planted([20, 18, 4], [19, 19, 4]), 2.0, 10**6, ORDERS, rng=0)
    assert np.all(r.columns["two_cut_cp"][1:] > r.columns["exact"][1:])


def test_identical_pair_and_skipped_simulation_give_zero_lower_bounds():
    r = audit_query(HistogramPairSource([5, 3], [5, 3]), 1.0, 100, ORDERS, rng=0)
    assert r.meta["identical"] and r.meta["trials"] == 0 and r.counts0 is None
    assert np.all(r.columns["two_cut_cp"] == 0) and np.all(r.columns["exact"] == 0)
    m = pate_vote_model(np.array([0.7, 0.3]), np.array([0.1, 0.9]), 10)
    r = audit_query(VoteModelSource(m), 2.0, 1000, ORDERS, rng=0, simulate=False)
    assert not r.meta["simulated"] and np.all(r.columns["k_cut"] == 0) and np.all(r.columns["exact"] > 0)


def test_vote_model_source_exact_counts_report_effective_confidence():
    m = pate_vote_model(np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.7, 0.1]), 20)
    r = audit_query(VoteModelSource(m), 3.0, 10**8, ORDERS, rng=2, count_mode="exact")
    assert r.meta["count_mode"] == "exact" and r.meta["exact_method"] == "enumerate"
    tv = r.meta["tail_mass"]
    # the T-trial count laws' distance (issue 34 §5): at most the old linear charge 2·T·τ, at least the pruned mass alone
    assert 0.95 - 2 * 10**8 * tv - 1e-9 <= r.meta["effective_confidence"] < 0.95
    assert r.meta["effective_confidence"] >= 0.95 - 1e-6  # Pinsker–χ²: ~1e-8 here where 2·T·τ ≈ 2e-5
    assert np.all(r.columns["exact_lo"] <= r.columns["exact"] + 1e-12) and np.all(r.columns["exact"] <= r.columns["exact_hi"] + 1e-12)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(count_mode="often"), "count_mode"),
        (dict(exact="maybe"), "exact"),
        (dict(lower_bounds=("three_cut",)), "three_cut"),
        (dict(k_cut_method="wald"), "wald"),
    ],
)
def test_bad_options_name_the_value(kwargs, match):
    with pytest.raises(ValueError, match=match):
        audit_query(HistogramPairSource([3, 1], [2, 2]), 1.0, 10, ORDERS, **kwargs)


def test_frame_rejects_unknown_columns():
    r = audit_query(HistogramPairSource([3, 1], [2, 2]), 1.0, 100, ORDERS, rng=0)
    with pytest.raises(ValueError, match="bootstrap"):
        r.frame(["two_cut_bootstrap"])


def test_bonferroni_confidence():
    assert bonferroni_confidence(0.95, 1) == 0.95
    assert_allclose(bonferroni_confidence(0.95, 50), 0.999, rtol=1e-12)
    # issue 34 §5: a reserve for the audits' certified slack; N audits each losing at most reserve·α/N still hold at ≥ 0.95
    per = bonferroni_confidence(0.95, 3000, reserve=0.02)
    assert_allclose(per, 1 - 0.98 * 0.05 / 3000, rtol=1e-15)
    assert 1 - 3000 * (1 - (per - 0.02 * 0.05 / 3000)) >= 0.95 - 1e-12
    assert 1 - 3000 * (1 - (bonferroni_confidence(0.95, 3000) - 1e-9)) < 0.95  # planted: no reserve, any slack falls below
    with pytest.raises(ValueError, match="reserve must be in"):
        bonferroni_confidence(0.95, 3, reserve=1.0)
    with pytest.raises(ValueError, match="num_tests"):
        bonferroni_confidence(0.95, 0)
    with pytest.raises(ValueError, match="confidence"):
        bonferroni_confidence(1.5, 3)


def test_epsilon_floor_is_thm1_of_the_zero_curve():
    a = np.array([2.0, 8.0, 64.0])
    d = 1e-6
    by_hand = np.min(np.log1p(-1 / a) - (np.log(d) + np.log(a)) / (a - 1))
    assert_allclose(epsilon_floor(a, d), by_hand, rtol=1e-12)
    with pytest.raises(ValueError):
        epsilon_floor(a, 2.0)


def test_compose_and_summarise_candidates():
    rows = []
    for cand, scale in ((0, 1.0), (1, 3.0)):
        for q, reps in ((0, 10), (1, 1)):
            for a in ORDERS:
                rows.append(dict(candidate=cand, key=f"k{cand}", canary_index=cand, canary_label=1, query=q, repetitions=reps, order=a,
                                 two_cut_cp=0.01 * scale * a, k_cut=0.0, exact=0.02 * scale * a, exact_lo=0.02 * scale * a,
                                 exact_hi=0.02 * scale * a, data_dependent=0.1 * a, data_independent=0.2 * a, exact_se=0.0))
    rdp, eps = compose_candidates(pd.DataFrame(rows), delta=1e-5)
    r1 = rdp[(rdp["candidate"] == 1) & (rdp["order"] == 2.0)]
    assert_allclose(r1["two_cut_cp"].iloc[0], 11 * 0.03 * 2.0, rtol=1e-12)
    s = summarize_candidates(eps)
    worst = s[(s["case"] == "worst") & (s["column"] == "two_cut_cp")]
    assert int(worst["candidate"].iloc[0]) == 1
    assert float(worst["epsilon"].iloc[0]) > epsilon_floor(ORDERS, 1e-5)
