"""PATE's and CaPC's training phase: teachers' votes on S and the canary-holding teacher
(Chadha et al. 2024, Alg. 1, §5.1–5.2; :mod:`ppaudit.mechanisms.pate_capc`)."""

from __future__ import annotations

import numpy as np
import pytest

from ppaudit.data import load_dataset
from ppaudit.mechanisms import pate_capc as pc
from ppaudit.mechanisms.partition import teacher_training_indices
from ppaudit.models import teachers as tc


@pytest.fixture(scope="module")
def digits():
    xtr, ytr, xte, yte = load_dataset("digits")
    return xtr[:400], ytr[:400], xte[:20], yte[:20]


def test_pate_votes_deterministic_and_independent_of_n_jobs(digits):
    xtr, ytr, xq, _ = digits
    a = pc.pate_teacher_votes("logreg", xtr, ytr, xq, 4, 2, 10, seed=5)
    b = pc.pate_teacher_votes("logreg", xtr, ytr, xq, 4, 2, 10, seed=5, n_jobs=2)
    np.testing.assert_array_equal(a["votes_S"], b["votes_S"])
    np.testing.assert_array_equal(a["assignments"], b["assignments"])
    assert a["votes_S"].shape == (2, 4, 20)
    assert not np.array_equal(a["assignments"][0], a["assignments"][1])  # fresh partitions
    # logreg teachers on 100 digits are far better than chance
    assert np.mean(a["votes_S"] == digits[3][None, None, :]) > 0.6


def test_pate_canary_teacher_reuses_partition_and_seed(digits):
    xtr, ytr, xq, _ = digits
    k, ng = 4, 3
    S = pc.pate_teacher_votes("logreg", xtr, ytr, xq, k, ng, 10, seed=1)
    # A canary that duplicates a point already in the training set changes nothing for
    # logistic regression only through its weight; use a far-away point with a new label
    # to check that exactly one teacher per instantiation is trained.
    cx = np.ones((2,) + xtr.shape[1:], dtype=np.float32)
    cy = np.array([3, 4])
    out = pc.pate_canary_votes("logreg", xtr, ytr, xq, k, ng, 10, cx, cy, seed=1, canary_keys=["a", "b"])
    assert out["votes_S_prime"].shape == (2, ng, 20) and out["slots"].shape == (2, ng)
    again = pc.pate_canary_votes("logreg", xtr, ytr, xq, k, ng, 10, cx[:1], cy[:1], seed=1, canary_keys=["a"])
    np.testing.assert_array_equal(again["votes_S_prime"][0], out["votes_S_prime"][0])  # keyed seeding
    # The canary teacher is trained on the slot's cell of the same instantiation plus the canary.
    g, c = 0, 0
    j = out["slots"][c, g]
    idx = teacher_training_indices(S["assignments"][g], j)
    ref = tc.train_and_predict("logreg", np.concatenate([xtr[idx], cx[:1]]), np.concatenate([ytr[idx], cy[:1]]), xq, 10, np.random.SeedSequence(0))
    np.testing.assert_array_equal(out["votes_S_prime"][c, g], ref)


def test_capc_votes_fixed_partition(digits):
    xtr, ytr, xq, _ = digits
    S = pc.capc_teacher_votes("logreg", xtr, ytr, xq, 4, 2, 10, seed=0)
    np.testing.assert_array_equal(S["votes_S"][0], S["votes_S"][1])  # no training randomness
    P = pc.capc_canary_votes("logreg", xtr, ytr, xq, 4, 2, 10, xq[:1], np.array([1]), seed=0)
    assert P["votes_S_prime"].shape == (1, 2, 20)


def test_load_teacher_inputs_reads_the_query_set_of_select_queries(tmp_path):
    xtr, ytr, xte, yte = load_dataset("digits", tmp_path, source="packaged")
    idx = np.array([5, 0, 17])
    path = tmp_path / "queries.npz"
    np.savez(path, test_index=idx, labels=yte[idx], num_classes=np.array(10))  # the file rule select_queries writes
    inputs = pc.load_teacher_inputs("digits", tmp_path, "packaged", path)
    np.testing.assert_array_equal(inputs.x_train, xtr)
    np.testing.assert_array_equal(inputs.y_train, ytr)
    np.testing.assert_array_equal(inputs.x_query, xte[idx])
    np.testing.assert_array_equal(inputs.query_labels, yte[idx])
    assert inputs.num_classes == 10 and isinstance(inputs.num_classes, int)
