"""``accounting.gnmax._norm_logsf`` is ``scipy.stats.norm.logsf(x, scale=s)`` to the bit (issue 30).

The GNMax accountants use it instead of scipy.stats (≈ 1 s to import in every workflow job);
the reference is scipy.stats itself, compared with ``np.array_equal`` (identical bits).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from ppaudit.accounting.gnmax import _norm_logsf


@pytest.mark.parametrize("scale", [1.0, math.sqrt(2.0) * 40.0, math.sqrt(2.0) * 0.3, 1e-3, 1e6, 150.0])
def test_norm_logsf_bits_equal_scipy_stats(scale):
    rng = np.random.default_rng(11)
    x = np.concatenate([
        rng.normal(0, 3 * scale, 5000), rng.integers(-300, 300, 2000) * 1.0, rng.standard_cauchy(2000) * scale * 50,
        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324, 38.5 * scale, -38.5 * scale],
    ])
    for arr in (x, x.reshape(-1, 10), x.astype(np.float32), np.round(x[np.isfinite(x)]).clip(-1e9, 1e9).astype(np.int64)):
        ref = norm.logsf(arr, scale=scale)
        got = _norm_logsf(arr, scale)
        assert got.dtype == ref.dtype and got.shape == ref.shape
        assert np.array_equal(got, ref, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(ref))


@pytest.mark.parametrize("x", [0.0, 3.0, -2.5, np.inf, -np.inf, 1e3])
def test_norm_logsf_scalar(x):
    ref = norm.logsf(x, scale=2.0)
    got = _norm_logsf(x, 2.0)
    assert type(got) is type(ref) and np.asarray(got).tobytes() == np.asarray(ref).tobytes()
