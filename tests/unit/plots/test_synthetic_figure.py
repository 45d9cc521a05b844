"""Title and plotted table of the synthetic-pair figures (ppaudit.plots.chadha; Chadha et al. 2024, Figs. 2 and 6)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from ppaudit.experiments.chadha2024.synthetic import METHODS
from ppaudit.plots.chadha import compact_number, synthetic_figure, synthetic_title


def test_compact_number():
    assert compact_number(100000000) == "10^8"
    assert compact_number(1000) == "10^3"
    assert compact_number(12345) == "12345"
    assert compact_number(2.0) == "2"
    assert compact_number(100) == "100"  # below 1000: plain
    with pytest.raises(ValueError, match="nan"):
        compact_number(float("nan"))


def test_synthetic_title_names_pair_sigma_trials_mode():
    pair = {"h_s": [13, 12, 10], "h_s_prime": [12, 13, 10], "sigma": 2.0}
    settings = {"trials": 10**8, "mode": "exact", "confidence": 0.95}
    assert synthetic_title("Fig. 2", pair, settings) == (
        "Fig. 2: noisy argmax, $H_S$ = [13, 12, 10] vs $H_{S'}$ = [12, 13, 10]\n"
        "σ = 2, T = $10^8$ trials per histogram (exact mode), 0.95 confidence"
    )
    with pytest.raises(ValueError, match="h_s has 3 classes but h_s_prime has 2"):
        synthetic_title("Fig. 2", {**pair, "h_s_prime": [1, 2]}, settings)


def _table():
    order = np.array([2.0, 4.0, 8.0])
    return pd.DataFrame({"order": order, "exact": order / 10, "two_cut_cp": order / 20, "k_cut_goodman": order / 30,
                         "data_independent": order / 4, "extra": 1.0})


def test_synthetic_figure_orders_columns_and_picks_ratio_panel():
    fig, plotted = synthetic_figure(_table(), ["two_cut_cp", "exact", "data_independent"], "t")
    # METHODS order, not the request's; unrequested columns dropped.
    assert list(plotted.columns) == ["order", *[m for m in METHODS if m in ("two_cut_cp", "exact", "data_independent")]]
    assert len(fig.axes) == 1  # one audit: no ratio panel
    plt.close(fig)
    fig, plotted = synthetic_figure(_table(), ["two_cut_cp", "k_cut_goodman", "exact"], "t")
    assert len(fig.axes) == 2  # two audits and the exact RDP: audit / exact below
    plt.close(fig)


def test_synthetic_figure_rejects_missing_or_unknown_methods():
    with pytest.raises(ValueError, match=r"no column\(s\) \['k_cut_sison_glaz'\]"):
        synthetic_figure(_table(), ["exact", "k_cut_sison_glaz"], "t")
    with pytest.raises(ValueError, match=r"unknown method\(s\) \['extra'\]"):
        synthetic_figure(_table(), ["extra"], "t")
