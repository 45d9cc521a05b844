"""ppaudit.experiments.blackbox.benchmark: the table's numbers come from the searches it ran, draws are
counted, the peers' values are read with their sources and only matched at their own ε0."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ppaudit.experiments.blackbox.benchmark import load_published, run_blackbox_benchmark


def test_published_values_have_sources_and_are_not_invented():
    pub = load_published()
    assert {"case", "peer", "epsilon0", "value", "source", "where"} <= set(pub.columns)
    numbers = pub[pub["value"].notna()]
    assert not numbers.empty and (numbers["epsilon0"] == 0.1).all()
    assert numbers["where"].str.contains("dp-sniper").all()  # each number names the file it comes from
    assert (pub.loc[pub["value"].isna(), "source"] == "not published").all()
    dps = numbers[numbers["peer"] == "DP-Sniper"].set_index("case")["value"]
    assert dps["laplace_float"] == pytest.approx(0.2521) and dps["histogram_eps"] == pytest.approx(4.602)


def test_small_benchmark_table_runs_and_peers():
    res = run_blackbox_benchmark([{"epsilon": 0.1, "trials": 4000}], 2, cases=["laplace", "svt5"],
                                 search_options={"certify_top": 2})
    t = res.table.set_index("case")
    assert list(t.index) == ["laplace", "svt5"]
    assert t.loc["svt5", "flagged"] == 2 and t.loc["svt5", "passed"] and " vs " in t.loc["svt5", "witness"]
    assert t.loc["svt5", "mean_epsilon_lower_bound"] > 1.0
    # draws are counted: 8 StatDP patterns, pilot 20 % each, 2 certified pairs with the rest
    assert t.loc["svt5", "draws_per_side"] == pytest.approx(8 * 800 + 2 * 3200)
    assert t.loc["laplace", "dpsniper_epsilon_lower_bound"] == pytest.approx(0.0968)
    assert t.loc["laplace", "statdp_epsilon_lower_bound"] == pytest.approx(0.0998)
    assert t.loc["laplace", "ours_at_least_dpsniper"] in (True, False)
    assert len(res.runs) == 4 and (res.runs["seconds"] > 0).all()


def test_peers_only_at_their_own_epsilon0_and_bad_settings():
    res = run_blackbox_benchmark([{"epsilon": 1.0, "trials": 2000}], 1, cases=["rnm_laplace"])
    row = res.table.iloc[0]
    assert math.isnan(row["dpsniper_epsilon_lower_bound"]) and "0.1 only" in row["dpsniper_source"]
    assert row["ours_at_least_dpsniper"] is None or pd.isna(row["ours_at_least_dpsniper"])
    with pytest.raises(ValueError, match="settings"):
        run_blackbox_benchmark([], 1)
    with pytest.raises(ValueError, match="setting"):
        run_blackbox_benchmark([{"epsilon": 1.0}], 1)
    with pytest.raises(ValueError, match="unknown benchmark case"):
        run_blackbox_benchmark([{"epsilon": 1.0, "trials": 2000}], 1, cases=["nope"])


def test_same_seed_same_table():
    kw = dict(cases=["rnm_laplace_value"], seed=3, search_options={"certify_top": 1})
    a = run_blackbox_benchmark([{"epsilon": 1.0, "trials": 3000}], 2, **kw).runs
    b = run_blackbox_benchmark([{"epsilon": 1.0, "trials": 3000}], 2, **kw).runs
    np.testing.assert_array_equal(a["epsilon_lower_bound"], b["epsilon_lower_bound"])


def test_a_setting_can_name_its_own_cases():
    """A second row at more draws for the cases that need them: ``{"cases": [...]}`` in a setting."""
    res = run_blackbox_benchmark([{"epsilon": 1.0, "trials": 2000}, {"epsilon": 1.0, "trials": 3000, "cases": ["laplace"]}],
                                 1, cases=["laplace", "rnm_laplace"])
    t = res.table
    assert list(zip(t["trials"], t["case"])) == [(2000, "laplace"), (2000, "rnm_laplace"), (3000, "laplace")]
    assert set(t["outputs"]) == {"counts"}
    with pytest.raises(ValueError, match="unknown benchmark case"):
        run_blackbox_benchmark([{"epsilon": 1.0, "trials": 2000, "cases": ["nope"]}], 1)
    with pytest.raises(ValueError, match="setting"):
        run_blackbox_benchmark([{"epsilon": 1.0, "trials": 2000, "seeds": 3}], 1)
