"""Adversaries of the Private-kNN audit (Chadha et al. 2024, §4.1, §6, App. D.3).

Five adversaries, each a crafter (the point ``(x', y')`` added to ``S``) and a
distinguisher (the queries asked):

* **Nat-AdvQ** — the canary is a query-set (test) point with its true label; the
  distinguisher asks that same point ``n_Q`` times. As a query it is its own nearest
  neighbour (rank 1), so ``ν = γ`` (§6: ``ν = γ`` for ``r_q ≤ k``).
* **Pois-AdvQ** — the same point *mislabelled* (§4.1): the most likely label of the query's
  votes ``P_q`` other than its true label (ties to the smaller index;
  :func:`ppaudit.adversaries.poison_label`, shared with PATE and CaPC).
* **Pois-NatQ-test / -train / -embedding** — one poison, the ``n_Q`` natural queries asked
  once each. The poison maximises ``E(x) = Σ_q P(x in top-k for q) = Σ_q ν(r_q(x))``
  (App. D.3) among the test points, among (copies of) the training points, or among points
  of the embedding space built by the weighted top-``s`` heuristic of App. D.3
  (:func:`embedding_candidates`).

As for PATE (§5.4), every query-set point is a candidate canary of the AdvQ adversaries
(a subset may be given); the audits report the worst and the average candidate.

Documented choices where App. D.3 is silent:

* The Pois-NatQ poison's label is the most common label, other than the poison point's true
  label, of the votes it would join: of ``Σ_q ν_q·P_q`` over the natural queries (weights =
  its inclusion probabilities). The true label of a test or train point is its label; an
  embedding poison's is the class whose query points built it. For a single repeated query
  this is exactly the Pois-AdvQ rule.
* The test pool is every test point of the dataset subset, the natural queries included
  (the adversary may poison with a query; it then has rank 1 for that query).
* A train-pool poison is a copy of a training point with the new label; it ties with the
  original and ranks just behind it (ties never favour the poison).
* Embedding heuristic: for every class ``c`` and every ``s`` in ``s_grid``, the query-set
  points whose true label is ``c`` each contribute their ``s`` nearest training points to a
  histogram over training indices; the poison is the histogram-weighted mean of those
  training embeddings, taken as is and rescaled to the weighted mean norm of the points it
  averages (for unit-normalised text features this puts it back on the sphere). The
  candidate with the largest ``E(x)`` is used; App. D.3 reports that this reaches almost
  ``γ·n_Q``, the maximum.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_positive_int, check_probability
from .pate_capc import poison_label
from ..mechanisms.private_knn import (
    KnnVoteModel,
    Neighbors,
    duplicate_ranks,
    expected_inclusions_points,
    expected_inclusions_train,
    inclusion_probability,
    nearest_neighbors,
    num_neighbors_needed,
    point_ranks,
    short_subsample_probability,
    vote_distributions,
)

__all__ = [
    "KNN_ADVERSARIES",
    "KnnSetup",
    "knn_setup",
    "save_setup",
    "load_setup",
    "KnnCrafted",
    "save_crafted",
    "load_crafted",
    "craft_knn_advq",
    "embedding_candidates",
    "craft_knn_pois_natq",
    "craft_knn",
]

#: The Private-kNN adversaries (Fig. 5; App. E.4, Figs. 25–31).
KNN_ADVERSARIES = ("nat-advq", "pois-advq", "pois-natq-test", "pois-natq-train", "pois-natq-embedding")


# ----------------------------------------------------------------------------- setup


@dataclass(frozen=True)
class KnnSetup:
    """One dataset's Private-kNN audit inputs: features, the query set and its vote tables.

    Attributes:
        train_features, train_labels: the training set ``S`` (``(n, d)``, ``(n,)``).
        test_features, test_labels: the test pool (``(n_test, d)``, ``(n_test,)``).
        query_index: ``(n_Q,)`` indices into the test pool of the natural queries.
        k, gamma, num_classes: Private-kNN's ``k``, ``γ`` and ``C``.
        neighbors: the ``J`` nearest training points of every query.
        P, P_last: ``(n_Q, C)`` — ``P_q`` and ``P^k_q`` of every query.
    """

    train_features: np.ndarray
    train_labels: np.ndarray
    test_features: np.ndarray
    test_labels: np.ndarray
    query_index: np.ndarray
    k: int
    gamma: float
    num_classes: int
    neighbors: Neighbors
    P: np.ndarray
    P_last: np.ndarray

    @property
    def num_queries(self) -> int:
        return int(self.query_index.size)

    @property
    def query_features(self) -> np.ndarray:
        return self.test_features[self.query_index]

    @property
    def query_labels(self) -> np.ndarray:
        return self.test_labels[self.query_index]


def _labels(y, n: int, c: int, name: str) -> np.ndarray:
    arr = np.asarray(y)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {arr.shape}")
    if n and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= c):
        raise ValueError(f"{name} must be integers in [0, {c}), got range [{arr.min()}, {arr.max()}]")
    return arr.astype(np.int64)


def knn_setup(
    train_features,
    train_labels,
    test_features,
    test_labels,
    query_index,
    k: int,
    gamma: float,
    num_classes: int,
    tail_tol: float = 1e-12,
    max_short_probability: float = 1e-6,
) -> KnnSetup:
    """Neighbours and vote tables ``P_q``, ``P^k_q`` of the natural queries (§6).

    Args:
        train_features, train_labels: ``S``.
        test_features, test_labels: the test pool.
        query_index: indices into the test pool of the ``n_Q`` natural queries (e.g.
            :func:`ppaudit.adversaries.sample_query_indices`).
        k: neighbours (200 in the paper); gamma: subsampling rate (0.2).
        num_classes: ``C``.
        tail_tol: neglected vote mass per query (:func:`ppaudit.mechanisms.private_knn.num_neighbors_needed`).
        max_short_probability: largest acceptable ``P(Bin(n, γ) < k)`` — the model's ``k``
            votes need a subsample of at least ``k`` points.

    Raises:
        ValueError: on inconsistent shapes or labels, bad indices, or a training set too
            small for ``k`` and ``γ``.
    """
    xtr = np.asarray(train_features)
    xte = np.asarray(test_features)
    if xtr.ndim != 2 or xte.ndim != 2 or xtr.shape[1] != xte.shape[1]:
        raise ValueError(f"train_features and test_features must be (n, d) with the same d, got {xtr.shape} and {xte.shape}")
    c = check_positive_int(num_classes, "num_classes", minimum=2)
    ytr = _labels(train_labels, xtr.shape[0], c, "train_labels")
    yte = _labels(test_labels, xte.shape[0], c, "test_labels")
    qi = np.asarray(query_index, dtype=np.int64).reshape(-1)
    if qi.size == 0 or qi.min() < 0 or qi.max() >= xte.shape[0] or np.unique(qi).size != qi.size:
        raise ValueError(f"query_index must be distinct indices in [0, {xte.shape[0]}), got {qi}")
    kk = check_positive_int(k, "k")
    g = check_probability(gamma, "gamma", open_right=False)
    short = short_subsample_probability(xtr.shape[0], kk, g)
    if short > float(max_short_probability):
        raise ValueError(
            f"the training set is too small for k = {kk} and gamma = {g}: P(Bin(n = {xtr.shape[0]}, gamma) < k) = {short:.3g} "
            f"> max_short_probability = {max_short_probability}; use more training points, a larger gamma or a smaller k"
        )
    j = num_neighbors_needed(xtr.shape[0], kk, g, tail_tol)
    nb = nearest_neighbors(xtr, xte[qi], j)
    P, L = vote_distributions(nb.labels(ytr), kk, g, c)
    return KnnSetup(xtr, ytr, xte, yte, qi, kk, g, c, nb, P, L)


def save_setup(setup: KnnSetup, path: str | os.PathLike) -> None:
    """Write the query set, neighbours and vote tables (not the features) to ``.npz`` atomically."""
    from ..io import atomic_path

    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, query_index=setup.query_index, k=setup.k, gamma=setup.gamma, num_classes=setup.num_classes,
                     neighbor_indices=setup.neighbors.indices, neighbor_sq_distances=setup.neighbors.sq_distances,
                     num_train=setup.neighbors.num_train, P=setup.P, P_last=setup.P_last)


def load_setup(path: str | os.PathLike, train_features, train_labels, test_features, test_labels) -> KnnSetup:
    """Rebuild a :class:`KnnSetup` from :func:`save_setup` and the features it was made from."""
    with np.load(path) as z:
        xtr = np.asarray(train_features)
        if int(z["num_train"]) != xtr.shape[0]:
            raise ValueError(f"{path} was made for {int(z['num_train'])} training points, got {xtr.shape[0]}")
        nb = Neighbors(z["neighbor_indices"], z["neighbor_sq_distances"], int(z["num_train"]))
        c = int(z["num_classes"])
        return KnnSetup(xtr, _labels(train_labels, xtr.shape[0], c, "train_labels"), np.asarray(test_features),
                        _labels(test_labels, np.asarray(test_features).shape[0], c, "test_labels"), z["query_index"],
                        int(z["k"]), float(z["gamma"]), c, nb, z["P"], z["P_last"])


# ----------------------------------------------------------------------------- crafted


@dataclass(frozen=True)
class KnnCrafted:
    """Candidate canaries of one adversary and, per candidate, the queries and ``ν`` of each.

    Attributes:
        adversary: one of :data:`KNN_ADVERSARIES`.
        canary_index: ``(n_c,)`` index of the canary in its pool (query set for AdvQ, test
            pool, training set; ``-1`` for a crafted embedding).
        canary_label: ``(n_c,)`` its label ``y'``.
        canary_features: ``(n_c, d)`` its embedding ``x'``.
        audit_queries: ``(n_c, L)`` indices into the query set asked per candidate.
        repetitions: ``(n_c, L)`` how often each is asked.
        nu: ``(n_c, L)`` inclusion probability of the canary for each asked query.
        expected_inclusions: ``(n_c,)`` ``E(x') = Σ repetitions·ν``.
        P, P_last: ``(n_Q, C)`` vote tables of the query set.
        k: neighbours.
        info: free-form provenance (e.g. the embedding heuristic's class and ``s``).
    """

    adversary: str
    canary_index: np.ndarray
    canary_label: np.ndarray
    canary_features: np.ndarray
    audit_queries: np.ndarray
    repetitions: np.ndarray
    nu: np.ndarray
    expected_inclusions: np.ndarray
    P: np.ndarray
    P_last: np.ndarray
    k: int
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.adversary not in KNN_ADVERSARIES:
            raise ValueError(f"adversary must be one of {list(KNN_ADVERSARIES)}, got {self.adversary!r}")
        n = np.asarray(self.canary_index).shape[0]
        shapes = {"canary_label": (n,), "expected_inclusions": (n,)}
        for name, shape in shapes.items():
            if np.asarray(getattr(self, name)).shape != shape:
                raise ValueError(f"{name} must have shape {shape}, got {np.asarray(getattr(self, name)).shape}")
        q = np.asarray(self.audit_queries)
        if q.ndim != 2 or q.shape[0] != n or np.asarray(self.repetitions).shape != q.shape or np.asarray(self.nu).shape != q.shape:
            raise ValueError(f"audit_queries, repetitions and nu must share a shape (n_c={n}, L), got {q.shape}, "
                             f"{np.asarray(self.repetitions).shape}, {np.asarray(self.nu).shape}")
        if q.size and (q.min() < 0 or q.max() >= np.asarray(self.P).shape[0]):
            raise ValueError(f"audit_queries must index the {np.asarray(self.P).shape[0]} queries, got range [{q.min()}, {q.max()}]")

    @property
    def num_candidates(self) -> int:
        return int(np.asarray(self.canary_index).shape[0])

    @property
    def keys(self) -> list[str]:
        """Stable names of the candidates (seed keys of their audits)."""
        return [f"{self.adversary}:{int(i)}:{int(lab)}:{c}" for c, (i, lab) in enumerate(zip(self.canary_index, self.canary_label))]

    def model(self, candidate: int, position: int) -> KnnVoteModel:
        """The vote model of the ``position``-th asked query of ``candidate``."""
        q = int(self.audit_queries[candidate, position])
        return KnnVoteModel(self.P[q], self.P_last[q], float(self.nu[candidate, position]), int(self.canary_label[candidate]), self.k)


def save_crafted(crafted: KnnCrafted, path: str | os.PathLike) -> None:
    """Write a :class:`KnnCrafted` to ``.npz`` atomically (``info`` as JSON text)."""
    import json

    from ..io import atomic_path

    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, adversary=crafted.adversary, canary_index=crafted.canary_index, canary_label=crafted.canary_label,
                     canary_features=crafted.canary_features, audit_queries=crafted.audit_queries, repetitions=crafted.repetitions,
                     nu=crafted.nu, expected_inclusions=crafted.expected_inclusions, P=crafted.P, P_last=crafted.P_last,
                     k=crafted.k, info=json.dumps(crafted.info, sort_keys=True, default=float))


def load_crafted(path: str | os.PathLike) -> KnnCrafted:
    """Read :func:`save_crafted`."""
    import json

    with np.load(path) as z:
        return KnnCrafted(str(z["adversary"]), z["canary_index"], z["canary_label"], z["canary_features"], z["audit_queries"],
                          z["repetitions"], z["nu"], z["expected_inclusions"], z["P"], z["P_last"], int(z["k"]), json.loads(str(z["info"])))


# ----------------------------------------------------------------------------- AdvQ


def _candidate_queries(candidates, n_queries: int) -> np.ndarray:
    if candidates is None:
        return np.arange(n_queries, dtype=np.int64)
    c = np.asarray(candidates, dtype=np.int64).reshape(-1)
    if c.size == 0 or c.min() < 0 or c.max() >= n_queries or np.unique(c).size != c.size:
        raise ValueError(f"candidates must be distinct query-set indices in [0, {n_queries}), got {c}")
    return c


def craft_knn_advq(setup: KnnSetup, adversary: str, num_repetitions: int, candidates=None) -> KnnCrafted:
    """Nat-AdvQ / Pois-AdvQ (§4.1, §6): the canary is a query-set point asked ``n_Q`` times.

    Args:
        setup: :func:`knn_setup`.
        adversary: ``"nat-advq"`` (true label) or ``"pois-advq"`` (the most likely label of
            ``P_q`` other than the true label: a mislabelled point, §4.1).
        num_repetitions: ``n_Q``.
        candidates: query-set indices of the candidates (default: all ``n_Q``).

    Returns:
        :class:`KnnCrafted` with one asked query per candidate, ``ν = γ`` (rank 1).
    """
    reps = check_positive_int(num_repetitions, "num_repetitions")
    c = _candidate_queries(candidates, setup.num_queries)
    if adversary == "nat-advq":
        labels = setup.query_labels[c]
    elif adversary == "pois-advq":
        labels = poison_label(setup.P[c], setup.query_labels[c])
    else:
        raise ValueError(f"adversary must be 'nat-advq' or 'pois-advq', got {adversary!r}")
    nu = float(inclusion_probability([1], setup.k, setup.gamma)[0])  # = γ
    return KnnCrafted(
        adversary, c, labels.astype(np.int64), setup.query_features[c], c[:, None], np.full((c.size, 1), reps, dtype=np.int64),
        np.full((c.size, 1), nu), np.full(c.size, reps * nu), setup.P, setup.P_last, setup.k,
        {"num_repetitions": reps},
    )


# ----------------------------------------------------------------------------- Pois-NatQ


def embedding_candidates(setup: KnnSetup, s_grid=(20, 200, 1000)) -> tuple[np.ndarray, list[dict]]:
    """Crafted embeddings of the weighted top-``s`` heuristic (App. D.3).

    For each class ``c`` with query-set points of true label ``c`` and each ``s``: histogram of
    the ``s`` nearest training indices of those points; the histogram-weighted mean of the
    training embeddings, raw and rescaled to the weighted mean norm (module docstring).

    Returns:
        ``(points (m, d), descriptions)``.
    """
    s_vals = sorted({check_positive_int(s, "s") for s in np.atleast_1d(s_grid)})
    if not s_vals:
        raise ValueError(f"s_grid must hold at least one s >= 1, got {s_grid!r}")
    xtr = np.asarray(setup.train_features, dtype=np.float64)
    n = xtr.shape[0]
    s_max = min(max(s_vals), n)
    nb = setup.neighbors if setup.neighbors.num_neighbors >= s_max else nearest_neighbors(setup.train_features, setup.query_features, s_max)
    norms = np.linalg.norm(xtr, axis=1)
    points, info = [], []
    yq = setup.query_labels
    for c in range(setup.num_classes):
        rows = np.flatnonzero(yq == c)
        if rows.size == 0:
            continue
        for s in s_vals:
            s_eff = min(s, n)
            hist = np.bincount(nb.indices[rows, :s_eff].ravel(), minlength=n).astype(np.float64)
            w = hist / hist.sum()
            mean = w @ xtr
            points.append(mean)
            info.append({"class": c, "s": s_eff, "rescaled": False})
            norm = np.linalg.norm(mean)
            if norm > 0:
                points.append(mean * (w @ norms) / norm)
                info.append({"class": c, "s": s_eff, "rescaled": True})
    if not points:
        raise ValueError("no query-set point has a label: cannot build embedding candidates")
    return np.stack(points), info


def _poison_label(setup: KnnSetup, nu: np.ndarray, true_label: int) -> int:
    """Most common label of ``Σ_q ν_q·P_q`` other than the poison point's true label (module docstring)."""
    agg = (np.asarray(nu, dtype=np.float64)[:, None] * setup.P).sum(axis=0)
    if agg.sum() == 0:
        agg = setup.P.sum(axis=0)
    return int(poison_label(agg[None, :], [true_label])[0])


def craft_knn_pois_natq(setup: KnnSetup, pool: str, num_candidates: int = 1, s_grid=(20, 200, 1000)) -> KnnCrafted:
    """Pois-NatQ (§6, App. D.3): the ``E(x)``-maximising poison(s) from a pool, natural queries once each.

    ``E`` is scored for the whole pool with the vectorised :func:`ppaudit.mechanisms.private_knn.expected_inclusions_train`
    / :func:`~ppaudit.mechanisms.private_knn.expected_inclusions_points`; the ``num_candidates`` best are kept
    (ties to the smaller index) and their ranks are then recomputed exactly against all
    training points (:func:`~ppaudit.mechanisms.private_knn.duplicate_ranks`, :func:`~ppaudit.mechanisms.private_knn.point_ranks`)
    for the per-query ``ν``.

    Args:
        setup: :func:`knn_setup`.
        pool: ``"test"``, ``"train"`` or ``"embedding"``.
        num_candidates: poisons kept (the paper uses the best one).
        s_grid: the ``s`` values of the embedding heuristic.

    Returns:
        :class:`KnnCrafted` (``audit_queries`` = all ``n_Q`` queries, ``repetitions`` = 1).
    """
    m = check_positive_int(num_candidates, "num_candidates")
    q_feats = setup.query_features
    info: dict = {"pool": pool}
    if pool == "train":
        scores = expected_inclusions_train(setup.neighbors, setup.k, setup.gamma, duplicate=True)
        best = np.lexsort((np.arange(scores.size), -scores))[:m]
        ranks = duplicate_ranks(setup.train_features, q_feats, best)
        feats = np.asarray(setup.train_features)[best]
        index = best
        true = np.asarray(setup.train_labels)[best]
    elif pool == "test":
        scores = expected_inclusions_points(setup.neighbors, q_feats, setup.test_features, setup.k, setup.gamma)
        best = np.lexsort((np.arange(scores.size), -scores))[:m]
        feats = np.asarray(setup.test_features)[best]
        ranks = point_ranks(setup.train_features, q_feats, feats)
        index = best
        true = np.asarray(setup.test_labels)[best]
    elif pool == "embedding":
        pts, desc = embedding_candidates(setup, s_grid)
        scores = expected_inclusions_points(setup.neighbors, q_feats, pts, setup.k, setup.gamma)
        best = np.lexsort((np.arange(scores.size), -scores))[:m]
        feats = pts[best].astype(np.asarray(setup.train_features).dtype)
        ranks = point_ranks(setup.train_features, q_feats, feats)
        index = np.full(best.size, -1, dtype=np.int64)
        true = np.array([desc[i]["class"] for i in best], dtype=np.int64)  # built from points of this class
        info["embedding"] = [desc[i] for i in best]
        info["embedding_scores"] = {f"class{d['class']}_s{d['s']}_{'rescaled' if d['rescaled'] else 'raw'}": float(s) for d, s in zip(desc, scores)}
    else:
        raise ValueError(f"pool must be 'test', 'train' or 'embedding', got {pool!r}")
    nu = inclusion_probability(ranks.T, setup.k, setup.gamma)  # (m, n_Q)
    labels = np.array([_poison_label(setup, row, int(y)) for row, y in zip(nu, true)], dtype=np.int64)
    info["poison_true_label"] = [int(y) for y in true]
    info["pool_scores_top"] = [float(s) for s in np.sort(scores)[::-1][:5]]
    info["max_expected_inclusions"] = float(setup.gamma * setup.num_queries)
    nq = setup.num_queries
    return KnnCrafted(
        f"pois-natq-{pool}", index.astype(np.int64), labels, feats, np.broadcast_to(np.arange(nq), (best.size, nq)).copy(),
        np.ones((best.size, nq), dtype=np.int64), nu, nu.sum(axis=1), setup.P, setup.P_last, setup.k, info,
    )


def craft_knn(adversary: str, setup: KnnSetup, num_queries: int | None = None, candidates=None, num_candidates: int = 1,
              s_grid=(20, 200, 1000)) -> KnnCrafted:
    """Dispatch on the adversary's name (:data:`KNN_ADVERSARIES`).

    Args:
        adversary: one of :data:`KNN_ADVERSARIES`.
        setup: :func:`knn_setup`.
        num_queries: ``n_Q`` repetitions of the AdvQ query (default: the query-set size).
        candidates: AdvQ candidate query-set indices (default: all).
        num_candidates: Pois-NatQ poisons kept.
        s_grid: embedding heuristic's ``s`` values.
    """
    if adversary in ("nat-advq", "pois-advq"):
        return craft_knn_advq(setup, adversary, setup.num_queries if num_queries is None else num_queries, candidates)
    if adversary.startswith("pois-natq-") and adversary in KNN_ADVERSARIES:
        return craft_knn_pois_natq(setup, adversary[len("pois-natq-"):], num_candidates, s_grid)
    raise ValueError(f"adversary must be one of {list(KNN_ADVERSARIES)}, got {adversary!r}")
