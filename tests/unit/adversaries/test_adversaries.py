"""Crafters and distinguishers of Nat-AdvQ, Pois-AdvQ, Pois-NatQ (Chadha et al. 2024, §4.1, §5.1)."""

from __future__ import annotations

import numpy as np
import pytest

from ppaudit import adversaries as adv


def _votes():
    # N_g = 2 instantiations, k = 3 teachers, 4 queries, C = 4 classes.
    # Pooled counts per query (hand-counted below).
    v = np.array([
        [[0, 1, 2, 3], [0, 1, 2, 3], [1, 1, 2, 0]],
        [[0, 2, 2, 3], [2, 1, 2, 0], [1, 2, 2, 3]],
    ])
    counts = np.array([
        [3, 2, 1, 0],  # query 0: top 0, second 1
        [0, 4, 2, 0],  # query 1: top 1, second 2
        [0, 0, 6, 0],  # query 2: unanimous -> smallest other class, 0
        [2, 0, 0, 4],  # query 3: top 3, second 0
    ])
    return v, counts


def test_pooled_counts_and_second_label():
    v, counts = _votes()
    np.testing.assert_array_equal(adv.pooled_vote_counts(v, 4), counts)
    np.testing.assert_array_equal(adv.second_most_common_label(counts), [1, 2, 0, 0])
    # Ties go to the smaller class index.
    np.testing.assert_array_equal(adv.second_most_common_label([[1, 3, 3, 1]]), [2])
    np.testing.assert_array_equal(adv.second_most_common_label([[2, 2, 0]]), [1])


def test_nat_advq_true_label_repeated_query():
    y = np.array([3, 1, 4, 1])
    c = adv.craft_nat_advq(y, 1000)
    np.testing.assert_array_equal(c.canary_index, [0, 1, 2, 3])
    np.testing.assert_array_equal(c.canary_label, y)
    np.testing.assert_array_equal(c.audit_queries[:, 0], [0, 1, 2, 3])
    assert np.all(c.repetitions == 1000) and c.audit_queries.shape == (4, 1)


def test_pois_advq_mislabelled_poison():
    v, _ = _votes()
    # true labels = the teachers' top label on queries 1 and 3 -> the second most common label
    c = adv.craft_pois_advq(v, [0, 1, 2, 3], 4, 50, candidates=[1, 3])
    np.testing.assert_array_equal(c.canary_index, [1, 3])
    np.testing.assert_array_equal(c.canary_label, [2, 0])
    np.testing.assert_array_equal(c.audit_queries, [[1], [3]])
    assert np.all(c.repetitions == 50)
    # the teachers mostly err on query 1 (true label 2): the poison is their top label 1,
    # never the true label (the old "second most common label" rule gave 2 = the true label)
    c = adv.craft_pois_advq(v, [0, 2, 2, 0], 4, 50, candidates=[1, 3])
    np.testing.assert_array_equal(c.canary_label, [1, 3])


def test_poison_label_never_equals_true_label():
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 5, size=(500, 4))
    y = rng.integers(0, 4, size=500)
    lab = adv.poison_label(counts, y)
    assert np.all(lab != y)
    masked = counts.astype(float)
    masked[np.arange(500), y] = -1
    np.testing.assert_array_equal(counts[np.arange(500), lab], masked.max(axis=1))
    with pytest.raises(ValueError, match=r"y_true must lie in \[0, 4\)"):
        adv.poison_label(counts[:2], [0, 4])
    with pytest.raises(ValueError, match="y_query must hold 4 labels"):
        adv.craft_pois_natq(_votes()[0], [0, 1], 4)


def test_capc_party_is_a_teacher_that_votes_differently():
    # 2 instantiations, 3 parties, 3 queries
    v = np.array([[[1, 0, 2], [1, 1, 2], [0, 1, 2]], [[1, 0, 2], [1, 1, 2], [1, 1, 2]]])
    party = adv.choose_capc_party(v, [0, 1, 2], [1, 1, 2])
    # q0, label 1: party 2 votes 0 once (the only one to differ); q1, label 1: party 0 always
    # votes 0; q2, label 2: nobody differs -> party 0
    np.testing.assert_array_equal(party, [2, 0, 0])
    assert v[0, 2, 0] != 1 and v[0, 0, 1] != 1
    c = adv.craft("nat-advq", v, np.array([1, 1, 2]), 3, 5).with_party(party)
    np.testing.assert_array_equal(c.party, [2, 0, 0])
    with pytest.raises(ValueError, match="party must hold one index"):
        c.with_party([0, 1])


def test_pois_natq_natural_queries_once_each():
    v, _ = _votes()
    c = adv.craft("pois-natq", v, np.zeros(4), 4, 3, candidates=[2])
    np.testing.assert_array_equal(c.canary_label, [2])  # unanimous 2, true label 0
    np.testing.assert_array_equal(c.audit_queries, [[0, 1, 2]])
    np.testing.assert_array_equal(c.repetitions, [[1, 1, 1]])
    assert c.keys == ["pois-natq:2:2"]


def test_canaries_and_npz_round_trip(tmp_path):
    v, _ = _votes()
    xq = np.arange(4 * 2).reshape(4, 1, 1, 2).astype(np.float32)
    c = adv.craft("pois-advq", v, np.zeros(4), 4, 7)
    cx, cy = c.canaries(xq)
    np.testing.assert_array_equal(cx, xq)
    np.testing.assert_array_equal(cy, [1, 1, 2, 3])
    c = c.with_party([0, 2, 1, 0])
    c.to_npz(tmp_path / "c.npz")
    back = adv.CraftedCanaries.from_npz(tmp_path / "c.npz")
    assert back.adversary == "pois-advq"
    for name in ("canary_index", "canary_label", "audit_queries", "repetitions", "party"):
        np.testing.assert_array_equal(getattr(back, name), getattr(c, name))


def test_errors():
    v, _ = _votes()
    with pytest.raises(ValueError, match="adversary must be one of"):
        adv.craft("nat-natq", v, np.zeros(4), 4, 3)
    with pytest.raises(ValueError, match="candidates must be distinct"):
        adv.craft_nat_advq(np.zeros(4), 3, candidates=[0, 0])
    with pytest.raises(ValueError, match="exceeds the query set"):
        adv.craft("pois-natq", v, np.zeros(4), 4, 10)
    with pytest.raises(ValueError, match=r"votes must lie in \[0, 3\)"):
        adv.pooled_vote_counts(v, 3)


def test_sample_query_indices():
    q = adv.sample_query_indices(100, 10, np.random.default_rng(0))
    assert q.shape == (10,) and np.unique(q).size == 10 and q.min() >= 0 and q.max() < 100
    np.testing.assert_array_equal(q, adv.sample_query_indices(100, 10, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="num_queries must be <="):
        adv.sample_query_indices(5, 6, np.random.default_rng(0))
