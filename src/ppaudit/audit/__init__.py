"""Audits: lower bounds on a mechanism's privacy loss from its sampled outputs.

* :mod:`.bounds` — RDP lower bounds from two output-count vectors (2-cut Clopper–Pearson,
  k-cut, bootstrap) and the (ε, δ) audit of Eq. (1) (Chadha et al. 2024, §4.2, App. B).
* :mod:`.per_query` — the per-query audit row (counts → 2-cut, k-cut, exact, theory), written
  once: :func:`audit_query` with a source of outputs (a fixed histogram pair, a vote model, …).
* :mod:`.composition` — composition over queries, candidate summaries, the ε floor.
* :mod:`.transcript` — the transcript-level audit of a repeated-query adversary (one
  histogram per training run, ``n`` answers): the sound counterpart of per-query composition.
"""

from .bounds import (
    TwoCutAudit,
    dp_epsilon_lower_bound,
    k_cut_bootstrap_lower_bound,
    k_cut_lower_bound,
    split_counts,
    two_cut_bootstrap_lower_bound,
    two_cut_bound_from_intervals,
    two_cut_lower_bound,
)
from .composition import (
    compose_candidates,
    compose_rdp,
    epsilon_floor,
    summarize_candidates,
)
from .per_query import (
    LOWER_BOUNDS,
    RDP_COLUMNS,
    HistogramPairSource,
    QueryAudit,
    QuerySource,
    VoteModelSource,
    audit_query,
    bonferroni_confidence,
)
from .transcript import (
    TranscriptAudit,
    sample_transcript_counts,
    score_bin_edges,
    transcript_audit,
    transcript_statistic,
)

__all__ = [
    "TwoCutAudit",
    "two_cut_bound_from_intervals",
    "two_cut_lower_bound",
    "k_cut_lower_bound",
    "two_cut_bootstrap_lower_bound",
    "k_cut_bootstrap_lower_bound",
    "dp_epsilon_lower_bound",
    "compose_rdp",
    "split_counts",
    "RDP_COLUMNS",
    "LOWER_BOUNDS",
    "QuerySource",
    "HistogramPairSource",
    "VoteModelSource",
    "QueryAudit",
    "audit_query",
    "bonferroni_confidence",
    "compose_candidates",
    "summarize_candidates",
    "epsilon_floor",
    "TranscriptAudit",
    "sample_transcript_counts",
    "score_bin_edges",
    "transcript_statistic",
    "transcript_audit",
]
