"""Malek et al. 2021 Tables 5 and 6 from memorisation runs (ppaudit.experiments.labeldp.malek_tables.malek_table).

Runs are built by hand: canaries whose model puts (almost) all mass on the canary label are
memorised, canaries whose argmax is the original label are not. Checked: the rows of each
table, the pooled canary counts and test accuracy, the memorisation rate by hand (1 and 0 on
the planted runs), the interval-overlap check recomputed from the interval ends, the paper's
numbers placed on every estimator row of their setting, and the errors.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppaudit.experiments.labeldp.malek_tables import malek_table

C = 10
LEVELS = {"high": {"alibi": "8", "agibi": "19"}, "low": {"alibi": "2.1", "agibi": "3.7"}}


def _run(n: int, memorised: bool, seed: int, accuracy: float, **extra) -> dict:
    rng = np.random.default_rng(seed)
    yo = rng.integers(0, C, n)
    yc = (yo + rng.integers(1, C, n)) % C  # a wrong label
    ya = (yc + 1) % C
    ya = np.where(ya == yo, (ya + 1) % C, ya)  # Game 3's alternative: neither label
    conf = np.full((n, C), 0.01)
    conf[np.arange(n), yc if memorised else yo] = 1.0
    conf /= conf.sum(axis=1, keepdims=True)
    return dict(confidences=conf, canary_labels=yc, original_labels=yo, alternative_labels=ya, test_accuracy=accuracy, **extra)


def _runs() -> dict:
    runs = {}
    for i, (level, eps) in enumerate(LEVELS.items()):
        memorised = level == "high"
        runs[f"alibi_eps{eps['alibi']}_n1000"] = _run(200, memorised, 10 * i, 0.8, alibi_prior="iterative")
        runs[f"agibi_eps{eps['agibi']}_n1000"] = _run(200, memorised, 10 * i + 1, 0.7, sigma=1.5, agibi_calibration="rdp")
        for g in range(2):
            runs[f"alibi_eps{eps['alibi']}_g{g}"] = _run(100, memorised, 10 * i + 2 + g, 0.6 + 0.2 * g, alibi_prior="iterative")
    return runs


NUMBERS = pd.DataFrame(
    [
        dict(id="t5lo", result_file="results/tables/labeldp/malek_table5.csv", column="epsilon_m_low", paper_value="2.9", paper_std="",
             query="estimator == 'paper' and level == 'high' and canaries == '1000'"),
        dict(id="t5hi", result_file="results/tables/labeldp/malek_table5.csv", column="epsilon_m_high", paper_value="4.0", paper_std="",
             query="estimator == 'paper' and level == 'high' and canaries == '1000'"),
        dict(id="t6acc", result_file="results/tables/labeldp/malek_table6.csv", column="test_accuracy_pct", paper_value="84", paper_std="",
             query="estimator == 'paper' and level == 'low' and algorithm == 'AGIBI'"),
    ]
)  # fmt: skip


def test_table5_rows_pooling_memorisation_and_overlap():
    t = malek_table(_runs(), "malek_table5", LEVELS, games=2, confidence=0.95, paper_numbers=NUMBERS)
    assert list(t["level"]) == ["high"] * 6 + ["low"] * 6
    assert list(t["canaries"]) == (["1000"] * 3 + ["10x100"] * 3) * 2
    assert list(t["estimator"]) == ["paper", "ours_normal", "ours_cp"] * 4
    assert list(t["procedure"]) == ["paper", "ours", "ours"] * 4
    assert (t["num_canaries"] == 200).all() and (t["algorithm"] == "ALIBI").all()
    assert list(t["epsilon"]) == [8.0] * 6 + [2.1] * 6
    # 10x100: the mean test accuracy of the two games (0.6, 0.8).
    assert t.loc[t["canaries"] == "10x100", "test_accuracy"].tolist() == pytest.approx([0.7] * 6)
    assert t["test_accuracy_pct"].tolist() == pytest.approx((100 * t["test_accuracy"]).tolist())
    # Planted: every canary memorised at level high, none at level low.
    assert (t.loc[t["level"] == "high", "canary_memorisation_rate"] == 1.0).all()
    assert (t.loc[t["level"] == "low", "canary_memorisation_rate"] == 0.0).all()
    paper_rows = t[t["estimator"] == "paper"]
    assert (paper_rows.loc[paper_rows["level"] == "high", "epsilon_m_low"] > 0).all()
    assert (paper_rows.loc[paper_rows["level"] == "low", "epsilon_m_low"] == 0).all()
    # The overlap check, recomputed from the interval ends.
    for _, g in t.groupby(["level", "estimator"]):
        a, b = g.iloc[0], g.iloc[1]
        expect = max(a.epsilon_m_low, b.epsilon_m_low) <= min(a.epsilon_m_high, b.epsilon_m_high)
        assert (g["intervals_overlap"] == expect).all()
    assert t["intervals_overlap"].dtype == bool
    # The paper's interval shows on every estimator row of its setting, nowhere else.
    hit = (t["level"] == "high") & (t["canaries"] == "1000")
    assert (t.loc[hit, "paper"] == "2.9–4.0").all() and (t.loc[~hit, "paper"] == "").all()
    assert "paper_accuracy" not in t
    # The measured cause paper_comparison quotes beside a row far from the paper (issue 34 §2).
    first = t.iloc[0]
    assert first["stand_in_measure"] == (f"memorisation-game model: test accuracy {100 * first.test_accuracy:.1f} %, mislabelled canaries memorised 100 % "
                                         f"(argmax = canary label, 200 canaries); {first.num_correct} of {first.num_guesses} guesses right at the chosen threshold")
    assert t.loc[t["level"] == "low", "stand_in_measure"].str.contains("memorised 0 %").all()


def test_table6_algorithms_sigma_and_paper_accuracy():
    t = malek_table(_runs(), "malek_table6", LEVELS, games=2, confidence=0.95, paper_numbers=NUMBERS)
    assert list(t["algorithm"]) == (["ALIBI"] * 3 + ["AGIBI"] * 3) * 2
    assert list(t["epsilon"]) == [8.0] * 3 + [19.0] * 3 + [2.1] * 3 + [3.7] * 3
    agibi = t["algorithm"] == "AGIBI"
    assert (t.loc[agibi, "sigma"] == 1.5).all() and t.loc[~agibi, "sigma"].isna().all()
    assert (t.loc[agibi, "agibi_calibration"] == "rdp").all() and (t.loc[~agibi, "agibi_calibration"] == "").all()
    assert (t.loc[~agibi, "alibi_prior"] == "iterative").all()
    hit = agibi & (t["level"] == "low")
    assert (t.loc[hit, "paper_accuracy"] == "84").all() and (t.loc[~hit, "paper_accuracy"] == "").all()
    assert (t["paper"] == "").all()  # no Table 6 intervals in NUMBERS
    assert "intervals_overlap" not in t
    # ALIBI rows: the mean accuracy of the same ε's small games (0.6, 0.8), quoted in the measure; AGIBI has none.
    assert t.loc[~agibi, "test_accuracy_small_games"].tolist() == pytest.approx([0.7] * 6)
    assert t.loc[agibi, "test_accuracy_small_games"].isna().all()
    assert t.loc[~agibi, "stand_in_measure"].str.endswith("; with 100 canaries per game (2 games, Table 5) the same MLP reaches 70.0 % test accuracy").all()
    assert not t.loc[agibi, "stand_in_measure"].str.contains("per game").any()
    # Without the small games the column is NaN and the measure says nothing of them.
    runs = {k: v for k, v in _runs().items() if "_g" not in k}
    t2 = malek_table(runs, "malek_table6", LEVELS, games=2, confidence=0.95)
    assert t2["test_accuracy_small_games"].isna().all() and not t2["stand_in_measure"].str.contains("per game").any()


def test_without_paper_numbers_and_errors():
    t = malek_table(_runs(), "malek_table6", LEVELS, games=2, confidence=0.95)
    assert (t["paper"] == "").all() and (t["paper_accuracy"] == "").all()
    with pytest.raises(ValueError, match="table must be one of"):
        malek_table(_runs(), "malek_table7", LEVELS, games=2, confidence=0.95)
    runs = _runs()
    del runs["alibi_eps8_g1"]
    with pytest.raises(ValueError, match=r"\['alibi_eps8_g1'\] are missing"):
        malek_table(runs, "malek_table5", LEVELS, games=2, confidence=0.95)
