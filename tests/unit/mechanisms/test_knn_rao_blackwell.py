"""Private-kNN wiring of the Rao–Blackwellised audit (issue 13 §4): the conditional output
probabilities against the certified enumeration, the paired-difference bound, and the
``rao-blackwellised`` / ``paper`` rows of ``audit_knn_model`` against the exact RDP.

The model is small enough to enumerate (three classes, k = 30), so the truth is known; the
Rao–Blackwellised path is forced with ``max_support=1``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppaudit.accounting import private_knn_rdp
from ppaudit.experiments.chadha2024.private_knn import KNN_AUDIT_META, audit_knn_model, knn_audit_provenance
from ppaudit.mechanisms.private_knn import (
    KnnVoteModel,
    enumerate_knn_output_distributions,
    knn_conditional_output_probabilities,
    knn_difference_bound,
)
from ppaudit.vote_models import certified_mixture_rdp

SIGMA = 3.0
ORDERS = [2.0, 8.0, 32.0]


def _model(nu=0.5):
    return KnnVoteModel(P=[0.45, 0.4, 0.15], P_last=[0.3, 0.5, 0.2], nu=nu, label=0, k=30)


@pytest.mark.parametrize("displaced", ["sum", "sample"])
def test_conditional_probabilities_match_the_enumeration_and_the_difference_bound(displaced):
    m = _model()
    law = enumerate_knn_output_distributions(m, SIGMA)
    p, q = knn_conditional_output_probabilities(m, SIGMA, 20_000, rng=0, chunk_size=3000, displaced=displaced)
    assert p.shape == q.shape == (20_000, 3)
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-9)
    # Monte Carlo means within 5 standard errors of the certified law (paired difference too)
    for est, ref in ((p, law.p), (q, law.q), (p - q, law.p - law.q)):
        se = est.std(0, ddof=1) / np.sqrt(est.shape[0])
        assert np.all(np.abs(est.mean(0) - ref) <= 5 * se + 1e-9)
    b = knn_difference_bound(m, SIGMA)
    # every set O: |p_m(O) − q_m(O)| ≤ b (the largest set difference is the positive part)
    worst = np.maximum(np.clip(p - q, 0, None).sum(1), np.clip(q - p, 0, None).sum(1)).max()
    assert 0 < worst <= b
    # same seed, same bytes
    p2, _ = knn_conditional_output_probabilities(m, SIGMA, 20_000, rng=0, chunk_size=3000, displaced=displaced)
    assert np.array_equal(p, p2)
    with pytest.raises(ValueError, match="displaced"):
        knn_conditional_output_probabilities(m, SIGMA, 10, displaced="bogus")


def test_rao_blackwellised_row_is_below_the_exact_rdp_and_labelled():
    m = _model()
    exact = certified_mixture_rdp(enumerate_knn_output_distributions(m, SIGMA), np.array(ORDERS))
    di = private_knn_rdp(0.3, SIGMA, ORDERS, 1)
    rows = [audit_knn_model(m, SIGMA, 10**7, ORDERS, di, 0.95, rng=s, max_support=1, rb_draws=800, repetitions=50, delta=1e-5)
            for s in range(12)]
    df = pd.concat(rows)
    assert set(df["audit_method"]) == {"rao-blackwellised"} and set(df["trials"]) == {800}
    assert set(df["paper_trials"]) == {10**7}
    assert list(rows[0].columns[-len(KNN_AUDIT_META):]) == list(KNN_AUDIT_META)
    ours = np.stack([r["two_cut_cp"].to_numpy() for r in rows])
    assert np.all(ours <= exact["rdp_hi"][None, :])
    assert np.all(ours[:, -1] > 0), "the sound audit detected nothing at α = 32"
    assert np.all(df["valid_eps_lower"] >= 0)
    # the Monte Carlo exact value of the same draws is close to the certified one
    np.testing.assert_allclose(rows[0]["exact"], exact["rdp"], rtol=0.1)


def test_enumerable_rows_keep_exact_counts_and_the_option_is_checked():
    m = _model()
    di = private_knn_rdp(0.3, SIGMA, ORDERS, 1)
    r = audit_knn_model(m, SIGMA, 10**7, ORDERS, di, 0.95, rng=0, repetitions=50, delta=1e-5)
    assert set(r["audit_method"]) == {"exact-enumerated"}
    np.testing.assert_array_equal(r["two_cut_cp"], r["two_cut_paper"])
    with pytest.raises(ValueError, match="nonenumerable"):
        audit_knn_model(m, SIGMA, 10**7, ORDERS, di, nonenumerable="bogus")
    s = audit_knn_model(m, SIGMA, 10**5, ORDERS, di, 0.95, rng=0, max_support=1, nonenumerable="sample")
    assert set(s["audit_method"]) == {"sampled"} and set(s["trials"]) == {10**5}


def test_provenance_of_a_bonferroni_table():
    rows = []
    for i, (meth, t, eff) in enumerate((("rao-blackwellised", 1000, 0.99), ("exact-enumerated", 10**8, 0.985), ("none", 0, 0.99))):
        rows.append({"candidate": 0, "query": i, "audit_method": meth, "trials": t, "paper_trials": 10**8 if t else 0,
                     "effective_confidence": eff, "confidence_per_audit": 0.99})
    p = knn_audit_provenance(pd.DataFrame(rows), 0.95)
    # a table without the per-row audit counts (written before issue 27 §1): each pair stands for its
    # 2-cut and k-cut (no valid_eps_lower column: no ε bound), each at its effective confidence
    assert p["num_audits"] == 6 and p["multiplicity"] == "bonferroni"
    assert p["simultaneous_confidence"] == pytest.approx(1 - 2 * (0.01 + 0.015 + 0.01), abs=1e-12)
    assert p["effective_confidence_min"] == pytest.approx(0.985) and p["confidence_per_audit"] == 0.99
    # the same pairs with their ε bounds and a whole-transcript audit (at confidence_per_audit, no pruning slack)
    q = knn_audit_provenance(pd.DataFrame(rows).assign(count_audits=3, candidate_audits=1), 0.95)
    assert q["num_audits"] == 10
    assert q["simultaneous_confidence"] == pytest.approx(1 - 3 * (0.01 + 0.015 + 0.01) - 0.01, abs=1e-12)
    assert "rao-blackwellised: M=1e+03" in p["trials_used"] and "exact-enumerated: T=1e+08" in p["trials_used"]
    assert p["audit_method"].count("×") == 3
