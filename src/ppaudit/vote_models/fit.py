"""Maximum-likelihood fits of the PATE and CaPC vote models (Chadha et al. 2024, §5.1–5.2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_positive_int
from .categorical import _check_votes, fit_categorical

__all__ = [
    "fit_categorical",
    "PateFit",
    "CapcFit",
    "fit_pate",
    "fit_capc",
    "save_fit",
    "load_fit",
]


@dataclass(frozen=True)
class PateFit:
    """Fitted PATE model (§5.1).

    Attributes:
        P: ``(n_queries, C)`` — ``P_q`` per query.
        P_prime: ``(n_canaries, n_queries, C)`` — ``P'_q`` per canary and query.
        k: number of teachers.
        num_instantiations: ``N_g``.
        smoothing: the add-λ used (0 = MLE).
    """

    P: np.ndarray
    P_prime: np.ndarray
    k: int
    num_instantiations: int
    smoothing: float = 0.0


@dataclass(frozen=True)
class CapcFit:
    """Fitted CaPC model (§5.2).

    Attributes:
        P_teachers: ``(n_queries, k, C)`` — ``P^i_q`` per query and teacher.
        P1_prime: ``(n_canaries, n_queries, C)`` — ``P^{1'}_q``.
        num_instantiations: ``N_g``.
        smoothing: the add-λ used.
    """

    P_teachers: np.ndarray
    P1_prime: np.ndarray
    num_instantiations: int
    smoothing: float = 0.0

    @property
    def k(self) -> int:
        return int(self.P_teachers.shape[1])


def _split_votes(votes_S, votes_S_prime, num_classes):
    c = check_positive_int(num_classes, "num_classes", minimum=2)
    vs = _check_votes(votes_S, c, "votes_S")
    if vs.ndim != 3:
        raise ValueError(f"votes_S must have shape (N_g, k, n_queries), got {vs.shape}")
    vp = _check_votes(votes_S_prime, c, "votes_S_prime")
    if vp.ndim == 2:
        vp = vp[None]
    if vp.ndim != 3 or vp.shape[2] != vs.shape[2]:
        raise ValueError(f"votes_S_prime must have shape (n_canaries, N_g', {vs.shape[2]}), got {np.shape(votes_S_prime)}")
    return c, vs, vp


def fit_pate(votes_S, votes_S_prime, num_classes: int, smoothing: float = 0.0) -> PateFit:
    """MLE of PATE's ``P_q`` and ``P'_q`` (Chadha et al. 2024, §5.1).

    Args:
        votes_S: ``(N_g, k, n_queries)`` labels of every teacher of ``S`` in every
            instantiation; ``P_q`` pools the ``N_g·k`` votes (all teachers are exchangeable
            under random partitioning).
        votes_S_prime: ``(n_canaries, N_g', n_queries)`` (or ``(N_g', n_queries)``) labels
            of the canary-holding teacher; ``P'_q`` pools its ``N_g'`` votes.
        num_classes: ``C``.
        smoothing: add-λ pseudo-counts (default 0: pure MLE; see the module docstring).
    """
    c, vs, vp = _split_votes(votes_S, votes_S_prime, num_classes)
    P = fit_categorical(vs, c, axis=(0, 1), smoothing=smoothing)
    Pp = fit_categorical(vp, c, axis=1, smoothing=smoothing)
    return PateFit(P, Pp, int(vs.shape[1]), int(vs.shape[0]), float(smoothing))


def fit_capc(votes_S, votes_S_prime, num_classes: int, smoothing: float = 0.0) -> CapcFit:
    """MLE of CaPC's ``P^i_q`` (every teacher) and ``P^{1'}_q`` (Chadha et al. 2024, §5.2).

    Args:
        votes_S: ``(N_g, k, n_queries)``; teacher ``i`` keeps its data in every
            instantiation, so ``P^i_q`` uses its ``N_g`` votes only.
        votes_S_prime: ``(n_canaries, N_g', n_queries)`` votes of teacher 1 (index 0)
            trained on ``S_1 ∪ {canary}``.
        num_classes: ``C``.
        smoothing: add-λ pseudo-counts (default 0).
    """
    c, vs, vp = _split_votes(votes_S, votes_S_prime, num_classes)
    Pt = fit_categorical(vs, c, axis=0, smoothing=smoothing)  # (k, nq, C)
    Pp = fit_categorical(vp, c, axis=1, smoothing=smoothing)
    return CapcFit(np.ascontiguousarray(np.swapaxes(Pt, 0, 1)), Pp, int(vs.shape[0]), float(smoothing))


def save_fit(fit: PateFit | CapcFit, path) -> None:
    """Write a fit atomically as ``.npz`` (:func:`ppaudit.io.atomic_path`); see :func:`load_fit`."""
    from ..io import atomic_path

    if isinstance(fit, PateFit):
        arrays = {"algo": np.array("pate"), "P": fit.P, "P_prime": fit.P_prime, "k": np.array(fit.k)}
    elif isinstance(fit, CapcFit):
        arrays = {"algo": np.array("capc"), "P_teachers": fit.P_teachers, "P1_prime": fit.P1_prime}
    else:
        raise ValueError(f"fit must be a PateFit or CapcFit, got {type(fit).__name__}")
    arrays.update(num_instantiations=np.array(fit.num_instantiations), smoothing=np.array(fit.smoothing))
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)


def load_fit(path) -> PateFit | CapcFit:
    """Read a fit written by :func:`save_fit` (or a twin-paired fit, :func:`ppaudit.vote_models.twin.save_twin_fit`)."""
    with np.load(path, allow_pickle=False) as z:
        if "kind" in z and str(z["kind"]) == "twin":
            from .twin import load_twin_fit

            return load_twin_fit(path)
        algo = str(z["algo"])
        ng, sm = int(z["num_instantiations"]), float(z["smoothing"])
        if algo == "pate":
            return PateFit(z["P"], z["P_prime"], int(z["k"]), ng, sm)
        if algo == "capc":
            return CapcFit(z["P_teachers"], z["P1_prime"], ng, sm)
    raise ValueError(f"{path} holds an unknown fit kind {algo!r}")
