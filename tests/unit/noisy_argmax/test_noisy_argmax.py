"""Exact noisy-argmax probabilities (Chadha et al. 2024, Eq. (4)).

References used below:
* mpmath quadrature of the same integral: stored at 30 digits in
  ``tests/reference/noisy_argmax_mpmath.json`` (regenerate with the script beside it), and
  live at 20 digits for two small cases (``_mp_reference``);
* closed forms: two classes, Pr[c] = Φ((n_c − n_other)/(σ√2)); all ties, Pr = 1/C;
* an independent simulation with 10^6 draws.
"""

import json
import math
from pathlib import Path

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import log_ndtr, ndtr
from scipy.stats import norm

from ppaudit.noisy_argmax import class_probabilities, log_class_probabilities, sample_noisy_argmax

mpmath.mp.dps = 20


def _mp_reference(hist, sigma):
    """log Pr[c] for each class by mpmath quadrature (30 digits)."""
    h = [mpmath.mpf(float(x)) for x in hist]
    s = mpmath.mpf(sigma)
    out = []
    for c in range(len(h)):
        e = [(h[c] - h[i]) / s for i in range(len(h))]
        f = lambda z: mpmath.npdf(z) * mpmath.fprod(mpmath.ncdf(z + e[i]) for i in range(len(h)) if i != c)
        hi = int(max(0.0, float(max(-x for x in e)))) + 12
        pts = [-mpmath.inf] + list(range(-12, hi + 1)) + [mpmath.inf]
        out.append(mpmath.log(mpmath.quad(f, pts)))
    return np.array([float(v) for v in out])


REFERENCE = json.loads((Path(__file__).resolve().parents[2] / "reference" / "noisy_argmax_mpmath.json").read_text())
REF_CASES = [(c["hist"], c["sigma"], np.array([float(v) for v in c["log_probabilities"]])) for c in REFERENCE["cases"]]


@pytest.mark.parametrize("hist,sigma,ref_log", REF_CASES)
def test_matches_stored_mpmath_quadrature(hist, sigma, ref_log):
    # Reference: tests/reference/noisy_argmax_mpmath.json (mpmath quad, 30 digits).
    got = class_probabilities(hist, sigma)
    np.testing.assert_allclose(got, np.exp(ref_log), rtol=0, atol=1e-9)
    assert abs(got.sum() - 1.0) < 1e-12
    np.testing.assert_allclose(log_class_probabilities(hist, sigma), ref_log, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("hist,sigma", [([3, 7, 7, 1], 0.5), ([100.5, 99.25, 3.0], 3.7)])
def test_matches_live_mpmath_quadrature(hist, sigma):
    ref = _mp_reference(hist, sigma)
    np.testing.assert_allclose(class_probabilities(hist, sigma), np.exp(ref), rtol=0, atol=1e-9)
    np.testing.assert_allclose(log_class_probabilities(hist, sigma), ref, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("gap,sigma", [(0, 1.0), (1, 0.5), (7, 2.0), (10_000, 0.5), (250, 40.0), (3, 500.0)])
def test_two_classes_closed_form(gap, sigma):
    # Pr[class 0] = P(Z0 - Z1 > gap/σ) = Φ(-gap / (σ√2)), exactly.
    p = class_probabilities([0, gap], sigma)
    lp = log_class_probabilities([0, gap], sigma)
    z = -gap / (sigma * math.sqrt(2.0))
    assert abs(p[0] - ndtr(z)) < 1e-12
    np.testing.assert_allclose(lp[0], log_ndtr(z), rtol=1e-9)
    assert np.all(np.isfinite(lp))


@pytest.mark.parametrize("num_classes", [2, 3, 10, 50, 100])
def test_all_ties_give_uniform(num_classes):
    for sigma in (0.5, 3.0, 500.0):
        p = class_probabilities(np.full(num_classes, 17), sigma)
        np.testing.assert_allclose(p, 1.0 / num_classes, atol=1e-11)


def test_hundred_classes_against_scipy_quad():
    rng = np.random.default_rng(3)
    hist = rng.integers(0, 10_000, 100)
    hist[:5] = hist.max() - np.array([0, 3, 10, 40, 90])
    sigma = 37.0
    got = class_probabilities(hist, sigma)
    gaps = (hist.max() - hist) / sigma
    for c in np.argsort(-hist)[:8]:
        others = np.delete(gaps, c)

        def f(u):
            return norm.pdf(u + gaps[c]) * np.exp(np.sum(log_ndtr(u + others)))

        ref, err = integrate.quad(f, -40, 40, epsabs=1e-14, epsrel=1e-13, limit=500)
        assert abs(got[c] - ref) < 1e-9, (c, got[c], ref, err)


def test_against_one_million_draws():
    hist, sigma = np.array([14, 12, 10, 8, 6]), 2.0
    rng = np.random.default_rng(2024)
    draws = sample_noisy_argmax(hist, sigma, 1_000_000, rng)
    freq = np.bincount(draws, minlength=5) / 1e6
    p = class_probabilities(hist, sigma)
    se = np.sqrt(p * (1 - p) / 1e6)
    assert np.all(np.abs(freq - p) < 5 * se + 1e-12), (freq, p)


def test_batched_equals_rowwise_and_float_path():
    rng = np.random.default_rng(0)
    h = rng.integers(0, 250, (50, 10)).astype(float)
    batched = class_probabilities(h, 40.0)
    for i in range(0, 50, 7):
        np.testing.assert_allclose(batched[i], class_probabilities(h[i], 40.0), atol=1e-15)
    # Non-integer gaps take the direct path; tiny shifts must change the result only slightly.
    h2 = h.copy()
    h2[:, 0] += 1e-7
    np.testing.assert_allclose(class_probabilities(h2, 40.0), batched, atol=1e-8)


def test_huge_gaps_no_nan_or_underflow():
    p = class_probabilities([10_000, 0, 0], 0.5)
    assert np.all(np.isfinite(p)) and p[0] == pytest.approx(1.0)
    lp = log_class_probabilities([10_000, 0, 0, 9_999], 0.5)
    assert np.all(np.isfinite(lp))
    assert lp[1] < -1e7 and lp[1] == pytest.approx(lp[2])
    assert lp[3] == pytest.approx(log_ndtr(-1 / (0.5 * math.sqrt(2))), rel=1e-3)


@settings(max_examples=60, deadline=None)
@given(
    hist=st.lists(st.integers(0, 300), min_size=2, max_size=12),
    sigma=st.floats(0.5, 500.0),
    shift=st.integers(0, 50),
)
def test_properties(hist, sigma, shift):
    h = np.array(hist, dtype=float)
    p = class_probabilities(h, sigma)
    assert np.all(p >= 0) and abs(p.sum() - 1) < 1e-12
    # Shift invariance (Wang et al. 2022, Thm 2) and permutation equivariance.
    np.testing.assert_allclose(class_probabilities(h + shift, sigma), p, atol=1e-12)
    perm = np.random.default_rng(len(hist)).permutation(len(hist))
    np.testing.assert_allclose(class_probabilities(h[perm], sigma), p[perm], atol=1e-12)
    # Ties get equal probability; a larger count never gets a smaller probability.
    order = np.argsort(h)
    assert np.all(np.diff(p[order]) >= -1e-12)
    lp = log_class_probabilities(h, sigma)
    np.testing.assert_allclose(np.exp(lp), p, atol=1e-11)


def test_top_class_probability_falls_with_sigma():
    h = [30, 20, 10]
    tops = [class_probabilities(h, s)[0] for s in (1, 2, 5, 10, 50, 500)]
    assert np.all(np.diff(tops) < 0)


@pytest.mark.parametrize(
    "hist,sigma,match",
    [
        ([1, -1, 3], 1.0, "non-negative"),
        ([1, np.nan, 3], 1.0, "finite"),
        ([1, np.inf], 1.0, "finite"),
        ([1, 2], 0.0, "sigma"),
        ([1, 2], -3.0, "sigma"),
        ([1, 2], float("nan"), "sigma"),
        (np.zeros((2, 2, 2)), 1.0, "shape"),
        ([], 1.0, "at least one class"),
    ],
)
def test_bad_input(hist, sigma, match):
    with pytest.raises(ValueError, match=match):
        class_probabilities(hist, sigma)
    with pytest.raises(ValueError, match=match):
        log_class_probabilities(hist, sigma)


def test_row_gather_path_equals_the_element_gather_path(monkeypatch):
    """Integer gaps: the per-gap row tables (few distinct gaps) and the element-wise look-ups
    (the fallback when the row tables would be large) give the same bytes."""
    import ppaudit.noisy_argmax as na

    rng = np.random.default_rng(11)
    for c, k, sigma in ((10, 21, 30.0), (10, 250, 40.0), (3, 3000, 0.5), (5, 5, 100.0)):
        h = rng.multinomial(k, rng.dirichlet(np.full(c, 0.5)), size=700).astype(np.float64)
        rows = na.class_probabilities(h, sigma)
        monkeypatch.setattr(na, "_ROW_TABLE_ELEMENTS", 0)
        elements = na.class_probabilities(h, sigma)
        monkeypatch.undo()
        np.testing.assert_array_equal(rows, elements)
