"""Partitions of PATE (fresh random) and CaPC (fixed), and canary placement (Chadha §5.1–5.2)."""

from __future__ import annotations

import numpy as np
import pytest

from ppaudit.mechanisms import partition as pt


@pytest.mark.parametrize("n,k", [(100, 10), (103, 10), (250, 250), (7, 3)])
def test_random_partition_equal_sizes_and_cover(n, k):
    a = pt.random_partition(n, k, np.random.default_rng(0))
    sizes = pt.partition_sizes(a, k)
    assert sizes.sum() == n
    assert sizes.max() - sizes.min() <= 1
    cells = pt.partition_indices(a, k)
    np.testing.assert_array_equal(np.sort(np.concatenate(cells)), np.arange(n))
    for j, cell in enumerate(cells):
        np.testing.assert_array_equal(cell, pt.teacher_training_indices(a, j))


def test_random_partition_is_uniform_over_cells():
    # Each point lands in each of k cells with probability 1/k; 4000 draws, 3-sigma band.
    k, reps = 4, 4000
    hits = np.zeros(k)
    rng = np.random.default_rng(1)
    for _ in range(reps):
        hits[pt.random_partition(10, k, rng)[0]] += 1
    se = np.sqrt(reps * (1 / k) * (1 - 1 / k))
    assert np.all(np.abs(hits - reps / k) < 4 * se)


def test_pate_partitions_fresh_per_instantiation_and_reproducible():
    a = pt.pate_partitions(60, 6, 5, seed=3)
    assert a.shape == (5, 60)
    assert len({row.tobytes() for row in a}) == 5  # a fresh partition every time
    np.testing.assert_array_equal(a, pt.pate_partitions(60, 6, 5, seed=3))
    # Instantiation g does not depend on how many are drawn.
    np.testing.assert_array_equal(a[:2], pt.pate_partitions(60, 6, 2, seed=3))
    assert not np.array_equal(a, pt.pate_partitions(60, 6, 5, seed=4))


def test_fixed_partition_is_fixed():
    a = pt.fixed_partition(50, 5, seed=0)
    np.testing.assert_array_equal(a, pt.fixed_partition(50, 5, seed=0))
    assert np.all(pt.partition_sizes(a, 5) == 10)
    blocks = pt.fixed_partition(10, 5, seed=None)
    np.testing.assert_array_equal(blocks, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4])


def test_canary_slots_uniform_and_capc_slot():
    slots = pt.pate_canary_slots(5, 2000, 3, seed=0)
    assert slots.shape == (3, 2000)
    assert slots.min() >= 0 and slots.max() < 5
    freq = np.bincount(slots.ravel(), minlength=5) / slots.size
    np.testing.assert_allclose(freq, 0.2, atol=0.02)
    assert pt.CAPC_CANARY_SLOT == 0


def test_errors_name_values():
    with pytest.raises(ValueError, match="k .* must be <= num_points"):
        pt.random_partition(3, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="num_instantiations"):
        pt.pate_partitions(10, 2, 0, seed=0)
    with pytest.raises(ValueError, match="assignment"):
        pt.partition_indices(np.array([0, 3]), 2)
