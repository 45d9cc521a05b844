"""The plotted numbers of Obs. Figs. 1 and 5 (ppaudit.plots.labeldp.mia_comparison_table).

Rows of the requested attacks only, in the audit order, renamed columns with the same values,
PATE labelled by its student, and the figure drawn from the table.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from ppaudit.plots.labeldp import mia_comparison_table, plot_mia_comparison


def _audits() -> pd.DataFrame:
    rows = []
    for ds, algo, student in (("image", "alibi", ""), ("image", "pate", "fixmatch"), ("tabular", "pate", "")):
        for eps in (1.0, math.inf):
            for k, attack in enumerate(("lia", "calibrated_mia", "rmia")):
                rows.append(dict(dataset=ds, algo=algo, epsilon=eps, claimed_epsilon=eps, attack=attack, epsilon_sweep_mean=0.1 * k + (eps if math.isfinite(eps) else 9.0),
                                 epsilon_sweep_std=0.01, repetitions=3, num_canaries=200, pate_student=student))  # fmt: skip
    return pd.DataFrame(rows)


def test_selects_attacks_and_renames_columns():
    audits = _audits()
    t = mia_comparison_table(audits, ["lia", "calibrated_mia"])
    keep = audits[audits["attack"].isin(["lia", "calibrated_mia"])]
    assert len(t) == len(keep) == 12
    assert list(t.columns) == ["dataset", "algorithm", "epsilon_theory", "claimed_epsilon", "attack", "epsilon_mean", "epsilon_std",
                               "repetitions", "num_canaries"]  # fmt: skip
    assert t["epsilon_mean"].tolist() == keep["epsilon_sweep_mean"].tolist()
    assert t["epsilon_theory"].tolist() == keep["epsilon"].tolist()
    assert t["attack"].tolist() == keep["attack"].tolist()
    labels = dict(zip(zip(t["dataset"], t["algorithm"]), [None] * len(t)))
    assert ("image", "ALIBI") in labels
    assert ("image", "PATE-FM (FixMatch student, short schedule)") in labels
    assert ("tabular", "PATE (plain supervised student; CatBoost)") in labels  # no student recorded: plain on tabular


def test_without_student_column_and_bad_attack():
    audits = _audits().drop(columns="pate_student")
    t = mia_comparison_table(audits, ["rmia"])
    assert set(t["attack"]) == {"rmia"} and len(t) == 6
    with pytest.raises(ValueError, match=r"got \['mia'\]"):
        mia_comparison_table(audits, ["lia", "mia"])


def test_figure_has_one_panel_per_dataset_and_algorithm():
    t = mia_comparison_table(_audits(), ["lia", "calibrated_mia", "rmia"])
    fig = plot_mia_comparison(t, ["lia", "calibrated_mia", "rmia"], "title")
    assert len(fig.axes) == 3
