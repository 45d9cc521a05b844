"""Wang et al. 2022 attack: both solvers, the Confident-GNMax accountant, unanswered queries.

"Error falls as σ grows" (Wang §4.2) is tested per solver on *exact* answer frequencies
(infinitely many queries, no Monte Carlo error): the paper's gradient descent (Alg. 2, stop
at ‖J‖₂ < 0.01) has an error that falls with σ although nothing is sampled, while the exact
fit recovers every histogram at every σ — so on noise-free frequencies the fall is a
property of the paper's optimiser (its stopping rule), not of the leakage.
"""

import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from ppaudit.accounting import confident_gnmax_log_pr_answered
from ppaudit.attacks.histogram import (
    answered_queries,
    attack_privacy_cost,
    normalised_l1_error,
    reconstruct_histogram,
    reconstruct_histogram_wang2022,
    reconstruct_with_solver,
    sample_answer_counts,
)
from ppaudit.experiments.wang2022.reconstruction import attack_selected_histograms
from ppaudit.noisy_argmax import class_probabilities

TEACHERS = 250
HISTS = [np.array(h, dtype=float) for h in ([150, 60, 25, 10, 5, 0, 0, 0, 0, 0], [230, 10, 5, 5, 0, 0, 0, 0, 0, 0], [120, 100, 30, 0, 0, 0, 0, 0, 0, 0])]


def test_error_falls_with_sigma_for_the_papers_solver_only_on_exact_frequencies():
    errs = {}
    for solver in ("paper", "ours"):
        for s in (40.0, 100.0):
            errs[solver, s] = np.array([normalised_l1_error(h, reconstruct_with_solver(class_probabilities(h, s), s, TEACHERS, solver)) for h in HISTS])
    # paper: 0.125, 0.187, 0.064 at σ = 40 → 0.028, 0.047, 0.014 at σ = 100 (measured)
    assert np.all(errs["paper", 100.0] < 0.5 * errs["paper", 40.0])
    assert np.all(errs["paper", 40.0] > 0.05)
    # ours: exact recovery at both σ (the fit's residual is ~1e-12)
    assert np.all(errs["ours", 40.0] < 1e-3) and np.all(errs["ours", 100.0] < 1e-3)


def test_solver_dispatch():
    h = HISTS[0]
    counts = sample_answer_counts(h, 60.0, 5_000, rng=3)
    assert_allclose(reconstruct_with_solver(counts, 60.0, TEACHERS, "ours"), reconstruct_histogram(counts, 60.0, TEACHERS))
    paper = reconstruct_histogram_wang2022(counts, 60.0, TEACHERS, stop_at_negative=True)
    assert_allclose(reconstruct_with_solver(counts, 60.0, TEACHERS, "paper", stop_at_negative=True), paper.estimate)
    assert math.isclose(paper.estimate.sum(), TEACHERS)
    with pytest.raises(ValueError, match="solver"):
        reconstruct_with_solver(counts, 60.0, TEACHERS, "adam")


def test_answered_queries_is_a_binomial_draw():
    h = HISTS[2]  # max 120 < T = 200: Pr[answered] = Φ(−80/150) ≈ 0.297
    p = math.exp(float(confident_gnmax_log_pr_answered(h, 200, 150)))
    assert math.isclose(p, 0.2969, abs_tol=1e-3)
    assert answered_queries(h, 10_000, 200, 150, rng=7) == np.random.default_rng(7).binomial(10_000, p)
    assert answered_queries(h, 0, 200, 150, rng=7) == 0
    draws = np.array([answered_queries(h, 1_000, 200, 150, rng=np.random.default_rng(i)) for i in range(200)])
    se = math.sqrt(1_000 * p * (1 - p) / draws.size)
    assert abs(draws.mean() - 1_000 * p) < 5 * se
    with pytest.raises(ValueError, match="sigma_threshold"):
        answered_queries(h, 10, 200, 0.0, rng=0)


def _selection():
    return pd.DataFrame([{"label": f"L{i + 1}", "level": "low", "index": i, "max_vote_share": float(h.max() / h.sum())} for i, h in enumerate(HISTS)])


def test_attack_rows_confident_gnmax_both_solvers():
    hist = np.stack(HISTS)
    rows = attack_selected_histograms(
        hist, _selection(), [40.0, 100.0], 1_000, 1e-5, 1.97, 40.0, rng=np.random.default_rng(0),
        accountant="confident_gnmax", threshold=200.0, sigma_threshold=150.0, solvers=("paper", "ours"),
    )
    assert set(rows["procedure"]) == {"paper", "ours"} and (rows["accountant"] == "confident_gnmax").all()
    assert len(rows) == 2 * len(HISTS) * 3
    assert (rows["num_answered"] <= rows["num_queries"]).all()
    for _, g in rows.groupby(["label", "attack", "sigma"]):  # both solvers saw the same answers
        assert g["num_answered"].nunique() == 1 and g["privacy_cost"].nunique() == 1
    budget = rows[(rows["attack"] == "budget") & (rows["procedure"] == "ours")]
    for _, r in budget.iterrows():
        h = hist[int(r["index"])]
        kw = {"accountant": "confident_gnmax", "threshold": 200.0, "sigma_threshold": 150.0}
        assert attack_privacy_cost(h, 40.0, int(r["num_queries"]), 1e-5, **kw) <= 1.97 < attack_privacy_cost(h, 40.0, int(r["num_queries"]) + 1, 1e-5, **kw)
        # the answered share is close to Pr[answered]
        p = math.exp(float(confident_gnmax_log_pr_answered(h, 200, 150)))
        m = int(r["num_queries"])
        assert abs(r["num_answered"] - m * p) < 5 * math.sqrt(m * p * (1 - p)) + 1
    # the plain-GNMax accountant answers every query; it allows more queries than
    # Confident-GNMax on the near-unanimous histogram (L2: its check costs α/(2σ₁²) per query
    # while GNMax's data-dependent cost is tiny) and fewer on the split ones (L1, L3: max
    # below T, so GNMax is charged only ~30% of the time and the check is cheap)
    plain = attack_selected_histograms(hist, _selection(), [40.0], 500, 1e-5, 1.97, 40.0, rng=np.random.default_rng(0), accountant="gnmax", solvers=("ours",))
    assert (plain["num_answered"] == plain["num_queries"]).all()
    pb = plain[plain["attack"] == "budget"].set_index("label")["num_queries"]
    cb = budget.set_index("label")["num_queries"]
    assert pb["L2"] > cb["L2"] and pb["L1"] < cb["L1"] and pb["L3"] < cb["L3"]


def test_attack_rejects_bad_accountant_and_solver():
    hist = np.stack(HISTS)
    args = (hist, _selection(), [40.0], 100, 1e-5, 1.97, 40.0)
    with pytest.raises(ValueError, match="threshold"):
        attack_selected_histograms(*args, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="accountant"):
        attack_selected_histograms(*args, rng=np.random.default_rng(0), accountant="moments")
    with pytest.raises(ValueError, match="solvers"):
        attack_selected_histograms(*args, rng=np.random.default_rng(0), accountant="gnmax", solvers=("sgd",))
