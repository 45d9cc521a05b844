"""Audit stage of PATE / CaPC and a tiny end-to-end run (Chadha et al. 2024, §4.2, §5, §5.4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppaudit.accounting import rdp_to_dp
from ppaudit.adversaries import choose_capc_party, craft
from ppaudit.audit import TRUNCATION_RESERVE, count_audits, epsilon_floor, simultaneous_confidence
from ppaudit.data import load_dataset
from ppaudit.experiments.chadha2024 import private_prediction as pp
from ppaudit.mechanisms.pate_capc import capc_canary_votes, capc_teacher_votes, pate_canary_votes, pate_teacher_votes
from ppaudit.vote_models import pate_vote_model
from ppaudit.vote_models.twin import fit_twin

ORDERS = np.array([1.5, 2.0, 4.0, 8.0, 16.0])


def test_audit_vote_model_ordering_on_synthetic_pate_model():
    m = pate_vote_model(np.array([0.5, 0.3, 0.2]), np.array([0.0, 0.1, 0.9]), 8)
    df = pp.audit_vote_model(m, 1.0, 100_000, ORDERS, rng=0)
    assert list(df["order"]) == list(ORDERS)
    assert (df["exact_method"] == "enumerate").all() and (df["tail_mass"] <= 1e-10).all()
    assert np.all(df["two_cut_cp"] <= df["exact_hi"] + 1e-12)
    assert np.all(df["k_cut"] <= df["exact_hi"] + 1e-12)
    assert np.all(df["exact_lo"] <= df["exact"]) and np.all(df["exact"] <= df["exact_hi"])
    assert np.all(df["exact"] <= df["data_independent"])
    np.testing.assert_allclose(df["data_independent"], ORDERS / 1.0)
    assert df["two_cut_cp"].iloc[1] > 0  # 1e5 trials detect this leakage


def test_audit_vote_model_exact_counts_and_average():
    m = pate_vote_model(np.array([0.7, 0.3]), np.array([0.2, 0.8]), 10)
    ex = pp.audit_vote_model(m, 1.5, 10**6, ORDERS, rng=1, count_mode="exact", exact="average", exact_draws=2000)
    assert (ex["exact_method"] == "average").all() and np.all(ex["exact_se"] > 0)
    assert ex["exact_lo"].isna().all()
    # Confidence discounted by 2 T (tail + quadrature), still close to 0.95.
    assert 0.94 < ex["effective_confidence"].iloc[0] < 0.95
    assert np.all(ex["two_cut_cp"] <= ex["exact"] + 5 * ex["exact_se"])


def test_auto_count_mode_uses_exact_counts_when_enumerable_else_samples():
    small = pate_vote_model(np.array([0.7, 0.3]), np.array([0.2, 0.8]), 10)
    df = pp.audit_vote_model(small, 1.5, 10**8, ORDERS, rng=1, count_mode="auto", sample_trials=1000)
    assert (df["exact_method"] == "enumerate").all() and (df["trials"] == 10**8).all()
    assert np.all(df["two_cut_cp"] <= df["exact_hi"] + 1e-12) and df["two_cut_cp"].iloc[-1] > 0
    # with a support budget too small to enumerate: the sampled fallback with sample_trials
    big = pate_vote_model(np.full(5, 0.2), np.array([0.0, 0.0, 0.0, 0.0, 1.0]), 60)
    df = pp.audit_vote_model(big, 3.0, 10**8, ORDERS, rng=1, count_mode="auto", sample_trials=5000, max_support=50, exact_draws=500)
    assert (df["exact_method"] == "average").all() and (df["trials"] == 5000).all()
    with pytest.raises(ValueError, match="count_mode"):
        pp.audit_vote_model(small, 1.5, 100, ORDERS, count_mode="fast")


def test_identical_models_skip_monte_carlo():
    P = np.array([0.6, 0.4])
    df = pp.audit_vote_model(pate_vote_model(P, P, 5), 1.0, 10**9, ORDERS, rng=0)
    assert (df["exact_method"] == "identical").all() and (df["trials"] == 0).all()
    assert np.all(df[["two_cut_cp", "k_cut", "exact"]].to_numpy() == 0)


def test_composition_arithmetic():
    # Two candidates: an AdvQ-style one asked 10 times, a NatQ-style one over 3 queries.
    rows = []
    for cand, queries, reps in ((0, [5], [10]), (1, [0, 1, 2], [1, 1, 1])):
        for q, r in zip(queries, reps):
            for o in ORDERS:
                rows.append({"candidate": cand, "key": f"k{cand}", "canary_index": cand, "canary_label": 0, "query": q, "repetitions": r,
                             "order": o, **{c: 0.001 * (q + 1) * o for c in pp.RDP_COLUMNS}})
    per_query = pd.DataFrame(rows)
    rdp, eps = pp.compose_candidates(per_query, delta=1e-6)
    c0 = rdp[rdp.candidate == 0].sort_values("order")
    np.testing.assert_allclose(c0["two_cut_cp"], 10 * 0.006 * ORDERS)  # asked 10 times
    c1 = rdp[rdp.candidate == 1].sort_values("order")
    np.testing.assert_allclose(c1["exact"], (0.001 + 0.002 + 0.003) * ORDERS)  # summed
    np.testing.assert_allclose(eps.loc[eps.candidate == 1, "eps_exact"].iloc[0], rdp_to_dp(0.006 * ORDERS, ORDERS, 1e-6))
    summary = pp.summarize_candidates(eps)
    worst = summary[(summary.case == "worst") & (summary.column == "two_cut_cp")]
    assert worst["candidate"].iloc[0] == 0
    avg = summary[(summary.case == "average") & (summary.column == "exact")]["epsilon"].iloc[0]
    np.testing.assert_allclose(avg, eps["eps_exact"].mean())


@pytest.fixture(scope="module")
def digits():
    xtr, ytr, xte, yte = load_dataset("digits")
    return xtr, ytr, xte[:6], yte[:6]


@pytest.mark.parametrize("algo", ["pate", "capc"])
def test_tiny_end_to_end(digits, algo):
    """sklearn digits, 10 logreg teachers, N_g = 3, T = 1e5 trials, Pois-AdvQ and Nat-AdvQ.

    The teachers are weakly regularised (C = 100) so that, like the paper's networks, they
    fit their own training points: then a poisoned point flips its teacher's vote.
    """
    xtr, ytr, xq, yq = digits
    k, ng, C, sigma, seed = 10, 3, 10, 2.0, 0
    prm = {"C": 100.0}
    if algo == "pate":
        votes_S = pate_teacher_votes("logreg", xtr, ytr, xq, k, ng, C, seed=seed, params=prm)["votes_S"]
    else:
        votes_S = capc_teacher_votes("logreg", xtr, ytr, xq, k, ng, C, seed=seed, params=prm)["votes_S"]
        assert np.all(votes_S == votes_S[0])  # deterministic teachers on fixed data
    assert votes_S.shape == (ng, k, 6)
    checked = 0
    floor = epsilon_floor(ORDERS, 1e-6)
    for adversary in ("pois-advq", "nat-advq"):
        crafted = craft(adversary, votes_S, yq, C, 100)
        if adversary == "pois-advq":
            assert np.all(crafted.canary_label != yq[crafted.canary_index])  # mislabelled poison
        if algo == "capc":
            crafted = crafted.with_party(choose_capc_party(votes_S, crafted.canary_index, crafted.canary_label))
        cx, cy = crafted.canaries(xq)
        if algo == "pate":
            out = pate_canary_votes("logreg", xtr, ytr, xq, k, ng, C, cx, cy, seed=seed, canary_keys=crafted.keys, params=prm)
        else:
            out = capc_canary_votes("logreg", xtr, ytr, xq, k, ng, C, cx, cy, seed=seed, canary_keys=crafted.keys, params=prm, party=crafted.party)
        vp, vt, slots = out["votes_S_prime"], out["votes_twin"], out["slots"]
        assert vp.shape == vt.shape == (6, ng, 6)  # the canary-holding teacher and its twin, N_g times per canary
        # the twin is teacher slot[c, g] of S (same cell, partition and seed, no canary)
        for c in range(6):
            for g in range(ng):
                np.testing.assert_array_equal(vt[c, g], votes_S[g, slots[c, g]])
        fit = fit_twin(algo, votes_S, vp, vt, C, party=crafted.party)
        per_query = pp.audit_crafted(fit, crafted, sigma, 100_000, ORDERS, seed=seed, experiment=f"test/{algo}/{adversary}",
                                     control=True, transcript=True, transcript_trials=5000, transcript_draws=5000)
        main = per_query[~per_query["control"]]
        assert len(main) == 6 * ORDERS.size and (per_query["multiplicity"] == "bonferroni").all()
        # Bonferroni over every audit run (issue 27 §1): 6 pairs × (2-cut, k-cut, transcript) × (canary, control)
        assert pp.per_query_audit_count(crafted, True, "rao-blackwell", control=True) == 36
        assert np.allclose(per_query["confidence_per_audit"], 1 - (1 - TRUNCATION_RESERVE) * 0.05 / 36)
        assert count_audits(per_query) == 36  # the union bound counts the same audits, the pruning slack inside the budget (issue 34 §5)
        assert 0.95 <= simultaneous_confidence(per_query) <= 0.95 + TRUNCATION_RESERVE * 0.05 + 1e-12
        upper = main["exact_hi"].fillna(main["exact"] + 5 * main["exact_se"])
        # audit <= exact <= data-independent, at (almost) every order and query
        assert np.mean(main["two_cut_cp"] <= upper + 1e-12) >= 0.9
        assert np.all(main["exact"] <= main["data_independent"] + 1e-12)
        # the transcript of 100 answers: never above the histogram cap, nor 100 x one answer
        tol = 1e-9 + 5 * main["transcript_se"]
        assert np.all(main["exact_transcript"] <= main["transcript_cap"] * (1 + 1e-6) + tol)
        assert np.all(main["exact_transcript"] <= main["repetitions"] * main["exact"] * (1 + 1e-6) + tol)
        # the sound transcript audit never exceeds the transcript's cap (a valid upper bound)
        assert np.all(main["two_cut_transcript"] <= main["transcript_cap"] * (1 + 1e-6) + 1e-9)
        assert np.all(main["valid_eps_lower"] >= 0)
        rdp, eps = pp.compose_candidates(per_query)
        summary = pp.summarize_candidates(eps)
        worst = summary[summary.case == "worst"].set_index("column")["epsilon"]
        assert worst["two_cut_cp"] <= worst["exact_hi"] + 1e-9 or np.isnan(worst["exact_hi"])
        assert worst["exact"] <= worst["data_independent"] + 1e-9
        # the null canary (twin in place of the canary teacher): audit and exact at the floor
        ctl = summary[summary.case == "control"].set_index("column")["epsilon"]
        np.testing.assert_allclose([ctl["two_cut_cp"], ctl["exact"], ctl["exact_transcript"]], floor, rtol=1e-12)
        if algo == "pate":  # the paper's fit (pooled P_q vs N_g' votes) invents leakage for the same null canary
            paper = fit_twin(algo, votes_S, vp, vt, C, procedure="paper")
            qs = [(i, int(crafted.audit_queries[i, 0])) for i in range(6)]
            assert all(pp.vote_model_for(fit, i, q, control=True).identical for i, q in qs)
            assert any(not pp.vote_model_for(paper, i, q, control=True).identical for i, q in qs)
        checked += int(main["two_cut_cp"].max() > 0)
    assert checked >= 1  # the poisoning canary is detected for some query


def test_composition_nan_and_standard_error():
    base = {"candidate": 0, "key": "k", "canary_index": 0, "canary_label": 1, "order": 2.0}
    per_query = pd.DataFrame([
        {**base, "query": 0, "repetitions": 1, **{c: 0.1 for c in pp.RDP_COLUMNS}, "exact_se": 0.03},
        {**base, "query": 1, "repetitions": 2, **{c: 0.2 for c in pp.RDP_COLUMNS}, "exact_se": 0.02, "exact_lo": np.nan},
    ])
    rdp, eps = pp.compose_candidates(per_query)
    assert np.isnan(rdp["exact_lo"].iloc[0]) and np.isnan(eps["eps_exact_lo"].iloc[0])
    np.testing.assert_allclose(rdp["exact"].iloc[0], 0.1 + 2 * 0.2)
    np.testing.assert_allclose(rdp["exact_se"].iloc[0], np.sqrt(0.03**2 + (2 * 0.02) ** 2))
