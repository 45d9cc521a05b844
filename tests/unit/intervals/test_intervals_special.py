"""The intervals of ppaudit.intervals are statsmodels' to the bit (issue 30).

``clopper_pearson`` and the Goodman intervals evaluate statsmodels' formulas with the
scipy.special functions that scipy.stats calls, so that a workflow job need not import
statsmodels and scipy.stats (≈ 1.5 s each time). Reference: statsmodels itself
(``proportion_confint(method="beta")``, ``multinomial_proportions_confint(method="goodman")``),
compared with ``np.array_equal`` — identical bits, not a tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import multinomial_proportions_confint, proportion_confint

from ppaudit.intervals import _goodman_confint, clopper_pearson, multinomial_simultaneous


def _statsmodels_clopper_pearson(k, n, conf):
    """The former body of clopper_pearson (statsmodels, then the same post-processing)."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    lo, hi = proportion_confint(k, n, alpha=1.0 - conf, method="beta")
    lo = np.where(k == 0, 0.0, np.nan_to_num(lo, nan=0.0))
    hi = np.where(k == n, 1.0, np.nan_to_num(hi, nan=1.0))
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


@pytest.mark.parametrize("conf", [0.95, 0.99, 1 - 0.05 / 24, 1 - 1e-6, 0.5])
def test_clopper_pearson_bits_equal_statsmodels(conf):
    rng = np.random.default_rng(20261126)
    n = np.concatenate([rng.integers(1, 60, 3000), rng.integers(1, 10**8 + 1, 3000), [1, 2, 10**8, 10**8]]).astype(float)
    k = np.minimum(np.floor(rng.random(n.size) * (n + 1)), n)
    k[:200] = 0
    k[200:400] = n[200:400]
    k[400:600] = 1
    k[-4:] = [0, 1, 10**8, 1]
    got = clopper_pearson(k, n, conf)
    ref = _statsmodels_clopper_pearson(k, n, conf)
    for g, r in zip(got, ref):
        assert g.dtype == r.dtype and g.shape == r.shape
        assert np.array_equal(g, r)
        assert np.array_equal(np.signbit(g), np.signbit(r))


@pytest.mark.parametrize("k,n", [(0, 10), (10, 10), (3, 10), (1, 1), (0, 1), (12345, 10**8), (7, 10**8)])
def test_clopper_pearson_scalar_bits_equal_statsmodels(k, n):
    got = clopper_pearson(k, n, 0.95)
    ref = _statsmodels_clopper_pearson(k, n, 0.95)
    for g, r in zip(got, ref):
        assert g.shape == r.shape == ()
        assert g.tobytes() == r.tobytes()


@pytest.mark.parametrize("conf", [0.95, 0.99, 1 - 0.05 / 12, 1 - 1e-7])
def test_goodman_bits_equal_statsmodels(conf):
    rng = np.random.default_rng(7)
    for size in (2, 3, 10, 50):
        for total in (1, 17, 10**4, 10**8):
            for _ in range(20):
                counts = rng.multinomial(total, rng.dirichlet(np.full(size, 0.3)))
                ref = multinomial_proportions_confint(counts, alpha=1.0 - conf, method="goodman")
                got = _goodman_confint(counts, 1.0 - conf)
                assert got.shape == ref.shape and np.array_equal(got, ref)
                lo, hi = multinomial_simultaneous(counts, conf, "goodman")
                assert np.array_equal(lo, np.clip(np.asarray(ref)[:, 0], 0, 1))
                assert np.array_equal(hi, np.clip(np.asarray(ref)[:, 1], 0, 1))


def test_sison_glaz_still_statsmodels():
    counts = np.array([40, 30, 20, 10])
    ref = multinomial_proportions_confint(counts, alpha=0.05, method="sison-glaz")
    lo, hi = multinomial_simultaneous(counts, 0.95, "sison-glaz")
    assert np.array_equal(lo, np.clip(ref[:, 0], 0, 1)) and np.array_equal(hi, np.clip(ref[:, 1], 0, 1))
