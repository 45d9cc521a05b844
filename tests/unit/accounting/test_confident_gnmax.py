"""Confident-GNMax accounting against the authors' reference implementation.

Reference values: tensorflow/privacy ``research/pate_2018/core.py`` (Papernot et al. 2018) at
commit 3d038a490a0cdd809c030435281c2e94e44c2f83, evaluated once with the authors' functions
(``compute_logpr_answered``, ``compute_rdp_threshold``, ``compute_logq_gaussian`` +
``rdp_gaussian``, ``compute_rdp_data_independent_threshold``, ``compute_eps_from_delta``) and
recorded, with their inputs, in ``tests/reference/pate2018_reference_values.json`` (its
``source`` field says how; the third-party code is not in this repository). The improved
conversion is compared live against dp-accounting's ``compute_epsilon`` (Balle et al. 2020,
Thm 20 / Canonne–Kamath–Steinke Prop. 12), the classic one against the recorded
``compute_eps_from_delta`` values.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon
from numpy.testing import assert_allclose

from ppaudit.accounting import (
    confident_gnmax_log_pr_answered,
    confident_gnmax_rdp,
    confident_gnmax_threshold_rdp,
    gnmax_rdp_data_dependent,
    rdp_to_dp,
)

#: Recorded outputs of the authors' core.py (see the module docstring and the file's ``source``).
REF = json.loads(
    (Path(__file__).resolve().parents[2] / "reference" / "pate2018_reference_values.json").read_text()
)["unit_tests"]
#: The 61 orders the reference values were recorded at: 1.5 … 99 by 2.5, then 21 log-spaced 100 … 1000.
REF_ORDERS = np.asarray(REF["orders"], dtype=float)

#: Orders up to 1000 (the issue asks for ≥ 1000) for the property tests below: 1.5 … 100 by 0.5,
#: then 100 log-spaced to 1000.
ORDERS = np.concatenate((np.arange(1.5, 100.0, 0.5), np.logspace(2.0, 3.0, 100)))

HISTOGRAMS = [
    [250, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [200, 30, 20, 0, 0, 0, 0, 0, 0, 0],
    [120, 100, 30, 0, 0, 0, 0, 0, 0, 0],
    [90, 80, 40, 20, 10, 5, 5, 0, 0, 0],
    [26, 25, 25, 25, 25, 25, 25, 25, 25, 24],
    [249, 1, 0, 0, 0, 0, 0, 0, 0, 0],
]
# (T, σ₁, σ₂): MNIST and SVHN of Papernot et al. 2018 / Wang et al. 2022, and a sharp check
# (small σ₁) where the threshold's data-dependent bound is below the data-independent one.
SETTINGS = [(200.0, 150.0, 40.0), (300.0, 200.0, 40.0), (150.0, 20.0, 40.0), (200.0, 150.0, 100.0)]


def _case_id(case):
    return f"{case['counts'][:3]}-T{case['threshold']:g}-s1{case['sigma_threshold']:g}-s2{case['sigma']:g}"


def test_recorded_cases_cover_every_histogram_and_setting():
    recorded = sorted((tuple(c["counts"]), c["threshold"], c["sigma_threshold"], c["sigma"]) for c in REF["cases"])
    assert recorded == sorted((tuple(h), *s) for h in HISTOGRAMS for s in SETTINGS)
    assert REF_ORDERS.min() == 1.5 and REF_ORDERS.max() == 1000.0


@pytest.mark.parametrize("case", REF["cases"], ids=_case_id)
def test_matches_reference_implementation(case):
    t, s1, s2 = case["threshold"], case["sigma_threshold"], case["sigma"]
    counts = np.asarray(case["counts"], dtype=float)
    ours = confident_gnmax_rdp(counts, t, s1, s2, REF_ORDERS)
    assert_allclose(ours, case["confident_gnmax_rdp"], rtol=1e-6, atol=0)
    # the three parts, each against its reference function's recorded output
    assert_allclose(confident_gnmax_log_pr_answered(counts, t, s1), case["log_pr_answered"], rtol=1e-9)
    assert_allclose(confident_gnmax_threshold_rdp(counts, t, s1, REF_ORDERS), case["threshold_rdp"], rtol=1e-6, atol=0)
    assert_allclose(gnmax_rdp_data_dependent(counts, s2, REF_ORDERS), case["gnmax_rdp"], rtol=1e-6, atol=0)


def test_data_dependent_branches_are_exercised():
    # the sharp check: max 250 far above T = 150 with σ₁ = 20 → tiny Pr[not answered];
    # the data-independent bound is the authors' compute_rdp_data_independent_threshold(20, orders)
    h = np.array(HISTOGRAMS[0], dtype=float)
    assert REF["data_independent_threshold"]["sigma_threshold"] == 20.0
    thr = confident_gnmax_threshold_rdp(h, 150.0, 20.0, REF_ORDERS)
    indep = np.asarray(REF["data_independent_threshold"]["rdp"])
    assert np.any(thr < 0.5 * indep)
    gn = gnmax_rdp_data_dependent(h, 40.0, ORDERS)
    assert np.any(gn < 0.5 * ORDERS / 40.0**2)


def test_batched_rows_equal_single_rows():
    hs = np.array(HISTOGRAMS, dtype=float)
    batch = confident_gnmax_rdp(hs, 200, 150, 40, ORDERS)
    assert batch.shape == (len(hs), ORDERS.size)
    for i, h in enumerate(hs):
        assert_allclose(batch[i], confident_gnmax_rdp(h, 200, 150, 40, ORDERS), rtol=1e-12)


def test_bounded_by_data_independent_and_monotone_in_answer_probability():
    for h in np.array(HISTOGRAMS, dtype=float):
        r = confident_gnmax_rdp(h, 200, 150, 40, ORDERS)
        pr = math.exp(float(confident_gnmax_log_pr_answered(h, 200, 150)))
        assert np.all(r >= 0)
        assert np.all(r <= ORDERS / (2 * 150.0**2) + pr * ORDERS / 40.0**2 + 1e-15)
    # a histogram whose max is far below T is almost never answered: its GNMax part is
    # weighted by Pr[answered] ≈ Φ(−13.75) ≈ 2.6e-43
    low = np.full(10, 25.0)
    r = confident_gnmax_rdp(low, 300, 20, 40, ORDERS)
    pr = math.exp(float(confident_gnmax_log_pr_answered(low, 300, 20)))
    assert pr < 1e-40
    thr = confident_gnmax_threshold_rdp(low, 300, 20, ORDERS)
    extra = r - thr  # exact up to the rounding of the sum (a few ulps of thr)
    assert np.all(extra >= 0) and np.all(extra <= pr * ORDERS / 40.0**2 + 4 * np.spacing(thr))


@pytest.mark.parametrize("case", REF["conversions"], ids=lambda c: str(c["counts"][:3]))
def test_conversions_match_reference_and_dp_accounting(case):
    # input: 3000 queries of the authors' Confident-GNMax RDP (T = 200, σ₁ = 150, σ₂ = 40), recorded;
    # ours must also reproduce that input.
    assert case["queries"] == 3000 and (case["threshold"], case["sigma_threshold"], case["sigma"]) == (200.0, 150.0, 40.0)
    rdp = np.asarray(case["rdp"], dtype=float)
    assert_allclose(3000 * confident_gnmax_rdp(np.asarray(case["counts"], float), 200, 150, 40, REF_ORDERS), rdp,
                    rtol=1e-6, atol=0)
    assert [r["delta"] for r in case["compute_eps_from_delta"]] == [1e-5, 1e-6]
    for r in case["compute_eps_from_delta"]:
        delta = r["delta"]
        classic, order = rdp_to_dp(rdp, REF_ORDERS, delta, method="classic", return_order=True)
        assert_allclose(classic, r["eps"], rtol=1e-9)
        assert order == r["order"]
        improved = rdp_to_dp(rdp, REF_ORDERS, delta, method="balle2020")
        eps_dpa, _ = compute_epsilon(REF_ORDERS, rdp, delta)
        assert_allclose(improved, eps_dpa, rtol=1e-9)
        assert improved < classic


def test_issue_numbers_35007_vs_4448():
    """[250, 0, …] at σ = 40 within ε = 1.97, δ = 1e-5 (Wang et al. 2022 §4.1, MNIST):
    plain GNMax + classic conversion allows 35,007 queries; Confident-GNMax (T = 200,
    σ₁ = 150, σ₂ = 40) + the improved conversion about 4,448 (issue 14)."""
    from ppaudit.attacks.histogram import queries_within_budget

    h = np.array(HISTOGRAMS[0], dtype=float)
    plain = queries_within_budget(h, 40.0, 1.97, 1e-5, max_queries=None, accountant="gnmax", method="classic")
    conf = queries_within_budget(
        h, 40.0, 1.97, 1e-5, max_queries=None, accountant="confident_gnmax", method="balle2020",
        threshold=200.0, sigma_threshold=150.0,
    )
    assert plain == 35_007
    assert conf == 4_448
    # and directly, without the search: the last affordable query and the first refused one
    r = confident_gnmax_rdp(h, 200, 150, 40, ORDERS)
    assert rdp_to_dp(4_448 * r, ORDERS, 1e-5) <= 1.97 < rdp_to_dp(4_449 * r, ORDERS, 1e-5)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: confident_gnmax_rdp([10, 5], 200, 150, 0.0, [2.0]), "sigma"),
        (lambda: confident_gnmax_rdp([10, 5], 200, -1.0, 40, [2.0]), "sigma_threshold"),
        (lambda: confident_gnmax_rdp([10, 5], float("nan"), 150, 40, [2.0]), "threshold"),
        (lambda: confident_gnmax_rdp([10, -5], 200, 150, 40, [2.0]), "counts"),
        (lambda: confident_gnmax_rdp([10, 5], 200, 150, 40, [1.0]), "order"),
    ],
)
def test_bad_inputs_raise_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
