"""paper_value: one number of workflow/data/paper_numbers.csv by id (used by the Wang findings)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ppaudit.experiments.paper_comparison import paper_value, read_paper_numbers

REPO = Path(__file__).resolve().parents[3]


def test_reads_the_wang_budget_errors_from_the_curated_list():
    table = read_paper_numbers(REPO / "workflow" / "data" / "paper_numbers.csv")
    assert paper_value(table, "wang_budget_error_mnist") == 0.11  # Wang et al. 2022, §4.2 (Fig. 4a)
    assert paper_value(table, "wang_budget_error_svhn") == 0.05  # Fig. 4b


def test_missing_or_duplicate_id_is_named():
    table = pd.DataFrame({"id": ["a", "b", "b"], "paper_value": [1.0, 2.0, 3.0]})
    assert paper_value(table, "a") == 1.0
    with pytest.raises(ValueError, match=r"'c'.*found 0"):
        paper_value(table, "c")
    with pytest.raises(ValueError, match=r"'b'.*found 2"):
        paper_value(table, "b")
