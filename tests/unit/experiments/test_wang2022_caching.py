"""The Wang et al. 2022 §5 answer cache on fitted vote models and the findings rows built on it
(ppaudit.experiments.wang2022.caching; query_cost_findings of ppaudit.experiments.wang2022.reconstruction)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppaudit.adversaries import CraftedCanaries
from ppaudit.experiments.wang2022.reconstruction import query_cost_findings
from ppaudit.experiments.wang2022.caching import (
    caching_findings,
    pate_caching_transcripts,
)
from ppaudit.plots.wang import pate_caching_epsilons
from ppaudit.vote_models import PateFit

ORDERS = [2.0, 8.0]


def _stage(exact_per_candidate, reps):
    """A stage rdp.csv: composed exact RDP and 2-cut audit per candidate and order (+ a control row)."""
    rows = [{"candidate": c, "order": a, "exact": e * a, "two_cut_cp": 0.5 * e * a, "control": False}
            for c, e in enumerate(exact_per_candidate) for a in ORDERS]
    rows.append({"candidate": 0, "order": 2.0, "exact": 99.0, "two_cut_cp": 99.0, "control": True})
    return pd.DataFrame(rows)


def _run(candidates="worst", reps=50):
    # 20 teachers; candidate 1 moves more of the audit query's vote mass than candidate 0
    fit = PateFit(np.array([[0.55, 0.45]]), np.array([[[0.6, 0.4]], [[0.9, 0.1]]]), 20, 4)
    crafted = CraftedCanaries("pois-advq", np.array([0, 0]), np.array([0, 0]), np.array([[0], [0]]), np.array([[reps], [reps]]))
    return pate_caching_transcripts(
        [("pois-advq", fit, crafted, _stage([0.1, 0.4], reps))], algo="pate", dataset="toy", sigma=2.0, orders=ORDERS,
        delta=1e-5, confidence=0.95, trials=4000, num_bins=16, candidates=candidates,
        rng_for=lambda adv, key: np.random.default_rng([ord(c) for c in adv + key]),
    )


def test_transcripts_pick_the_worst_candidate_and_carry_the_stage_numbers():
    t = _run()
    assert list(t.columns[:5]) == ["algo", "dataset", "adversary", "candidate", "query"]
    assert set(t["candidate"]) == {1}  # larger exact composed ε (control row ignored)
    assert set(t["view"]) == {"single_answer", "cache", "no_cache"}
    one = t[t["view"] == "no_cache"].set_index("order")
    np.testing.assert_allclose(one["stage_exact_composed"], [0.8, 3.2])
    np.testing.assert_allclose(one["stage_exact_single"], np.array([0.8, 3.2]) / 50)
    np.testing.assert_allclose(one["stage_cached_audit"], np.array([0.4, 1.6]) / 50)
    assert (t["delta"] == 1e-5).all() and t.groupby("view")["epsilon"].nunique().eq(1).all()
    # the cached transcript holds one answer: its audit is no larger than the uncached one
    eps = t.groupby("view")["epsilon"].first()
    assert eps["cache"] <= eps["no_cache"]
    assert set(_run("all")["candidate"]) == {0, 1}


def test_transcripts_reject_bad_input():
    with pytest.raises(ValueError, match="'best'"):
        _run("best")
    with pytest.raises(ValueError, match="at least one"):
        pate_caching_transcripts([], algo="pate", dataset="toy", sigma=2.0, orders=ORDERS, delta=1e-5, confidence=0.95,
                                 trials=10, num_bins=16, candidates="worst", rng_for=lambda a, k: np.random.default_rng(0))


def _eps(cache, no_cache, single, adv="nat-advq"):
    return pd.DataFrame([{"adversary": adv, "candidate": 3, "view": v, "epsilon": e, "num_repetitions": 100}
                         for v, e in (("cache", cache), ("no_cache", no_cache), ("stage_exact_single", single))])


def test_caching_findings_report_holding_and_failing_checks():
    out = caching_findings(pd.concat([_eps(0.2, 3.0, 0.5), _eps(0.9, 0.4, 0.5, "pois-advq")], ignore_index=True)).set_index("check")
    assert list(out.index) == ["nat-advq_cached_audit_at_most_exact_single_answer", "nat-advq_uncached_audit_above_exact_single_answer",
                               "pois-advq_cached_audit_at_most_exact_single_answer", "pois-advq_uncached_audit_above_exact_single_answer"]
    assert out["holds"].tolist() == [True, True, False, False]  # a failing check is reported, not hidden
    assert out.loc["nat-advq_cached_audit_at_most_exact_single_answer", "reference"] == 0.5
    assert "candidate 3, 100 repeated queries" in out["description"].iloc[0]
    with pytest.raises(ValueError, match="no_cache"):
        caching_findings(_eps(0.2, 3.0, 0.5).query("view != 'no_cache'"))
    with pytest.raises(ValueError, match="empty"):
        caching_findings(_eps(0, 0, 0).iloc[:0])


def test_caching_findings_on_measured_transcripts():
    out = caching_findings(pate_caching_epsilons(_run()))
    assert len(out) == 2 and out["dataset"].eq("pate_fitted_model").all()


def test_query_cost_share_counts_each_histogram_and_sigma_once():
    rows = [{"attack": "query_limit", "label": lab, "sigma": s, "procedure": proc, "privacy_cost": c}
            for lab, s, c in (("L1", 40, 2.0), ("L1", 100, 0.5), ("H1", 40, 15.0), ("H1", 100, 11.0))
            for proc in ("paper", "ours")]
    rows.append({"attack": "budget", "label": "L1", "sigma": 40, "procedure": "ours", "privacy_cost": 1000.0})
    out = query_cost_findings(pd.DataFrame(rows), "mnist")
    assert len(out) == 1 and out["value"].iloc[0] == 0.5 and bool(out["holds"].iloc[0])
    assert "range 0.5-15" in out["description"].iloc[0] and out["procedure"].iloc[0] == ""
    assert not bool(query_cost_findings(pd.DataFrame(rows[2:]), "mnist")["holds"].iloc[0])  # 1 of 3 in [1, 12]
    with pytest.raises(ValueError, match="'mnist'.*query_limit"):
        query_cost_findings(pd.DataFrame(rows[-1:]), "mnist")
