"""The auditor's self-check: soundness on correct mechanisms, power on planted bugs (ppaudit.selfcheck)."""

import pytest
from scipy.stats import binom

from ppaudit.selfcheck import false_alarm_limit, plot_selfcheck, run_selfcheck, selfcheck_cases


@pytest.fixture(scope="module")
def result():
    # Fewer repetitions than the target (100) but the same statistical bars: correct mechanisms
    # flagged in <= 5 % + binomial slack (slack level 0.001), planted bugs in >= 90 % of runs.
    return run_selfcheck(repetitions=40, trials=20_000, seed=7, slack_level=0.001)


def test_every_case_meets_its_bar(result):
    tab = result.table.set_index("case")
    limit = binom.ppf(0.999, 40, 0.05)
    for case in selfcheck_cases():
        row = tab.loc[case.name]
        if case.planted_bug:
            assert row["flag_rate"] >= 0.9, case.name
        else:
            assert row["flagged"] <= limit, case.name
    assert result.passed


def test_every_correct_mechanism_has_a_bug_twin_or_is_tight(result):
    tab = result.table
    fams = tab.groupby("family")["planted_bug"].apply(lambda s: (s != "").sum())
    assert fams["Gaussian noisy argmax"] == 1 and fams["Laplace report-noisy-max"] == 2
    assert fams["Gaussian report-noisy-max"] == 1
    # Randomized response is tight for its claim: the mean eps lower bound is close to the claim.
    rr = tab.set_index("case").loc["randomized_response"]
    assert 0.85 < rr["mean_epsilon_lower_bound"] < rr["claim_epsilon"]


def test_same_seed_same_table():
    a = run_selfcheck(repetitions=2, trials=2000, seed=3, cases=["laplace_rnm"])
    b = run_selfcheck(repetitions=2, trials=2000, seed=3, cases=["laplace_rnm"])
    assert a.runs.equals(b.runs)


def test_false_alarm_limit_and_errors():
    assert false_alarm_limit(100) == int(binom.ppf(0.99, 100, 0.05))
    with pytest.raises(ValueError, match="unknown self-check case"):
        run_selfcheck(repetitions=1, trials=10, cases=["nope"])
    with pytest.raises(ValueError, match="repetitions"):
        run_selfcheck(repetitions=0)


def test_plot_returns_figure_and_table(result):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    fig, tab = plot_selfcheck(result)
    assert len(fig.axes) == 1 and len(tab) == len(selfcheck_cases())
