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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import logsumexp
from scipy.stats import binom

from ._validation import as_orders, check_positive_int, check_sigma
from .divergence import renyi_divergence_from_log
from .montecarlo import DiscreteHistogramModel
from .noisy_argmax import class_probabilities

__all__ = [
    "fit_categorical",
    "PateFit",
    "CapcFit",
    "fit_pate",
    "fit_capc",
    "save_fit",
    "load_fit",
    "NeighbouringVoteModel",
    "pate_vote_model",
    "capc_vote_model",
    "OutputEstimate",
    "estimate_output_distributions",
    "mixture_rdp_estimate",
    "EnumeratedOutput",
    "enumerate_output_distributions",
    "certified_mixture_rdp",
    "QUADRATURE_ABS_ERROR",
]

#: Absolute error bound of :func:`ppaudit.noisy_argmax.class_probabilities` (its docstring).
QUADRATURE_ABS_ERROR = 1e-12

_CHUNK_ELEMENTS = 1 << 22


# ----------------------------------------------------------------------------- fits


def _check_votes(votes, num_classes: int, name: str) -> np.ndarray:
    v = np.asarray(votes)
    if not np.issubdtype(v.dtype, np.integer):
        if not np.all(v == np.round(v)):
            raise ValueError(f"{name} must hold integer class labels, got dtype {v.dtype}")
        v = v.astype(np.int64)
    if v.size and (v.min() < 0 or v.max() >= num_classes):
        raise ValueError(f"{name} must hold labels in [0, {num_classes}), got range [{v.min()}, {v.max()}]")
    return v.astype(np.int64, copy=False)


def fit_categorical(votes, num_classes: int, axis=0, smoothing: float = 0.0) -> np.ndarray:
    """MLE (optionally add-λ) of a categorical distribution from labels, pooled over ``axis``.

    Args:
        votes: integer labels in ``0..C-1``.
        num_classes: ``C``.
        axis: axis or axes pooled (each entry along them is one draw).
        smoothing: ``λ ≥ 0`` pseudo-counts per class (0 = MLE).

    Returns:
        Probabilities with the pooled axes removed and a last axis of length ``C``.
    """
    c = check_positive_int(num_classes, "num_classes", minimum=2)
    lam = float(smoothing)
    if not (lam >= 0 and math.isfinite(lam)):
        raise ValueError(f"smoothing must be a finite number >= 0, got {smoothing!r}")
    v = _check_votes(votes, c, "votes")
    axes = (axis,) if np.isscalar(axis) else tuple(axis)
    axes = tuple(a % v.ndim for a in axes)
    rest = [d for d in range(v.ndim) if d not in axes]
    moved = np.moveaxis(v, axes + tuple(rest), tuple(range(v.ndim)))
    n = int(np.prod([v.shape[a] for a in axes]))
    if n == 0:
        raise ValueError(f"no votes to fit along axis {axis} (shape {v.shape})")
    flat = moved.reshape(n, -1)  # (draws, cells)
    cells = flat.shape[1]
    counts = np.zeros((cells, c), dtype=np.float64)
    np.add.at(counts, (np.broadcast_to(np.arange(cells), flat.shape), flat), 1.0)
    probs = (counts + lam) / (n + lam * c)
    return probs.reshape(tuple(v.shape[d] for d in rest) + (c,))


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
    from .io import atomic_path

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
    """Read a fit written by :func:`save_fit`."""
    with np.load(path, allow_pickle=False) as z:
        algo = str(z["algo"])
        ng, sm = int(z["num_instantiations"]), float(z["smoothing"])
        if algo == "pate":
            return PateFit(z["P"], z["P_prime"], int(z["k"]), ng, sm)
        if algo == "capc":
            return CapcFit(z["P_teachers"], z["P1_prime"], ng, sm)
    raise ValueError(f"{path} holds an unknown fit kind {algo!r}")


# ----------------------------------------------------------------------------- models


def _as_prob(p, name: str, c: int | None = None) -> np.ndarray:
    a = np.asarray(p, dtype=np.float64)
    if a.ndim != 1 or (c is not None and a.size != c):
        raise ValueError(f"{name} must be a probability vector of length {c}, got shape {a.shape}")
    if np.any(a < 0) or not np.all(np.isfinite(a)) or abs(a.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name} must be non-negative and sum to 1, got {a}")
    return a / a.sum()


def _cdf(p: np.ndarray) -> np.ndarray:
    """CDF with exact 1.0 from the last class of positive probability on (inverse-CDF draws)."""
    cdf = np.cumsum(p, axis=-1)
    last = p.shape[-1] - 1 - np.argmax((p > 0)[..., ::-1], axis=-1)
    cols = np.arange(p.shape[-1])
    return np.where(cols >= last[..., None], 1.0, np.minimum(cdf, 1.0))


@dataclass(frozen=True)
class NeighbouringVoteModel:
    """Histogram models of ``S`` and ``S'`` that differ in one voter (§5.1–5.2).

    ``H_S = constant + Σ_g Mult(n_g, P_g) + e_V`` with ``V ~ last``, and ``H_S'`` the same
    with ``V' ~ last_prime``.

    Attributes:
        constant: ``(C,)`` votes of deterministic voters.
        group_counts: ``(G,)`` voters per group of identical random voters.
        group_probs: ``(G, C)`` their vote distribution.
        last: ``(C,)`` distribution of the differing voter under ``S``.
        last_prime: ``(C,)`` under ``S'``.
    """

    constant: np.ndarray
    group_counts: np.ndarray
    group_probs: np.ndarray
    last: np.ndarray
    last_prime: np.ndarray
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        const = np.asarray(self.constant, dtype=np.int64)
        c = const.size
        last = _as_prob(self.last, "last", c)
        lastp = _as_prob(self.last_prime, "last_prime", c)
        counts = np.asarray(self.group_counts, dtype=np.int64).reshape(-1)
        probs = np.asarray(self.group_probs, dtype=np.float64).reshape(-1, c) if counts.size else np.zeros((0, c))
        if probs.shape[0] != counts.size or np.any(counts < 1) or np.any(const < 0):
            raise ValueError(f"group_counts {counts} must be >= 1 and match group_probs rows {probs.shape[0]}; constant must be >= 0")
        probs = np.stack([_as_prob(p, f"group_probs[{i}]", c) for i, p in enumerate(probs)]) if counts.size else probs
        for name, val in (("constant", const), ("group_counts", counts), ("group_probs", probs), ("last", last), ("last_prime", lastp)):
            val.setflags(write=False)
            object.__setattr__(self, name, val)

    # -- basic properties
    @property
    def num_classes(self) -> int:
        return int(self.constant.size)

    @property
    def num_voters(self) -> int:
        """``k``: all voters including the differing one."""
        return int(self.constant.sum() + self.group_counts.sum() + 1)

    @property
    def identical(self) -> bool:
        """True when ``S`` and ``S'`` have the same model (``last == last_prime``)."""
        return bool(np.array_equal(self.last, self.last_prime))

    def _last(self, which: str) -> np.ndarray:
        if which in ("S", "s", 0):
            return self.last
        if which in ("S'", "S_prime", "s_prime", 1):
            return self.last_prime
        raise ValueError(f"which must be 'S' or 'S_prime', got {which!r}")

    def mean(self, which: str = "S") -> np.ndarray:
        """``E[H]`` — the expected histogram (e.g. ``k·P_q`` for PATE on ``S``)."""
        m = self.constant.astype(np.float64) + self.group_counts @ self.group_probs
        return m + self._last(which)

    def covariance(self, which: str = "S") -> np.ndarray:
        """``Cov[H]`` — the sum of the multinomial covariances ``n(diag(P) − P Pᵀ)``."""
        def mult_cov(n, p):
            return n * (np.diag(p) - np.outer(p, p))

        cov = np.zeros((self.num_classes, self.num_classes))
        for n, p in zip(self.group_counts, self.group_probs):
            cov += mult_cov(n, p)
        return cov + mult_cov(1, self._last(which))

    # -- sampling
    def _split_groups(self):
        key = "split"
        if key not in self._cache:
            single = self.group_counts == 1
            self._cache[key] = (
                self.group_probs[single],
                self.group_counts[~single],
                self.group_probs[~single],
            )
        return self._cache[key]

    def sample(self, rng: np.random.Generator, n: int, which: str = "S") -> np.ndarray:
        """Draw ``n`` histograms ``(n, C)`` (int64) of ``H_S`` or ``H_S'``.

        Single voters (CaPC's teachers) are drawn together by inverse CDF on an ``(n, m)``
        matrix of uniforms and counted per row with one ``bincount``; groups of ``n_g > 1``
        identical voters (PATE's ``Mult(k−1, P_q)``) by ``Generator.multinomial`` on the
        classes of positive probability. Memory is bounded by chunking over rows.
        """
        n = check_positive_int(n, "n", minimum=0)
        c = self.num_classes
        last = self._last(which)
        singles, multi_counts, multi_probs = self._split_groups()
        cats = np.concatenate([singles, last[None]], axis=0)  # (m, C)
        random_rows = ~(cats.max(axis=1) == 1.0)
        fixed = self.constant + (cats[~random_rows] == 1.0).sum(axis=0).astype(np.int64)
        cats = cats[random_rows]
        out = np.empty((n, c), dtype=np.int64)
        out[:] = fixed
        for cnt, p in zip(multi_counts, multi_probs):
            support = np.flatnonzero(p > 0)
            if support.size == 1:
                out[:, support[0]] += cnt
            else:
                out[:, support] += rng.multinomial(int(cnt), p[support] / p[support].sum(), size=n)
        m = cats.shape[0]
        if m:
            cdf = _cdf(cats)[:, :-1]  # (m, C-1)
            rows = max(1, _CHUNK_ELEMENTS // (m * c))
            for a in range(0, n, rows):
                b = min(n, a + rows)
                u = 1.0 - rng.random((b - a, m))  # in (0, 1]
                cls = (cdf[None, :, :] < u[:, :, None]).sum(axis=2)  # (rows, m)
                flat = cls + (np.arange(b - a) * c)[:, None]
                out[a:b] += np.bincount(flat.ravel(), minlength=(b - a) * c).reshape(b - a, c)
        return out

    def sampler(self, which: str = "S"):
        """``model(rng, n) -> (n, C)`` for :func:`ppaudit.montecarlo.model_noisy_argmax_counts`."""
        self._last(which)

        def draw(rng: np.random.Generator, n: int) -> np.ndarray:
            return self.sample(rng, n, which)

        return draw

    def sample_base(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draws of the shared base ``B`` (without the differing voter), ``(n, C)``."""
        shadow = NeighbouringVoteModel(self.constant, self.group_counts, self.group_probs, _point(self.num_classes), _point(self.num_classes))
        out = shadow.sample(rng, n, "S")
        out[:, 0] -= 1
        return out


def _point(c: int, cls: int = 0) -> np.ndarray:
    p = np.zeros(c)
    p[cls] = 1.0
    return p


def pate_vote_model(P_q, P_prime_q, k: int) -> NeighbouringVoteModel:
    """PATE's ``H_S = Mult(k, P_q)``, ``H_S' = Mult(k−1, P_q) + Mult(1, P'_q)`` (§5.1)."""
    kk = check_positive_int(k, "k", minimum=2)
    p = _as_prob(P_q, "P_q")
    pp = _as_prob(P_prime_q, "P_prime_q", p.size)
    return NeighbouringVoteModel(np.zeros(p.size, dtype=np.int64), np.array([kk - 1]), p[None], p, pp)


def capc_vote_model(P_teachers_q, P1_prime_q) -> NeighbouringVoteModel:
    """CaPC's ``H_S = Σ_i Mult(1, P^i_q)``, ``H_S' = Mult(1, P^{1'}_q) + Σ_{i≥2} Mult(1, P^i_q)`` (§5.2).

    Teachers ``i ≥ 2`` with a point-mass ``P^i_q`` (deterministic on this query) become the
    constant part; identical random teachers are grouped into one multinomial.

    Args:
        P_teachers_q: ``(k, C)`` — ``P^i_q``; row 0 is teacher 1, which holds the canary.
        P1_prime_q: ``(C,)`` — ``P^{1'}_q``.
    """
    pt = np.asarray(P_teachers_q, dtype=np.float64)
    if pt.ndim != 2 or pt.shape[0] < 2:
        raise ValueError(f"P_teachers_q must have shape (k >= 2, C), got {pt.shape}")
    c = pt.shape[1]
    rows = np.stack([_as_prob(r, f"P_teachers_q[{i}]", c) for i, r in enumerate(pt)])
    first = rows[0]
    rest = rows[1:]
    det = rest.max(axis=1) == 1.0
    constant = np.bincount(rest[det].argmax(axis=1), minlength=c).astype(np.int64)
    rand = rest[~det]
    if rand.shape[0]:
        uniq, counts = np.unique(rand, axis=0, return_counts=True)
    else:
        uniq, counts = np.zeros((0, c)), np.zeros(0, dtype=np.int64)
    return NeighbouringVoteModel(constant, counts, uniq, first, _as_prob(P1_prime_q, "P1_prime_q", c))


# ----------------------------------------------------------------------------- Monte Carlo mixture


@dataclass(frozen=True)
class OutputEstimate:
    """Monte Carlo estimate of the output distributions of the noisy argmax under a model.

    Attributes:
        p: ``(C,)`` estimate of ``μ_S``.
        q: ``(C,)`` estimate of ``μ_S'``.
        cov: ``(2C, 2C)`` covariance of the per-draw pair ``(p_m, q_m)`` (divide by
            ``draws`` for the covariance of the means).
        draws: number of base draws ``M``.
    """

    p: np.ndarray
    q: np.ndarray
    cov: np.ndarray
    draws: int

    @property
    def se_p(self) -> np.ndarray:
        c = self.p.size
        return np.sqrt(np.maximum(np.diag(self.cov)[:c], 0.0) / self.draws)

    @property
    def se_q(self) -> np.ndarray:
        c = self.p.size
        return np.sqrt(np.maximum(np.diag(self.cov)[c:], 0.0) / self.draws)


def _shifted_probabilities(base: np.ndarray, classes: np.ndarray, sigma: float) -> np.ndarray:
    """``Pr[· | base + e_v]`` for every ``v`` in ``classes``: ``(n, len(classes), C)``."""
    n, c = base.shape
    hist = np.repeat(base[:, None, :], classes.size, axis=1)
    hist[:, np.arange(classes.size), classes] += 1
    return class_probabilities(hist.reshape(-1, c), sigma).reshape(n, classes.size, c)


class _StreamingOutputMoments:
    """Mean and covariance of ``(μ_S, μ_S')`` rows added chunk by chunk, as an :class:`OutputEstimate`.

    Moments are taken about the first chunk's mean, so the covariance has no cancellation.
    """

    def __init__(self, num_classes: int):
        self.c = num_classes
        self.total = np.zeros(2 * num_classes)
        self.outer = np.zeros((2 * num_classes, 2 * num_classes))
        self.shift = None
        self.count = 0

    def add(self, pm: np.ndarray, qm: np.ndarray) -> None:
        pq = np.concatenate([pm, qm], axis=1)
        if self.shift is None:
            self.shift = pq.mean(axis=0)
        d = pq - self.shift
        self.total += d.sum(axis=0)
        self.outer += d.T @ d
        self.count += pq.shape[0]

    def estimate(self) -> "OutputEstimate":
        m = self.count
        dmean = self.total / m
        mean = self.shift + dmean
        cov = self.outer / m - np.outer(dmean, dmean)
        if m > 1:
            cov *= m / (m - 1)
        return OutputEstimate(mean[: self.c], mean[self.c :], cov, m)


def estimate_output_distributions(
    model: NeighbouringVoteModel,
    sigma: float,
    draws: int,
    rng: np.random.Generator | int | None = None,
    chunk_size: int = 20_000,
) -> OutputEstimate:
    """Monte Carlo estimate of ``μ_S`` and ``μ_S'`` with the differing vote summed out.

    For each base draw ``B_m``: ``p_m = Σ_v last(v) Pr[· | B_m + e_v]`` and
    ``q_m = Σ_v last'(v) Pr[· | B_m + e_v]`` with Eq. (4) (:func:`class_probabilities`);
    ``p = mean p_m``, ``q = mean q_m``. Sharing ``B_m`` between ``S`` and ``S'`` makes the
    difference ``p − q`` far more precise than two independent averages. When the base is
    deterministic (e.g. CaPC with deterministic teachers) the result is exact.

    Args:
        model: the vote model.
        sigma: noise standard deviation.
        draws: number ``M`` of base draws.
        rng: generator or seed.
        chunk_size: base draws per chunk (memory).

    Returns:
        An :class:`OutputEstimate`.
    """
    s = check_sigma(sigma)
    m = check_positive_int(draws, "draws")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    c = model.num_classes
    classes = np.flatnonzero((model.last > 0) | (model.last_prime > 0))
    wl, wp = model.last[classes], model.last_prime[classes]
    deterministic_base = model.group_counts.size == 0
    moments = _StreamingOutputMoments(c)
    done = 0
    while done < m:
        n = min(chunk_size, m - done)
        base = model.sample_base(gen, 1 if deterministic_base else n)
        probs = _shifted_probabilities(base, classes, s)
        pm = np.einsum("v,nvc->nc", wl, probs)
        qm = np.einsum("v,nvc->nc", wp, probs)
        if deterministic_base:
            pm, qm = np.repeat(pm, n, axis=0), np.repeat(qm, n, axis=0)
        moments.add(pm, qm)
        done += n
    return moments.estimate()


def _renyi_and_grad(p: np.ndarray, q: np.ndarray, alpha: float):
    """``D_α(p||q)`` and its gradient w.r.t. ``(p, q)`` (zeros of ``p`` skipped)."""
    sup = p > 0
    grad = np.zeros(2 * p.size)
    if np.any(sup & (q <= 0)):
        return math.inf, grad
    lp, lq = np.log(p[sup]), np.log(q[sup])
    idx = np.flatnonzero(sup)
    if math.isinf(alpha):
        r = lp - lq
        j = int(np.argmax(r))
        grad[idx[j]] = 1.0 / p[idx[j]]
        grad[p.size + idx[j]] = -1.0 / q[idx[j]]
        return max(float(r[j]), 0.0), grad
    lt = alpha * lp + (1 - alpha) * lq
    ls = logsumexp(lt)
    w = np.exp(lt - ls)  # t_i / S
    grad[idx] = alpha / (alpha - 1.0) * w / p[idx]
    grad[p.size + idx] = -w / q[idx]
    return max(float(ls / (alpha - 1.0)), 0.0), grad


def mixture_rdp_estimate(estimate: OutputEstimate, orders) -> dict[str, np.ndarray]:
    """Rényi divergences between the estimated mixtures, with delta-method standard errors.

    This is the "exact RDP" of the fitted model (Chadha et al. 2024, §4.2, applied to the
    model's output distributions), up to Monte Carlo error.

    Returns:
        ``{"forward": D_α(μ_S||μ_S'), "reverse": D_α(μ_S'||μ_S), "rdp": max of the two,
        "se_forward", "se_reverse", "se": standard error of the larger direction}``, each
        ``(len(orders),)``.
    """
    a = as_orders(orders)
    c = estimate.p.size
    cov = estimate.cov / estimate.draws
    swap = np.r_[np.arange(c, 2 * c), np.arange(c)]
    out = {k: np.empty(a.size) for k in ("forward", "reverse", "se_forward", "se_reverse")}
    for j, alpha in enumerate(a):
        d, g = _renyi_and_grad(estimate.p, estimate.q, float(alpha))
        out["forward"][j], out["se_forward"][j] = d, math.sqrt(max(float(g @ cov @ g), 0.0))
        d, g = _renyi_and_grad(estimate.q, estimate.p, float(alpha))
        gs = g[np.argsort(swap)]  # gradient w.r.t. (p, q) order
        out["reverse"][j], out["se_reverse"][j] = d, math.sqrt(max(float(gs @ cov @ gs), 0.0))
    rev = out["reverse"] > out["forward"]
    out["rdp"] = np.where(rev, out["reverse"], out["forward"])
    out["se"] = np.where(rev, out["se_reverse"], out["se_forward"])
    return out


# ----------------------------------------------------------------------------- enumeration


class _TooLarge(Exception):
    pass


def _enumerate_multinomial(n: int, p: np.ndarray, log_threshold: float, max_support: int):
    """Histograms of ``Mult(n, p)`` with mass ≥ exp(log_threshold), and the pruned mass.

    Conditional-binomial tree over the classes of positive probability (ascending, so the
    largest class is determined last): ``x_j | x_<j ~ Bin(rem, p_j / Σ_{l≥j} p_l)``. A child
    whose path mass is below the threshold is pruned and its mass (= the mass of its whole
    subtree) added to ``dropped``; children beyond the cap ``X_j`` (where
    ``P(Bin(n, π_j) > X_j) < threshold``, so none of them could be kept) are pruned in one
    go with the exact binomial tail.
    """
    c = p.size
    support = np.flatnonzero(p > 0)
    support = support[np.argsort(p[support], kind="stable")]
    ps = p[support] / p[support].sum()
    m = support.size
    counts = np.zeros((1, 0), dtype=np.int64)
    rem = np.array([n], dtype=np.int64)
    logw = np.zeros(1)
    dropped = 0.0
    tail = 1.0
    thr = math.exp(log_threshold)
    for j in range(m - 1):
        pi = min(max(ps[j] / tail, 0.0), 1.0) if tail > 0 else 1.0
        tail = max(tail - ps[j], 0.0)
        cap = int(min(n, binom.isf(thr, n, pi) + 1)) if thr > 0 else n
        cap = max(cap, 0)
        x = np.arange(cap + 1)
        beyond = binom.sf(cap, rem, pi)  # mass of x > cap, per node
        dropped += float(np.sum(np.exp(logw) * beyond))
        rows_all, cols_all, lw_all = [], [], []
        kept = 0
        block = max(1, 4_000_000 // (cap + 1))  # bounded memory: nodes × (cap + 1) per block
        for a in range(0, rem.size, block):
            r_blk = rem[a : a + block]
            with np.errstate(divide="ignore"):
                lpmf = binom.logpmf(x[None, :], r_blk[:, None], pi)
            lpmf = np.where(x[None, :] <= r_blk[:, None], lpmf, -np.inf)
            child = logw[a : a + block, None] + lpmf
            keep = child >= log_threshold
            dropped += float(np.exp(child[np.isfinite(child) & ~keep]).sum())
            rows, cols = np.nonzero(keep)
            kept += rows.size
            if kept > max_support:
                raise _TooLarge
            rows_all.append(rows + a)
            cols_all.append(cols)
            lw_all.append(child[rows, cols])
        rows, cols = np.concatenate(rows_all), np.concatenate(cols_all)
        counts = np.concatenate([counts[rows], x[cols][:, None]], axis=1)
        rem = rem[rows] - x[cols]
        logw = np.concatenate(lw_all)
    counts = np.concatenate([counts, rem[:, None]], axis=1) if m else counts
    hist = np.zeros((counts.shape[0], c), dtype=np.int64)
    hist[:, support] = counts
    return hist, logw, dropped


def _convolve(h1, lw1, h2, lw2, log_threshold: float, max_support: int):
    """Distribution of the sum of two independent histogram distributions, pruned."""
    if h1.shape[0] * h2.shape[0] > 20 * max_support:
        raise _TooLarge
    h = (h1[:, None, :] + h2[None, :, :]).reshape(-1, h1.shape[1])
    lw = (lw1[:, None] + lw2[None, :]).ravel()
    uniq, inv = np.unique(h, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    top = lw.max()
    w = np.bincount(inv, weights=np.exp(lw - top), minlength=uniq.shape[0])
    with np.errstate(divide="ignore"):
        lwu = np.log(w) + top
    keep = lwu >= log_threshold
    dropped = float(np.exp(lwu[~keep]).sum())
    if keep.sum() > max_support:
        raise _TooLarge
    return uniq[keep], lwu[keep], dropped


def _enumerate_base(model: NeighbouringVoteModel, log_threshold: float, max_support: int):
    c = model.num_classes
    hist = model.constant[None, :].copy()
    logw = np.zeros(1)
    dropped = 0.0
    for cnt, p in zip(model.group_counts, model.group_probs):
        gh, glw, gd = _enumerate_multinomial(int(cnt), p, log_threshold, max_support)
        # mass of the product measure lost: previous dropped stays, the group's is scaled by
        # the kept mass of the previous factors (≤ 1): bounding it by gd is conservative.
        dropped += gd
        hist, logw, cd = _convolve(hist, logw, gh, glw, log_threshold, max_support)
        dropped += cd
    return hist.reshape(-1, c), logw, dropped


@dataclass(frozen=True)
class EnumeratedOutput:
    """Certified output distributions of a vote model (see the module docstring).

    Attributes:
        p_lo, q_lo: ``(C,)`` retained mass of ``μ_S``, ``μ_S'`` (lower bounds up to the
            quadrature error).
        tail_mass: ``r``: base mass that was pruned (each true probability lies in
            ``[p_lo − e, p_lo + r + e]`` with ``e = QUADRATURE_ABS_ERROR``).
        support_size: number of base histograms enumerated.
        histograms, weights: the enumerated base (for :meth:`discrete_model`).
        last, last_prime: the differing voter's distributions.
    """

    p_lo: np.ndarray
    q_lo: np.ndarray
    tail_mass: float
    support_size: int
    histograms: np.ndarray
    weights: np.ndarray
    last: np.ndarray
    last_prime: np.ndarray

    @property
    def error_bound(self) -> float:
        """Half-width bound: every probability is within ``[lo − e, lo + r + e]``."""
        return self.tail_mass + QUADRATURE_ABS_ERROR

    @property
    def p(self) -> np.ndarray:
        """Point estimate of ``μ_S`` (the retained mixture, renormalised)."""
        return self.p_lo / self.p_lo.sum()

    @property
    def q(self) -> np.ndarray:
        return self.q_lo / self.q_lo.sum()

    def discrete_model(self, which: str = "S") -> DiscreteHistogramModel:
        """The truncated model as a :class:`DiscreteHistogramModel` (exact-count Monte Carlo).

        Its output distribution is within total variation ``tail_mass + C·e/2`` of the full
        model's, so ``T`` exact-mode trials are within ``T`` times that of ``T`` trials of the
        full model (used by the audit to discount its confidence).
        """
        last = self.last if which == "S" else self.last_prime
        cls = np.flatnonzero(last > 0)
        h = np.repeat(self.histograms[:, None, :], cls.size, axis=1)
        h[:, np.arange(cls.size), cls] += 1
        w = (self.weights[:, None] * last[cls][None, :]).ravel()
        return DiscreteHistogramModel(h.reshape(-1, self.histograms.shape[1]), w / w.sum())


def enumerate_output_distributions(
    model: NeighbouringVoteModel,
    sigma: float,
    max_tail_mass: float = 1e-10,
    max_support: int = 200_000,
) -> EnumeratedOutput | None:
    """Exact output distributions of ``H_S`` and ``H_S'`` by enumeration with a certified tail.

    The base distribution is enumerated with pruning threshold ``θ`` (histograms of mass
    ``< θ`` are dropped, their mass ``r`` accounted exactly); ``θ`` starts at
    ``max_tail_mass`` and shrinks by 100× until ``r ≤ max_tail_mass``. Then
    ``μ̂(c) = Σ_h w_h Σ_v last(v) Pr[c | h + e_v]`` (Eq. (4)) over the retained ``h``.

    Returns:
        An :class:`EnumeratedOutput`, or ``None`` when more than ``max_support`` base
        histograms would be needed (then use :func:`estimate_output_distributions`).
    """
    s = check_sigma(sigma)
    if not (0 < max_tail_mass < 1):
        raise ValueError(f"max_tail_mass must be in (0, 1), got {max_tail_mass!r}")
    ms = check_positive_int(max_support, "max_support")
    theta = float(max_tail_mass)
    while True:
        try:
            hist, logw, dropped = _enumerate_base(model, math.log(theta), ms)
        except _TooLarge:
            return None
        w = np.exp(logw)
        tail = max(dropped, 1.0 - math.fsum(w.tolist()), 0.0)
        if tail <= max_tail_mass:
            break
        theta /= 100.0
        if theta < 1e-300:
            return None
    classes = np.flatnonzero((model.last > 0) | (model.last_prime > 0))
    c = model.num_classes
    p_lo = np.zeros(c)
    q_lo = np.zeros(c)
    step = max(1, 200_000 // max(classes.size, 1))
    for a in range(0, hist.shape[0], step):
        probs = _shifted_probabilities(hist[a : a + step], classes, s)  # (n, v, C)
        mix = np.einsum("n,nvc->vc", w[a : a + step], probs)
        p_lo += model.last[classes] @ mix
        q_lo += model.last_prime[classes] @ mix
    return EnumeratedOutput(p_lo, q_lo, float(tail), int(hist.shape[0]), hist, w, model.last.copy(), model.last_prime.copy())


def certified_mixture_rdp(enum: EnumeratedOutput, orders) -> dict[str, np.ndarray]:
    """Certified bounds on the Rényi divergences of an enumerated model (both directions).

    With ``p ∈ [p_lo − e, p_lo + r + e]`` (and the same for ``q``) coordinate-wise and
    ``D_α`` increasing in ``p`` and decreasing in ``q`` (``α > 1``), the bounds use the
    corners of the boxes.

    Returns:
        ``{"rdp": point value (renormalised retained mixtures), "rdp_lo", "rdp_hi",
        "forward", "reverse"}``, each ``(len(orders),)``; ``rdp_*`` are for the larger of the
        two directions (``max`` of lower bounds, ``max`` of upper bounds).
    """
    a = as_orders(orders)
    e = QUADRATURE_ABS_ERROR
    r = enum.tail_mass
    with np.errstate(divide="ignore"):
        lp_lo, lq_lo = np.log(np.maximum(enum.p_lo - e, 0.0)), np.log(np.maximum(enum.q_lo - e, 0.0))
        lp_hi, lq_hi = np.log(np.minimum(enum.p_lo + r + e, 1.0)), np.log(np.minimum(enum.q_lo + r + e, 1.0))
        lp, lq = np.log(enum.p), np.log(enum.q)
    fwd = renyi_divergence_from_log(lp, lq, a)
    rev = renyi_divergence_from_log(lq, lp, a)
    fwd_lo = renyi_divergence_from_log(lp_lo, lq_hi, a)
    rev_lo = renyi_divergence_from_log(lq_lo, lp_hi, a)
    fwd_hi = renyi_divergence_from_log(lp_hi, lq_lo, a)
    rev_hi = renyi_divergence_from_log(lq_hi, lp_lo, a)
    return {
        "forward": fwd,
        "reverse": rev,
        "rdp": np.maximum(fwd, rev),
        "rdp_lo": np.maximum(fwd_lo, rev_lo),
        "rdp_hi": np.maximum(fwd_hi, rev_hi),
    }
