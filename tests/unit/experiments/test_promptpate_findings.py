"""PromptPATE findings (ppaudit.experiments.chadha2024.promptpate): teacher statistics by hand,
and the findings rows on small planted summaries (a check that must hold and one that must fail)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ppaudit.experiments.chadha2024.promptpate import promptpate_findings, teacher_statistics


def test_teacher_statistics_by_hand():
    y = np.array([0, 0, 1, 0])
    votes = np.array([[0, 0, 1, 1], [0, 0, 0, 0], [1, 0, 1, 0]])
    st = teacher_statistics(y, votes, 2)
    assert st["teacher_accuracy"] == pytest.approx((3 + 3 + 3) / 12)
    assert st["majority_class_rate"] == pytest.approx(0.75)
    assert st["plurality_accuracy"] == pytest.approx(1.0)  # votes per query: 0,0,1,0 (ties -> 0)
    h = [(2, 1), (3, 0), (1, 2), (2, 1)]
    ent = [-sum(c / 3 * math.log(c / 3) for c in row if c) / math.log(2) for row in h]
    assert st["vote_entropy"] == pytest.approx(np.mean(ent))
    assert st["constant_teachers"] == pytest.approx(1 / 3)


def test_teacher_statistics_errors():
    with pytest.raises(ValueError, match="shape|must be"):
        teacher_statistics([0, 1], np.zeros((3, 3), int), 2)
    with pytest.raises(ValueError, match="lie in"):
        teacher_statistics([0, 2], np.zeros((3, 2), int), 2)


def summary(algo, scale):
    rows = []
    for adv in ("nat-advq", "pois-advq", "pois-natq"):
        base = scale * (0.3 if adv == "pois-natq" else 1.0)
        for col, f in (("two_cut_cp", 0.9), ("exact", 1.0), ("data_dependent", 2.0), ("data_independent", 4.0)):
            rows.append(dict(algo=algo, dataset="d", adversary=adv, case="worst", column=col, epsilon=base * f, eps_floor=0.01))
    return pd.DataFrame(rows)


def test_findings_rows_hold_and_fail_as_planted():
    s = summary("promptpate", 2.0)
    variants = s[s["adversary"] == "pois-natq"].assign(variant="best", best_variant="confident")
    variants = pd.concat([variants, variants.assign(variant="confident", best_variant="")])
    others = {"pate": summary("pate", 0.5), "capc": summary("capc", 1.0)}
    good = {"teacher_accuracy": 0.8, "majority_class_rate": 0.55, "plurality_accuracy": 0.9, "vote_entropy": 0.4,
            "constant_teachers": 0.0, "calibration": "contextual", "answers": "words"}
    t = promptpate_findings(s, variants, others, 0.01, {"d": good, "e": {**good, "teacher_accuracy": 0.5}})
    r = t.groupby(["dataset", "finding", "adversary"])["holds"].all()
    assert r[("d", "audit≈exact", "nat-advq")]
    assert r[("all", "promptpate>=others", "pois-natq")] and r[("all", "pate<=capc<=promptpate", "pois-natq")]
    assert r[("d", "teachers classify", "none")] and not r[("e", "teachers classify", "none")]
    note = t[(t["finding"] == "teachers classify") & (t["dataset"] == "d")]["note"].iloc[0]
    assert "answers words, calibration contextual (ours)" in note
    # Swapping the algorithms makes the cross-algorithm order fail.
    t2 = promptpate_findings(summary("promptpate", 0.1), variants, others, 0.01)
    assert not t2.groupby(["dataset", "finding", "adversary"])["holds"].all()[("all", "promptpate>=others", "pois-natq")]  # raw ε: PromptPATE now leaks least
    assert "teachers classify" not in set(t2["finding"])
