"""ppaudit.audit.simultaneous_confidence: the union bound over the per-query audits of a table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppaudit.audit import count_audits, simultaneous_confidence


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


def _workflow_table(pairs, per_audit, transcript_method="rao-blackwell", orders=2):
    """A per-query table as audit_crafted writes it: per (candidate, query) the canary's rows and the
    null-canary control's rows, each with the 2-cut, the k-cut and the transcript audit."""
    n_tr = 1 if transcript_method == "rao-blackwell" else 2
    rows = [{"candidate": c, "query": q, "control": ctl, "order": a, "two_cut_cp": 0.1, "k_cut": 0.05, "two_cut_transcript": 0.2,
             "effective_confidence": per_audit, "confidence_per_audit": per_audit, "count_audits": 2, "transcript_audits": n_tr,
             "transcript_audit_method": transcript_method}
            for c, q in pairs for ctl in (False, True) for a in range(orders)]
    return pd.DataFrame(rows)


def test_every_audit_run_counts_pairs_families_and_controls():
    # issue 27 §1: 40 pairs at the old per-audit level 1 − 0.05/40. Old count: one audit per (candidate, query)
    # → 0.95. Audits actually run: per pair the 2-cut, the k-cut and the transcript audit, for the canary and
    # for its control: 6 × 40 = 240, union bound 1 − 240 · 0.05/40 = 0.70 (0.80 counting the per-query and
    # the transcript audit only, as the issue did; the k-cut is a third interval of its own).
    pairs = [(c, q) for c in range(20) for q in range(2)]
    old_level = 1 - 0.05 / 40
    t = _workflow_table(pairs, old_level)
    old_count = 1 - (1 - t.groupby(["candidate", "query"])["effective_confidence"].min()).sum()
    assert old_count == pytest.approx(0.95, abs=1e-12)
    assert count_audits(t) == 240
    assert simultaneous_confidence(t) == pytest.approx(1 - 240 * 0.05 / 40, abs=1e-12)  # 0.70
    # the same table without the k-cut column and count_audits: the 4N audits, 0.80
    t4 = t.drop(columns=["k_cut", "count_audits"])
    assert count_audits(t4) == 160 and simultaneous_confidence(t4) == pytest.approx(0.80, abs=1e-12)
    # the fix (a): Bonferroni over all 240 audits → exactly 0.95, and the joint audits join the same budget
    t = _workflow_table(pairs, 1 - 0.05 / 240)
    assert simultaneous_confidence(t) == pytest.approx(0.95, abs=1e-12)
    joint = pd.DataFrame({"candidate": np.repeat(np.arange(20), 2), "order": np.tile([2.0, 8.0], 20), "num_audits": 1,
                          "confidence_per_audit": 1 - 0.05 / 260})
    t = _workflow_table(pairs, 1 - 0.05 / 260)
    assert count_audits(t, joint) == 260
    assert simultaneous_confidence(t, joint) == pytest.approx(0.95, abs=1e-12)
    # sampled transcript audits are two audits each (2-cut and Eq. (1) on their own)
    ts = _workflow_table(pairs, 1 - 0.05 / 320, transcript_method="sampled")
    assert count_audits(ts) == 320 and simultaneous_confidence(ts) == pytest.approx(0.95, abs=1e-12)


def test_the_union_bound_over_families_is_below_every_joint_law_of_the_failures():
    # the claim is a probability statement: 6 audits (2 families × 3 rows) with disjoint failure events (the
    # union bound's worst case) hold together exactly at the claim; independent failures hold more often
    per_audit = 1 - 0.05 / 6
    t = pd.DataFrame({"candidate": [0, 0, 1], "query": 0, "control": [False, True, False], "effective_confidence": per_audit,
                      "confidence_per_audit": per_audit, "count_audits": [1, 1, 1], "transcript_audits": [1, 1, 1]})
    claim = simultaneous_confidence(t)
    assert claim == pytest.approx(0.95)
    rng = np.random.default_rng(1)
    u = rng.random(400_000)
    all_ok = u >= 6 * (1 - per_audit)  # disjoint failures: audit i fails on [i·0.05/6, (i+1)·0.05/6)
    assert abs(all_ok.mean() - claim) < 4 * np.sqrt(claim * (1 - claim) / u.size)
    assert per_audit**6 >= claim


def test_transcript_audits_need_their_level():
    t = pd.DataFrame({"candidate": [0], "query": [0], "effective_confidence": [0.99], "transcript_audits": [1]})
    with pytest.raises(ValueError, match="confidence_per_audit"):
        simultaneous_confidence(t)
    with pytest.raises(ValueError, match="transcript_audits must be >= 0, got -1"):
        simultaneous_confidence(t.assign(transcript_audits=-1, confidence_per_audit=0.99))
