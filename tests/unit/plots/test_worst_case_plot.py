"""Figure of the worst-case noisy-argmax RDP (ppaudit.plots.worst_case)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppaudit.accounting import gnmax_rdp_worst_case, worst_case_epsilon_table
from ppaudit.plots.worst_case import plot_gnmax_worst_case


def _tables():
    frames = []
    for name, (k, c, sigma) in {"a": (10, 3, 2.0), "b": (12, 2, 3.0)}.items():
        frame = gnmax_rdp_worst_case(k, c, sigma, [1.5, 2.0, 8.0]).to_frame()
        frame.insert(0, "setting", name)
        frames.append(frame)
    rdp = pd.concat(frames, ignore_index=True)
    return rdp, worst_case_epsilon_table(rdp, [1, 100], 1e-5)


def test_plot_returns_figure_and_every_plotted_number():
    import matplotlib.pyplot as plt

    rdp, eps = _tables()
    fig, table = plot_gnmax_worst_case(rdp, eps, 1e-5)
    assert len(fig.axes) == 3
    assert set(table["panel"]) == {"rdp", "ratio", "epsilon"}
    # The plotted worst-case RDP is the table's, and the ratio is its quotient by α/σ².
    got = table[(table.panel == "rdp") & (table.curve == "worst_case") & (table.setting == "a")]["y"].to_numpy()
    np.testing.assert_allclose(got, rdp[rdp.setting == "a"].sort_values("order")["rdp_worst_case"])
    ratio = table[(table.panel == "ratio") & (table.curve == "worst_case/data_independent")]["y"]
    assert ((ratio > 0) & (ratio <= 1 + 1e-12)).all()
    assert len(table[table.panel == "epsilon"]) == 2 * 2 * 3  # settings × T × curves
    plt.close(fig)


def test_plot_rejects_missing_columns():
    rdp, eps = _tables()
    with pytest.raises(ValueError, match="rdp_upper"):
        plot_gnmax_worst_case(rdp.drop(columns="rdp_upper"), eps, 1e-5)
    with pytest.raises(ValueError, match="empty"):
        plot_gnmax_worst_case(rdp.iloc[:0], eps, 1e-5)
