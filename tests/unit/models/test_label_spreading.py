"""Label-spreading teachers (:mod:`ppaudit.models.label_spreading`, issue 34 §2): the block of many
teachers equals sklearn's ``LabelSpreading`` per teacher, a teacher depends on its own labels only
(PATE's sensitivity), the PATE-FM release uses them, and bad arguments are named (ms to ~1 s)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dataset_fixtures import toy_labeldp_data  # tests/dataset_fixtures.py
from ppaudit.models.label_spreading import knn_affinity, knn_spreading_graph, label_spreading_block


def _toy(seed=0, n=240, k=3):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, 4)) * 3
    y = rng.integers(0, k, n)
    return centres[y] + rng.normal(size=(n, 4)), y, rng


@pytest.mark.parametrize("neighbors, alpha, iterations", [(5, 0.9, 7), (8, 0.99, 30), (3, 0.2, 1)])
def test_block_equals_sklearn_label_spreading_per_teacher(neighbors, alpha, iterations):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.semi_supervised import LabelSpreading

    x, y, rng = _toy()
    parts = np.array_split(rng.permutation(len(y)), 5)
    q = rng.choice(len(y), 40, replace=False)
    out = label_spreading_block(x, parts, [y[p] for p in parts], q, 3, neighbors=neighbors, alpha=alpha, iterations=iterations)
    assert len(out) == 5
    for p, probs in zip(parts, out):
        partial = np.full(len(y), -1)
        partial[p] = y[p]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # tol = 0: exactly max_iter steps
            ref = LabelSpreading(kernel=lambda a, b: knn_affinity(a, neighbors), alpha=alpha, max_iter=iterations, tol=0).fit(x, partial)
        want = np.zeros((len(q), 3))
        want[:, ref.classes_] = ref.label_distributions_[q]
        reached = want.sum(axis=1) > 0  # sklearn leaves a row no label reached at zero; ours is uniform there
        np.testing.assert_allclose(probs[reached], want[reached], atol=1e-12)
        np.testing.assert_allclose(probs[~reached], 1 / 3)
        np.testing.assert_allclose(probs.sum(axis=1), 1.0)


def test_affinity_is_symmetric_with_self_loops_and_graph_has_zero_diagonal():
    x, _, _ = _toy(n=60)
    w = knn_affinity(x, 4)
    assert (w != w.T).nnz == 0 and np.all(w.diagonal() == 1)
    assert np.all(np.asarray(w.sum(axis=1)).ravel() >= 4)
    s = knn_spreading_graph(x, 4)
    assert np.all(s.diagonal() == 0) and (abs(s - s.T) > 1e-15).nnz == 0


def test_a_teacher_depends_on_its_own_labels_only():
    """PATE's sensitivity: flipping one label of teacher 0's part changes teacher 0's output only."""
    x, y, rng = _toy(seed=1)
    parts = np.array_split(rng.permutation(len(y)), 4)
    q = np.arange(30)
    before = label_spreading_block(x, parts, [y[p] for p in parts], q, 3)
    flipped = [y[p].copy() for p in parts]
    flipped[0][0] = (flipped[0][0] + 1) % 3
    after = label_spreading_block(x, parts, flipped, q, 3)
    assert not np.allclose(before[0], after[0])
    for b, a in zip(before[1:], after[1:]):
        np.testing.assert_array_equal(b, a)


def test_spreading_beats_the_part_alone_on_clustered_data():
    """Fifteen labels per teacher spread over the public points: every teacher right on most queries."""
    x, y, rng = _toy(seed=2, n=600)
    parts = np.array_split(rng.permutation(len(y))[:150], 10)
    q = rng.choice(len(y), 100, replace=False)
    acc = [np.mean(p.argmax(axis=1) == y[q]) for p in label_spreading_block(x, parts, [y[p] for p in parts], q, 3)]
    assert min(acc) > 0.8


def test_bad_arguments_are_named():
    x, y, _ = _toy(n=50)
    parts, labels = [np.arange(10)], [y[:10]]
    with pytest.raises(ValueError, match="alpha"):
        label_spreading_block(x, parts, labels, [0], 3, alpha=1.0)
    with pytest.raises(ValueError, match="iterations"):
        label_spreading_block(x, parts, labels, [0], 3, iterations=0)
    with pytest.raises(ValueError, match="neighbors"):
        label_spreading_block(x, parts, labels, [0], 3, neighbors=50)
    with pytest.raises(ValueError, match="one entry per teacher"):
        label_spreading_block(x, parts, [], [0], 3)
    with pytest.raises(ValueError, match="labels must lie"):
        label_spreading_block(x, parts, [np.full(10, 3)], [0], 3)
    with pytest.raises(ValueError, match="queries must index"):
        label_spreading_block(x, parts, labels, [50], 3)
    with pytest.raises(ValueError, match="indices must lie"):
        label_spreading_block(x, [np.array([0, 99])], [y[:2]], [0], 3)
    with pytest.raises(ValueError, match="finite 2-D"):
        knn_affinity(np.full((5, 2), np.nan), 2)


def test_pate_release_with_label_spreading_teachers():
    """release_labels' PATE with teacher_model.kind label_spreading: the teachers spread over the
    target half, and a tabular dataset refuses the kind."""
    from ppaudit.experiments.labeldp.release import release_labels

    data = toy_labeldp_data()
    settings = {"model": {"hidden": 16, "epochs": 2, "lr": 0.01, "batch_size": 64}, "delta": 1e-5, "pate_queries": 60, "pate_teachers": 10,
                "pate_student": "plain", "teacher_model": {"kind": "label_spreading", "neighbors": 6, "alpha": 0.95}}  # fmt: skip
    _, labels, eps, info = release_labels(data, "pate", float("inf"), settings, np.random.default_rng(0))
    assert eps == float("inf") and labels.shape == (60,)
    assert info["pate_teacher_accuracy"] > 0.9 and info["pate_plurality_accuracy"] > 0.95
    tab = toy_labeldp_data()
    tab.name = "tabular"
    with pytest.raises(ValueError, match="label_spreading needs feature vectors"):
        release_labels(tab, "pate", 1.0, settings, np.random.default_rng(0))
