"""ppaudit.plots.appendix: the one entry point of the appendix figures (Chadha et al. 2024, Figs. 7–31).

It selects the rows of one adversary, case (and PromptPATE variant), and returns exactly what
appendix_panels computes for them; a selection without rows raises ValueError naming it.
"""

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from ppaudit.plots.appendix import appendix_figure, setting_line
from ppaudit.plots.pate_capc import appendix_panels

COLUMNS = ("data_independent", "data_dependent", "exact", "two_cut_cp", "k_cut")


def _tables(variants=("-",)):
    """Summary (two datasets, two adversaries, two cases, variants) and RDP curves of two candidates."""
    rows, curves = [], []
    for v, variant in enumerate(variants):
        for a, adv in enumerate(("nat-advq", "pois-natq")):
            for c, case in enumerate(("worst", "average")):
                for d, ds in enumerate(("d1", "d2")):
                    for k, col in enumerate(COLUMNS):
                        eps = 1.0 + k + 10 * d + 100 * c + 1000 * a + 10000 * v
                        rows.append({"dataset": ds, "adversary": adv, "case": case, "variant": variant, "column": col, "epsilon": eps, "candidate": d})
        for cand in (0, 1):
            for order in (2.0, 8.0):
                curves.append({"candidate": cand, "order": order, "variant": variant,
                               **{col: (v + 1) * (cand + 1) * order * (k + 1) for k, col in enumerate(COLUMNS)}})
    return pd.DataFrame(rows), pd.DataFrame(curves)


def test_returns_what_appendix_panels_computes_for_the_selected_rows():
    summary, rdp = _tables()
    fig, plotted = appendix_figure(summary, rdp, adversary="pois-natq", case="average", panel_dataset="d1", title="t", floor=0.5)
    rows = summary[(summary["adversary"] == "pois-natq") & (summary["case"] == "average")]
    assert_frame_equal(plotted, appendix_panels(rows, rdp, "average", "d1")[3])
    assert "composed RDP on d1, mean over 2 candidates" == fig.axes[1].get_title()
    plt.close(fig)


def test_variant_and_columns_select_rows_and_bars():
    summary, rdp = _tables(variants=("-", "confident"))
    fig, plotted = appendix_figure(summary, rdp, adversary="nat-advq", case="worst", panel_dataset="d2", title="t",
                                   variant="confident", columns=["exact", "k_cut"])
    bars = plotted[plotted["panel"] == "bars"]
    # variant "confident" adds 10000 to every ε of the summary; only the two columns asked for are drawn.
    assert sorted(bars["value"]) == [10003.0, 10005.0, 10013.0, 10015.0]
    curve = plotted[plotted["panel"] == "rdp"]
    assert set(curve["bar"]) == {"exact", "k-cut audit"}
    # worst case: the candidate of d2 (#1) of variant "confident": (1 + 1) * (1 + 1) * order * 3 for exact.
    assert sorted(curve.loc[curve["bar"] == "exact", "value"]) == [24.0, 96.0]
    plt.close(fig)


def test_setting_line_is_printed_under_the_rdp_title():
    summary, rdp = _tables()
    setting = {"model": "gemma3-270m", "num_teachers": 6, "num_queries": 5, "sigma": "1"}
    assert setting_line(setting) == "gemma3-270m, k = 6, n_Q = 5, σ = 1"
    assert setting_line(None) == "" and setting_line({}) == ""
    fig, _ = appendix_figure(summary, rdp, adversary="nat-advq", case="worst", panel_dataset="d1", title="t", variant="-", setting=setting)
    assert fig.axes[1].get_title().endswith("\ngemma3-270m, k = 6, n_Q = 5, σ = 1")
    plt.close(fig)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"adversary": "pois-advq", "case": "worst"}, "no worst-case summary rows for adversary 'pois-advq'"),
        ({"adversary": "nat-advq", "case": "worst", "variant": "mapping"}, "adversary 'nat-advq', variant 'mapping'"),
    ],
)
def test_empty_selection_raises_naming_it(kwargs, message):
    summary, rdp = _tables()
    with pytest.raises(ValueError, match=message):
        appendix_figure(summary, rdp, panel_dataset="d1", title="t", **kwargs)


def test_variant_without_variant_column_raises():
    summary, rdp = _tables()
    with pytest.raises(ValueError, match="variant 'confident' given but the summary table has no variant column"):
        appendix_figure(summary.drop(columns="variant"), rdp, adversary="nat-advq", case="worst", panel_dataset="d1", title="t", variant="confident")
