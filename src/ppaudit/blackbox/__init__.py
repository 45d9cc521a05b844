"""Audit your own mechanism: black-box sampling audits and score-based one-run audits.

* :mod:`.claims` — :class:`Claim` (RDP curve, ρ-zCDP, (ε, δ)-DP, μ-GDP) and the upper
  bounds it implies.
* :mod:`.mechanism` — :func:`audit_mechanism` (``mechanism(data, n, rng)`` on a neighbouring
  pair → counts → 2-cut / k-cut RDP and Eq. (1) ε lower bounds → verdict) and
  :func:`audit_counts` (the same from two count vectors).
* :mod:`.search` — :func:`search_mechanism`: a pilot ranks neighbouring pairs × output sets
  (counted outputs, or a classifier's score thresholds for real / vector outputs), the top
  ones are certified on fresh draws; returns the witness (pair + output set) and a verdict
  valid for the whole search. Around it: :mod:`.budget` (``time_budget`` / ``max_draws``, the
  cost said before the long part), :mod:`.mechanism_checks` (the user's mechanism blamed by name,
  file and line), :mod:`.witness` (the set said as intervals, examples, ``recheck`` on fresh draws)
  and :mod:`.report` (the self-contained HTML page of ``SearchResult.to_html``).
* :mod:`.neighbours` — generators of neighbouring inputs, each under a named adjacency.
* :mod:`.scores` — :func:`one_run_audit` (two-sided one-run f-DP audit of attack scores,
  Alg. 3 of the observational paper's App. B) and :func:`one_run_audit_confusion`.
* :mod:`.attack_metrics` — :func:`tpr_at_fpr` and :func:`auroc` with confidence intervals, and
  :func:`epsilon_interval_from_confusion` (both ends of a binary attack's ε).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30); tests/unit/test_public_api.py
# checks this table against the modules' __all__.
_EXPORTS = {
    "attack_metrics": (
        "Auroc", "EpsilonInterval", "TprAtFpr", "auroc", "epsilon_interval_from_confusion",
        "tpr_at_fpr",
    ),
    "claims": (
        "Claim",
    ),
    "mechanism": (
        "CountsAudit", "MechanismAudit", "audit_counts", "audit_mechanism",
    ),
    "families": (
        "ClassifierOutputs",
    ),
    "results": (
        "OutputSet", "SearchResult", "Witness",
    ),
    "search": (
        "search_mechanism",
    ),
    "scores": (
        "DEFAULT_SIDE_FRACTIONS", "OneRunAudit", "alg3_rejects_tradeoff", "claim_trade_off",
        "dp_epsilon_lower_bound_one_run", "dp_trade_off", "one_run_audit",
        "one_run_audit_confusion", "plot_tradeoff",
    ),
}

_, __getattr__, __dir__ = attach(__name__, _EXPORTS, submodules=("neighbours",))
__all__ = [
    "Auroc", "EpsilonInterval", "TprAtFpr", "auroc", "epsilon_interval_from_confusion",
    "tpr_at_fpr", "Claim", "CountsAudit", "MechanismAudit", "audit_counts", "audit_mechanism",
    "ClassifierOutputs", "OutputSet", "SearchResult", "Witness", "neighbours", "search_mechanism",
    "DEFAULT_SIDE_FRACTIONS", "OneRunAudit", "alg3_rejects_tradeoff", "claim_trade_off",
    "dp_epsilon_lower_bound_one_run", "dp_trade_off", "one_run_audit", "one_run_audit_confusion",
    "plot_tradeoff",
]

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .attack_metrics import Auroc, EpsilonInterval, TprAtFpr, auroc, epsilon_interval_from_confusion, tpr_at_fpr
    from .claims import Claim
    from .mechanism import CountsAudit, MechanismAudit, audit_counts, audit_mechanism
    from . import neighbours
    from .families import ClassifierOutputs
    from .results import OutputSet, SearchResult, Witness
    from .search import search_mechanism
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
