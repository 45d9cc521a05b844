"""The tabular stand-in at Criteo's label imbalance (observational paper §6.4: "only 3% of positives"; issue 34 §2).

:func:`ppaudit.experiments.labeldp.subsample_positives` keeps every negative and a seeded
uniform subset of the positives; ``load_labeldp_dataset("tabular", ...)`` applies it to UCI
Adult before the split when ``positive_rate`` is set.
"""

from __future__ import annotations

import numpy as np
import pytest

from ppaudit.experiments.labeldp.data import load_adult, load_labeldp_dataset, subsample_positives


def test_subsample_positives_keeps_every_negative_and_reaches_the_rate():
    y = np.r_[np.zeros(970, int), np.ones(500, int)]
    np.random.default_rng(0).shuffle(y)
    rows = subsample_positives(y, 0.03, np.random.default_rng(1))
    assert np.all(np.diff(rows) > 0)  # ascending, no repeats
    assert (y[rows] == 0).sum() == 970 and (y[rows] == 1).sum() == 30  # round(0.03 / 0.97 * 970) = 30
    # the same generator gives the same rows; another gives other positives
    assert np.array_equal(rows, subsample_positives(y, 0.03, np.random.default_rng(1)))
    assert not np.array_equal(rows, subsample_positives(y, 0.03, np.random.default_rng(2)))
    # uniform over the positives: over many draws every positive is kept about 30 / 500 of the time
    kept = np.zeros(y.size)
    for s in range(400):
        kept[subsample_positives(y, 0.03, np.random.default_rng(100 + s))] += 1
    share = kept[y == 1] / 400
    assert abs(share.mean() - 0.06) < 1e-12 and 0.01 < share.min() and share.max() < 0.2


@pytest.mark.parametrize("rate, words", [(0.0, "(0, 1)"), (1.0, "(0, 1)"), (0.6, "subsampling can only lower")])
def test_subsample_positives_refuses_a_rate_it_cannot_reach(rate, words):
    y = np.r_[np.zeros(100, int), np.ones(100, int)]
    with pytest.raises(ValueError, match=r"positive_rate") as exc:
        subsample_positives(y, rate, np.random.default_rng(0))
    assert words in str(exc.value) and repr(rate) in str(exc.value)
    with pytest.raises(ValueError, match="binary"):
        subsample_positives(np.array([0, 1, 2]), 0.1, np.random.default_rng(0))


def test_tabular_stand_in_at_criteo_s_share_of_positives():
    """Adult (25 % positives) loaded at positive_rate 0.03: the pool holds 3 % positives, the halves and the
    test set hold about that share, and without the key the loader keeps Adult's own share."""
    _, y_all = load_adult()
    settings = {"train_size": 4000, "test_size": 2000}
    data = load_labeldp_dataset("tabular", {**settings, "positive_rate": 0.03}, np.random.default_rng(7))
    assert len(data.y_ref) == len(data.y_target) == 2000 and len(data.y_test) == 2000
    ys = np.concatenate([data.y_ref, data.y_target, data.y_test])
    assert abs(ys.mean() - 0.03) < 0.01, ys.mean()
    plain = load_labeldp_dataset("tabular", settings, np.random.default_rng(7))
    ys = np.concatenate([plain.y_ref, plain.y_target, plain.y_test])
    assert abs(ys.mean() - y_all.mean()) < 0.03 and y_all.mean() > 0.2
