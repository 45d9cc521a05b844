"""ppaudit.plots.blackbox: the figure's table holds every plotted number."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from ppaudit.plots.blackbox import plot_blackbox_benchmark


def _table():
    rows = []
    for eps in (1.0, 0.1):
        for case, buggy, rate, lb, true, dps in (("laplace", False, 0.0, 0.5 * eps, eps, 0.0968 if eps == 0.1 else math.nan),
                                                  ("svt5", True, 1.0, 6.0, math.inf, 1.7612 if eps == 0.1 else math.nan)):
            rows.append({"epsilon0": eps, "case": case, "buggy": buggy, "verdict_rate": rate, "mean_epsilon_lower_bound": lb,
                         "true_epsilon": true, "claim_epsilon": eps, "dpsniper_epsilon_lower_bound": dps,
                         "statdp_epsilon_lower_bound": math.nan, "seeds": 20, "flagged": int(20 * rate)})
    return pd.DataFrame(rows)


def test_plot_returns_every_plotted_number():
    import matplotlib

    matplotlib.use("Agg")
    fig, plotted = plot_blackbox_benchmark(_table(), false_alarm_bar=0.15)
    assert len(fig.axes) == 4
    rates = plotted[plotted["panel"] == "verdict_rate"]
    assert len(rates) == 4 and set(rates["value"]) == {0.0, 1.0}
    dps = plotted[(plotted["series"] == "DP-Sniper (published)") & (plotted["epsilon0"] == 0.1)]
    assert sorted(dps["value"]) == pytest.approx([0.0968, 1.7612])


def test_plot_rejects_a_bad_table():
    with pytest.raises(ValueError, match="lacks"):
        plot_blackbox_benchmark(pd.DataFrame({"case": ["x"]}))
    with pytest.raises(ValueError, match="empty"):
        plot_blackbox_benchmark(_table().iloc[0:0])
