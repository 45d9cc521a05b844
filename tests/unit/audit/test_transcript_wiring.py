"""The paper's per-query composition next to the sound transcript-level values (issue 13 §1),
wired through the PATE / CaPC audit stage and the findings table.

Reference numbers: issue 13 §1 (k = 250, σ = 40, P_q = (0.5, 0.5), P'_q = (0.75, 0.25),
α = 64): 1000 × the single-answer RDP = 1.434 while the exact RDP of the 1000-answer
transcript is 0.033 (enumeration of the answer counts).
"""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from ppaudit.adversaries import CraftedCanaries
from ppaudit.audit import TRUNCATION_RESERVE, compose_candidates, epsilon_floor, simultaneous_confidence, summarize_candidates
from ppaudit.experiments.chadha2024.pate_capc_findings import findings_rows
from ppaudit.experiments.chadha2024.private_prediction import audit_crafted
from ppaudit.vote_models import PateFit

ORDERS = np.array([2.0, 8.0, 32.0, 64.0])


def _demo_per_query(bonferroni=False):
    fit = PateFit(np.array([[0.5, 0.5]]), np.array([[[0.75, 0.25]]]), 250, 8)
    crafted = CraftedCanaries("pois-advq", np.array([0]), np.array([0]), np.array([[0]]), np.array([[1000]]))
    return audit_crafted(fit, crafted, 40.0, 10**8, ORDERS, seed=0, experiment="demo", transcript=True, bonferroni=bonferroni,
                         transcript_trials=2000, transcript_draws=10_000, count_mode="exact")


def test_issue_demonstration_paper_composition_exceeds_the_cap():
    pq = _demo_per_query()
    at64 = pq[pq["order"] == 64.0].iloc[0]
    assert_allclose(1000 * at64["exact"], 1.434, atol=5e-4)  # paper: n × single-answer exact RDP
    assert_allclose(at64["exact_transcript"], 0.033, atol=5e-4)  # exact transcript RDP
    assert at64["transcript_method"] == "enumerate"
    # the paper's composed *audit* is above a valid upper bound on the transcript's RDP
    assert 1000 * at64["two_cut_cp"] > at64["transcript_cap"] >= at64["exact_transcript"]
    # and the sound exact value is never above the cap (n × one answer is no bound: issue 27 §2)
    assert np.all(pq["exact_transcript"] <= pq["transcript_cap"] + 1e-12)


def test_composition_does_not_multiply_transcript_columns():
    pq = _demo_per_query()
    rdp, eps = compose_candidates(pq, delta=1e-6)
    r64 = rdp[rdp["order"] == 64.0].iloc[0]
    p64 = pq[pq["order"] == 64.0].iloc[0]
    assert_allclose(r64["two_cut_cp"], 1000 * p64["two_cut_cp"], rtol=1e-12)
    assert_allclose(r64["exact_transcript"], p64["exact_transcript"], rtol=1e-12)
    assert eps["eps_exact_transcript"].iloc[0] < eps["eps_exact"].iloc[0]


def test_findings_row_flags_the_paper_audit_above_the_cap():
    pq = _demo_per_query()
    _, eps = compose_candidates(pq, delta=1e-6)
    s = summarize_candidates(eps)
    s.insert(0, "adversary", "pois-advq")
    s.insert(0, "dataset", "demo")
    floor = epsilon_floor(ORDERS, 1e-6)
    rows = findings_rows(s, "pate", floor)
    cap_row = rows[rows["finding"] == "paper audit<=transcript cap"].iloc[0]
    assert not cap_row["holds"] and "exceeds the cap by" in cap_row["note"]
    order_row = rows[rows["finding"] == "audit<=exact<=dd<=di"].iloc[0]
    assert "sound: transcript" in order_row["note"] or "exact: sound transcript" in order_row["note"]


def test_bonferroni_is_the_default_and_recorded():
    pq = _demo_per_query(bonferroni=True)
    per = 1 - (1 - TRUNCATION_RESERVE) * 0.05 / 3  # the slack's reserve held back (issue 34 §5)
    assert (pq["multiplicity"] == "bonferroni").all() and np.allclose(pq["confidence_per_audit"], per)
    # one pair, three audits (issue 27 §1): the 2-cut, the k-cut and the Rao–Blackwellised transcript audit
    assert (pq["bonferroni_audits"] == 3).all() and (pq["count_audits"] == 2).all() and (pq["transcript_audits"] == 1).all()
    slack = 2 * (per - pq["effective_confidence"].min())  # the 2-cut and the k-cut each lose the pruning slack
    # the transcript audit loses the certified distance of its base sampler from the exact law (M·τ_B)
    tr = per - pq["transcript_effective_confidence"].min()
    assert simultaneous_confidence(pq) == pytest.approx(1 - 3 * (1 - per) - slack - tr, abs=1e-12) and slack < 1e-3 and 0 <= tr < 1e-6
    assert simultaneous_confidence(pq) >= 0.95
    fit = PateFit(np.array([[0.5, 0.5], [0.6, 0.4]]), np.array([[[0.75, 0.25], [0.6, 0.4]]]), 20, 2)
    crafted = CraftedCanaries("pois-natq", np.array([0]), np.array([1]), np.array([[0, 1]]), np.array([[1, 1]]))
    pq = audit_crafted(fit, crafted, 2.0, 10**5, ORDERS, seed=0, experiment="b", count_mode="exact")
    assert np.allclose(pq["confidence_per_audit"], 1 - (1 - TRUNCATION_RESERVE) * 0.05 / 4)  # two pairs × (2-cut, k-cut)
    pq = audit_crafted(fit, crafted, 2.0, 10**5, ORDERS, seed=0, experiment="b", count_mode="exact", other_audits=6)
    assert np.allclose(pq["confidence_per_audit"], 1 - (1 - TRUNCATION_RESERVE) * 0.05 / 10)  # + 6 audits run elsewhere (the joint ones)
    with pytest.raises(ValueError, match="other_audits must be >= 0, got -1"):
        audit_crafted(fit, crafted, 2.0, 10**5, ORDERS, seed=0, experiment="b", other_audits=-1)
    pq = audit_crafted(fit, crafted, 2.0, 10**5, ORDERS, seed=0, experiment="b", bonferroni=False, count_mode="exact")
    assert (pq["multiplicity"] == "none (paper)").all() and np.allclose(pq["confidence_per_audit"], 0.95)
    assert isinstance(pq, pd.DataFrame)
