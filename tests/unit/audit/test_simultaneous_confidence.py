"""ppaudit.audit.simultaneous_confidence: the union bound over the per-query audits of a table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppaudit.audit import simultaneous_confidence


def _table(eff_per_pair, orders=3):
    rows = [{"candidate": c, "query": q, "order": a, "effective_confidence": e - 1e-6 * a}
            for (c, q), e in eff_per_pair.items() for a in range(orders)]
    return pd.DataFrame(rows)


def test_bonferroni_without_slack_is_exactly_the_nominal_level():
    n = 8
    pairs = {(c, q): 1 - 0.05 / n for c in range(4) for q in range(2)}
    # the orders of one audit come from one interval: they count once, at their smallest level
    assert simultaneous_confidence(_table(pairs)) == pytest.approx(0.95 - n * 2e-6, abs=1e-12)
    assert simultaneous_confidence(_table(pairs, orders=1)) == pytest.approx(0.95, abs=1e-12)


def test_pruning_slack_and_the_papers_uncorrected_levels():
    slack = {(0, 0): 1 - 0.025 - 1e-4, (1, 0): 1 - 0.025}
    assert simultaneous_confidence(_table(slack, orders=1)) == pytest.approx(0.95 - 1e-4)
    paper = {(c, 0): 0.95 for c in range(30)}  # 30 audits at 95 % each: nothing holds jointly
    assert simultaneous_confidence(_table(paper, orders=1)) == 0.0
    assert simultaneous_confidence(_table({(0, 0): 0.95}, orders=1)) == pytest.approx(0.95)


def test_the_union_bound_is_below_every_joint_law_of_the_failures():
    conf = np.array([0.99, 0.985, 0.98, 0.995])
    claim = simultaneous_confidence(_table({(i, 0): c for i, c in enumerate(conf)}, orders=1))
    assert claim == pytest.approx(0.95)
    assert np.prod(conf) >= claim  # independent audits
    # disjoint failure events (the worst case of the union bound): exactly the claim
    rng = np.random.default_rng(0)
    u = rng.random(400_000)
    edges = np.concatenate([[0.0], np.cumsum(1 - conf)])
    fails = (u[:, None] >= edges[:-1]) & (u[:, None] < edges[1:])
    all_ok = ~fails.any(axis=1)
    assert abs(all_ok.mean() - claim) < 4 * np.sqrt(claim * (1 - claim) / u.size)


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match="missing \\['effective_confidence'\\]"):
        simultaneous_confidence(pd.DataFrame({"candidate": [0], "query": [0]}))
    with pytest.raises(ValueError, match="must lie in \\[0, 1\\], got \\[1.5\\]"):
        simultaneous_confidence(pd.DataFrame({"candidate": [0], "query": [0], "effective_confidence": [1.5]}))
