"""The reference-model job of the label-DP audit and the files both model jobs write
(ppaudit.experiments.labeldp.models, observational paper §6.2).

* train_reference_model fits on the reference half with the *true* labels: on well separated
  classes it is accurate on the target half; claimed ε is ∞; metrics match the probabilities
  (accuracy by hand, log-loss by sklearn); the same seed gives the same bytes.
* write_model_outputs round-trips the arrays, writes ∞ as "inf", leaves the result untouched
  and rejects a result without probabilities.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.metrics import log_loss as sk_log_loss

from ppaudit.experiments.labeldp.data import LabelDPData
from ppaudit.experiments.labeldp.models import train_reference_model, write_model_outputs

MODEL = {"hidden": 16, "epochs": 15, "lr": 0.01, "batch_size": 32}


def _data(seed: int = 0) -> LabelDPData:
    """Three Gaussian blobs in 4-d, far apart: a model fitted on true labels is near perfect."""
    rng = np.random.default_rng(seed)
    centres = np.array([[6, 0, 0, 0], [0, 6, 0, 0], [0, 0, 6, 0]], dtype=float)

    def draw(n):
        y = rng.integers(0, 3, size=n)
        return centres[y] + rng.normal(size=(n, 4)), y

    (xr, yr), (xt, yt), (xs, ys) = draw(150), draw(120), draw(90)
    return LabelDPData("image", 3, xr, yr, xt, yt, xs, ys)


@pytest.mark.filterwarnings("ignore:The y_prob values do not sum to one")
def test_reference_model_fits_true_labels():
    data = _data()
    res = train_reference_model(data, {"model": MODEL}, np.random.default_rng(1))
    assert set(res) == {"target_probs", "test_probs", "claimed_epsilon", "test_accuracy", "test_log_loss"}
    assert res["target_probs"].shape == (120, 3) and res["test_probs"].shape == (90, 3)
    assert_allclose(res["target_probs"].sum(axis=1), 1.0, rtol=0, atol=1e-6)
    assert res["claimed_epsilon"] == float("inf")
    # M' is trained on the reference half's true labels: it classifies the target half well.
    assert np.mean(res["target_probs"].argmax(1) == data.y_target) > 0.95
    assert res["test_accuracy"] == pytest.approx(np.mean(res["test_probs"].argmax(1) == data.y_test), abs=0)
    assert res["test_log_loss"] == pytest.approx(sk_log_loss(data.y_test, res["test_probs"], labels=[0, 1, 2]), rel=1e-6)


def test_reference_model_same_seed_same_bytes():
    data = _data()
    a = train_reference_model(data, {"model": MODEL}, np.random.default_rng(7))
    b = train_reference_model(data, {"model": MODEL}, np.random.default_rng(7))
    assert a["test_probs"].tobytes() == b["test_probs"].tobytes()
    with pytest.raises(KeyError):
        train_reference_model(data, {}, np.random.default_rng(7))


def test_write_model_outputs_round_trip(tmp_path):
    data = _data()
    rng = np.random.default_rng(3)
    res = {"target_probs": rng.dirichlet(np.ones(3), 120), "test_probs": rng.dirichlet(np.ones(3), 90),
           "claimed_epsilon": float("inf"), "test_accuracy": 0.5, "sigma": float("nan"), "algo_extra": "x"}  # fmt: skip
    before = dict(res)
    metrics = write_model_outputs(res, data, tmp_path / "m.npz", tmp_path / "m.json")
    assert res.keys() == before.keys()  # not modified
    with np.load(tmp_path / "m.npz") as z:
        assert sorted(z.files) == ["target_probs", "test_probs", "y_target", "y_test"]
        assert_array_equal(z["y_target"], data.y_target)
        assert_array_equal(z["y_test"], data.y_test)
        assert z["test_probs"].tobytes() == res["test_probs"].tobytes()
    written = json.loads((tmp_path / "m.json").read_text())
    assert written == metrics == {"claimed_epsilon": "inf", "test_accuracy": 0.5, "sigma": "nan", "algo_extra": "x"}
    with pytest.raises(ValueError, match=r"missing \['test_probs'\]"):
        write_model_outputs({"target_probs": res["target_probs"]}, data, tmp_path / "x.npz", tmp_path / "x.json")
