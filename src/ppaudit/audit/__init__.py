"""Audits: lower bounds on a mechanism's privacy loss from its sampled outputs.

* :mod:`.bounds` — RDP lower bounds from two output-count vectors (2-cut Clopper–Pearson,
  k-cut, bootstrap) and the (ε, δ) audit of Eq. (1) (Chadha et al. 2024, §4.2, App. B).
* :mod:`.per_query` — the per-query audit row (counts → 2-cut, k-cut, exact, theory), written
  once: :func:`audit_query` with a source of outputs (a fixed histogram pair, a vote model, …).
* :mod:`.composition` — composition over queries, candidate summaries, the ε floor.
* :mod:`.transcript` — the transcript-level audit of a repeated-query adversary (one
  histogram per training run, ``n`` answers): the sound counterpart of per-query composition.
* :mod:`.rao_blackwell` — sound 2-cut and ε lower bounds from Rao–Blackwellised Monte Carlo of
  a non-enumerable vote model (empirical Bernstein on paired conditional probabilities), and
  the paper's "estimated law as exact counts" procedure for comparison.
* :mod:`.planning` — how many trials a 2-cut audit needs to resolve a known effect.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30); tests/unit/test_public_api.py
# checks this table against the modules' __all__.
_EXPORTS = {
    "bounds": (
        "TwoCutAudit", "two_cut_bound_from_intervals", "two_cut_lower_bound", "k_cut_lower_bound",
        "two_cut_bootstrap_lower_bound", "k_cut_bootstrap_lower_bound", "dp_epsilon_lower_bound",
        "dp_epsilon_for_set_counts", "dp_epsilon_from_intervals", "split_counts",
    ),
    "composition": (
        "compose_rdp", "compose_candidates", "summarize_candidates", "epsilon_floor",
        "simultaneous_confidence", "count_audits", "TRANSCRIPT_COLUMNS", "EPSILON_COLUMNS",
    ),
    "per_query": (
        "ModelSource", "RDP_COLUMNS", "LOWER_BOUNDS", "QuerySource", "HistogramPairSource",
        "VoteModelSource", "QueryAudit", "audit_query", "bonferroni_confidence", "TRUNCATION_RESERVE",
    ),
    "transcript": (
        "TranscriptAudit", "rao_blackwell_transcript_audit", "sample_transcript_counts",
        "score_bin_edges", "transcript_audit", "transcript_statistic",
    ),
    "rao_blackwell": (
        "empirical_bernstein_bounds", "binomial_transcript_epsilon", "RaoBlackwellAudit",
        "rao_blackwell_two_cut", "paper_counts_from_estimate", "counts_transcript_epsilon",
        "rao_blackwell_transcript_event", "composed_event_epsilon",
    ),
    "planning": (
        "SAFETY_FACTOR", "TrialsNeeded", "two_cut_trials_needed",
    ),
}

__all__, __getattr__, __dir__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .bounds import *  # noqa: F403
    from .composition import *  # noqa: F403
    from .per_query import *  # noqa: F403
    from .transcript import *  # noqa: F403
    from .rao_blackwell import *  # noqa: F403
    from .planning import *  # noqa: F403
    from . import bounds, composition, per_query, planning, rao_blackwell, transcript
