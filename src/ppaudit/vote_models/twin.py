"""Twin-paired fit of the canary-holding teacher (Chadha et al. 2024, §5.1–5.2; issue 13 §2).

The paper fits ``P'_q`` from the ``N_g'`` votes of the canary-holding teacher and sets the
``S``-side law of that same voter to ``P_q`` (PATE: pooled over ``N_g·k`` votes; CaPC: the
``N_g`` votes of teacher 1). With ``N_g' = 4`` against 500 votes, the two estimates differ by
sampling noise alone, so a canary with *no* effect still audits above the floor: the fitted
model invents leakage.

**Twin pairing** (``procedure="ours"``). Every canary-holding teacher has a canary-free twin:
the same cell of the same partition, trained with the same seed, without the canary
(:func:`ppaudit.mechanisms.pate_capc.pate_canary_votes` / :func:`~ppaudit.mechanisms.pate_capc.capc_canary_votes`
return both). The ``S``-side last voter is fitted from the twins' ``N_g'`` votes, the
``S'``-side from the canary teachers' — so the two differ only where the canary changed a vote:

    PATE: ``H_S = Mult(k−1, P_q) + Mult(1, P^twin_q)``,  ``H_S' = Mult(k−1, P_q) + Mult(1, P'_q)``;
    CaPC: ``H_S = Σ_{i≠j} Mult(1, P^i_q) + Mult(1, P^twin_q)``,  ``H_S'`` with ``P'_q`` for party ``j``.

``procedure="paper"`` keeps the paper's model (last voter ``P_q`` resp. ``P^j_q`` from the
teachers of ``S``).

**Null-canary control.** A canary that is not in the training data: its "canary teacher" is
the twin itself, so ``P'_q := P^twin_q``. Under twin pairing the two laws are equal and its
audit must sit at the ε floor; under the paper's fit it generally does not (the test that
shows the defect).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .._validation import check_positive_int
from .categorical import fit_categorical
from .model import NeighbouringVoteModel, capc_vote_model, pate_vote_model

__all__ = ["TwinFit", "fit_twin", "save_twin_fit", "load_twin_fit", "FIT_PROCEDURES"]

#: ``ours``: twin-paired last voter; ``paper``: the paper's ``P_q`` / ``P^j_q``.
FIT_PROCEDURES = ("ours", "paper")


@dataclass(frozen=True)
class TwinFit:
    """Fitted model of one adversary's canaries, with their twins (module docstring).

    Attributes:
        algo: ``"pate"`` or ``"capc"``.
        base: PATE ``(n_queries, C)`` ``P_q``; CaPC ``(n_queries, k, C)`` ``P^i_q``.
        P_twin: ``(n_canaries, n_queries, C)`` the canary-free twins' law.
        P_prime: ``(n_canaries, n_queries, C)`` the canary teachers' law ``P'_q``.
        party: ``(n_canaries,)`` CaPC party holding the canary (``-1`` for PATE: a random
            cell per instantiation).
        k: number of teachers.
        num_instantiations: ``N_g`` (teachers of ``S``).
        num_canary_instantiations: ``N_g'`` (canary teachers and twins).
        procedure: ``"ours"`` (twin pairing) or ``"paper"``.
        smoothing: add-λ of the fit.
    """

    algo: str
    base: np.ndarray
    P_twin: np.ndarray
    P_prime: np.ndarray
    party: np.ndarray
    k: int
    num_instantiations: int
    num_canary_instantiations: int
    procedure: str = "ours"
    smoothing: float = 0.0

    def __post_init__(self):
        if self.algo not in ("pate", "capc"):
            raise ValueError(f"algo must be 'pate' or 'capc', got {self.algo!r}")
        if self.procedure not in FIT_PROCEDURES:
            raise ValueError(f"procedure must be one of {FIT_PROCEDURES}, got {self.procedure!r}")
        if self.P_twin.shape != self.P_prime.shape or self.P_prime.ndim != 3:
            raise ValueError(f"P_twin and P_prime must both be (n_canaries, n_queries, C), got {self.P_twin.shape} and {self.P_prime.shape}")
        if self.party.shape != (self.P_prime.shape[0],):
            raise ValueError(f"party must hold one entry per canary ({self.P_prime.shape[0]}), got shape {self.party.shape}")

    @property
    def num_canaries(self) -> int:
        return int(self.P_prime.shape[0])

    def model(self, candidate: int, query: int, control: bool = False) -> NeighbouringVoteModel:
        """The vote model of one query for one candidate (``control``: its null canary).

        Raises:
            ValueError: indices out of range.
        """
        i, q = int(candidate), int(query)
        if not (0 <= i < self.num_canaries and 0 <= q < self.P_prime.shape[1]):
            raise ValueError(f"candidate/query out of range: ({i}, {q}) for {self.num_canaries} canaries and {self.P_prime.shape[1]} queries")
        prime = self.P_twin[i, q] if control else self.P_prime[i, q]
        if self.algo == "pate":
            if self.procedure == "paper":
                return pate_vote_model(self.base[q], prime, self.k)
            p = self.base[q]
            return NeighbouringVoteModel(np.zeros(p.size, dtype=np.int64), np.array([self.k - 1]), p[None], self.P_twin[i, q], prime)
        j = int(self.party[i])
        rows = np.concatenate([self.base[q][j : j + 1], np.delete(self.base[q], j, axis=0)])
        if self.procedure == "ours":
            rows[0] = self.P_twin[i, q]
        return capc_vote_model(rows, prime)


def fit_twin(algo: str, votes_S, votes_S_prime, votes_twin, num_classes: int, party=None, procedure: str = "ours", smoothing: float = 0.0) -> TwinFit:
    """Maximum-likelihood fit with twin pairing (module docstring; Chadha et al. 2024, §5.1–5.2).

    Args:
        algo: ``"pate"`` or ``"capc"``.
        votes_S: ``(N_g, k, n_queries)`` votes of the teachers of ``S``.
        votes_S_prime: ``(n_canaries, N_g', n_queries)`` votes of the canary teachers.
        votes_twin: same shape: their canary-free twins (same cell, partition and seed).
        num_classes: ``C``.
        party: ``(n_canaries,)`` CaPC party of each canary (default 0); ignored for PATE.
        procedure: ``"ours"`` or ``"paper"`` (:data:`FIT_PROCEDURES`).
        smoothing: add-λ pseudo-counts.

    Returns:
        :class:`TwinFit`.

    Raises:
        ValueError: inconsistent shapes, labels out of range, a bad party.
    """
    c = check_positive_int(num_classes, "num_classes", minimum=2)
    vs = np.asarray(votes_S, dtype=np.int64)
    vp = np.asarray(votes_S_prime, dtype=np.int64)
    vt = np.asarray(votes_twin, dtype=np.int64)
    if vs.ndim != 3:
        raise ValueError(f"votes_S must have shape (N_g, k, n_queries), got {vs.shape}")
    if vp.ndim != 3 or vp.shape[2] != vs.shape[2]:
        raise ValueError(f"votes_S_prime must have shape (n_canaries, N_g', {vs.shape[2]}), got {vp.shape}")
    if vt.shape != vp.shape:
        raise ValueError(f"votes_twin must have the shape of votes_S_prime {vp.shape}, got {vt.shape}")
    k = int(vs.shape[1])
    if algo == "pate":
        base = fit_categorical(vs, c, axis=(0, 1), smoothing=smoothing)
        par = np.full(vp.shape[0], -1, dtype=np.int64)
    elif algo == "capc":
        base = np.ascontiguousarray(np.swapaxes(fit_categorical(vs, c, axis=0, smoothing=smoothing), 0, 1))
        par = np.zeros(vp.shape[0], dtype=np.int64) if party is None else np.asarray(party, dtype=np.int64).reshape(-1)
        if par.shape != (vp.shape[0],) or (par.size and (par.min() < 0 or par.max() >= k)):
            raise ValueError(f"party must hold one index in [0, {k}) per canary ({vp.shape[0]}), got {party!r}")
    else:
        raise ValueError(f"algo must be 'pate' or 'capc', got {algo!r}")
    return TwinFit(algo, base, fit_categorical(vt, c, axis=1, smoothing=smoothing), fit_categorical(vp, c, axis=1, smoothing=smoothing),
                   par, k, int(vs.shape[0]), int(vp.shape[1]), procedure, float(smoothing))


def save_twin_fit(fit: TwinFit, path: str | os.PathLike) -> None:
    """Write atomically as ``.npz`` (:func:`ppaudit.io.atomic_path`); read with :func:`load_twin_fit`."""
    from ..io import atomic_path

    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, kind=np.array("twin"), algo=np.array(fit.algo), base=fit.base, P_twin=fit.P_twin, P_prime=fit.P_prime,
                     party=fit.party, k=np.array(fit.k), num_instantiations=np.array(fit.num_instantiations),
                     num_canary_instantiations=np.array(fit.num_canary_instantiations), procedure=np.array(fit.procedure),
                     smoothing=np.array(fit.smoothing))


def load_twin_fit(path: str | os.PathLike) -> TwinFit:
    """Read a :class:`TwinFit` written by :func:`save_twin_fit`.

    Raises:
        ValueError: the file is not a twin fit.
    """
    with np.load(path, allow_pickle=False) as z:
        if "kind" not in z or str(z["kind"]) != "twin":
            raise ValueError(f"{path} is not a twin fit (written by save_twin_fit)")
        return TwinFit(str(z["algo"]), z["base"], z["P_twin"], z["P_prime"], z["party"], int(z["k"]), int(z["num_instantiations"]),
                       int(z["num_canary_instantiations"]), str(z["procedure"]), float(z["smoothing"]))
