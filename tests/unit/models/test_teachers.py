"""Teacher models and the training phase (Chadha et al. 2024, Alg. 1, §5.1–5.2, App. D.1)."""

from __future__ import annotations

import numpy as np
import pytest

from ppaudit.models import teachers as tc
from ppaudit.data import load_dataset
from ppaudit.mechanisms.partition import teacher_training_indices


@pytest.fixture(scope="module")
def digits():
    xtr, ytr, xte, yte = load_dataset("digits")
    return xtr[:400], ytr[:400], xte[:20], yte[:20]


def test_pate_votes_deterministic_and_independent_of_n_jobs(digits):
    xtr, ytr, xq, _ = digits
    a = tc.pate_teacher_votes("logreg", xtr, ytr, xq, 4, 2, 10, seed=5)
    b = tc.pate_teacher_votes("logreg", xtr, ytr, xq, 4, 2, 10, seed=5, n_jobs=2)
    np.testing.assert_array_equal(a["votes_S"], b["votes_S"])
    np.testing.assert_array_equal(a["assignments"], b["assignments"])
    assert a["votes_S"].shape == (2, 4, 20)
    assert not np.array_equal(a["assignments"][0], a["assignments"][1])  # fresh partitions
    # logreg teachers on 100 digits are far better than chance
    assert np.mean(a["votes_S"] == digits[3][None, None, :]) > 0.6


def test_pate_canary_teacher_reuses_partition_and_seed(digits):
    xtr, ytr, xq, _ = digits
    k, ng = 4, 3
    S = tc.pate_teacher_votes("logreg", xtr, ytr, xq, k, ng, 10, seed=1)
    # A canary that duplicates a point already in the training set changes nothing for
    # logistic regression only through its weight; use a far-away point with a new label
    # to check that exactly one teacher per instantiation is trained.
    cx = np.ones((2,) + xtr.shape[1:], dtype=np.float32)
    cy = np.array([3, 4])
    out = tc.pate_canary_votes("logreg", xtr, ytr, xq, k, ng, 10, cx, cy, seed=1, canary_keys=["a", "b"])
    assert out["votes_S_prime"].shape == (2, ng, 20) and out["slots"].shape == (2, ng)
    again = tc.pate_canary_votes("logreg", xtr, ytr, xq, k, ng, 10, cx[:1], cy[:1], seed=1, canary_keys=["a"])
    np.testing.assert_array_equal(again["votes_S_prime"][0], out["votes_S_prime"][0])  # keyed seeding
    # The canary teacher is trained on the slot's cell of the same instantiation plus the canary.
    g, c = 0, 0
    j = out["slots"][c, g]
    idx = teacher_training_indices(S["assignments"][g], j)
    ref = tc.train_and_predict("logreg", np.concatenate([xtr[idx], cx[:1]]), np.concatenate([ytr[idx], cy[:1]]), xq, 10, np.random.SeedSequence(0))
    np.testing.assert_array_equal(out["votes_S_prime"][c, g], ref)


def test_capc_votes_fixed_partition(digits):
    xtr, ytr, xq, _ = digits
    S = tc.capc_teacher_votes("logreg", xtr, ytr, xq, 4, 2, 10, seed=0)
    np.testing.assert_array_equal(S["votes_S"][0], S["votes_S"][1])  # no training randomness
    P = tc.capc_canary_votes("logreg", xtr, ytr, xq, 4, 2, 10, xq[:1], np.array([1]), seed=0)
    assert P["votes_S_prime"].shape == (1, 2, 20)


def test_mlp_trains_and_is_seeded(digits):
    xtr, ytr, xq, yq = digits
    prm = {"hidden": 32}
    a = tc.train_and_predict("mlp", xtr[:200], ytr[:200], xq, 10, 7, prm)
    b = tc.train_and_predict("mlp", xtr[:200], ytr[:200], xq, 10, 7, prm)
    np.testing.assert_array_equal(a, b)
    assert np.mean(a == yq) > 0.5


@pytest.mark.parametrize("name,shape", [("lenet5", (1, 28, 28)), ("wrn16-4", (3, 32, 32)), ("wrn16-4", (1, 28, 28))])
def test_paper_networks_forward_and_train_step(name, shape):
    import torch

    net = tc.build_torch_model(name, shape, 10)
    with torch.no_grad():
        assert net(torch.zeros((2,) + shape)).shape == (2, 10)
    rng = np.random.default_rng(0)
    x = rng.random((8,) + shape, dtype=np.float32)
    y = rng.integers(0, 10, 8)
    pred = tc.train_and_predict(name, x, y, x[:3], 10, 0, {"epochs": 1, "batch_size": 4})
    assert pred.shape == (3,) and pred.dtype == np.int64


def test_defaults_follow_paper_and_errors():
    for name in ("lenet5", "wrn16-4"):
        assert tc.DEFAULT_PARAMS[name]["lr"] == 0.03 and tc.DEFAULT_PARAMS[name]["batch_size"] == 16
    with pytest.raises(ValueError, match="unknown teacher model"):
        tc.train_and_predict("svm", np.zeros((2, 1, 2, 2)), np.array([0, 1]), np.zeros((1, 1, 2, 2)), 2, 0)
    with pytest.raises(ValueError, match="unknown parameter 'lr'"):
        tc.train_and_predict("logreg", np.zeros((2, 1, 2, 2)), np.array([0, 1]), np.zeros((1, 1, 2, 2)), 2, 0, {"lr": 1})
