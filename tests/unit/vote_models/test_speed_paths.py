"""The fast paths of the audits' algorithms give the numbers of the straightforward ones, bit for bit (issue 30 §1).

References: ``scipy.stats.binom.logpmf`` (the enumeration's grids), ``scipy.special.logsumexp``
(the transcript likelihoods), a fresh enumeration (the per-process caches of
:func:`ppaudit.vote_models.enumerate_base_certified` and :func:`ppaudit.vote_models.tables.chain_table`).
"""

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import binom

from ppaudit._logsumexp import logsumexp_rows
from ppaudit.vote_models import enumerate_base_certified, pate_vote_model
from ppaudit.vote_models import enumeration, tables
from ppaudit.vote_models.enumeration import _binom_logpmf_grid


@pytest.mark.parametrize("seed", range(6))
def test_binomial_grid_is_scipys_logpmf(seed):
    rng = np.random.default_rng(seed)
    for _ in range(30):
        n = int(rng.integers(1, 400))
        x = np.arange(int(rng.integers(0, n + 1)) + 1)
        rem = rng.integers(0, n + 1, size=int(rng.integers(1, 40)))
        p = float(rng.choice([rng.random(), rng.random() ** 8, 1 - rng.random() ** 3, 0.5]))
        if not 0.0 < p < 1.0:
            continue
        with np.errstate(divide="ignore"):
            ref = binom.logpmf(x[None, :], rem[:, None], p)
        ref = np.where(x[None, :] <= rem[:, None], ref, -np.inf)
        np.testing.assert_array_equal(_binom_logpmf_grid(x, rem, p), ref)


@pytest.mark.parametrize("overwrite", [False, True])
def test_logsumexp_rows_is_scipys(overwrite):
    rng = np.random.default_rng(7)
    for it in range(60):
        a = rng.normal(size=(int(rng.integers(1, 200)), int(rng.integers(1, 2000)))) * rng.choice([1.0, 30.0, 700.0])
        a[rng.random(a.shape) < 0.3 * rng.random()] = -np.inf
        if it % 5 == 0:
            a[0] = -np.inf  # an empty row
        if it % 7 == 0:
            a[:, :3] = a[:, :1]  # ties at the maximum
        if it % 11 == 0:
            a[-1, 0] = np.inf
        if it % 13 == 0:
            a[0, -1] = np.nan
        ref = logsumexp(a, axis=1)
        np.testing.assert_array_equal(logsumexp_rows(a.copy() if overwrite else a, overwrite=overwrite), ref)


def _model(concentration: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(10) * concentration)
    return pate_vote_model(p, np.roll(p, 1), 250)


def test_base_cache_returns_a_fresh_enumerations_result(monkeypatch):
    model = _model(0.05)
    first = enumerate_base_certified(model, 1e-12, 200_000)
    assert first is not None
    again = enumerate_base_certified(model, 1e-12, 200_000)
    assert again is first  # the cached answer
    monkeypatch.setattr(enumeration, "_BASE_CACHE_SIZE", 0)  # the cache off: a fresh enumeration
    fresh = enumerate_base_certified(model, 1e-12, 200_000)
    assert fresh is not first
    for u, v in zip(first, fresh):
        np.testing.assert_array_equal(u, v)


def test_known_overflow_skips_only_finer_and_smaller_attempts(monkeypatch):
    model = _model(1.0, seed=3)  # votes spread over ten classes: the base does not fit 2,000 histograms
    assert enumerate_base_certified(model, 1e-10, 2_000) is None
    calls = []
    real = enumeration._enumerate_base
    monkeypatch.setattr(enumeration, "_enumerate_base", lambda *a: calls.append(a[1:]) or real(*a))
    assert enumerate_base_certified(model, 1e-12, 2_000) is None  # finer threshold, same cap: known to overflow
    assert enumerate_base_certified(model, 1e-40, 1_000) is None
    assert calls == []
    enumerate_base_certified(model, 1e-8, 2_000)  # coarser: must be tried
    enumerate_base_certified(model, 1e-12, 5_000)  # larger cap: must be tried
    assert len(calls) >= 2
    # and the answers are those of an enumeration without the record
    monkeypatch.setattr(enumeration, "_BASE_CACHE_SIZE", 0)
    assert enumerate_base_certified(model, 1e-12, 2_000) is None


def test_chain_table_cache_is_the_same_table(monkeypatch):
    rng = np.random.default_rng(1)
    q = rng.dirichlet(np.ones(10))
    a, b = tables.chain_table(q, 249), tables.chain_table(q.copy(), 249)
    assert a is b
    monkeypatch.setattr(tables, "_CHAIN_CACHE_SIZE", 0)
    c = tables.chain_table(q, 249)
    assert c is not a and c.tv_bound == a.tv_bound
    for u, v in zip(a.keys + a.base + a.guide, c.keys + c.base + c.guide):
        np.testing.assert_array_equal(u, v)


def test_logsumexp_drop_in_is_scipys():
    from ppaudit._logsumexp import logsumexp as fast

    rng = np.random.default_rng(11)
    for it in range(400):
        k = int(rng.integers(0, 50))
        a = rng.normal(size=k) * rng.choice([1.0, 50.0, 800.0])
        a[rng.random(k) < 0.3] = -np.inf
        if it % 9 == 0 and k:
            a[:] = -np.inf
        if it % 13 == 0 and k:
            a[0] = np.inf
        np.testing.assert_array_equal(fast(a), logsumexp(a))
        b = rng.normal(size=(4, k + 1))
        np.testing.assert_array_equal(fast(b, axis=-1), logsumexp(b, axis=-1))
        np.testing.assert_array_equal(fast(b, axis=0), logsumexp(b, axis=0))  # scipy's own call


def test_unique_rows_is_numpy_unique_over_rows():
    """ppaudit._unique_rows.unique_rows: the distinct rows, their order and the inverse of
    ``np.unique(x, axis=0, return_inverse=True)`` — integer and float counts on the key path
    (one key, or several lexsorted column-group keys for wide rows), negative, fractional and
    overflowing rows on numpy's own."""
    from ppaudit._unique_rows import unique_rows

    rng = np.random.default_rng(8)
    cases = []
    for c, n in ((1, 5), (3, 20), (10, 40), (10, 250), (12, 5000)):
        x = rng.multinomial(n, rng.dirichlet(np.ones(c)), size=800)
        cases += [x, x.astype(np.float64), x - 1]
    # wide rows (several column-group keys, lexsorted): many repeats and ties on the first group
    wide = rng.integers(0, 3, size=(3000, 40)) * rng.integers(0, 2, size=(3000, 1))
    cases += [wide, wide[:, ::-1].copy(), rng.multinomial(250, np.ones(10) / 10, size=5000)]
    cases += [rng.random((50, 3)).round(1) * 4, np.array([[2**40, 1], [3, 2**40]]), np.array([[2**62, 1], [3, 2**62]]),
              np.zeros((0, 3), dtype=np.int64)]
    for x in cases:
        want_u, want_i = np.unique(x, axis=0, return_inverse=True)
        got_u, got_i = unique_rows(x)
        assert got_u.dtype == want_u.dtype
        np.testing.assert_array_equal(got_u, want_u)
        np.testing.assert_array_equal(got_i, want_i.reshape(-1))
