"""Bars of Figs. 3, 4 and 7–16: the paper's per-query composition beside the sound transcript values."""

import pandas as pd
import pytest

from ppaudit.plots.pate_capc import appendix_panels, fig34_table


def _summary(sound: bool, algo="pate"):
    rows = []
    for adv, scale in (("nat-advq", 1.0), ("pois-advq", 2.0)):
        cols = {"data_independent": 9.0, "data_dependent": 5.0, "exact": 2.0 * scale, "two_cut_cp": 1.5 * scale, "k_cut": 1.0}
        if sound:
            cols.update(exact_transcript=0.3 * scale, transcript_cap=0.9 * scale, exact_eps_pld=0.4 * scale, valid_eps_lower=0.1 * scale)
        for col, v in cols.items():
            rows.append({"algo": algo, "dataset": "d", "adversary": adv, "case": "worst", "column": col, "epsilon": v, "candidate": 0})
    return pd.DataFrame(rows)


def test_fig3_bars_paper_and_sound():
    t = fig34_table([_summary(True)], ["nat-advq", "pois-advq"])
    bars = dict(zip(t["bar"], t["epsilon"]))
    assert bars["exact (paper: per-query composition) (Pois-AdvQ)"] == 4.0
    assert bars["exact (sound: transcript) (Pois-AdvQ)"] == pytest.approx(0.6)
    assert bars["2-cut audit Nat-AdvQ (paper: per-query composition)"] == 1.5
    assert bars["exact ε (PLD, sound: transcript) (Pois-AdvQ)"] == pytest.approx(0.8)
    assert bars["valid ε lower bound (transcript) (Nat-AdvQ)"] == pytest.approx(0.1)
    assert bars["data-independent theory"] == 9.0 and len(t) == 1 + 2 * 3 + 2 * 2 + 2


def test_fig3_bars_without_transcript_keep_the_paper_labels():
    t = fig34_table([_summary(False, "promptpate")], ["nat-advq", "pois-advq"])
    assert list(t["bar"]) == ["data-independent theory", "data-dependent theory (Nat-AdvQ)", "data-dependent theory (Pois-AdvQ)",
                              "exact (Nat-AdvQ)", "exact (Pois-AdvQ)", "2-cut audit Nat-AdvQ", "2-cut audit Pois-AdvQ"]
    with pytest.raises(ValueError, match="adversaries"):
        fig34_table([_summary(False)], [])


def test_appendix_panels_add_sound_bars_and_curves():
    s = _summary(True)
    s = s[s["adversary"] == "pois-advq"]
    rdp = pd.DataFrame({"candidate": [0, 0], "order": [2.0, 8.0], "data_independent": [2, 8], "data_dependent": [1, 4], "exact": [0.5, 1.0],
                        "two_cut_cp": [0.2, 0.5], "k_cut": [0.1, 0.2], "exact_transcript": [0.05, 0.1], "transcript_cap": [0.2, 0.3]})
    bars, curve, which, plotted = appendix_panels(s, rdp, "worst", "d")
    assert "exact (sound: transcript)" in set(bars["bar"]) and "exact (paper: per-query composition)" in set(bars["bar"])
    assert "transcript cap D_α(H_S‖H_S') (sound)" in curve.columns and which.startswith("worst of 1")


def test_confidence_footer_states_the_simultaneous_level_per_algorithm_and_adversary():
    from ppaudit.plots.pate_capc import confidence_footer

    pate = pd.DataFrame({"algo": "pate", "dataset": ["mnist", "fashion-mnist", "mnist"], "adversary": ["nat-advq", "nat-advq", "pois-advq"],
                         "simultaneous_confidence": [0.9499, 0.9487, 0.95], "multiplicity": "bonferroni"})
    paper = pd.DataFrame({"algo": "capc", "dataset": ["mnist"], "adversary": ["nat-advq"], "simultaneous_confidence": [0.0],
                          "multiplicity": "none (paper)"})
    promptpate = pd.DataFrame({"algo": "promptpate", "dataset": ["sst2"], "adversary": ["nat-advq"]})  # no column: skipped
    text = confidence_footer([pate, paper, promptpate], ["nat-advq", "pois-advq"])
    assert "pate: Nat-AdvQ ≥ 0.9487, Pois-AdvQ ≥ 0.9500 (bonferroni)" in text  # the smallest over datasets
    assert "capc: Nat-AdvQ ≥ 0.0000 (none (paper))" in text and "promptpate" not in text
    assert confidence_footer([promptpate], ["nat-advq"]) == ""
    assert "Pois-AdvQ" not in confidence_footer([pate], ["nat-advq"])
    # issue 27 §1: the wording names every audit the number covers, and N where the summary has it
    assert text.startswith("per algorithm, dataset and adversary, every audit run (2-cut, k-cut and transcript audits of each "
                           "candidate and query, again for the null-canary controls, and the joint audits) holds at once")
    # issue #34 §3: the k-cut's intervals are asymptotic, said on the footer's last line
    assert text.endswith("\nthe k-cut's Goodman / Sison–Glaz intervals are asymptotic, so its share of that confidence is too")
    text = confidence_footer([pate.assign(num_audits=[240, 240, 120])], ["nat-advq", "pois-advq"])
    assert "pate: Nat-AdvQ ≥ 0.9487 (N = 240), Pois-AdvQ ≥ 0.9500 (N = 120) (bonferroni)" in text


def test_leakage_panels_legend_lists_the_bars_of_every_panel():
    from ppaudit.plots.pate_capc import plot_leakage_panels

    table = pd.DataFrame({"algo": ["pate", "pate", "promptpate"], "dataset": ["mnist", "mnist", "sst2"],
                          "bar": ["exact (sound: transcript)", "2-cut audit (sound: transcript)", "2-cut audit"],
                          "epsilon": [0.3, 0.2, 0.5]})
    fig = plot_leakage_panels(table, "t", floor=0.03, footer="confidence 0.95")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert set(table["bar"]) <= set(labels) and len(labels) == len(set(labels)) == 4  # + the floor line
    assert any(t.get_text() == "confidence 0.95" for t in fig.texts)
