"""PATE's and CaPC's training phase: the votes of the teachers of ``S`` and of the
canary-holding teacher of ``S'``, over ``N_g`` instantiations (Chadha et al. 2024, Alg. 1,
§5.1–5.2, App. D.1).

One concept for both mechanisms (documented choice): PATE and CaPC train one teacher per cell
of a partition of ``S`` and differ only in the partition — PATE draws a fresh equal random
partition per instantiation (§5.1), CaPC keeps one fixed partition and varies the training
randomness (§5.2) — and in the cell that receives the canary (PATE: a uniformly random cell;
CaPC: the canary's party). :func:`teacher_votes_on_S` and :func:`canary_teacher_votes` are
written once with that switch (``algo``); :func:`pate_teacher_votes`,
:func:`capc_teacher_votes`, :func:`pate_canary_votes` and :func:`capc_canary_votes` are the
named entry points. The teachers themselves (models, training, parallelism) are
:mod:`ppaudit.models.teachers`.

What is trained (the efficiency point of the parametric fits, §5.1–5.2): ``P_q`` needs
the teachers of ``S`` (PATE: ``k`` teachers on fresh random partitions, ``N_g`` times;
CaPC: the ``k`` fixed teachers, ``N_g`` times with fresh training randomness), while
``P'_q`` / ``P^{1'}_q`` only involve the one teacher whose data holds the canary — so for
``S'`` only that teacher is trained, ``N_g`` times per canary, instead of all ``k``.
Coupling (documented choice): instantiation ``g`` of the canary teacher reuses the
partition and the training seed of teacher ``j`` of instantiation ``g`` of ``S``, ``j``
being the cell that receives the canary (common random numbers: the two differ only by the
canary); the marginal distributions that the fits estimate are unchanged.

Determinism: every teacher's seed is a child of ``job_seed_sequence(seed, experiment,
...)`` keyed by (instantiation, teacher) or (canary key, instantiation), so the votes do
not depend on ``n_jobs`` or on the order in which jobs finish.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_positive_int
from ..models.teachers import TeacherJob, train_teachers
from ..rng import job_seed_sequence
from .partition import (
    CAPC_CANARY_SLOT,
    fixed_partition,
    pate_partitions,
    teacher_training_indices,
)

__all__ = [
    "TeacherInputs",
    "canary_teacher_votes",
    "capc_canary_votes",
    "capc_teacher_votes",
    "pate_canary_votes",
    "pate_teacher_votes",
    "load_teacher_inputs",
    "teacher_votes_on_S",
]


@dataclass(frozen=True)
class TeacherInputs:
    """What the teachers of one dataset train on and answer (§5.1, App. D.1): the training set
    ``S`` and the query set, with the queries' true labels and the number of classes."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_query: np.ndarray
    query_labels: np.ndarray
    num_classes: int


def load_teacher_inputs(dataset: str, root, source: str, queries) -> TeacherInputs:
    """The dataset (:func:`ppaudit.data.load_dataset`) and the query set of rule select_queries
    (an ``.npz`` with ``test_index`` into the test set, ``labels`` and ``num_classes``)."""
    from ..data import load_dataset

    x_train, y_train, x_test, _ = load_dataset(dataset, root, source=source)
    with np.load(queries) as q:
        return TeacherInputs(x_train, y_train, x_test[q["test_index"]], q["labels"], int(q["num_classes"]))


def _seq(seed: int, experiment: str, *keys: Hashable) -> np.random.SeedSequence:
    return job_seed_sequence(seed, experiment, *keys)


def _pate_assignments(n: int, k: int, num_instantiations: int, seed: int, experiment: str) -> np.ndarray:
    return pate_partitions(n, k, num_instantiations, _seq(seed, experiment, "partition"))


def _train_seed(seed: int, experiment: str, g: int, j: int) -> np.random.SeedSequence:
    return _seq(seed, experiment, "train", g, j)


def _cells(algo: str, n: int, k: int, num_instantiations: int, seed: int, experiment: str, partition_seed: int | None):
    """``cell(g, j)`` → training indices of teacher ``j`` in instantiation ``g``: PATE draws a
    fresh random partition per instantiation (§5.1), CaPC keeps one fixed partition (§5.2)."""
    if algo == "pate":
        assignments = _pate_assignments(n, k, num_instantiations, seed, experiment)
        return assignments, lambda g, j: teacher_training_indices(assignments[g], j)
    if algo == "capc":
        assignment = fixed_partition(n, k, partition_seed)
        cells = [teacher_training_indices(assignment, j) for j in range(k)]
        return assignment, lambda g, j: cells[j]
    raise ValueError(f"algo must be 'pate' or 'capc', got {algo!r}")


def teacher_votes_on_S(
    algo: str,
    model: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    k: int,
    num_instantiations: int,
    num_classes: int,
    seed: int,
    experiment: str,
    partition_seed: int | None = 0,
    params: Mapping[str, Any] | None = None,
    n_jobs: int = 1,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Votes of the ``k`` teachers of ``S`` over ``N_g`` instantiations, PATE or CaPC (§5.1–5.2).

    Teacher ``j`` of instantiation ``g`` trains on ``cell(g, j)`` (:func:`_cells`) with the seed
    ``_train_seed(seed, experiment, g, j)``; the canary teachers and their twins
    (:func:`canary_teacher_votes`) reuse both.

    Returns:
        ``(votes (N_g, k, n_queries) int64, assignment(s))`` — PATE ``(N_g, n)``, CaPC ``(n,)``.
    """
    kk = check_positive_int(k, "k")
    ng = check_positive_int(num_instantiations, "num_instantiations")
    n = int(np.asarray(y_train).shape[0])
    assignment, cell = _cells(algo, n, kk, ng, seed, experiment, partition_seed)
    jobs = [TeacherJob(cell(g, j), _train_seed(seed, experiment, g, j)) for g in range(ng) for j in range(kk)]
    desc = "PATE teachers on S" if algo == "pate" else "CaPC teachers on S"
    votes = train_teachers(model, x_train, y_train, x_query, jobs, num_classes, params=params, n_jobs=n_jobs, progress=progress, desc=desc)
    return votes.reshape(ng, kk, -1), assignment


def pate_teacher_votes(
    model: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    k: int,
    num_instantiations: int,
    num_classes: int,
    seed: int,
    experiment: str = "pate",
    params: Mapping[str, Any] | None = None,
    n_jobs: int = 1,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """Votes of PATE's teachers on ``S`` over ``N_g`` training-phase instantiations (§5.1).

    Each instantiation draws a fresh equal random partition of ``S`` into ``k`` cells and
    trains one teacher per cell (:func:`teacher_votes_on_S`).

    Returns:
        ``{"votes_S": (N_g, k, n_queries) int64, "assignments": (N_g, n) int64}``.
    """
    votes, assignments = teacher_votes_on_S("pate", model, x_train, y_train, x_query, k, num_instantiations, num_classes, seed, experiment,
                                            params=params, n_jobs=n_jobs, progress=progress)
    return {"votes_S": votes, "assignments": assignments}


def capc_teacher_votes(
    model: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    k: int,
    num_instantiations: int,
    num_classes: int,
    seed: int,
    experiment: str = "capc",
    partition_seed: int | None = 0,
    params: Mapping[str, Any] | None = None,
    n_jobs: int = 1,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """Votes of CaPC's ``k`` fixed teachers over ``N_g`` instantiations (§5.2, ``P^i_q``).

    The partition is fixed (:func:`ppaudit.mechanisms.partition.fixed_partition` with
    ``partition_seed``); instantiations differ by the training randomness only. A
    deterministic learner (``"logreg"``) then gives identical votes in every instantiation,
    i.e. point-mass ``P^i_q`` — CaPC's deterministic data division at work.

    Returns:
        ``{"votes_S": (N_g, k, n_queries) int64, "assignment": (n,) int64}``.
    """
    votes, assignment = teacher_votes_on_S("capc", model, x_train, y_train, x_query, k, num_instantiations, num_classes, seed, experiment,
                                           partition_seed, params, n_jobs, progress)
    return {"votes_S": votes, "assignment": assignment}


def _canary_arrays(canary_x, canary_y, canary_keys):
    cx = np.asarray(canary_x, dtype=np.float32)
    cy = np.asarray(canary_y, dtype=np.int64)
    if cx.shape[0] != cy.shape[0]:
        raise ValueError(f"canary_x and canary_y must hold the same number of canaries, got {cx.shape[0]} and {cy.shape[0]}")
    keys = list(range(cy.shape[0])) if canary_keys is None else list(canary_keys)
    if len(keys) != cy.shape[0] or len(set(map(str, keys))) != len(keys):
        raise ValueError(f"canary_keys must be {cy.shape[0]} distinct keys, got {keys}")
    return cx, cy, keys


def canary_teacher_votes(
    algo: str,
    model: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    k: int,
    num_instantiations: int,
    num_classes: int,
    canary_x: np.ndarray,
    canary_y: np.ndarray,
    seed: int,
    experiment: str,
    canary_keys: Sequence[Hashable] | None = None,
    party=None,
    partition_seed: int | None = 0,
    twins: bool = True,
    params: Mapping[str, Any] | None = None,
    n_jobs: int = 1,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """The canary-holding teacher on ``S' = S ∪ {canary}`` and its canary-free twin, ``N_g'`` times (§5.1–5.2).

    Only the teacher whose data receives the canary is trained: the other ``k − 1`` teachers
    of ``S'`` are distributed as those of ``S`` under the parametric model. In instantiation
    ``g`` the canary goes into cell ``slot[c, g]`` — PATE: a uniformly random cell of
    instantiation ``g``'s partition (same ``seed``/``experiment`` as :func:`teacher_votes_on_S`);
    CaPC: the canary's ``party`` (:func:`ppaudit.adversaries.choose_capc_party`; default
    party 0) — and the teacher reuses that cell's training seed. Its **twin** is the same cell,
    partition and seed without the canary (so for ``g < N_g`` it reproduces the vote of teacher
    ``slot`` of ``S``); twins are trained once per distinct ``(g, slot)``
    (:mod:`ppaudit.vote_models.twin`).

    Args:
        algo: ``"pate"`` or ``"capc"``.
        canary_x: ``(n_canaries, ...)`` inputs; canary_y: ``(n_canaries,)`` labels.
        canary_keys: stable names of the canaries for seeding (default ``0..n-1``): a
            canary's votes do not depend on which other canaries are trained in the same call.
        party: CaPC ``(n_canaries,)`` party per canary (ignored for PATE).
        twins: also train the twins.

    Returns:
        ``{"votes_S_prime": (n_canaries, N_g', n_queries), "slots": (n_canaries, N_g')}`` and,
        with ``twins``, ``"votes_twin"`` of the same shape as ``votes_S_prime``.

    Raises:
        ValueError: bad sizes, keys or parties.
    """
    kk = check_positive_int(k, "k")
    ng = check_positive_int(num_instantiations, "num_instantiations")
    cx, cy, keys = _canary_arrays(canary_x, canary_y, canary_keys)
    nc = len(keys)
    n = int(np.asarray(y_train).shape[0])
    _, cell = _cells(algo, n, kk, ng, seed, experiment, partition_seed)
    if algo == "pate":
        slots = np.array(
            [[int(np.random.default_rng(_seq(seed, experiment, "canary-slot", str(key), g)).integers(kk)) for g in range(ng)] for key in keys],
            dtype=np.int64,
        ).reshape(nc, ng)
    else:
        par = np.full(nc, CAPC_CANARY_SLOT, dtype=np.int64) if party is None else np.asarray(party, dtype=np.int64).reshape(-1)
        if par.shape != (nc,) or (nc and (par.min() < 0 or par.max() >= kk)):
            raise ValueError(f"party must hold one index in [0, {kk}) per canary ({nc}), got {party!r}")
        slots = np.repeat(par[:, None], ng, axis=1)
    jobs = [TeacherJob(cell(g, int(slots[c, g])), _train_seed(seed, experiment, g, int(slots[c, g])), canary=c) for c in range(nc) for g in range(ng)]
    twin_keys = sorted({(g, int(slots[c, g])) for c in range(nc) for g in range(ng)}) if twins else []
    jobs += [TeacherJob(cell(g, j), _train_seed(seed, experiment, g, j)) for g, j in twin_keys]
    desc = "PATE canary teachers" if algo == "pate" else "CaPC canary teachers"
    votes = train_teachers(model, x_train, y_train, x_query, jobs, num_classes, cx, cy, params=params, n_jobs=n_jobs, progress=progress, desc=desc)
    out = {"votes_S_prime": votes[: nc * ng].reshape(nc, ng, -1), "slots": slots}
    if twins:
        by_key = dict(zip(twin_keys, votes[nc * ng :]))
        out["votes_twin"] = np.stack([np.stack([by_key[(g, int(slots[c, g]))] for g in range(ng)]) for c in range(nc)]).reshape(nc, ng, -1)
    return out


def pate_canary_votes(
    model: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    k: int,
    num_instantiations: int,
    num_classes: int,
    canary_x: np.ndarray,
    canary_y: np.ndarray,
    seed: int,
    experiment: str = "pate",
    canary_keys: Sequence[Hashable] | None = None,
    params: Mapping[str, Any] | None = None,
    n_jobs: int = 1,
    progress: bool = False,
    twins: bool = True,
) -> dict[str, np.ndarray]:
    """PATE's canary-holding teacher and its twin (§5.1, ``P'_q``): :func:`canary_teacher_votes` with ``algo="pate"``.

    Returns:
        ``{"votes_S_prime", "slots"}`` (+ ``"votes_twin"``), shapes as :func:`canary_teacher_votes`.
    """
    return canary_teacher_votes("pate", model, x_train, y_train, x_query, k, num_instantiations, num_classes, canary_x, canary_y, seed,
                                experiment, canary_keys, twins=twins, params=params, n_jobs=n_jobs, progress=progress)


def capc_canary_votes(
    model: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    k: int,
    num_instantiations: int,
    num_classes: int,
    canary_x: np.ndarray,
    canary_y: np.ndarray,
    seed: int,
    experiment: str = "capc",
    canary_keys: Sequence[Hashable] | None = None,
    partition_seed: int | None = 0,
    params: Mapping[str, Any] | None = None,
    n_jobs: int = 1,
    progress: bool = False,
    party=None,
    twins: bool = True,
) -> dict[str, np.ndarray]:
    """CaPC's canary-holding teacher (party ``party``, default 0) and its twin (§5.2, ``P^{j'}_q``):
    :func:`canary_teacher_votes` with ``algo="capc"``.

    Returns:
        ``{"votes_S_prime", "slots"}`` (+ ``"votes_twin"``), shapes as :func:`canary_teacher_votes`.
    """
    return canary_teacher_votes("capc", model, x_train, y_train, x_query, k, num_instantiations, num_classes, canary_x, canary_y, seed,
                                experiment, canary_keys, party, partition_seed, twins, params, n_jobs, progress)
