"""Audit your own mechanism: black-box sampling audits and score-based one-run audits.

* :mod:`.claims` — :class:`Claim` (RDP curve, ρ-zCDP, (ε, δ)-DP, μ-GDP) and the upper
  bounds it implies.
* :mod:`.mechanism` — :func:`audit_mechanism` (``mechanism(data, n, rng)`` on a neighbouring
  pair → counts → 2-cut / k-cut RDP and Eq. (1) ε lower bounds → verdict) and
  :func:`audit_counts` (the same from two count vectors).
* :mod:`.search` — :func:`search_mechanism`: a pilot ranks neighbouring pairs × output sets
  (counted outputs, or a classifier's score thresholds for real / vector outputs), the top
  ones are certified on fresh draws; returns the witness (pair + output set) and a verdict
  valid for the whole search.
* :mod:`.neighbours` — generators of neighbouring inputs, each under a named adjacency.
* :mod:`.scores` — :func:`one_run_audit` (two-sided one-run f-DP audit of attack scores,
  Alg. 3 of the observational paper's App. B) and :func:`one_run_audit_confusion`.
"""

from .claims import Claim
from .mechanism import CountsAudit, MechanismAudit, audit_counts, audit_mechanism
from . import neighbours
from .search import ClassifierOutputs, OutputSet, SearchResult, Witness, search_mechanism
from .scores import (
    DEFAULT_SIDE_FRACTIONS,
    OneRunAudit,
    alg3_rejects_tradeoff,
    claim_trade_off,
    dp_epsilon_lower_bound_one_run,
    dp_trade_off,
    one_run_audit,
    one_run_audit_confusion,
    plot_tradeoff,
)

__all__ = [
    "Claim",
    "CountsAudit",
    "MechanismAudit",
    "audit_counts",
    "audit_mechanism",
    "ClassifierOutputs",
    "OutputSet",
    "SearchResult",
    "Witness",
    "neighbours",
    "search_mechanism",
    "DEFAULT_SIDE_FRACTIONS",
    "OneRunAudit",
    "alg3_rejects_tradeoff",
    "claim_trade_off",
    "dp_epsilon_lower_bound_one_run",
    "dp_trade_off",
    "one_run_audit",
    "one_run_audit_confusion",
    "plot_tradeoff",
]
