"""Stacked training of the label-DP MLPs (ppaudit.models.soft_mlp) and the memorisation-game runs
(ppaudit.experiments.labeldp.memorization; Malek et al. 2021, App. B, Game 3)."""

from __future__ import annotations

import numpy as np
import pytest

from ppaudit.experiments.labeldp.data import LabelDPData
from ppaudit.models.soft_label import mlp_fit_predict_soft
from ppaudit.experiments.labeldp.memorization import (
    fit_released_block,
    memorization_runs,
    run_memorization_games,
)
from ppaudit.models.soft_mlp import soft_mlp_fit_predict_block

K = 4
MODEL = {"hidden": 16, "epochs": 3, "lr": 0.003, "batch_size": 32}


def _problem(seed=0, n=120, d=6, b=3):
    rng = np.random.default_rng(seed)
    xs = [rng.normal(size=(n, d)).astype(np.float32) for _ in range(b)]
    ys = [rng.integers(0, K, n) for _ in range(b)]
    ys[1] = rng.dirichlet(np.ones(K), n)  # soft labels
    pred = [[rng.normal(size=(20, d)).astype(np.float32), xs[i][:7]] for i in range(b)]
    return xs, ys, pred


def _shrink(probs):
    """An iterative-prior stand-in: soft labels pulled towards uniform from the model's probabilities."""
    return 0.5 * probs + 0.5 / K


def test_block_is_each_model_trained_alone():
    xs, ys, pred = _problem()
    fns = [None, _shrink, _shrink]
    block = soft_mlp_fit_predict_block(xs, ys, pred, K, MODEL, [11, 12, 13], fns)
    for i in range(3):
        alone = mlp_fit_predict_soft(xs[i], ys[i], pred[i], K, MODEL, [11, 12, 13][i], soft_label_fn=fns[i])
        for a, b in zip(alone, block[i]):
            assert a.shape == b.shape and np.allclose(a.sum(1), 1.0)
            # same initialisation, batches, soft labels and Adam; fused Adam and batched products round differently
            assert np.max(np.abs(a - b)) < 1e-4
    # planted bug: another model's seed is a different model
    other = mlp_fit_predict_soft(xs[0], ys[0], pred[0], K, MODEL, 99)
    assert np.max(np.abs(other[0] - block[0][0])) > 1e-3


def test_block_is_deterministic_and_independent_of_its_neighbours():
    xs, ys, pred = _problem(1)
    a = soft_mlp_fit_predict_block(xs, ys, pred, K, MODEL, [1, 2, 3], [None, _shrink, None])
    b = soft_mlp_fit_predict_block(xs, ys, pred, K, MODEL, [1, 2, 3], [None, _shrink, None])
    assert all(np.array_equal(p, q) for u, v in zip(a, b) for p, q in zip(u, v))
    alone = soft_mlp_fit_predict_block(xs[1:2], ys[1:2], pred[1:2], K, MODEL, [2], [_shrink])
    assert np.max(np.abs(alone[0][0] - a[1][0])) < 1e-5


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"x_train": []}, "at least one model"),
        ({"seeds": [1]}, "one entry per model"),
        ({"num_classes": 1}, "num_classes"),
        ({"model": dict(MODEL, epochs=0)}, "epochs"),
    ],
)
def test_block_rejects_bad_input(kwargs, match):
    xs, ys, pred = _problem(2, b=2)
    args = dict(x_train=xs, y_train=ys, x_predict=pred, num_classes=K, model=MODEL, seeds=[1, 2])
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        soft_mlp_fit_predict_block(**args)
    with pytest.raises(ValueError, match="same shape"):
        soft_mlp_fit_predict_block([xs[0], xs[1][:-1]], ys, pred, K, MODEL, [1, 2])
    with pytest.raises(ValueError, match=r"lie in \[0, 4\)"):
        soft_mlp_fit_predict_block(xs, [ys[0] + K, ys[1]], pred, K, MODEL, [1, 2])


def test_memorization_runs_cover_tables_5_and_6_once():
    levels = {"high": {"alibi": "8", "agibi": "19"}, "low": {"alibi": "1", "agibi": "19"}}
    runs = memorization_runs(levels, 2, 100, 50)
    assert runs == [("alibi", "8", "n1000", 100), ("alibi", "8", "g0", 50), ("alibi", "8", "g1", 50), ("agibi", "19", "n1000", 100),
                    ("alibi", "1", "n1000", 100), ("alibi", "1", "g0", 50), ("alibi", "1", "g1", 50)]  # fmt: skip
    with pytest.raises(ValueError, match="games"):
        memorization_runs(levels, 0, 100, 50)
    with pytest.raises(ValueError, match="'agibi'"):
        memorization_runs({"x": {"alibi": "1"}}, 1, 10, 5)


def _image_data(seed=0, n=200, d=8, k=10):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, d)) * 3
    y = rng.integers(0, k, 3 * n)
    x = (centres[y] + rng.normal(size=(3 * n, d))).astype(np.float32)
    return LabelDPData("image", k, x[:n], y[:n], x[n : 2 * n], y[n : 2 * n], x[2 * n :], y[2 * n :])


def test_memorization_games_are_independent_of_the_block():
    data = _image_data()
    settings = {"model": {"hidden": 16, "epochs": 2, "lr": 0.01, "batch_size": 64}, "delta": 1e-5, "alibi_prior": "iterative", "agibi_calibration": "rdp"}
    runs = [("alibi", "8", "n1000", 30), ("alibi", "8", "g0", 10), ("agibi", "19", "n1000", 30)]
    together = run_memorization_games(data, runs, settings, 5)
    alone = run_memorization_games(data, runs[2:], settings, 5)[0]
    # the canaries and the release are the run's own: identical whatever is trained with it
    for key in ("canary_labels", "original_labels", "alternative_labels", "claimed_epsilon", "sigma"):
        assert np.array_equal(together[2][key], alone[key]), key
    assert np.max(np.abs(together[2]["confidences"] - alone["confidences"])) < 1e-4
    assert together[0]["confidences"].shape == (30, 10) and together[1]["confidences"].shape == (10, 10)
    assert together[0]["alibi_prior"] == "iterative" and together[2]["agibi_calibration"] == "rdp"
    assert 0.0 <= together[0]["test_accuracy"] <= 1.0
    with pytest.raises(ValueError, match="'alibi' or 'agibi'"):
        run_memorization_games(data, [("lp_1st", "8", "n1000", 10)], settings, 5)


def test_fit_released_block_applies_corrections_and_checks_lengths():
    data = _image_data(1)
    settings = {"model": {"hidden": 8, "epochs": 1, "lr": 0.01, "batch_size": 64}}
    flip = lambda p: p[:, ::-1]
    rel = [(data.x_target, data.y_target, {}), (data.x_target, data.y_target, {"_correction": flip})]
    out = fit_released_block(data, rel, [[data.x_test]] * 2, settings, [3, 3])
    assert np.allclose(out[1][0], out[0][0][:, ::-1])
    with pytest.raises(ValueError, match="one entry each"):
        fit_released_block(data, rel, [[data.x_test]], settings, [3, 3])


def test_memorization_blocks_give_the_same_bytes_on_any_number_of_processes():
    """``blocks`` fixes the numbers; ``workers`` (processes) does not change a byte."""
    data = _image_data(1)
    settings = {"model": {"hidden": 16, "epochs": 2, "lr": 0.01, "batch_size": 64}, "delta": 1e-5, "alibi_prior": "iterative", "agibi_calibration": "rdp"}
    runs = [("alibi", "8", "n1000", 30), ("alibi", "8", "g0", 10), ("agibi", "19", "n1000", 30)]
    serial = run_memorization_games(data, runs, settings, 5, blocks=2, workers=1)
    parallel = run_memorization_games(data, runs, settings, 5, blocks=2, workers=2)
    assert len(serial) == len(parallel) == 3
    for a, b in zip(serial, parallel):
        assert a.keys() == b.keys()
        for key in a:
            assert np.array_equal(np.asarray(a[key]), np.asarray(b[key]), equal_nan=np.asarray(a[key]).dtype.kind == "f"), key
    # block 2 = the last run alone: the same as training it alone
    alone = run_memorization_games(data, runs[2:], settings, 5)[0]
    assert np.array_equal(serial[2]["confidences"], alone["confidences"])
    with pytest.raises(ValueError, match="blocks"):
        run_memorization_games(data, runs, settings, 5, blocks=0)
