"""The bars of Fig. 5 (ppaudit.plots.knn.fig5_table; Chadha et al. 2024, §6)."""

from __future__ import annotations

import pandas as pd
import pytest

from ppaudit.plots.knn import FIG5_RIGHT_PANEL, KNN_ADVERSARY_LABELS, fig5_table


def _summary():
    rows = []
    for ds, scale in (("rotten-tomatoes", 1.0), ("fashion-mnist", 2.0)):
        for i, adv in enumerate(KNN_ADVERSARY_LABELS):
            for case in ("worst", "average"):
                f = scale * (1 if case == "worst" else 0.5)
                rows += [
                    {"dataset": ds, "adversary": adv, "case": case, "column": "data_independent", "epsilon": 9.0 * f},
                    {"dataset": ds, "adversary": adv, "case": case, "column": "two_cut_cp", "epsilon": (i + 1) * f},
                    {"dataset": ds, "adversary": adv, "case": case, "column": "k_cut", "epsilon": 100.0},
                ]
                if adv != "pois-natq-train":  # no exact for one adversary
                    rows.append({"dataset": ds, "adversary": adv, "case": case, "column": "exact", "epsilon": (i + 1.5) * f})
    return pd.DataFrame(rows)


def test_fig5_table_bars():
    t = fig5_table(_summary(), KNN_ADVERSARY_LABELS)
    assert list(t.columns) == ["panel", "dataset", "bar", "adversary", "column", "epsilon"]
    assert list(dict.fromkeys(t["dataset"])) == ["rotten-tomatoes", "fashion-mnist"]  # summary order
    rt = t[t["dataset"] == "rotten-tomatoes"]
    # One theory bar per dataset (worst case), first.
    assert rt.iloc[0].to_dict() == {"panel": "left", "dataset": "rotten-tomatoes", "bar": "data-independent theory",
                                    "adversary": "", "column": "data_independent", "epsilon": 9.0}
    left = rt[(rt["panel"] == "left") & (rt["column"] != "data_independent")]
    assert list(dict.fromkeys(left["adversary"])) == list(KNN_ADVERSARY_LABELS)
    assert set(rt["column"]) == {"data_independent", "two_cut_cp", "exact"}  # k_cut is not drawn
    right = rt[rt["panel"] == "right"]
    assert list(dict.fromkeys(right["adversary"])) == list(FIG5_RIGHT_PANEL)
    # The adversary without an exact value has its audit bar only; worst case values only.
    train = rt[rt["adversary"] == "pois-natq-train"]
    assert set(train["column"]) == {"two_cut_cp"} and set(train["epsilon"]) == {4.0}
    assert t[t["dataset"] == "fashion-mnist"]["epsilon"].iloc[0] == 18.0
    assert len(t) == 2 * (1 + 2 * 5 - 1 + 2 * 3 - 1)


def test_fig5_table_rejects_bad_input():
    with pytest.raises(ValueError, match="no worst-case rows"):
        fig5_table(_summary().assign(case="average"), KNN_ADVERSARY_LABELS)
    with pytest.raises(ValueError, match="labels has no entry"):
        fig5_table(_summary(), {"nat-advq": "Nat-AdvQ"})
    s = _summary()
    with pytest.raises(ValueError, match="no data_independent row"):
        fig5_table(s[s["column"] != "data_independent"], KNN_ADVERSARY_LABELS)


def test_fig5_table_carries_the_paper_procedure_and_the_valid_bound():
    """With procedure columns in the summary (issue 13 §3–4), the paper's procedure and the
    valid ε lower bound are plotted beside the sound audit; the figure renders them."""
    s = _summary()
    extra = s[s["column"] == "two_cut_cp"].copy()
    paper = extra.assign(column="two_cut_paper", epsilon=extra["epsilon"] * 0.5)
    valid = extra.assign(column="valid_eps_lower", epsilon=0.1)
    t = fig5_table(pd.concat([s, paper, valid], ignore_index=True), KNN_ADVERSARY_LABELS)
    nat = t[(t["dataset"] == "rotten-tomatoes") & (t["adversary"] == "nat-advq")].set_index("column")["epsilon"]
    assert nat["two_cut_paper"] == 0.5 and nat["two_cut_cp"] == 1.0 and nat["valid_eps_lower"] == 0.1
    from ppaudit.plots.knn import plot_knn_fig5

    fig = plot_knn_fig5(t, "test", floor=0.03)
    labels = [h.get_label() for ax in fig.axes for h in ax.get_legend_handles_labels()[0]]
    assert any("paper's procedure" in lab for lab in labels) and any("valid ε lower bound" in lab for lab in labels)
