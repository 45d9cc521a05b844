"""Audit a PATE operator's own teacher votes (``ppaudit audit-votes``).

Input: a ``.npz`` file with either

* ``votes``: integer array ``(n_teachers, n_queries)`` — teacher ``t``'s label for query ``q``,
  in ``[0, C)``; ``C`` is ``num_classes`` if the file has that scalar, else ``max + 1``; or
* ``histograms``: non-negative integer array ``(n_queries, C)`` — the vote histograms.

What is computed (:func:`audit_votes`):

1. **Accounted cost**, per query and composed over queries (RDP adds up): the
   data-independent GNMax bound ``α/σ²`` (Papernot et al. 2018, Prop. 8), the data-dependent
   GNMax bound (Prop. 7 + Thm 6) or, with ``threshold``/``sigma_threshold``, the expected
   Confident-GNMax cost (:func:`ppaudit.accounting.confident_gnmax_rdp`); each converted to ε
   at δ with Balle et al. 2020, Thm 20 (Chadha et al. 2024, Thm 1) — valid, these are upper
   bounds.
2. **Exact per-query RDP** of the GNMax answer (Chadha et al. 2024, Eq. (4)): for the
   ``exact_queries`` queries with the largest data-dependent cost at the order that sets the
   composed ε, the maximum over *all* neighbouring histograms (one teacher's vote moved from
   class ``i`` to class ``j``) of ``D_α`` in both directions. A deterministic check: the exact
   forward divergence ``D_α(M(h) ‖ M(h'))`` must not exceed the data-dependent bound at ``h``
   (Thm 6 bounds that direction); an excess is reported as a violation.
3. **Audit of the most exposed query** (largest exact RDP at that order): ``trials`` noisy-argmax
   draws on ``h`` and on its worst neighbour, then :func:`ppaudit.blackbox.audit_counts` against
   the data-independent claim ``α/σ²`` every GNMax answer makes. Under Confident-GNMax an
   answered query is a GNMax answer at ``σ`` (the check's noise is independent), so the same
   claim applies to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import as_orders, check_positive_int, check_probability, check_sigma
from ..accounting import gnmax_rdp_data_dependent, rdp_to_dp
from ..divergence import renyi_divergence_from_log
from ..noisy_argmax import log_class_probabilities
from .claims import Claim
from .mechanism import CountsAudit, audit_counts

__all__ = ["DEFAULT_VOTE_ORDERS", "VotesAudit", "load_votes", "neighbour_histograms", "audit_votes"]

#: Orders used by :func:`audit_votes` unless given.
DEFAULT_VOTE_ORDERS = np.concatenate([np.linspace(1.5, 10.0, 18), np.geomspace(12.0, 2000.0, 40)])


def load_votes(path) -> np.ndarray:
    """Read a votes file (module docstring) and return ``(n_queries, C)`` integer histograms.

    Raises:
        ValueError: if the file has neither ``votes`` nor ``histograms``, or they are malformed.
    """
    with np.load(path, allow_pickle=False) as z:
        keys = set(z.files)
        if "histograms" in keys:
            h = np.asarray(z["histograms"])
            if h.ndim != 2 or h.shape[0] < 1 or h.shape[1] < 2:
                raise ValueError(f"'histograms' must have shape (n_queries, C) with C >= 2, got {h.shape}")
            if not np.all(np.isfinite(h)) or np.any(h < 0) or np.any(h != np.round(h)):
                raise ValueError("'histograms' must hold non-negative integers")
            return h.astype(np.int64)
        if "votes" not in keys:
            raise ValueError(f"{path}: expected an array 'votes' (n_teachers, n_queries) or 'histograms' (n_queries, C); found {sorted(keys)}")
        v = np.asarray(z["votes"])
        if v.ndim != 2 or v.size == 0:
            raise ValueError(f"'votes' must have shape (n_teachers, n_queries), got {v.shape}")
        if not np.all(np.isfinite(v)) or np.any(v < 0) or np.any(v != np.round(v)):
            bad = v[~np.isfinite(v) | (v < 0) | (v != np.round(v))]
            raise ValueError(f"'votes' must hold labels >= 0, got {bad[:5]}")
        v = v.astype(np.int64)
        c = int(z["num_classes"]) if "num_classes" in keys else int(v.max()) + 1
        if v.max() >= c:
            raise ValueError(f"'votes' has label {int(v.max())} >= num_classes={c}")
        c = max(c, 2)
        out = np.zeros((v.shape[1], c), dtype=np.int64)
        for q in range(v.shape[1]):
            out[q] = np.bincount(v[:, q], minlength=c)
        return out


def neighbour_histograms(hist) -> tuple[np.ndarray, np.ndarray]:
    """Every histogram reachable by moving one vote from class ``i`` (``h_i > 0``) to ``j ≠ i``.

    Returns:
        ``(neighbours, moves)``: ``(K, C)`` histograms and ``(K, 2)`` ``(i, j)`` pairs.
    """
    h = np.asarray(hist, dtype=np.int64)
    c = h.size
    moves = np.array([(i, j) for i in range(c) if h[i] > 0 for j in range(c) if j != i], dtype=np.int64)
    nb = np.repeat(h[None], len(moves), 0)
    nb[np.arange(len(moves)), moves[:, 0]] -= 1
    nb[np.arange(len(moves)), moves[:, 1]] += 1
    return nb, moves


@dataclass
class VotesAudit:
    """Result of :func:`audit_votes` (every number; ``to_dict`` for JSON).

    Attributes:
        num_queries, num_classes: the shape of the votes.
        sigma, threshold, sigma_threshold, delta, orders: the settings.
        mechanism: ``"gnmax"`` or ``"confident_gnmax"``.
        per_query_rdp: ``(n_queries, len(orders))`` accounted data-dependent cost.
        epsilon_data_dependent, order_data_dependent: composed ε at δ and its order.
        epsilon_data_independent: ε at δ of ``n_queries · α/σ²`` (GNMax answers only).
        exact_queries: indices of the queries whose exact RDP was computed.
        exact_rdp: ``(len(exact_queries), len(orders))`` exact worst-neighbour RDP.
        exact_exceeds_data_dependent: queries where the exact forward RDP exceeds the bound.
        most_exposed_query, worst_neighbour: the audited pair.
        audit: the :class:`CountsAudit` of that pair against ``α/σ²``.
        verdict: ``"violation"`` or ``"consistent"``.
    """

    num_queries: int
    num_classes: int
    sigma: float
    threshold: float | None
    sigma_threshold: float | None
    delta: float
    orders: np.ndarray
    mechanism: str
    per_query_rdp: np.ndarray
    epsilon_data_dependent: float
    order_data_dependent: float
    epsilon_data_independent: float
    exact_queries: np.ndarray
    exact_rdp: np.ndarray
    exact_exceeds_data_dependent: list
    most_exposed_query: int
    worst_neighbour: np.ndarray
    audit: CountsAudit
    verdict: str
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        j = int(np.argmin(np.abs(self.orders - self.order_data_dependent)))
        q = list(self.exact_queries).index(self.most_exposed_query)
        return {
            "mechanism": self.mechanism, "num_queries": self.num_queries, "num_classes": self.num_classes,
            "sigma": self.sigma, "threshold": self.threshold, "sigma_threshold": self.sigma_threshold,
            "delta": self.delta,
            "epsilon_data_dependent": self.epsilon_data_dependent, "order_data_dependent": self.order_data_dependent,
            "epsilon_data_independent": self.epsilon_data_independent,
            "exact_queries": [int(x) for x in self.exact_queries],
            "exact_rdp_at_order": [float(x) for x in self.exact_rdp[:, j]],
            "data_dependent_rdp_at_order": [float(self.per_query_rdp[k, j]) for k in self.exact_queries],
            "exact_exceeds_data_dependent": self.exact_exceeds_data_dependent,
            "most_exposed_query": self.most_exposed_query,
            "most_exposed_histogram": [int(x) for x in self.details["histogram"]],
            "worst_neighbour": [int(x) for x in self.worst_neighbour],
            "most_exposed_exact_rdp_at_order": float(self.exact_rdp[q, j]),
            "audit": self.audit.to_dict(),
            "verdict": self.verdict,
            "procedure": {"accounting": "paper", "exact_and_audit": "ours"},
        }


def audit_votes(
    histograms,
    sigma: float,
    *,
    threshold: float | None = None,
    sigma_threshold: float | None = None,
    orders=None,
    delta: float = 1e-5,
    trials: int = 200_000,
    exact_queries: int = 20,
    confidence: float = 0.95,
    rng: np.random.Generator | np.random.SeedSequence | int | None = 0,
) -> VotesAudit:
    """Accounted cost, exact per-query RDP and an audit of the most exposed query (module docstring).

    Args:
        histograms: ``(n_queries, C)`` vote histograms (see :func:`load_votes`).
        sigma: GNMax noise σ (σ₂ of Confident-GNMax).
        threshold, sigma_threshold: Confident-GNMax's ``T`` and ``σ₁`` (both or neither).
        orders: Rényi orders (default :data:`DEFAULT_VOTE_ORDERS`).
        delta: δ of the reported ε.
        trials: noisy-argmax draws per side for the audit.
        exact_queries: how many of the costliest queries get the exact RDP.
        confidence: confidence of the audit's verdict.
        rng: generator / SeedSequence / seed.

    Returns:
        :class:`VotesAudit`.

    Raises:
        ValueError: on bad histograms, σ, orders, δ, trials, or only one of
            ``threshold`` / ``sigma_threshold``.
    """
    h = np.asarray(histograms)
    if h.ndim != 2 or h.shape[1] < 2 or h.shape[0] < 1:
        raise ValueError(f"histograms must have shape (n_queries, C) with C >= 2, got {h.shape}")
    s = check_sigma(sigma)
    a = as_orders(DEFAULT_VOTE_ORDERS if orders is None else orders)
    d = check_probability(delta, "delta")
    t = check_positive_int(trials, "trials")
    k = check_positive_int(exact_queries, "exact_queries")
    if (threshold is None) != (sigma_threshold is None):
        raise ValueError(f"give both threshold and sigma1 (Confident-GNMax) or neither, got threshold={threshold}, sigma1={sigma_threshold}")
    n_q, c = h.shape
    dd_gnmax = np.atleast_2d(gnmax_rdp_data_dependent(h, s, a))
    if threshold is not None:
        from ..accounting import confident_gnmax_rdp  # issue 14 §1

        per_query = np.atleast_2d(confident_gnmax_rdp(h, threshold, sigma_threshold, s, a))
        mech = "confident_gnmax"
    else:
        per_query = dd_gnmax
        mech = "gnmax"
    total = per_query.sum(axis=0)
    eps_dd, order_dd = rdp_to_dp(total, a, d, return_order=True)
    eps_di = float(rdp_to_dp(n_q * a / (s * s), a, d))
    j = int(np.argmin(np.abs(a - order_dd)))
    chosen = np.argsort(-per_query[:, j], kind="stable")[: min(k, n_q)]
    exact = np.empty((chosen.size, a.size))
    worst = []
    exceeds = []
    for r, q in enumerate(chosen):
        nb, _ = neighbour_histograms(h[q])
        l0 = log_class_probabilities(h[q][None].astype(np.float64), s)
        l1 = log_class_probabilities(nb.astype(np.float64), s)
        fwd = renyi_divergence_from_log(l0, l1, a)
        rev = renyi_divergence_from_log(l1, l0, a)
        both = np.maximum(fwd, rev)
        exact[r] = both.max(axis=0)
        worst.append(nb[int(np.argmax(both[:, j]))])
        over = fwd.max(axis=0) > dd_gnmax[q] * (1 + 1e-6) + 1e-9
        if np.any(over):
            exceeds.append({"query": int(q), "orders": [float(x) for x in a[over]]})
    best = int(np.argmax(exact[:, j]))
    q_star = int(chosen[best])
    from ..montecarlo import noisy_argmax_counts_pair, spawn_generators

    g_mc, g_audit = spawn_generators(rng, 2)
    c0, c1 = noisy_argmax_counts_pair(h[q_star], worst[best], s, t, rng=g_mc)
    audit = audit_counts(c0, c1, a, confidence=confidence, claim=Claim.rdp(a, a / (s * s)), delta=d, rng=g_audit,
                         outputs=list(range(c)))
    verdict = "violation" if (audit.violation or exceeds) else "consistent"
    return VotesAudit(n_q, c, s, threshold, sigma_threshold, d, a, mech, per_query, float(eps_dd), float(order_dd), eps_di,
                      chosen, exact, exceeds, q_star, worst[best], audit, verdict, {"histogram": h[q_star]})
