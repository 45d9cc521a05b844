"""One job per label-DP dataset: every target model trained (ppaudit.experiments.labeldp.models.train_target_models),
bundled (write/read_model_bundle) and audited (ppaudit.experiments.labeldp.tables.audit_target_models) —
each model as the one-model-per-job path made it (observational paper §6.2)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dataset_fixtures import toy_labeldp_data as _data  # tests/dataset_fixtures.py
from ppaudit.experiments.labeldp.release import parse_epsilon, train_target_model
from ppaudit.experiments.labeldp.models import model_name, read_model_bundle, train_target_models, write_model_bundle
from ppaudit.experiments.labeldp.tables import audit_model, audit_target_models, stand_in_measure
from ppaudit.rng import job_generator

SETTINGS = {"model": {"hidden": 16, "epochs": 2, "lr": 0.01, "batch_size": 64}, "delta": 1e-5, "prior_size": 50, "alibi_prior": "iterative"}
AUDIT = {"repetitions": 3, "t": 2, "fixed_fraction": 0.01, "delta": 1e-5, "confidence": 0.95, "rmia_a": 0.3}
MODELS = [("lp_1st", "inf"), ("lp_1st", "2"), ("lp_1st_prior", "2"), ("alibi", "4")]




@pytest.fixture(scope="module")
def trained():
    data = _data()
    return data, train_target_models(data, MODELS, SETTINGS, 11)


def test_each_model_is_the_one_job_model(trained):
    data, res = trained
    assert list(res) == [model_name(a, e) for a, e in MODELS]
    for algo, eps in MODELS:
        alone = train_target_model(data, algo, parse_epsilon(eps), SETTINGS, job_generator(11, "labeldp_target", "image", algo, eps))
        got = res[model_name(algo, eps)]
        assert got["claimed_epsilon"] == alone["claimed_epsilon"] and got["train_size"] == alone["train_size"]
        assert got.get("alibi_prior") == alone.get("alibi_prior")
        # same release and seed; only the stacked products round differently
        assert np.max(np.abs(got["test_probs"] - alone["test_probs"])) < 1e-4
        assert np.max(np.abs(got["target_probs"] - alone["target_probs"])) < 1e-4
    # planted bug: a model trained with another model's generator differs
    other = train_target_model(data, "lp_1st", 2.0, SETTINGS, job_generator(11, "labeldp_target", "image", "lp_1st", "inf"))
    assert np.max(np.abs(other["test_probs"] - res["lp_1st_eps2"]["test_probs"])) > 1e-3
    with pytest.raises(ValueError, match="appear once"):
        train_target_models(data, [("lp_1st", "2"), ("lp_1st", "2")], SETTINGS, 11)


def test_bundle_round_trip_and_audit_rows(trained, tmp_path):
    data, res = trained
    npz, js = tmp_path / "models.npz", tmp_path / "models.json"
    metrics = write_model_bundle(res, data, npz, js)
    assert metrics["lp_1st_epsinf"]["claimed_epsilon"] == "inf"  # JSON has no infinity
    back = read_model_bundle(npz, js)
    assert sorted(back) == sorted(res)  # the JSON sorts its keys; the audit follows its models list
    for name in res:
        assert np.array_equal(back[name]["test_probs"], res[name]["test_probs"]) and np.array_equal(back[name]["y_target"], data.y_target)
    first = write_model_bundle(res, data, tmp_path / "again.npz", tmp_path / "again.json")
    assert first == metrics and (tmp_path / "again.npz").read_bytes() == npz.read_bytes()  # same input, same bytes
    rng = np.random.default_rng(3)
    ref = {"target_probs": rng.dirichlet(np.ones(4), len(data.y_target)), "test_probs": rng.dirichlet(np.ones(4), len(data.y_test))}
    rows = audit_target_models(MODELS, back, ref, "image", AUDIT, 5)
    assert len(rows) == 3 * len(MODELS) and list(rows.columns[:3]) == ["dataset", "algo", "epsilon"]
    for algo, eps in MODELS[1:3]:
        m = back[model_name(algo, eps)]
        alone = audit_model(m["y_target"], m["target_probs"], ref["target_probs"], m["y_test"], m["test_probs"], ref["test_probs"], AUDIT,
                            job_generator(5, "labeldp_audit", "image", algo, eps))  # fmt: skip
        mine = rows[(rows["algo"] == algo) & (rows["epsilon"] == parse_epsilon(eps))].reset_index(drop=True)
        pd.testing.assert_frame_equal(mine[list(alone.columns)], alone)
        assert (mine["claimed_epsilon"] == float(m["claimed_epsilon"])).all()
        assert mine["test_confidence"].iloc[0] == pytest.approx(np.mean(np.max(m["test_probs"], axis=1)))
        # the measured numbers paper_comparison quotes beside a far-off row
        measure = stand_in_measure(mine.iloc[0])
        assert f"test accuracy {100 * m['test_accuracy']:.1f} % at mean confidence" in measure and "teachers" not in measure
    with pytest.raises(ValueError, match="not in the bundle"):
        audit_target_models([("pate", "1")], back, ref, "image", AUDIT, 5)
    js.write_text(json.dumps({"x_eps1": {}}))
    with pytest.raises(ValueError, match="holds models"):
        read_model_bundle(npz, js)
    with pytest.raises(ValueError, match="at least one model"):
        write_model_bundle({}, data, npz, js)


def test_pate_label_quality_closed_form_and_release():
    """The PATE diagnostics (ours): closed form on a crafted vote matrix, then on a real release (< 1 s)."""
    from ppaudit.experiments.labeldp.release import pate_label_quality, release_labels

    votes = np.array([[3, 1, 0], [0, 4, 0], [2, 0, 2]])
    q = pate_label_quality(votes, np.array([0, 2, 2]), np.array([0, 1, -1]), np.array([True, True, False]))
    assert q["pate_teacher_accuracy"] == pytest.approx((3 / 4 + 0 / 4 + 2 / 4) / 3)
    assert q["pate_plurality_accuracy"] == pytest.approx(1 / 3)  # argmax of a tie is the first class
    assert q["pate_label_accuracy"] == pytest.approx(1 / 2)
    assert q["pate_consensus"] == pytest.approx((3 / 4 + 1 + 2 / 4) / 3)
    with pytest.raises(ValueError, match="share one length"):
        pate_label_quality(votes, np.array([0, 1]), np.array([0, 1, 1]), np.ones(3, bool))
    data = _data()
    settings = dict(SETTINGS, pate_queries=60, pate_teachers=5, teacher_model={"epochs": 20, "lr": 0.1}, pate_student="plain")
    _, ytr, _, info = release_labels(data, "pate", np.inf, settings, np.random.default_rng(3))
    # ε = ∞: every query answered by the noise-free plurality (chance: 25 %)
    assert info["pate_answered"] == 60 and info["pate_label_accuracy"] == pytest.approx(info["pate_plurality_accuracy"])
    assert info["pate_plurality_accuracy"] > 0.6 and 0.25 < info["pate_teacher_accuracy"] <= 1
    # teacher_model reaches the teachers only: the student's 2 epochs leave them near chance
    _, _, _, weak = release_labels(data, "pate", np.inf, dict(settings, teacher_model={}), np.random.default_rng(3))
    assert weak["pate_teacher_accuracy"] < info["pate_teacher_accuracy"] - 0.1
    _, _, _, noisy = release_labels(data, "pate", 0.5, settings, np.random.default_rng(3))
    assert noisy["pate_label_accuracy"] < info["pate_label_accuracy"]  # σ ≫ 5 votes: answers near chance
    row = dict(info, algo="pate", test_accuracy=0.7, test_log_loss=0.9, test_confidence=0.95)
    text = stand_in_measure(pd.Series(row))
    assert text.startswith("test accuracy 70.0 % at mean confidence 95.0 %; test log-loss 0.900; teachers ")
    assert f"released answers {100 * info['pate_label_accuracy']:.0f} % right (60 answered, σ = 1e-06)" in text


def test_pate_data_dependent_calibration_against_the_accountant():
    """The paper's σ (data-dependent ε = target, Papernot et al. 2018) against the library's accountant,
    beside ours (data-independent); then through the release and the table columns (~2 s)."""
    from ppaudit.accounting import confident_gnmax_rdp, gnmax_rdp_data_dependent, rdp_to_dp
    from ppaudit.experiments.labeldp.release import pate_epsilon_data_dependent, pate_sigma_for_data_dependent_epsilon, pate_sigma_for_epsilon, release_labels
    from ppaudit.experiments.labeldp.tables import build_table
    from ppaudit.mechanisms.labeldp import DEFAULT_ORDERS as A

    rng = np.random.default_rng(4)
    votes = np.stack([np.bincount(np.where(rng.random(100) < p, 0, rng.integers(1, 10, 100)), minlength=10) for p in rng.uniform(0.2, 0.95, 200)])
    for eps in (10.0, 2.0):
        s = pate_sigma_for_data_dependent_epsilon(eps, votes, 1e-5)
        direct = float(rdp_to_dp(gnmax_rdp_data_dependent(votes, s, A).sum(axis=0), A, 1e-5))
        assert direct == pytest.approx(eps, rel=1e-6) and pate_epsilon_data_dependent(votes, s, 1e-5) == direct
        assert pate_epsilon_data_dependent(votes, s * 0.99, 1e-5) > eps  # the smallest σ that meets ε
        s_di = pate_sigma_for_epsilon(eps, len(votes), 1e-5)  # data-dependent RDP ≤ data-independent: never more noise than ours
        assert s < 0.8 * s_di if eps == 10.0 else s <= s_di * (1 + 1e-9)  # σ ≈ 43 at ε = 2: gaps of ≤ 90 votes save nothing
    s = pate_sigma_for_data_dependent_epsilon(2.0, votes, 1e-5, 60.0, 120.0)
    direct = float(rdp_to_dp(confident_gnmax_rdp(votes, 60.0, 120.0, s, A).sum(axis=0), A, 1e-5))
    assert direct == pytest.approx(2.0, rel=1e-6)
    with pytest.raises(ValueError, match="no GNMax sigma"):
        pate_sigma_for_data_dependent_epsilon(0.5, votes, 1e-5, 60.0, 5.0)  # the checks alone cost more
    with pytest.raises(ValueError, match="epsilon must be finite"):
        pate_sigma_for_data_dependent_epsilon(np.inf, votes, 1e-5)

    data = _data()
    settings = dict(SETTINGS, pate_queries=60, pate_teachers=5, teacher_model={"epochs": 20, "lr": 0.1}, pate_student="plain")
    with pytest.raises(ValueError, match="unknown pate_calibration 'x'"):
        release_labels(data, "pate", 2.0, dict(settings, pate_calibration="x"), np.random.default_rng(3))
    _, _, claimed, info = release_labels(data, "pate", 8.0, dict(settings, pate_calibration="data_dependent"), np.random.default_rng(3))
    _, _, claimed_di, info_di = release_labels(data, "pate", 8.0, settings, np.random.default_rng(3))
    # 5 teachers: gaps of ≤ 5 votes, so the data-dependent ε saves (almost) nothing here
    assert claimed == pytest.approx(8.0, rel=1e-6) and info["epsilon_data_independent"] >= claimed * (1 - 1e-9) and info["pate_calibration"] == "data_dependent"
    assert claimed_di == pytest.approx(8.0, rel=1e-3) and info["pate_sigma"] <= info_di["pate_sigma"] * (1 + 1e-9)
    rows = [dict(dataset="image", algo="pate", epsilon=8.0, attack="lia", claimed_epsilon=c, epsilon_sweep_mean=0.1, epsilon_sweep_std=0.0,
                 repetitions=1, num_canaries=10, test_accuracy=0.5, test_log_loss=1.0, **{k: i[k] for k in ("pate_calibration", "epsilon_data_independent")})
            for c, i in ((claimed, info), (claimed_di, info_di))]  # fmt: skip
    table = build_table("obs_table1", pd.DataFrame(rows))
    assert sorted(table["procedure"]) == ["ours", "paper"]
    paper = table[table["procedure"] == "paper"].iloc[0]
    assert paper["claimed_epsilon"] == pytest.approx(8.0) and paper["claimed_epsilon_data_independent"] == pytest.approx(info["epsilon_data_independent"])
