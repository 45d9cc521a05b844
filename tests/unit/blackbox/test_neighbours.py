"""ppaudit.blackbox.neighbours: each generator yields pairs under its named adjacency."""

import itertools

import numpy as np
import pytest

from ppaudit.blackbox.neighbours import (
    add_remove_one,
    count_vectors,
    label_flips,
    query_answers,
    random_pairs,
    replace_one,
)


def test_count_vectors_one_count_plus_one():
    pairs = list(count_vectors(5, 1))
    assert len(pairs) == 5 * 1 * 2**4  # length · max_count · (max_count + 1)^(length − 1)
    for a, b in pairs:
        d = b - a
        assert d.sum() == 1 and np.abs(d).sum() == 1
        assert a.min() >= 0 and b.max() <= 1
    assert len({(tuple(a), tuple(b)) for a, b in pairs}) == len(pairs)
    assert len(list(count_vectors(2, 3))) == 2 * 3 * 4


def test_query_answers_statdp_patterns():
    """Ding et al. 2018 / statdp.generators: base Δ·1; the eight patterns; ℓ∞ distance ≤ Δ."""
    pairs = list(query_answers(5, 2.0))
    assert len(pairs) == 8
    assert np.array_equal(pairs[0][1], [4, 2, 2, 2, 2]) and np.array_equal(pairs[1][1], [0, 2, 2, 2, 2])
    assert np.array_equal(pairs[-1][0], [2, 2, 0, 0, 0]) and np.array_equal(pairs[-1][1], [0, 0, 2, 2, 2])
    for a, b in pairs:
        assert np.abs(a - b).max() <= 2.0
    assert len(list(query_answers(1))) == 2  # one above / one below; the rest coincide


def test_replace_one_and_add_remove_one():
    pairs = list(replace_one((0, 0, 1), [0, 1, 2]))
    assert len(pairs) == 3 * 2
    for a, b in pairs:
        assert isinstance(b, tuple) and len(b) == 3 and sum(x != y for x, y in zip(a, b)) == 1
    arr = list(replace_one(np.array([1, 2]), [1, 2]))
    assert all(isinstance(b, np.ndarray) for _, b in arr) and len(arr) == 2
    ar = list(add_remove_one([3, 4], [7]))
    assert [b for _, b in ar] == [[4], [3], [3, 4, 7]]


def test_label_flips():
    pairs = list(label_flips([0, 2], 3))
    assert len(pairs) == 2 * 2
    for a, b in pairs:
        assert (a != b).sum() == 1 and b.max() < 3
    with pytest.raises(ValueError, match="labels must lie"):
        list(label_flips([0, 3], 3))
    with pytest.raises(ValueError, match="num_classes"):
        label_flips([0], 1)


def test_random_pairs_uniform_and_reproducible():
    gen = lambda: count_vectors(4, 1)  # noqa: E731  (32 pairs)
    a = random_pairs(gen(), 10, rng=0)
    assert len(a) == 10 and [tuple(x) for x, _ in a] == [tuple(x) for x, _ in random_pairs(gen(), 10, rng=0)]
    assert len(random_pairs([(0, 1)], 5, rng=0)) == 1
    # Uniform inclusion: each of 6 items is kept with probability 2/6.
    hits = np.zeros(6)
    for s in range(3000):
        for i, _ in random_pairs([(i, i + 1) for i in range(6)], 2, rng=s):
            hits[i] += 1
    np.testing.assert_allclose(hits / 3000, 1 / 3, atol=0.04)  # 5 sigma of Bin(3000, 1/3)/3000 is 0.043
    # A user iterable works too (a plain generator expression).
    assert len(random_pairs(((i, i + 1) for i in range(3)), 2, rng=1)) == 2


def test_bad_arguments():
    with pytest.raises(ValueError, match="length"):
        count_vectors(0)
    with pytest.raises(ValueError, match="max_count"):
        count_vectors(3, 0)
    with pytest.raises(ValueError, match="sensitivity"):
        query_answers(3, -1)
    with pytest.raises(ValueError, match="database"):
        replace_one("abc", [1])
    with pytest.raises(ValueError, match="database"):
        replace_one([], [1])
    with pytest.raises(ValueError, match="pool"):
        add_remove_one([1], 5)
    with pytest.raises(ValueError, match="n must"):
        random_pairs([(0, 1)], 0)
    assert list(itertools.islice(count_vectors(3), 2))  # lazy
