"""Vote-histogram reconstruction from noisy-argmax answers (Wang et al. 2022, §2–§5).

An attacker asks PATE the same query ``M`` times, counts the answers of the Gaussian
noisy argmax (GNMax) and inverts the output distribution ``Q(H)`` (Wang et al. 2022,
Thm 1) to recover the teachers' vote histogram ``H``. This module holds every piece of that
attack and of its evaluation:

* **querying** — :func:`sample_answer_counts` (``M`` answers on a fixed histogram through
  :func:`ppaudit.montecarlo.noisy_argmax_counts`) and :class:`NoisyArgmaxInterface`, a small
  PATE-like interface with the answer-caching defence of Wang §5;
* **reconstruction** — :func:`reconstruct_histogram` minimises ``‖Q(Ĥ) − q̄‖₂`` (Wang §3.2,
  Step 2) with the exact ``Q`` (:func:`ppaudit.noisy_argmax.class_probabilities`), its exact
  Jacobian (:func:`class_probability_jacobian`) and a bounded trust-region Gauss–Newton
  solver on the set ``{Ĥ ≥ 0, ΣĤ = N}`` (Steps 2 and 3 together);
  :func:`reconstruct_histogram_wang2022` re-implements the paper's own procedure
  (Algorithm 2, fixed-step trapezoid rule and normalised gradient descent) for comparison;
  :func:`reconstruct_with_solver` picks one of the two (``solver="ours" | "paper"``);
* **metrics and costs** — :func:`normalised_l1_error` (Wang §4.1), :func:`attack_privacy_cost`
  (PATE's accountant composed over ``M`` queries and converted to ``(ε, δ)``) and
  :func:`queries_within_budget` (the privacy-budget attacker of Wang §4.1). Two accountants
  (``accountant=``): ``"confident_gnmax"`` — the paper's (Wang §4.1 uses "the
  parameterization from Papernot et al." 2018: Confident-GNMax with its threshold check,
  :func:`ppaudit.accounting.confident_gnmax_rdp`, and the improved conversion of Balle et
  al. 2020) — and ``"gnmax"`` (plain data-dependent GNMax RDP with the classic conversion,
  Mironov 2017 Prop. 3; what this module charged before). Under Confident-GNMax a query
  that fails the threshold check returns no label: :func:`answered_queries` draws how many
  of ``M`` submitted queries are answered;
* **consensus** — :func:`max_vote_share`, :func:`consensus_tertiles` and
  :func:`select_consensus_histograms` (Wang §4.1, Fig. 3: L1–5, M1–5, H1–5);
* **Thm 2** (shift invariance of ``Q``) — :func:`shift_to_teachers` is Step 3; the invariance
  itself is what lets the solver work on the hyperplane ``ΣĤ = N``.

Each accountant has its conversion (:data:`ACCOUNTANT_CONVERSION`): the improved one of
Balle et al. (2020, Thm 20 = Canonne–Kamath–Steinke Prop. 12) for ``confident_gnmax``, the
classic one for ``gnmax``; ``method=`` overrides it.
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
        "querying", "jacobian", "reconstruction", "cost", "consensus",
    ),
)

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .querying import *  # noqa: F403
    from .jacobian import *  # noqa: F403
    from .reconstruction import *  # noqa: F403
    from .cost import *  # noqa: F403
    from .consensus import *  # noqa: F403
    from . import consensus, cost, jacobian, querying, reconstruction
