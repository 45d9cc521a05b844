"""Crafters and distinguishers of the audits of PATE and CaPC (Chadha et al. 2024, §4, §4.1, §5.1).

An adversary = a crafter (how ``S'`` is made from ``S``) + a distinguisher (which queries
are asked). The three adversaries of §4.1, as set up for PATE/CaPC in §5.1 (and "not
changed" for CaPC, §5.2):

* **Nat-AdvQ** — natural crafter, adversarial distinguisher: the canary is a test query
  with its true label, ``(x_q, y_q)``; the distinguisher asks that same query ``n_Q`` times.
* **Pois-AdvQ** — poisoning crafter, adversarial distinguisher: the canary is a test query
  *mislabelled* with the most common teacher label other than its true label; asked ``n_Q`` times.
* **Pois-NatQ** — poisoning crafter, natural distinguisher: the same kind of poison; the
  distinguisher asks the ``n_Q`` natural queries (the query set, a sample of the test set),
  each once.

Each candidate canary defines its own ``S'``; the audits are run for every candidate and
reported for the worst one and on average (§5.4). Here the candidates are points of the
query set (indices into it): for the AdvQ adversaries every query is a candidate (§5.4:
"we instantiate both Nat-AdvQ and Pois-AdvQ for ``n_Q`` different queries"); for
Pois-NatQ the poison is likewise a query-set point, so the poison may itself be one of the
natural queries (as PromptPATE's Pois-NatQ does with its "confident"/"unconfident" query,
App. D.2).

The poison label (§4.1, §5.1: poisons are *mislabelled* points): the most-voted label other
than the point's true label, votes of all teachers of ``S`` pooled over the ``N_g``
instantiations (:func:`poison_label`; ties to the smaller class index). It never equals the
true label; when the teachers' top label is the true label it is the second most common
label, as §5.1 words it. (Before issue 13 the second most common label was taken whatever
the true label, which is the *true* label whenever the teachers mostly err.)
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .._validation import check_positive_int

__all__ = [
    "ADVERSARIES",
    "CraftedCanaries",
    "pooled_vote_counts",
    "second_most_common_label",
    "poison_label",
    "canary_vote_rates",
    "craft_nat_advq",
    "craft_pois_advq",
    "craft_pois_natq",
    "craft",
    "choose_capc_party",
    "sample_query_indices",
]

#: The three adversaries of Chadha et al. 2024 (§5.1–5.2), as the workflow names them.
ADVERSARIES = ("nat-advq", "pois-advq", "pois-natq")


@dataclass(frozen=True)
class CraftedCanaries:
    """Candidate canaries of one adversary and the queries its distinguisher asks.

    Attributes:
        adversary: one of :data:`ADVERSARIES`.
        canary_index: ``(n_c,)`` index into the query set of each canary's point ``x'``.
        canary_label: ``(n_c,)`` its label ``y'``.
        audit_queries: ``(n_c, L)`` indices into the query set asked for each candidate.
        repetitions: ``(n_c, L)`` how many times each of them is asked.
        party: ``(n_c,)`` CaPC party whose teacher receives the canary
            (:func:`choose_capc_party`); ``-1`` = PATE's random cell per instantiation.
    """

    adversary: str
    canary_index: np.ndarray
    canary_label: np.ndarray
    audit_queries: np.ndarray
    repetitions: np.ndarray
    party: np.ndarray | None = None

    def __post_init__(self):
        if self.adversary not in ADVERSARIES:
            raise ValueError(f"adversary must be one of {list(ADVERSARIES)}, got {self.adversary!r}")
        idx = np.asarray(self.canary_index, dtype=np.int64).reshape(-1)
        lab = np.asarray(self.canary_label, dtype=np.int64).reshape(-1)
        q = np.asarray(self.audit_queries, dtype=np.int64)
        r = np.asarray(self.repetitions, dtype=np.int64)
        if lab.shape != idx.shape or q.ndim != 2 or q.shape[0] != idx.size or r.shape != q.shape:
            raise ValueError(
                f"inconsistent shapes: canary_index {idx.shape}, canary_label {lab.shape}, "
                f"audit_queries {q.shape}, repetitions {r.shape}"
            )
        if np.any(r < 1):
            raise ValueError(f"repetitions must be >= 1, got {r.min()}")
        par = np.full(idx.size, -1, dtype=np.int64) if self.party is None else np.asarray(self.party, dtype=np.int64).reshape(-1)
        if par.shape != idx.shape or (par.size and par.min() < -1):
            raise ValueError(f"party must hold one index >= -1 per candidate ({idx.size}), got {self.party!r}")
        for name, val in (("canary_index", idx), ("canary_label", lab), ("audit_queries", q), ("repetitions", r), ("party", par)):
            object.__setattr__(self, name, val)

    @property
    def num_candidates(self) -> int:
        return int(self.canary_index.size)

    @property
    def keys(self) -> list[str]:
        """Stable names of the canaries (seed keys of their teachers): ``adversary:index:label``."""
        return [f"{self.adversary}:{i}:{y}" for i, y in zip(self.canary_index, self.canary_label)]

    def canaries(self, x_query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(x', y')`` arrays of the candidate canaries (``x_query[canary_index]``)."""
        return np.asarray(x_query)[self.canary_index], self.canary_label.copy()

    def to_npz(self, path: str | os.PathLike) -> None:
        """Save atomically as ``.npz`` (:func:`ppaudit.io.atomic_path`)."""
        from ..io import atomic_path

        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(
                    fh,
                    adversary=np.array(self.adversary),
                    canary_index=self.canary_index,
                    canary_label=self.canary_label,
                    audit_queries=self.audit_queries,
                    repetitions=self.repetitions,
                    party=self.party,
                )

    @classmethod
    def from_npz(cls, path: str | os.PathLike) -> "CraftedCanaries":
        with np.load(path, allow_pickle=False) as z:
            party = z["party"] if "party" in z else None
            return cls(str(z["adversary"]), z["canary_index"], z["canary_label"], z["audit_queries"], z["repetitions"], party)

    def with_party(self, party) -> "CraftedCanaries":
        """The same candidates with the CaPC party of each canary set (:func:`choose_capc_party`)."""
        return CraftedCanaries(self.adversary, self.canary_index, self.canary_label, self.audit_queries, self.repetitions, party)


def pooled_vote_counts(votes_S, num_classes: int) -> np.ndarray:
    """Votes per class and query, pooled over instantiations and teachers.

    Args:
        votes_S: ``(N_g, k, n_queries)`` (or ``(k, n_queries)``) labels.
        num_classes: ``C``.

    Returns:
        ``(n_queries, C)`` int64 counts.
    """
    c = check_positive_int(num_classes, "num_classes", minimum=2)
    v = np.asarray(votes_S, dtype=np.int64)
    if v.ndim == 2:
        v = v[None]
    if v.ndim != 3:
        raise ValueError(f"votes_S must have shape (N_g, k, n_queries), got {v.shape}")
    if v.size and (v.min() < 0 or v.max() >= c):
        raise ValueError(f"votes must lie in [0, {c}), got range [{v.min()}, {v.max()}]")
    nq = v.shape[2]
    flat = np.moveaxis(v, 2, 0).reshape(nq, -1)
    return np.stack([np.bincount(row, minlength=c) for row in flat]) if nq else np.zeros((0, c), dtype=np.int64)


def second_most_common_label(counts) -> np.ndarray:
    """Second most common class per row of ``counts`` ``(n, C)`` (ties: smaller index first)."""
    h = np.asarray(counts)
    if h.ndim != 2 or h.shape[1] < 2:
        raise ValueError(f"counts must have shape (n, C >= 2), got {h.shape}")
    order = np.lexsort((np.broadcast_to(np.arange(h.shape[1]), h.shape), -h), axis=1)
    return order[:, 1].astype(np.int64)


def _candidates(candidates, n_queries: int) -> np.ndarray:
    if candidates is None:
        return np.arange(n_queries, dtype=np.int64)
    c = np.asarray(candidates, dtype=np.int64).reshape(-1)
    if c.size == 0 or c.min() < 0 or c.max() >= n_queries or np.unique(c).size != c.size:
        raise ValueError(f"candidates must be distinct indices in [0, {n_queries}), got {c}")
    return c


def craft_nat_advq(y_query, num_repetitions: int, candidates=None) -> CraftedCanaries:
    """Nat-AdvQ (§4.1, §5.1): canary = query ``q`` with its true label; ``q`` asked ``n_Q`` times.

    Args:
        y_query: ``(n_queries,)`` true labels of the query set.
        num_repetitions: ``n_Q``, how many times the distinguisher asks the query.
        candidates: indices into the query set (default: all).
    """
    y = np.asarray(y_query, dtype=np.int64).reshape(-1)
    reps = check_positive_int(num_repetitions, "num_repetitions")
    c = _candidates(candidates, y.size)
    return CraftedCanaries("nat-advq", c, y[c], c[:, None], np.full((c.size, 1), reps))


def poison_label(counts, y_true) -> np.ndarray:
    """The mislabelled poison's label: per row of ``counts``, the most-voted class other than
    the true label (Chadha et al. 2024, §4.1, §5.1: the poison is a *mislabelled* point).

    Ties go to the smaller class index; a row with no vote outside ``y_true`` takes the
    smallest class ``≠ y_true``. The result never equals ``y_true``.

    Args:
        counts: ``(n, C)`` votes (or vote probabilities) per class, ``C ≥ 2``.
        y_true: ``(n,)`` true labels in ``[0, C)``.

    Returns:
        ``(n,)`` int64 labels.

    Raises:
        ValueError: bad shapes or labels out of range.
    """
    h = np.asarray(counts, dtype=np.float64)
    if h.ndim != 2 or h.shape[1] < 2:
        raise ValueError(f"counts must have shape (n, C >= 2), got {h.shape}")
    y = np.asarray(y_true, dtype=np.int64).reshape(-1)
    if y.shape[0] != h.shape[0]:
        raise ValueError(f"y_true must hold one label per row of counts ({h.shape[0]}), got {y.shape[0]}")
    if y.size and (y.min() < 0 or y.max() >= h.shape[1]):
        raise ValueError(f"y_true must lie in [0, {h.shape[1]}), got range [{y.min()}, {y.max()}]")
    masked = h.copy()
    masked[np.arange(h.shape[0]), y] = -np.inf
    return np.argmax(masked, axis=1).astype(np.int64)  # argmax: first maximum = smaller index on ties


def canary_vote_rates(votes_S_prime, votes_twin, canary_index, canary_label) -> dict:
    """How often the canary-holding teacher votes its canary's label on the canary's own query
    (issue 34 §1: do the teachers learn their poison?).

    Pois-AdvQ works through one mechanism (Chadha et al. 2024, §5.1, §5.4): a teacher whose
    training data holds the mislabelled copy ``(x_q, y')`` of the query fits it and votes
    ``y'`` on ``q``; the histogram on ``q`` then differs from that of ``S`` by that one vote,
    *if* the teacher would have voted otherwise without the poison. So three shares, each over
    the ``n_c × N_g'`` (candidate, instantiation) pairs of the canary-holding teacher:

    * ``canary_label_rate`` — its vote on ``q`` is the canary's label ``y'``. For the poisoning
      adversaries (``y' ≠ y_q``) this is the **poison success rate**.
    * ``twin_label_rate`` — its canary-free twin (same data and seed, the canary removed) already
      votes ``y'`` on ``q``: the canary changes nothing there.
    * ``flip_rate`` — the canary teacher's vote differs from its twin's: the share of training
      runs in which the canary moves the histogram on ``q`` at all (the vote-level effect the
      audits measure; ``flip_rate ≥ canary_label_rate − twin_label_rate``).

    Args:
        votes_S_prime: ``(n_c, N_g', n_queries)`` votes of the canary-holding teacher
            (``votes_S_prime`` of rule train_canary_teachers).
        votes_twin: the same shape, its twin's votes.
        canary_index: ``(n_c,)`` query-set index of each canary.
        canary_label: ``(n_c,)`` its label ``y'``.

    Returns:
        ``{"canary_label_rate", "twin_label_rate", "flip_rate"}`` (floats, pooled over all pairs),
        ``"per_candidate_flip_rate"`` (list of ``n_c`` floats) and ``"num_pairs"`` (``n_c·N_g'``).

    Raises:
        ValueError: bad shapes, an index outside the query set or no candidate.
    """
    v = np.asarray(votes_S_prime, dtype=np.int64)
    t = np.asarray(votes_twin, dtype=np.int64)
    idx = np.asarray(canary_index, dtype=np.int64).reshape(-1)
    lab = np.asarray(canary_label, dtype=np.int64).reshape(-1)
    if v.ndim != 3 or t.shape != v.shape:
        raise ValueError(f"votes_S_prime and votes_twin must have one shape (n_c, N_g', n_queries), got {v.shape} and {t.shape}")
    if idx.size != v.shape[0] or lab.size != v.shape[0] or idx.size == 0 or v.shape[1] == 0:
        raise ValueError(f"need one canary_index and canary_label per candidate ({v.shape[0]}, at least one) and N_g' >= 1, "
                         f"got {idx.size} indices, {lab.size} labels, N_g' = {v.shape[1]}")
    if idx.min() < 0 or idx.max() >= v.shape[2]:
        raise ValueError(f"canary_index must lie in [0, {v.shape[2]}), got range [{idx.min()}, {idx.max()}]")
    rows = np.arange(idx.size)
    own, twin = v[rows, :, idx], t[rows, :, idx]  # (n_c, N_g')
    flips = own != twin
    return {
        "canary_label_rate": float((own == lab[:, None]).mean()),
        "twin_label_rate": float((twin == lab[:, None]).mean()),
        "flip_rate": float(flips.mean()),
        "per_candidate_flip_rate": [float(f) for f in flips.mean(axis=1)],
        "num_pairs": int(own.size),
    }


def craft_pois_advq(votes_S, y_query, num_classes: int, num_repetitions: int, candidates=None) -> CraftedCanaries:
    """Pois-AdvQ (§4.1, §5.1): canary = query ``q`` *mislabelled* with the most-voted teacher
    label other than its true label (:func:`poison_label`); ``q`` asked ``n_Q`` times.

    Args:
        votes_S: ``(N_g, k, n_queries)`` votes of the teachers of ``S`` (pooled).
        y_query: ``(n_queries,)`` true labels of the query set.
        num_classes: ``C``.
        num_repetitions: ``n_Q``.
        candidates: indices into the query set (default: all).

    Returns:
        :class:`CraftedCanaries`; ``canary_label[i] != y_query[canary_index[i]]``.
    """
    counts = pooled_vote_counts(votes_S, num_classes)
    y = _true_labels(y_query, counts.shape[0], num_classes)
    reps = check_positive_int(num_repetitions, "num_repetitions")
    c = _candidates(candidates, counts.shape[0])
    lab = poison_label(counts[c], y[c])
    return CraftedCanaries("pois-advq", c, lab, c[:, None], np.full((c.size, 1), reps))


def craft_pois_natq(votes_S, y_query, num_classes: int, candidates=None, natural_queries=None) -> CraftedCanaries:
    """Pois-NatQ (§4.1, §5.1): poison = query-set point mislabelled with the most-voted
    teacher label other than its true label (:func:`poison_label`); the distinguisher asks
    the natural queries (default: the whole query set), once each.

    With a randomly trained mechanism (PATE, random-partition CaPC) all natural queries are
    answered by one training run: the per-query sum of the composition assumes independent
    training runs per query (the paper's procedure), see :mod:`ppaudit.audit.composition`.

    Args:
        votes_S: ``(N_g, k, n_queries)`` votes of the teachers of ``S``.
        y_query: ``(n_queries,)`` true labels of the query set.
        num_classes: ``C``.
        candidates: indices of the candidate poisons (default: all queries).
        natural_queries: indices of the natural queries asked (default: all ``n_queries``).

    Returns:
        :class:`CraftedCanaries`; the poison label never equals the point's true label.
    """
    counts = pooled_vote_counts(votes_S, num_classes)
    nq = counts.shape[0]
    y = _true_labels(y_query, nq, num_classes)
    c = _candidates(candidates, nq)
    natural = _candidates(natural_queries, nq)
    lab = poison_label(counts[c], y[c])
    return CraftedCanaries("pois-natq", c, lab, np.broadcast_to(natural, (c.size, natural.size)).copy(), np.ones((c.size, natural.size), dtype=np.int64))


def _true_labels(y_query, n_queries: int, num_classes: int) -> np.ndarray:
    y = np.asarray(y_query).reshape(-1)
    if y.size != n_queries:
        raise ValueError(f"y_query must hold {n_queries} labels (one per query), got {y.size}")
    if not np.all(np.equal(np.mod(y, 1), 0)):
        raise ValueError(f"y_query must hold integer labels, got {y[:5]}")
    y = y.astype(np.int64)
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise ValueError(f"y_query must lie in [0, {num_classes}), got range [{y.min()}, {y.max()}]")
    return y


def craft(adversary: str, votes_S, y_query, num_classes: int, num_queries: int, candidates=None) -> CraftedCanaries:
    """Dispatch on the adversary's name (:data:`ADVERSARIES`).

    Args:
        adversary: ``"nat-advq"``, ``"pois-advq"`` or ``"pois-natq"``.
        votes_S: ``(N_g, k, n_queries)`` votes on the query set.
        y_query: true labels of the query set.
        num_classes: ``C``.
        num_queries: ``n_Q`` — repetitions of the adversarial query (AdvQ); for Pois-NatQ the
            first ``n_Q`` queries of the query set are the natural queries.
        candidates: candidate canary indices (default: all queries).
    """
    if adversary == "nat-advq":
        return craft_nat_advq(y_query, num_queries, candidates)
    if adversary == "pois-advq":
        return craft_pois_advq(votes_S, y_query, num_classes, num_queries, candidates)
    if adversary == "pois-natq":
        nq = np.asarray(votes_S).shape[-1]
        n = check_positive_int(num_queries, "num_queries")
        if n > nq:
            raise ValueError(f"num_queries (n_Q = {n}) exceeds the query set ({nq} queries)")
        return craft_pois_natq(votes_S, y_query, num_classes, candidates, np.arange(n))
    raise ValueError(f"adversary must be one of {list(ADVERSARIES)}, got {adversary!r}")


def choose_capc_party(votes_S, canary_index, canary_label) -> np.ndarray:
    """CaPC: the party whose teacher's vote the canary can change (issue 13 §2; §5.2).

    A canary ``(x_q, y')`` can only move the histogram on ``q`` through a teacher that votes
    differently from ``y'`` there. Per candidate, the party whose teacher votes ``≠ y'`` on the
    canary's own query in the largest share of the ``N_g`` instantiations (ties to the
    smaller index); if every teacher always votes ``y'``, party 0 (nothing can change).

    Args:
        votes_S: ``(N_g, k, n_queries)`` votes of CaPC's teachers on the query set.
        canary_index: ``(n_c,)`` query-set index of each canary.
        canary_label: ``(n_c,)`` its label ``y'``.

    Returns:
        ``(n_c,)`` int64 party indices in ``[0, k)``.

    Raises:
        ValueError: bad shapes or indices.
    """
    v = np.asarray(votes_S, dtype=np.int64)
    if v.ndim == 2:
        v = v[None]
    if v.ndim != 3:
        raise ValueError(f"votes_S must have shape (N_g, k, n_queries), got {v.shape}")
    idx = np.asarray(canary_index, dtype=np.int64).reshape(-1)
    lab = np.asarray(canary_label, dtype=np.int64).reshape(-1)
    if idx.shape != lab.shape:
        raise ValueError(f"canary_index and canary_label must have the same length, got {idx.size} and {lab.size}")
    if idx.size and (idx.min() < 0 or idx.max() >= v.shape[2]):
        raise ValueError(f"canary_index must lie in [0, {v.shape[2]}), got range [{idx.min()}, {idx.max()}]")
    differ = (v[:, :, idx] != lab[None, None, :]).mean(axis=0)  # (k, n_c)
    return np.argmax(differ, axis=0).astype(np.int64)


def sample_query_indices(num_test: int, num_queries: int, rng: np.random.Generator) -> np.ndarray:
    """The query set: ``num_queries`` distinct test points drawn uniformly (§5.1: natural
    queries "modelled using the test set"; App. D.1: 1000 queries).

    Returns:
        ``(num_queries,)`` int64 indices into the test set, in random order.
    """
    n = check_positive_int(num_test, "num_test")
    q = check_positive_int(num_queries, "num_queries")
    if q > n:
        raise ValueError(f"num_queries must be <= the test set size {n}, got {q}")
    return rng.choice(n, size=q, replace=False).astype(np.int64)
