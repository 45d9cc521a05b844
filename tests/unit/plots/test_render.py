"""Every series distinguishable, every text and legend inside the canvas (issue 34 §5; CONVENTIONS item 29).

The figures of the PATE/CaPC/PromptPATE bars (Figs. 3, 4), the appendix figures (7–31) and the
Private-kNN Fig. 5 are drawn by their plot functions from fabricated tables of the real format
(the summaries' columns, the real legend labels, a long footer) and checked with
:func:`ppaudit.plots.style.layout_problems`; a planted unreadable figure shows the check can fail.
(The workflow's own figures are checked the same way with ``PPAUDIT_CHECK_FIGURES=1``,
:func:`ppaudit.plots.style.write_figure_outputs`.) Agg backend, about 1 s per figure.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from ppaudit.plots.knn import KNN_ADVERSARY_LABELS, fig5_table, knn_confidence_footer, plot_knn_fig5  # noqa: E402
from ppaudit.plots.pate_capc import appendix_panels, confidence_footer, fig34_table, plot_appendix_figure, plot_leakage_panels  # noqa: E402
from ppaudit.plots.style import footer_lines, layout_problems, procedure_hatch  # noqa: E402

_ADVS = ("nat-advq", "pois-advq")


def _pate_summary(algo: str, sound: bool, advs=_ADVS, datasets=("mnist", "fashion-mnist")) -> pd.DataFrame:
    rows = []
    for d, ds in enumerate(datasets):
        for a, adv in enumerate(advs):
            s = (1 + a) * (1 + 0.5 * d)
            cols = {"data_independent": 9.0, "data_dependent": 5.0 * s, "exact": 2.0 * s, "two_cut_cp": 1.5 * s, "k_cut": 1.0 * s}
            if sound:
                cols.update(exact_transcript=0.3 * s, transcript_cap=0.9 * s, exact_eps_pld=0.4 * s, valid_eps_lower=0.1 * s,
                            two_cut_transcript=0.2 * s)
                if adv == "pois-natq":
                    cols.update(joint_cap=0.8 * s, exact_joint=0.5 * s, two_cut_joint=0.25 * s, exact_eps_pld_joint=0.6 * s,
                                valid_eps_lower_joint=0.15 * s)
            for col, v in cols.items():
                rows.append({"algo": algo, "dataset": ds, "adversary": adv, "case": "worst", "column": col, "epsilon": v, "candidate": 0,
                             "simultaneous_confidence": 0.9493, "multiplicity": "bonferroni", "num_audits": 24})
    return pd.DataFrame(rows)


def _assert_readable(fig):
    try:
        problems = layout_problems(fig)
    finally:
        plt.close(fig)
    assert problems == []


@pytest.mark.parametrize("advs", [list(_ADVS), ["pois-natq"]], ids=["fig3", "fig4"])
def test_fig34_is_readable(advs):
    summaries = [_pate_summary("pate", True, advs), _pate_summary("capc", True, advs),
                 _pate_summary("promptpate", False, advs, ("rotten-tomatoes",)).drop(columns=["simultaneous_confidence"])]
    table = fig34_table(summaries, advs)
    assert table["bar"].nunique() >= 7
    footer = confidence_footer(summaries, advs)
    _assert_readable(plot_leakage_panels(table, "Fig. 3", floor=0.0285, footer=footer))


def test_appendix_figure_is_readable():
    s = _pate_summary("pate", True, ["pois-natq"])
    rdp = pd.DataFrame({"candidate": 0, "order": [2.0, 8.0, 32.0], "data_independent": [2, 8, 32], "data_dependent": [1, 4, 9],
                        "exact": [0.5, 1.0, 2.0], "two_cut_cp": [0.2, 0.5, 0.9], "k_cut": [0.1, 0.2, 0.3],
                        "exact_transcript": [0.05, 0.1, 0.2], "transcript_cap": [0.2, 0.3, 0.4]})
    bars, curve, which, _ = appendix_panels(s, rdp, "worst", "mnist")
    _assert_readable(plot_appendix_figure(bars, curve, "Fig. 9", which, floor=0.0285))


def test_fig5_is_readable():
    rows = []
    for ds in ("fashion-mnist", "rotten-tomatoes"):
        for i, adv in enumerate(KNN_ADVERSARY_LABELS):
            for col, v in (("data_independent", 2.0), ("two_cut_cp", 0.1 * (i + 1)), ("two_cut_paper", 0.09 * (i + 1)), ("exact", 0.5),
                           ("valid_eps_lower", 0.01 * (i + 1)), ("exact_eps_pld", 0.4)):
                rows.append({"algo": "knn", "dataset": ds, "adversary": adv, "case": "worst", "column": col, "epsilon": v,
                             "simultaneous_confidence": 0.8315, "multiplicity": "bonferroni", "num_audits": 3000})
    summary = pd.DataFrame(rows)
    table = fig5_table(summary, KNN_ADVERSARY_LABELS)
    footer = knn_confidence_footer(summary, KNN_ADVERSARY_LABELS)
    _assert_readable(plot_knn_fig5(table, "Fig. 5", floor=0.0285, footer=footer))


def test_the_check_finds_an_unreadable_figure():
    """Planted bugs: a legend pushed off the canvas, two look-alike series, a footer wider than the figure."""
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar([0], [1.0], color="tab:blue", label="2-cut audit (paper)")
    ax.bar([1], [2.0], color="tab:blue", label="2-cut audit (sound)")
    ax.legend(loc="upper left", bbox_to_anchor=(0.9, 1.0))
    fig.text(0.01, 0.01, "x" * 300, fontsize=6)
    try:
        problems = layout_problems(fig)
    finally:
        plt.close(fig)
    text = " | ".join(problems)
    assert "look alike" in text and "'2-cut audit (paper)'" in text
    assert "legend lies outside the canvas" in text and "figure text" in text


def test_hatch_and_footer_lines():
    assert procedure_hatch("2-cut audit Nat-AdvQ (paper: per-query composition)") is None
    assert procedure_hatch("2-cut audit Pois-AdvQ (sound: transcript)") == "//.."
    assert procedure_hatch("exact (sound: joint transcript)") == "xx"
    lines = footer_lines("a" * 50 + "; " + "b " * 100, width=60).split("\n")
    assert lines[0] == "a" * 50 + ";" and max(map(len, lines)) <= 60 and len(lines) >= 4
    with pytest.raises(ValueError, match="width must be >= 20, got 5"):
        footer_lines("x", width=5)


def test_the_workflow_writer_refuses_an_unreadable_figure_when_asked(tmp_path, monkeypatch):
    """plots.style.write_figure_outputs: with PPAUDIT_CHECK_FIGURES set, a look-alike pair stops the
    write (nothing written); without it, the same figure is written (the check is opt-in)."""
    from ppaudit.plots.style import write_figure_outputs

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar([0], [1.0], color="tab:blue", label="a")
    ax.bar([1], [2.0], color="tab:blue", label="b")
    ax.legend()
    out = {k: str(tmp_path / f"f.{k}") for k in ("pdf", "png", "csv")}
    table = pd.DataFrame({"x": [1.0, 2.0]})
    try:
        monkeypatch.setenv("PPAUDIT_CHECK_FIGURES", "1")
        with pytest.raises(ValueError, match="not readable.*look alike"):
            write_figure_outputs(fig, table, out)
        assert not any((tmp_path / f"f.{k}").exists() for k in out)
        monkeypatch.delenv("PPAUDIT_CHECK_FIGURES")
        write_figure_outputs(fig, table, out)
        assert all((tmp_path / f"f.{k}").exists() for k in out)
    finally:
        plt.close(fig)
