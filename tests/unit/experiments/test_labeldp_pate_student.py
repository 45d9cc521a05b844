"""The PATE student's label smoothing and the audit's measured causes (issue 34 §2): closed forms of
:func:`ppaudit.experiments.labeldp.release.smoothed_targets`, :func:`~ppaudit.experiments.labeldp.release.pate_label_reach`
and :func:`ppaudit.experiments.labeldp.tables.fit_gaps`, the mechanism's answers unchanged by the smoothing,
and the notes built from them (ms to ~2 s)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dataset_fixtures import toy_labeldp_data as _data  # tests/dataset_fixtures.py
from ppaudit.experiments.labeldp.release import pate_label_reach, release_labels, smoothed_targets
from ppaudit.experiments.labeldp.tables import fit_gaps, stand_in_measure

SETTINGS = {"model": {"hidden": 16, "epochs": 2, "lr": 0.01, "batch_size": 64}, "delta": 1e-5, "pate_queries": 60, "pate_teachers": 5,
            "teacher_model": {"epochs": 20, "lr": 0.1}, "pate_student": "plain"}  # fmt: skip




def test_smoothed_targets_closed_form_and_errors():
    out = smoothed_targets(np.array([0, 2, 1]), 3, 0.3)
    np.testing.assert_allclose(out, [[0.8, 0.1, 0.1], [0.1, 0.1, 0.8], [0.1, 0.8, 0.1]])
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
    np.testing.assert_array_equal(smoothed_targets(np.array([1, 0]), 2, 0.0), [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        smoothed_targets(np.array([0]), 2, 1.0)
    with pytest.raises(ValueError, match="classes in"):
        smoothed_targets(np.array([0, 2]), 2, 0.1)


def test_pate_label_reach_closed_form():
    """Three teachers, four binary queries; the own teacher of each query given."""
    tv = np.array([[0, 1, 1, 0],   # teacher 0
                   [0, 0, 1, 1],   # teacher 1
                   [1, 0, 1, 0]])  # teacher 2  # fmt: skip
    own = np.array([0, 1, 2, 1])
    y = np.array([0, 0, 0, 1])
    r = pate_label_reach(tv, own, y, num_points=40)
    assert r["pate_query_share"] == pytest.approx(0.1)
    # own votes: 0 (right), 0 (right), 1 (wrong), 1 (right)
    assert r["pate_own_teacher_agreement"] == pytest.approx(3 / 4)
    # the other two teachers right: q0 1/2, q1 1/2, q2 0/2, q3 0/2
    assert r["pate_other_teacher_agreement"] == pytest.approx((0.5 + 0.5 + 0 + 0) / 4)
    # counts (class 0, class 1): q0 2-1 with the own vote a 0 -> moved, 1-2: pivotal; q1 the same; q2 0-3: not;
    # q3 2-1 with the own vote the lone 1 -> moved, 3-0: the plurality stays 0, not pivotal
    assert r["pate_pivotal_share"] == pytest.approx(2 / 4)
    with pytest.raises(ValueError, match="share the query axis"):
        pate_label_reach(tv, own[:3], y, 40)
    with pytest.raises(ValueError, match="query_teacher must lie"):
        pate_label_reach(tv, np.array([0, 1, 3, 1]), y, 40)
    with pytest.raises(ValueError, match="num_points"):
        pate_label_reach(tv, own, y, 3)


def test_teacher_votes_add_up_to_the_histograms():
    from ppaudit.mechanisms.labeldp import pate_label_dp

    rng = np.random.default_rng(1)
    x = rng.normal(size=(60, 3))
    y = (x[:, 0] > 0).astype(int)

    def fit(xi, yi, xq):
        w = np.linalg.lstsq(np.c_[xi, np.ones(len(xi))], yi - 0.5, rcond=None)[0]
        s = np.c_[xq, np.ones(len(xq))] @ w
        return np.stack([-s, s], axis=1)

    rel = pate_label_dp(x, y, x[:20], 2, 4, 1.0, fit, rng)
    tv = rel.details["teacher_votes"]
    assert tv.shape == (4, 20)
    counts = np.stack([np.bincount(tv[:, j], minlength=2) for j in range(20)])
    np.testing.assert_array_equal(counts, rel.details["votes"])


def test_smoothing_changes_the_student_targets_not_the_answers():
    """The same generator gives the same answers with and without smoothing (post-processing);
    the FixMatch student refuses it."""
    data = _data()
    xa, hard, eps_a, info_a = release_labels(data, "pate", 2.0, SETTINGS, np.random.default_rng(3))
    xb, soft, eps_b, info_b = release_labels(data, "pate", 2.0, dict(SETTINGS, pate_student_smoothing=0.2), np.random.default_rng(3))
    assert hard.ndim == 1 and soft.shape == (hard.size, 4)
    np.testing.assert_array_equal(soft.argmax(axis=1), hard)
    np.testing.assert_allclose(soft.max(axis=1), 0.8 + 0.05)
    assert eps_a == eps_b and info_b["pate_student_smoothing"] == 0.2 and info_a["pate_student_smoothing"] == 0.0
    for key in ("pate_query_share", "pate_own_teacher_agreement", "pate_other_teacher_agreement", "pate_pivotal_share"):
        assert info_a[key] == info_b[key] and 0 <= info_a[key] <= 1
    assert info_a["pate_query_share"] == pytest.approx(60 / 150)
    with pytest.raises(ValueError, match="FixMatch"):
        release_labels(data, "pate", 2.0, dict(SETTINGS, pate_student="fixmatch", pate_student_smoothing=0.2), np.random.default_rng(3))
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        release_labels(data, "pate", 2.0, dict(SETTINGS, pate_student_smoothing=1.5), np.random.default_rng(3))


def test_fit_gaps_closed_form_and_label_independent_model():
    y_t, y_s = np.array([0, 1, 1, 0]), np.array([1, 1, 0, 0])
    memorised = np.where(np.eye(2)[y_t] > 0, 0.9, 0.1)  # 0.9 on each canary's own label
    flat = np.full((4, 2), 0.5)
    g = fit_gaps(y_t, memorised, flat, y_s, flat, flat)
    assert g["canary_log_loss"] == pytest.approx(-np.log(0.9))
    assert g["memorisation_gap"] == pytest.approx(np.log(2) + np.log(0.9))
    assert g["reference_memorisation_gap"] == pytest.approx(0.0)
    assert g["base_rate_entropy"] == pytest.approx(np.log(2))
    # a model whose outputs ignore the labels (a fixed function of x) on two i.i.d. halves: gap ~ 0 (statistical: 4 SE)
    rng = np.random.default_rng(7)
    n = 20000
    x = rng.normal(size=2 * n)
    p1 = 1 / (1 + np.exp(-2 * x))
    y = (rng.random(2 * n) < p1).astype(int)
    probs = np.stack([1 - p1, p1], axis=1)
    g = fit_gaps(y[:n], probs[:n], probs[:n], y[n:], probs[n:], probs[n:])
    losses = -np.log(probs[np.arange(2 * n), y])
    se = losses.std() * np.sqrt(2 / n)
    assert abs(g["memorisation_gap"]) < 4 * se


def test_stand_in_measure_names_the_measured_causes():
    row = pd.Series(dict(algo="pate", test_accuracy=0.84, test_log_loss=0.39, test_confidence=0.86, reference_test_log_loss=0.301, base_rate_entropy=0.568,
                         memorisation_gap=0.001, reference_memorisation_gap=-0.002, pate_query_share=0.2, pate_own_teacher_agreement=0.9,
                         pate_other_teacher_agreement=0.85, pate_pivotal_share=0.031, pate_student_smoothing=0.2))  # fmt: skip
    text = stand_in_measure(row)
    assert "non-private M′ (true labels, reference half) test log-loss 0.301 (ours +0.089 from it), base-rate entropy 0.568" in text
    assert "better than test labels by +0.001 nats of log-loss (M′, which saw neither: -0.002)" in text
    assert "20 % of canaries are queries, their own teacher votes their label on 90 % (the other teachers 85 %)" in text
    assert "decides the noise-free plurality on 3.1 %" in text and "label-smoothed by a = 0.2" in text
    assert "label-smoothed" not in stand_in_measure(row.drop("pate_student_smoothing"))
