"""Issue 13 §1's repeated-query example as rows of the findings table
(ppaudit.experiments.chadha2024.repeated_query): audited by the stage's own code, the paper's
n-fold composed audit ends above the certified transcript cap and the sound transcript audit
below it; bad settings are refused by name."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from ppaudit.audit import compose_candidates, epsilon_floor
from ppaudit.experiments.chadha2024.repeated_query import (
    REPEATED_QUERY_EXAMPLE,
    repeated_query_example,
    repeated_query_example_rows,
)
from ppaudit.vote_models import repeated_query_rdp

ORDERS = [2.0, 8.0, 32.0, 64.0]


@pytest.fixture(scope="module")
def example():
    return repeated_query_example(orders=ORDERS, seed=2024, **REPEATED_QUERY_EXAMPLE)


def test_the_rows_flag_the_paper_composition_and_clear_the_transcript_audit(example):
    floor = epsilon_floor(ORDERS, 1e-6)
    rows = repeated_query_example_rows(example, 1e-6, floor, REPEATED_QUERY_EXAMPLE).set_index("finding")
    assert set(rows["dataset"]) == {"synthetic (repeated query)"}
    paper = rows.loc["paper audit<=transcript cap"]
    assert not paper["holds"] and "exceeds the cap by" in paper["note"] and "transcript law cap" in paper["values"]
    sound = rows.loc["transcript audit<=transcript cap"]
    assert sound["holds"] and not sound["at_floor"]
    assert "k = 250" in paper["note"] and "n = 1000" in paper["note"]


def test_the_transcript_columns_are_the_exact_repeated_query_rdp(example):
    at = example.set_index("order")
    exact = repeated_query_rdp([0.5, 0.5], [0.75, 0.25], 250, 40.0, 1000, ORDERS)
    assert_allclose(at["exact_transcript"].to_numpy(), np.asarray(exact), rtol=1e-6)
    assert_allclose(1000 * at.loc[64.0, "exact"], 1.434, atol=5e-4)  # the number
    assert np.all(at["two_cut_transcript"] <= at["exact_transcript_hi"] + 1e-12)
    _, eps = compose_candidates(example, delta=1e-6)
    # enumerated transcript: s.e. 0, so its upper reading is the exact value itself
    assert_allclose(eps["eps_exact_transcript_2se"], eps["eps_exact_transcript"], rtol=1e-12)


@pytest.mark.parametrize(
    "change, match",
    [
        ({"p_q": (0.5, 0.6)}, "p_q must be a probability vector"),
        ({"p_q_prime": (0.5, 0.25, 0.25)}, "same number of classes"),
        ({"num_repeats": 0}, "num_repeats must be a positive integer"),
        ({"sigma": -1.0}, "sigma must be positive"),
    ],
)
def test_bad_settings_are_refused_by_name(change, match):
    with pytest.raises(ValueError, match=match):
        repeated_query_example(orders=ORDERS, seed=0, **{**REPEATED_QUERY_EXAMPLE, **change})
