"""Effective confidence of exact-count audits (issue 13 §3): ``0.95 − 2·T·τ ≥ 0.949`` at
T = 1e8 for C = 10, with τ the pruned mass left by the enumeration plus the proven
total-variation error of Eq. (4) (ppaudit.noisy_argmax.quadrature_error_bound). The expected
values are computed from those functions and the audit's own metadata, not typed in."""

import numpy as np

from ppaudit.audit import HistogramPairSource, VoteModelSource, audit_query
from ppaudit.noisy_argmax import quadrature_error_bound
from ppaudit.vote_models import (
    effective_confidence,
    exact_count_tail_budget,
    exact_count_total_variation,
    pate_vote_model,
)

ORDERS = np.array([2.0, 8.0])
T = 10**8


def _sparse_ten_class_model():
    """C = 10 classes (the noisy argmax runs over all ten), P_q on three of them: enumerates fast."""
    p, pp = np.zeros(10), np.zeros(10)
    p[:3], pp[[0, 1, 3]] = [0.9, 0.07, 0.03], [0.6, 0.3, 0.1]
    return pate_vote_model(p, pp, 250)


def test_vote_model_exact_counts_at_1e8_trials_keep_0949_for_ten_classes():
    r = audit_query(VoteModelSource(_sparse_ten_class_model()), 40.0, T, ORDERS, rng=3, count_mode="exact", lower_bounds=("two_cut_cp",))
    m = r.meta
    assert m["count_mode"] == "exact" and m["trials"] == T
    # the audit pruned at the budget that spends at most 1e-3 (not the looser max_tail_mass)
    assert m["tail_mass"] <= exact_count_tail_budget(T, 10)
    linear = effective_confidence(0.95, T, exact_count_total_variation(m["tail_mass"], 10))
    # issue 34 §5: the count laws' distance is the smaller of 2·T·τ and the Pinsker–χ² bound (count_law_total_variation)
    assert linear <= m["effective_confidence"] < 0.95
    assert m["effective_confidence"] >= 0.949


def test_fixed_pair_exact_counts_discount_the_quadrature_error():
    """A fixed histogram pair has no pruning, but its exact counts are drawn from Eq. (4)
    computed by quadrature: the confidence is discounted by 2·T·τ_q(C), no longer reported as
    the nominal 0.95."""
    h0, h1 = [60, 50, 40, 30, 20, 10, 5, 3, 2, 1], [59, 51, 40, 30, 20, 10, 5, 3, 2, 1]
    r = audit_query(HistogramPairSource(h0, h1), 5.0, T, ORDERS, rng=0, count_mode="exact", lower_bounds=("two_cut_cp",))
    tau_q = quadrature_error_bound(10).total_variation
    assert r.meta["effective_confidence"] == 0.95 - 2 * T * tau_q
    assert 0.949 <= r.meta["effective_confidence"] < 0.95


def test_transcript_audits_charge_their_samplers_certified_distance():
    """The sampled transcript audit draws T histograms per side from the inverse-CDF tables, each
    within τ of its exact law: ``effective_confidence = confidence − T·(τ_S + τ_S')`` (− T·2n·τ_q
    more when the answers come from Eq. (4)'s law, the default); the
    Rao–Blackwellised one draws M bases: ``confidence − M·τ_B`` (τ_B of the base alone)."""
    from ppaudit.audit import rao_blackwell_transcript_audit, transcript_audit

    model = pate_vote_model([0.6, 0.3, 0.1], [0.3, 0.3, 0.4], 20)
    tau = model.sampler_total_variation("S") + model.sampler_total_variation("S_prime")
    tau_b = model.base_total_variation()
    assert 0.0 < tau < 1e-10 and 0.0 < tau_b < 1e-10
    ta = transcript_audit(model, 2.0, 2, 4000, ORDERS, 0.95, rng=1, answers="simulated")
    assert ta.confidence == 0.95
    np.testing.assert_allclose(ta.effective_confidence, 0.95 - 4000 * tau, rtol=0, atol=1e-15)
    assert ta.effective_confidence < 0.95
    # the default draws the answers from Eq. (4)'s law: its certified error per answer and side too
    from ppaudit.audit import answer_total_variation

    tq = transcript_audit(model, 2.0, 2, 4000, ORDERS, 0.95, rng=1)
    np.testing.assert_allclose(tq.effective_confidence, 0.95 - 4000 * (tau + 2 * answer_total_variation(3, 2)), rtol=0, atol=1e-15)
    rb = rao_blackwell_transcript_audit(model, 2.0, 2, 500, ORDERS, 0.95, rng=1)
    np.testing.assert_allclose(rb.effective_confidence, 0.95 - 500 * tau_b, rtol=0, atol=1e-15)


def test_simultaneous_confidence_takes_the_transcripts_effective_level():
    import pandas as pd

    from ppaudit.audit import simultaneous_confidence

    t = pd.DataFrame({"candidate": [0], "query": [0], "effective_confidence": [1.0], "count_audits": [1],
                      "transcript_audits": [1], "confidence_per_audit": [0.99]})
    assert abs(simultaneous_confidence(t) - 0.99) < 1e-12
    t["transcript_effective_confidence"] = 0.98
    assert abs(simultaneous_confidence(t) - 0.98) < 1e-12
    joint = pd.DataFrame({"candidate": [0], "confidence_per_audit": [0.99], "effective_confidence": [0.97]})
    assert abs(simultaneous_confidence(t, joint) - (1 - 0.02 - 0.03)) < 1e-12
