"""Parametric vote models of PATE and CaPC (Chadha et al. 2024, §5.1–5.2) and their exact
output distributions.

**Fits** (maximum likelihood over ``N_g`` instantiations of the training phase):

* PATE (§5.1): ``P_q`` pools the votes of all ``k`` teachers over the ``N_g``
  instantiations (``N_g·k`` categorical draws per query); ``P'_q`` uses the ``N_g`` votes of
  the canary-holding teacher. :func:`fit_pate`.
* CaPC (§5.2): ``P^i_q`` uses the ``N_g`` votes of teacher ``i`` (fixed data, training
  randomness only); ``P^{1'}_q`` the ``N_g`` votes of teacher 1 trained with the canary.
  :func:`fit_capc`.

Zero counts (documented choice): the default keeps the pure MLE — a class that no teacher
ever predicted for a query has probability 0 in the model, so it never appears in a model
histogram. This is what the paper's "maximum likelihood estimate" says, and it is harmless
for the audit: the noisy argmax adds Gaussian noise to *every* count, so every output class
keeps a positive probability and every Rényi divergence stays finite. ``smoothing=λ > 0``
adds ``λ`` pseudo-votes to every class (add-λ / Lidstone), for studying how sensitive the
audit is to unseen classes; it changes the model (e.g. it adds random votes to CaPC's
deterministic teachers), so it is off by default.

**Models.** Both mechanisms have the same structure: the two histograms share a *base* of
``k − 1`` votes and differ in one vote,

    ``H_S = B + e_V``,  ``H_S' = B + e_{V'}``,  ``V ~ last``,  ``V' ~ last'``,

* PATE: ``B ~ Mult(k−1, P_q)``, ``last = P_q``, ``last' = P'_q`` — so ``H_S ~ Mult(k, P_q)``
  and ``H_S' ~ Mult(k−1, P_q) + Mult(1, P'_q)``;
* CaPC: ``B = Σ_{i≥2} Mult(1, P^i_q)``, ``last = P^1_q``, ``last' = P^{1'}_q``.

:class:`NeighbouringVoteModel` holds the base as a constant histogram (deterministic
voters) plus independent groups ``Mult(n_g, P_g)`` (identical voters grouped), and gives
vectorised samplers ``model(rng, n) -> (n, C)`` for :func:`ppaudit.montecarlo.model_noisy_argmax_counts`.

**Exact output distribution of a model** ``μ_S(c) = E_B Σ_v last(v) · Pr[c | B + e_v]``
(Eq. (4) inside):

* :func:`estimate_output_distributions` — Monte Carlo over ``M`` base draws, with the last
  vote summed out exactly (Rao–Blackwell) and the same base draws used for ``S`` and ``S'``
  (the two estimates are strongly correlated, which the delta-method standard error of the
  divergence takes into account: :func:`mixture_rdp_estimate`).
* :func:`enumerate_output_distributions` — exact enumeration of the base distribution with
  pruning of histograms of mass below a threshold; the pruned mass ``r`` is accounted
  exactly, so every output probability is certified to lie in ``[μ̂(c), μ̂(c) + r]`` (plus
  the quadrature error of Eq. (4), ≤ 1e-12), and :func:`certified_mixture_rdp` turns the
  boxes into certified lower/upper bounds on the Rényi divergence (``D_α`` increases in
  ``p`` and decreases in ``q`` coordinate-wise for ``α > 1``). It is cheap when the votes
  are concentrated (PATE with a confident ``P_q``; CaPC with mostly deterministic
  teachers) and gives up (returns ``None``) when the support needed exceeds a budget.

**Repeated queries** (:mod:`.repeated_query`): the exact RDP of the transcript of ``n``
answers to one query on one training run (:func:`repeated_query_rdp`), with the
data-processing caps ``D_α(H_S ‖ H_S') ≤ D_α(P_q ‖ P'_q)`` that the paper's per-query
composition ``n · D_α`` can exceed. **Data-dependent theory of a random histogram**
(:mod:`.data_dependent`): ``E_H[dd(H)]`` and ``max_H dd(H)`` next to ``dd(E[H])``.

Modules: :mod:`.fit` (MLE fits), :mod:`.model` (the neighbouring model and its samplers),
:mod:`.estimate` (Monte Carlo output laws), :mod:`.enumeration` (certified exact output laws),
:mod:`.repeated_query`, :mod:`.data_dependent`, :mod:`.joint` (the joint Pois-NatQ model: all
natural queries on one training draw, from the twin-paired joint vote vectors).
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
        "data_dependent", "enumeration", "estimate", "fit", "joint", "model", "repeated_query",
        "twin",
    ),
)

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .data_dependent import *  # noqa: F403
    from .enumeration import *  # noqa: F403
    from .estimate import *  # noqa: F403
    from .fit import *  # noqa: F403
    from .joint import *  # noqa: F403
    from .model import *  # noqa: F403
    from .repeated_query import *  # noqa: F403
    from .twin import *  # noqa: F403
    from . import data_dependent, enumeration, estimate, fit, joint, model, repeated_query, twin
