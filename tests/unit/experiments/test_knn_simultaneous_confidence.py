"""Issue 27 §1 for the Private-kNN audit: the simultaneous confidence of Fig. 5 and summary.csv counts
every audit that was run — per (candidate, query) the 2-cut, the k-cut and the per-query ε bound, and each
whole-transcript audit — with the one counter of PATE / CaPC (per_query_audit_count) and the one union
bound (ppaudit.audit.simultaneous_confidence). Reference values: the union bound by hand,
1 − Σ_audits (1 − c_i) (Bonferroni 1936)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import jinja2
import numpy as np
import pandas as pd
import pytest

from ppaudit.audit import count_audits, simultaneous_confidence
from ppaudit.experiments.chadha2024 import private_knn as pk
from ppaudit.experiments.chadha2024.private_prediction import per_query_audit_count
from ppaudit.plots.knn import KNN_ADVERSARY_LABELS, knn_confidence_footer

REPO = Path(__file__).resolve().parents[3]


def _crafted(num_candidates: int, num_queries: int, repetitions: int = 1):
    """What the counters read of a KnnCrafted: one row of audit queries (and repetitions) per candidate."""
    q = np.arange(num_candidates * num_queries).reshape(num_candidates, num_queries)
    return SimpleNamespace(num_candidates=num_candidates, audit_queries=q, repetitions=np.full(q.shape, repetitions))


def _knn_table(num_candidates, num_queries, per_audit, whole: bool, orders=3, eff_slack=0.0):
    """A per-query table as audit_knn_crafted writes it (Pois-NatQ: single-answer queries; with ``whole``
    a whole-transcript audit per candidate)."""
    rows = [{"adversary": "pois-natq-test", "candidate": c, "query": c * num_queries + j, "order": a, "repetitions": 1,
             "two_cut_cp": 0.1, "two_cut_paper": 0.1, "k_cut": 0.05, "valid_eps_lower": 0.2, "event_p_low": 0.3, "event_q_high": 0.1,
             "audit_method": "exact-enumerated", "trials": 10**6, "paper_trials": 10**6, "effective_confidence": per_audit - eff_slack,
             "multiplicity": "bonferroni", "confidence_per_audit": per_audit, "count_audits": 3, "transcript_audits": 0,
             "candidate_audits": int(whole)}
            for c in range(num_candidates) for j in range(num_queries) for a in range(orders)]
    return pd.DataFrame(rows)


def test_old_count_overstates_the_union_and_the_new_one_equals_it():
    # 10 Pois-NatQ candidates × 4 single-answer queries with the whole-transcript audit. The old N was
    # pairs + whole transcripts = 40 + 10 = 50; the audits run are 40 × (2-cut, k-cut, ε bound) + 10 = 130.
    crafted = _crafted(10, 4)
    old_n = 40 + 10
    n = pk.knn_audit_count(crafted, delta=1e-6, transcript_event=True)
    assert n == 130 == per_query_audit_count(crafted, count_bounds=pk.KNN_COUNT_BOUNDS) + 10
    # at the old level 1 − 0.05/50: the old summary (one audit per pair) claimed 1 − 40·0.001 = 0.96 ≥ 0.95;
    # the union bound over the 130 audits run is 1 − 130·0.05/50 = 0.87
    old = _knn_table(10, 4, 1 - 0.05 / old_n, whole=True)
    first = old.drop_duplicates(["candidate", "query"])
    assert 1 - (1 - first["effective_confidence"]).sum() == pytest.approx(0.96, abs=1e-12)
    p = pk.knn_audit_provenance(old, 0.95)
    assert p["num_audits"] == 130 and p["simultaneous_confidence"] == pytest.approx(0.87, abs=1e-12)
    # the fix: every audit at 1 − 0.05/130, and the union bound is exactly 0.95
    new = _knn_table(10, 4, 1 - 0.05 / 130, whole=True)
    p = pk.knn_audit_provenance(new, 0.95)
    assert p["num_audits"] == 130 and p["simultaneous_confidence"] == pytest.approx(0.95, abs=1e-12)
    joint = pd.DataFrame({"candidate": range(10), "num_audits": 1, "confidence_per_audit": 1 - 0.05 / 130})
    assert p["simultaneous_confidence"] == simultaneous_confidence(new, joint) and count_audits(new, joint) == 130
    # the pruning slack of an enumerated law (effective_confidence) costs the 120 count-based audits, not the 10 others
    slack = _knn_table(10, 4, 1 - 0.05 / 130, whole=True, eff_slack=1e-6)
    assert pk.knn_audit_provenance(slack, 0.95)["simultaneous_confidence"] == pytest.approx(0.95 - 120e-6, abs=1e-12)
    # the paper's uncorrected procedure: each audit at 0.95, the union bound says nothing (floored at 0)
    paper = _knn_table(10, 4, 0.95, whole=True).assign(multiplicity="none (paper)")
    p = pk.knn_audit_provenance(paper, 0.95)
    assert p["multiplicity"] == "none (paper)" and p["simultaneous_confidence"] == 0.0


def test_counts_of_each_adversary_shape():
    # AdvQ: one repeated query per candidate (16 candidates: 16 → 48 audits); no whole-transcript audit
    advq = _crafted(16, 1, repetitions=1000)
    assert pk.knn_audit_count(advq, delta=1e-6, transcript_event=True) == 48
    assert pk.knn_candidate_audits(advq, delta=1e-6, transcript_event=True) == []
    # Pois-NatQ at the paper's n_Q = 1000 (1 candidate): 1000 → 3000, + 1 with the whole-transcript audit
    natq = _crafted(1, 1000)
    assert pk.knn_audit_count(natq, delta=1e-6) == 3000
    assert pk.knn_audit_count(natq, delta=1e-6, transcript_event=True) == 3001
    # no δ: no ε bound, no whole-transcript audit; the sampled fallback runs no whole-transcript audit either
    assert pk.knn_audit_count(natq, delta=None, transcript_event=True) == 2000
    assert pk.knn_audit_count(natq, delta=1e-6, transcript_event=True, nonenumerable="sample") == 3000
    # a shard of candidates
    assert pk.knn_audit_count(_crafted(4, 2), candidates=[1, 3], delta=1e-6, transcript_event=True) == 2 * 2 * 3 + 2
    with pytest.raises(ValueError, match="count_bounds must name at least one bound"):
        per_query_audit_count(natq, count_bounds=())


def test_fig5_footer_states_the_union_bound_over_every_knn_audit():
    rows = []
    for ds, adv, sim, n in (("d1", "nat-advq", 0.9500, 48), ("d2", "nat-advq", 0.9496, 3000), ("d1", "pois-natq-test", 0.95, 3001)):
        rows.append({"algo": "knn", "dataset": ds, "adversary": adv, "case": "worst", "column": "two_cut_cp", "epsilon": 0.1,
                     "simultaneous_confidence": sim, "num_audits": n, "multiplicity": "bonferroni"})
    text = knn_confidence_footer(pd.DataFrame(rows), KNN_ADVERSARY_LABELS)
    assert text.startswith("per algorithm, dataset and adversary, every audit run (2-cut, k-cut and per-query valid ε lower "
                           "bound of each candidate and query"), text
    assert "and each whole-transcript audit) holds at once (union bound over its N audits" in text
    assert f"knn: {KNN_ADVERSARY_LABELS['nat-advq']} ≥ 0.9496 (N = 3000), {KNN_ADVERSARY_LABELS['pois-natq-test']} ≥ 0.9500 " \
           "(N = 3001) (bonferroni)" in text, text
    assert knn_confidence_footer(pd.DataFrame(rows).drop(columns="simultaneous_confidence"), KNN_ADVERSARY_LABELS) == ""


class _Snakemake:
    def __init__(self, bonferroni):
        self.config = {"chadha2024": {"knn": {"k": 200, "gamma": 0.2, "num_queries": 1000, "bonferroni": bonferroni}}}


@pytest.mark.parametrize("bonferroni", [True, False])
def test_fig5_caption_words_the_simultaneous_confidence(bonferroni):
    text = jinja2.Template((REPO / "workflow" / "report" / "chadha_fig5.rst").read_text(encoding="utf-8")).render(
        snakemake=_Snakemake(bonferroni))
    if bonferroni:
        assert ("the 2-cut, the k-cut and the per-query valid ε lower bound of each (candidate, query), and each "
                "whole-transcript audit — runs at 1 − 0.05/N with N the number of all of them") in text
        assert "summary.csv simultaneous_confidence, the union bound over the N audits, and num_audits = N" in text
    else:
        assert "each audit at 95 % on its own (the paper's uncorrected procedure" in text
    assert "at 95 % for all candidates and queries of an adversary together" not in text  # the pre-issue-27 wording
