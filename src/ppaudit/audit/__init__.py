"""Audits: lower bounds on a mechanism's privacy loss from its sampled outputs.

* :mod:`.bounds` — RDP lower bounds from two output-count vectors (2-cut Clopper–Pearson,
  k-cut, bootstrap) and the (ε, δ) audit of Eq. (1) (Chadha et al. 2024, §4.2, App. B).
* :mod:`.per_query` — the per-query audit row (counts → 2-cut, k-cut, exact, theory), written
  once: :func:`audit_query` with a source of outputs (a fixed histogram pair, a vote model, …).
* :mod:`.composition` — composition over queries, candidate summaries, the ε floor.
* :mod:`.transcript` — the transcript-level audit of a repeated-query adversary (one
  histogram per training run, ``n`` answers): the sound counterpart of per-query composition.
* :mod:`.binomial_transcript` — ε lower bounds of a transcript of independent answers from one
  output set (exact binomial ε, composed event bounds, the audit from counts).
* :mod:`.rao_blackwell` — sound 2-cut and ε lower bounds from Rao–Blackwellised Monte Carlo of
  a non-enumerable vote model (empirical Bernstein on paired conditional probabilities), and
  the paper's "estimated law as exact counts" procedure for comparison.
* :mod:`.planning` — how many trials a 2-cut audit needs to resolve a known effect.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30). The names are these modules'
# own __all__ (read from their source on first use: ppaudit._lazy.attach_modules), in this order.
__getattr__, __dir__ = attach_modules(
    __name__,
    (
        "bounds", "composition", "per_query", "transcript", "binomial_transcript", "rao_blackwell", "planning",
    ),
)

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .bounds import *  # noqa: F403
    from .composition import *  # noqa: F403
    from .per_query import *  # noqa: F403
    from .transcript import *  # noqa: F403
    from .binomial_transcript import *  # noqa: F403
    from .rao_blackwell import *  # noqa: F403
    from .planning import *  # noqa: F403
    from . import binomial_transcript, bounds, composition, per_query, planning, rao_blackwell, transcript
