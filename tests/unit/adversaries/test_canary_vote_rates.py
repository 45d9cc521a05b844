"""canary_vote_rates (the poison success rate, issue 34 §1) and the findings rows built on it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppaudit.adversaries import canary_vote_rates
from ppaudit.experiments.chadha2024.pate_capc_findings import FINDINGS_COLUMNS, POISON_SUCCESS_BAR, canary_rows


def _crafted():
    # 2 candidates × 3 instantiations × 4 queries; candidate 0 sits on query 2 (label 5),
    # candidate 1 on query 0 (label 1). Other queries hold noise that must be ignored.
    v = np.full((2, 3, 4), 9)
    t = np.full((2, 3, 4), 9)
    v[0, :, 2] = [5, 5, 3]   # votes the poison twice of three
    t[0, :, 2] = [5, 3, 3]   # the twin already votes it once
    v[1, :, 0] = [1, 1, 1]
    t[1, :, 0] = [0, 0, 1]
    return v, t, np.array([2, 0]), np.array([5, 1])


def test_rates_exact_on_crafted_example():
    r = canary_vote_rates(*_crafted())
    assert r["canary_label_rate"] == 5 / 6           # 2 + 3 of 6 pairs vote the canary's label
    assert r["twin_label_rate"] == 2 / 6             # twins: (5) once, (1) once
    assert r["flip_rate"] == 3 / 6                   # differ: [F, T, F] and [T, T, F]
    assert r["per_candidate_flip_rate"] == [1 / 3, 2 / 3]
    assert r["num_pairs"] == 6


def test_rates_reject_bad_input():
    v, t, i, y = _crafted()
    with pytest.raises(ValueError, match="one shape"):
        canary_vote_rates(v, t[:, :2], i, y)
    with pytest.raises(ValueError, match="canary_index must lie in"):
        canary_vote_rates(v, t, np.array([2, 4]), y)
    with pytest.raises(ValueError, match="one canary_index and canary_label per candidate"):
        canary_vote_rates(v, t, i[:1], y)


def _rates(label_rate):
    return {"canary_label_rate": label_rate, "twin_label_rate": 0.25, "flip_rate": 0.75, "per_candidate_flip_rate": [0.5, 1.0], "num_pairs": 8}


def test_canary_rows_bar_and_note():
    findings = pd.DataFrame([{"dataset": "mnist", "algo": "pate", "finding": "pois-advq>=nat-advq", "adversary": "pois-advq", "case": "worst",
                              "values": "", "holds": False, "at_floor": False, "note": "columns a / b"}], columns=list(FINDINGS_COLUMNS))
    rates = {"mnist": {"pois-advq": _rates(1.0), "nat-advq": _rates(POISON_SUCCESS_BAR - 0.01)}}
    out = canary_rows(findings, rates, "pate", {"mnist": "logreg"})
    assert list(out.columns) == list(FINDINGS_COLUMNS) and len(out) == 3
    assert findings.loc[0, "note"] == "columns a / b"  # input not modified
    assert "pois-advq: poison_success_rate=1; twin_label_rate=0.25; flip_rate=0.75" in out.loc[0, "note"]
    assert "nat-advq: canary_label_rate=0.89" in out.loc[0, "note"]
    assert "do not fit their canary" in out.loc[0, "note"]
    both = canary_rows(findings, {"mnist": {"pois-advq": _rates(1.0), "nat-advq": _rates(0.95)}}, "pate")
    assert "both canaries are learned" in both.loc[0, "note"] and "not by teachers that fail" in both.loc[0, "note"]  # the row is False
    held = canary_rows(findings.assign(holds=True), {"mnist": {"pois-advq": _rates(1.0), "nat-advq": _rates(0.95)}}, "pate")
    assert held.loc[0, "note"].endswith("both canaries are learned (rate ≥ 0.9).")
    new = out.iloc[1:].set_index("adversary")
    assert new.loc["pois-advq", "values"].startswith("poison_success_rate=1;") and bool(new.loc["pois-advq", "holds"])
    assert new.loc["nat-advq", "values"].startswith("canary_label_rate=0.89;") and not bool(new.loc["nat-advq", "holds"])
    with pytest.raises(ValueError, match="bar must lie in"):
        canary_rows(findings, rates, "pate", bar=0)
