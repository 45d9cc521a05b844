"""#36 §1 and §7 on the issue's cases: what ``outputs="auto"`` and the exact claim test find by themselves.

Durations (2 shared cores, loaded): the sparse-vector test ~4 s CPU, the svt4 test ~3 s CPU.
"""

import numpy as np
import pytest

from ppaudit.blackbox import Claim, search_mechanism
from ppaudit.blackbox.families import bit_features, many_values
from ppaudit.blackbox.neighbours import query_answers


def _svt_without_halting(q, n, rng, eps=1.0, threshold=1.0):
    """Lyu et al. 2017, Alg. 1 with the halt removed (ρ ~ Lap(2/ε), ν ~ Lap(4/ε)), the answers packed
    into one integer (bit i = answer i). Not ε-DP: every ⊤ costs, and nothing stops them."""
    q = np.asarray(q, float)
    rho = rng.laplace(0, 2 / eps, size=n)
    nu = rng.laplace(0, 4 / eps, size=(n, q.size))
    top = (q + nu) >= (threshold + rho)[:, None]
    return (top.astype(np.int64) << np.arange(q.size)).sum(axis=1)


def test_auto_finds_the_packed_sparse_vector_bug_with_bit_features():
    """Issue #36 §1 (ii): at 10⁵ draws per pair, counted cells alone said "consistent" (ε ≥ 0.92, 2 of
    3 seeds); the pilot now also tries a logistic regression on the binary digits and flags 3 of 3."""
    for s in range(3):
        res = search_mechanism(_svt_without_halting, query_answers(10, 1), 100_000, rng=s, claim=Claim.dp(1.0))
        assert res.violation, s
        assert res.witness.output_set.kind == "threshold"
        assert res.audit.epsilon_lower_bound > 1.0


def test_bit_features_are_fixed_width_and_checked():
    x = bit_features(np.array([0, 5, 9]), bits=3)
    np.testing.assert_array_equal(x, [[0, 0, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]])  # 9 >= 2^3: overflow column
    assert many_values(np.arange(100), np.arange(100), 100)
    assert not many_values(np.zeros(100, int), np.ones(100, int), 100)
    assert not many_values(np.arange(100) - 1, np.arange(100), 100)  # negative: no bits
    import pytest

    with pytest.raises(ValueError, match="non-negative integers, got -2"):
        bit_features(np.array([1, -2]), bits=2)


def test_exact_claim_test_flags_svt4_at_a_small_claim():
    """Issue #36 §7: svt4 (Lee & Clifton 2014; true ε = 0.175 for c = 1) against ε0 = 0.1 at 2·10⁵
    draws per side: the Clopper–Pearson ε test flagged 1 of 3 seeds, the exact test of the claim 2 of 3."""
    from ppaudit.blackbox.catalogue import benchmark_cases

    case = {c.name: c for c in benchmark_cases(0.1)}["svt4"]
    found = sum(search_mechanism(case.audited, case.neighbours(), 200_000, rng=s, claim=Claim.dp(0.1)).violation
                for s in range(3))
    assert found >= 2


def test_bench_peers_skips_cleanly_without_checkouts(capsys, tmp_path):
    """bench/bench_peers.py never needs the peers: without paths (or with a folder that is not a
    checkout) it says so and returns 0 (< 0.1 s)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "bench" / "bench_peers.py"
    spec = importlib.util.spec_from_file_location("bench_peers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main([]) == 0
    assert "skipped" in capsys.readouterr().out
    assert mod.main(["--statdp", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "has no statdp/ package folder" in out and "no peer checkout given" in out


def _svt_without_halting_vector(q, n, rng, eps=1.0, threshold=1.0):
    """The same mechanism returning its answers as a vector (one 0/1 coordinate per query), not packed."""
    q = np.asarray(q, float)
    rho = rng.laplace(0, 2 / eps, size=n)
    nu = rng.laplace(0, 4 / eps, size=(n, q.size))
    return ((q + nu) >= (threshold + rho)[:, None]).astype(np.int64)


def test_auto_finds_the_sparse_vector_bug_on_answer_vectors_with_one_hot_features():
    """#36 §1, derived features of small vectors: the unpacked answer vectors (up to 1024 distinct
    vectors, too many cells for the pilot to order) are also read by a logistic regression on the
    one-hot of each coordinate; flagged in at least 2 of 3 seeds at 10⁵ draws per pair."""
    hits = 0
    for s in range(3):
        res = search_mechanism(_svt_without_halting_vector, query_answers(10, 1), 100_000, rng=s, claim=Claim.dp(1.0))
        hits += bool(res.violation)
    assert hits >= 2


def test_one_hot_features_are_fixed_width_and_checked():
    from ppaudit.blackbox.families import levels_needed, many_vectors, onehot_features

    x = onehot_features(np.array([[0, 2], [1, 3]]), levels=3)
    assert x.shape == (2, 8)
    np.testing.assert_array_equal(x[0], [1, 0, 0, 0, 0, 0, 1, 0])
    np.testing.assert_array_equal(x[1], [0, 1, 0, 0, 0, 0, 0, 1])  # 3 ≥ levels: the overflow column
    assert levels_needed(np.array([[0, 2]]), np.array([[1, 1]])) == 3
    rng = np.random.default_rng(0)
    v = rng.integers(0, 2, size=(400, 10))
    assert many_vectors(v, v, 400) and not many_vectors(v[:, :1], v[:, :1], 400)
    with pytest.raises(ValueError, match="non-negative"):
        onehot_features(np.array([[1, -2]]), levels=2)
