"""Private-kNN: exact nearest neighbours, ranks, and the vote model of Chadha et al. 2024, §6.

Private-kNN (Zhu et al. 2020) treats every training point as a teacher voting for its own
label. For a query ``q`` the training set is Poisson-subsampled (each point kept
independently with probability ``γ``), the ``k`` nearest kept points vote, and the noisy
argmax of their label histogram is released.

**Neighbours and ranks.** :func:`nearest_neighbors` finds the exact ``J`` nearest training
points of every query with a faiss ``IndexFlatL2`` (exhaustive search, squared Euclidean
distance) and then re-sorts them by their float64 squared distance (ties by index), so that
every rank in this module is defined by one distance, :func:`squared_distances` in float64.
One metric serves both encoders: for unit-normalised features (the text encoders)
``‖q − x‖² = 2 − 2⟨q, x⟩``, so L2 and inner-product (cosine) search give the same order;
for the image features (not normalised) L2 is the metric of Zhu et al.

The rank of a point ``x'`` added to the training set ``S`` (the poison) for query ``q`` is
``r_q = 1 + #{x_j ∈ S : ‖q − x_j‖ ≤ ‖q − x'‖}`` — ties are broken *against* the poison (the
careful reading: the poison never gains from a tie; a duplicate of a training point ranks
just behind it). Distances within float64 rounding (:data:`TIE_RTOL` of
``‖q‖² + ‖x‖²``) count as ties, so exact duplicates tie whatever the BLAS rounding.
:func:`point_ranks` computes the rank exactly against all ``n`` training points.

**Inclusion probability** (§6, App. D.3). The ``r``-th nearest point is among the ``k``
nearest of the subsample iff it is kept and at most ``k − 1`` of the ``r − 1`` closer points
are kept:

    ``ν(r) = γ·P(Bin(r − 1, γ) ≤ k − 1)``
    ``     = γ`` if ``r ≤ k``, else ``Σ_{i=0}^{k−1} C(r−1, i) γ^{i+1} (1−γ)^{r−i−1}``,

and it is the ``k``-th nearest of the subsample with probability
``λ(r) = γ·P(Bin(r − 1, γ) = k − 1)``. Both are evaluated in log space
(:func:`log_inclusion_probability`, :func:`log_last_probability`) with
``scipy.stats.binom.logcdf`` / ``logpmf``; where ``logcdf`` underflows (below ``e^-600``,
ranks far beyond ``k/γ``) the lower tail is summed exactly as
``pmf(k−1)·Σ_t Π ratios`` (no cancellation), so ``log ν`` stays finite and accurate for
ranks up to any dataset size.

**Vote distributions** (§6, "Parametric Assumption"). With the training labels sorted by
distance to ``q``, ``y_(1), y_(2), …``:

    ``P_q(c)     = Σ_j ν(j)·1{y_(j) = c} / Σ_j ν(j)``   (label of a top-k vote),
    ``P^k_q(c)   = Σ_j λ(j)·1{y_(j) = c} / Σ_j λ(j)``   (label of the k-th neighbour).

``Σ_j ν(j) = E[min(k, Bin(n, γ))]`` and ``Σ_j λ(j) = P(Bin(n, γ) ≥ k)``, both ``≈ k`` and
``≈ 1`` when ``nγ ≫ k`` (:func:`short_subsample_probability` measures the difference). Only
the first ``J`` neighbours are needed: ``ν`` decreases in ``j`` and :func:`num_neighbors_needed`
picks the smallest ``J`` with ``(n − J)·ν(J + 1) ≤ tail_tol``, a bound on the neglected mass of
both sums. :func:`simulate_vote_distributions` estimates the same two distributions by
drawing the subsample (tests check that the two agree).

**Model** (§6). :class:`KnnVoteModel`:

    ``H_S  = Mult(k, P_q)``,
    ``H_S' = Mult(k, P_q) + Ber(ν)·(1{y'} − Mult(1, P^k_q))``,

with ``ν = ν(r_q)`` of the poison ``(x', y')``. We implement the paper's model literally; the
three draws are independent, so ``H_S'`` can hold a count of ``−1`` (probability
``ν·Σ_c P^k_q(c)·P(Mult(k, P_q)_c = 0)``), which is harmless: the noisy argmax is invariant
to adding a constant to every count, and :func:`knn_output_distributions` shifts the
histograms by one before :func:`ppaudit.noisy_argmax.class_probabilities`.

**Output laws.** :func:`enumerate_knn_output_distributions` gives the model's two output
distributions exactly, with a certified pruned tail (the enumeration of
:mod:`ppaudit.vote_models`), when ``Mult(k, P_q)`` has a modest support (two classes:
``k + 1`` histograms; confident queries); the audit then draws exact counts for ``T = 1e8``
trials at no cost. :func:`knn_output_distributions` is the Monte Carlo fallback for votes
spread over many classes (the "exact" value with a standard error), and
:func:`knn_conditional_output_probabilities` gives the Rao–Blackwellised draws (exact conditional
output probabilities of both sides per common draw) that
:func:`ppaudit.audit.rao_blackwell_two_cut` turns into a sound audit, with the paired-difference
bound :func:`knn_difference_bound`.

Modules: :mod:`.neighbors` (distances, faiss, ranks), :mod:`.inclusion` (ν, λ, vote
distributions, E(x)), :mod:`.vote_model` (the vote model and its output laws).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30). The names are these modules'
# own __all__ (read from their source on first use: ppaudit._lazy.attach_modules), in this order.
__getattr__, __dir__ = attach_modules(__name__, ("neighbors", "inclusion", "vote_model"))

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .neighbors import *  # noqa: F403
    from .inclusion import *  # noqa: F403
    from .vote_model import *  # noqa: F403
    from . import inclusion, neighbors, vote_model
