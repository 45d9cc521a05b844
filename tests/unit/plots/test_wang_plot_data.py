"""Data shaping of the Wang et al. 2022 figures (ppaudit.plots.wang): Fig. 1's variants,
Fig. 3's consensus levels, the Figs. 6/7 title — what the plot_wang_* scripts call."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from ppaudit.plots.wang import (
    consensus_levels,
    error_per_sigma_title,
    phd_consensus_summaries,
    plot_consensus_distribution,
)


def test_consensus_levels_are_equal_tertiles_by_top_share():
    rng = np.random.default_rng(0)
    h = rng.multinomial(20, [0.5, 0.3, 0.2], size=30)
    data = consensus_levels({"A": h, "B": h[:9]})
    shares, levels = data["A"]
    np.testing.assert_allclose(shares, h.max(1) / 20)
    assert np.bincount(levels).tolist() == [10, 10, 10]
    # every low-consensus histogram has share ≤ every high-consensus one
    assert shares[levels == 0].max() <= shares[levels == 2].min()
    assert list(data) == ["A", "B"] and np.bincount(data["B"][1]).tolist() == [3, 3, 3]
    fig, table = plot_consensus_distribution(data)
    plt.close(fig)
    assert table.loc[table["kind"] == "bin"].groupby("dataset")["count"].sum().to_dict() == {"A": 30, "B": 9}
    with pytest.raises(ValueError, match="at least one dataset"):
        consensus_levels({})


def test_phd_summaries_count_the_rule_on_true_and_reconstructed_consensus():
    df = pd.DataFrame({
        "phd": [True, True, False, False],
        "consensus_true": [0.6, 0.9, 0.7, 1.0],
        "consensus_reconstructed": [0.6, 0.6, 0.9, 1.0],
        "sigma": 40.0, "num_queries": 500,
    })
    s = phd_consensus_summaries(df, 0.75)
    assert list(s) == ["vote histograms (direct access)", "reconstructed from 500 noisy answers (σ = 40)"]
    direct, recon = s.values()
    assert (direct["phd_low"], direct["phd_high"], direct["nonphd_low"], direct["nonphd_high"]) == (1, 1, 1, 1)
    assert direct["precision"] == 0.5 and direct["recall"] == 0.5
    assert (recon["phd_low"], recon["nonphd_low"]) == (2, 0) and recon["precision"] == 1.0 and recon["accuracy"] == 1.0
    with pytest.raises(ValueError, match="consensus_reconstructed"):
        phd_consensus_summaries(df.drop(columns="consensus_reconstructed"), 0.75)
    with pytest.raises(ValueError, match="1.5"):
        phd_consensus_summaries(df, 1.5)


def test_error_per_sigma_title_counts_the_histograms():
    attacks = pd.DataFrame({"label": ["L1", "L1", "M1", "H1", "H2"]})
    assert error_per_sigma_title("MNIST", attacks, 10000) == (
        "MNIST: error of the 4 L/M/H histograms with 10000 queries (bars) and privacy cost (red, right axis)"
    )
    with pytest.raises(ValueError, match="label"):
        error_per_sigma_title("MNIST", attacks.rename(columns={"label": "x"}), 1)
