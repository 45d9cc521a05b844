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

import math
import time
from dataclasses import dataclass, field
from typing import Union

import numpy as np
import pandas as pd
from scipy.optimize import least_squares
from scipy.special import ndtr, ndtri

from .._validation import as_histograms, as_orders, check_positive_int, check_probability, check_sigma
from ..accounting import confident_gnmax_log_pr_answered, confident_gnmax_rdp, gnmax_rdp_data_dependent, rdp_to_dp
from ..audit import compose_rdp
from ..montecarlo import noisy_argmax_counts
from ..noisy_argmax import class_probabilities

__all__ = [
    "DEFAULT_ORDERS",
    "HARD_QUERY_LIMIT",
    "DEFAULT_CONVERSION",
    "ACCOUNTANTS",
    "ACCOUNTANT_CONVERSION",
    "SOLVERS",
    "HistogramReconstruction",
    "Wang2022Reconstruction",
    "NoisyArgmaxInterface",
    "sample_answer_counts",
    "answer_frequencies",
    "class_probability_jacobian",
    "shift_to_teachers",
    "reconstruct_histogram",
    "reconstruct_histogram_wang2022",
    "reconstruct_with_solver",
    "answered_queries",
    "wang2022_trapezoid_probabilities",
    "normalised_l1_error",
    "attack_privacy_cost",
    "queries_within_budget",
    "per_query_rdp",
    "max_vote_share",
    "consensus_tertiles",
    "select_consensus_histograms",
]

SeedLike = Union[np.random.Generator, np.random.SeedSequence, int]

#: Rényi orders of PATE's accountant: the "long list" of Papernot et al.'s reference
#: implementation ``pate_2018`` (2, 2.5, …, 100) continued by 200 log-spaced orders up to
#: 1000 (issue 14: orders up to ≥ 1000, for near-unanimous histograms whose data-dependent
#: cost is optimised at high orders).
DEFAULT_ORDERS: np.ndarray = np.concatenate((np.arange(2.0, 100.0 + 1.0, 0.5), np.logspace(2.0, 3.0, num=200)))
DEFAULT_ORDERS.setflags(write=False)

#: The hard query limit of the second attacker of Wang et al. 2022, §4.1.
HARD_QUERY_LIMIT = 10_000

#: PATE accountants of :func:`attack_privacy_cost` (see the module docstring).
ACCOUNTANTS = ("confident_gnmax", "gnmax")
#: The RDP → (ε, δ) conversion of each accountant (``method=None``).
ACCOUNTANT_CONVERSION = {"confident_gnmax": "balle2020", "gnmax": "classic"}
#: Conversion of the plain-GNMax accountant (kept for callers of the old default).
DEFAULT_CONVERSION = "classic"
#: Reconstruction solvers of :func:`reconstruct_with_solver`.
SOLVERS = ("ours", "paper")

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
#: Half-width of the Jacobian's integration range: 2 Φ(−L) = 1e-13 (as in noisy_argmax).
_JAC_L = float(-ndtri(0.5e-13))
#: Beyond this abscissa Φ = 1 and φ = 0 in double precision.
_SATURATION = 9.0
_CHUNK_ELEMENTS = 1 << 17


def _generator(rng: SeedLike) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (np.random.SeedSequence, int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(rng)
    raise ValueError(f"rng must be a numpy Generator, SeedSequence or int seed, got {rng!r}")


def _as_counts(output_counts, name: str = "output_counts") -> np.ndarray:
    arr = np.asarray(output_counts, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(f"{name} must be a 1-D array with one count per class, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must hold finite non-negative counts, got {output_counts!r}")
    if arr.sum() <= 0:
        raise ValueError(f"{name} must hold at least one answer, got {output_counts!r}")
    return arr


# --------------------------------------------------------------------------------------
# Querying
# --------------------------------------------------------------------------------------


def sample_answer_counts(hist, sigma: float, num_queries: int, rng: SeedLike, mode: str = "sample") -> np.ndarray:
    """Counts of ``M`` answers of the Gaussian noisy argmax on one fixed histogram (Wang §3.2, Step 1).

    Every answer is ``argmax_c (H_c + N(0, σ²))`` with fresh noise — PATE without caching,
    queried ``M`` times with the same input. Uses :func:`ppaudit.montecarlo.noisy_argmax_counts`;
    ``mode="exact"`` draws the same distribution as ``Multinomial(M, Q(H))`` at a cost
    independent of ``M`` (Wang Thm 1), which the budget-limited attacker needs when the
    budget allows millions of answers.

    Args:
        hist: the teachers' vote histogram ``(C,)``.
        sigma: GNMax noise standard deviation, > 0.
        num_queries: number of answers ``M`` ≥ 1.
        rng: seeded generator (or seed / ``SeedSequence``).
        mode: ``"sample"`` (simulate each answer) or ``"exact"`` (multinomial).

    Returns:
        ``(C,)`` int64 answer counts summing to ``M``; ``q̄ = counts / M``.

    Raises:
        ValueError: on a bad histogram, sigma, number of queries or mode.
    """
    m = check_positive_int(num_queries, "num_queries")
    return noisy_argmax_counts(hist, sigma, m, rng=_generator(rng), mode=mode)


def answered_queries(hist, num_queries: int, threshold: float, sigma_threshold: float, rng: SeedLike) -> int:
    """How many of ``M`` submitted queries Confident-GNMax answers (Papernot et al. 2018, Alg. 1).

    Each submission passes the threshold check ``max_j n_j + N(0, σ₁²) ≥ T`` independently
    (fresh noise), so the number answered is ``Binomial(M, Pr[answered])``; a query that
    fails returns no label (⊥) and the attacker of Wang et al. 2022 gets nothing from it
    but the (already charged) check. The labels of the answered queries are GNMax draws
    (:func:`sample_answer_counts`): the check's noise is independent of GNMax's.

    Args:
        hist: the vote histogram ``(C,)``.
        num_queries: ``M`` ≥ 0 submitted queries.
        threshold: ``T``.
        sigma_threshold: ``σ₁`` > 0.
        rng: seeded generator (or seed / ``SeedSequence``).

    Returns:
        The number of answered queries, in ``[0, M]``.

    Raises:
        ValueError: on a bad histogram, ``M``, ``T`` or ``σ₁``.
    """
    h, squeeze = as_histograms(hist)
    if not squeeze:
        raise ValueError(f"hist must have shape (C,), got shape {h.shape}")
    m = check_positive_int(num_queries, "num_queries", minimum=0)
    pr = math.exp(float(confident_gnmax_log_pr_answered(h[0], threshold, sigma_threshold)))
    return int(_generator(rng).binomial(m, pr))


def answer_frequencies(output_counts) -> np.ndarray:
    """Observed answer frequencies ``q̄ = counts / M`` (Wang Alg. 2, lines 5–13)."""
    c = _as_counts(output_counts)
    return c / c.sum()


class NoisyArgmaxInterface:
    """A PATE-like query interface over fixed vote histograms, optionally caching answers.

    ``query(i)`` returns the Gaussian noisy argmax of histogram ``i`` with fresh noise. With
    ``cache_answers=True`` it returns the first noisy answer it gave for ``i`` to every
    later query of ``i`` — the mitigation of Wang et al. 2022, §5 ("PATE can thus try to
    cache answers to past queries and not recalculate them"). A cached interface releases a
    single draw of the mechanism per distinct query, so ``M`` repeated queries carry the
    information (and the privacy cost) of one answer and the reconstruction stays at the
    level of a one-answer attacker whatever ``M`` is. Evading the cache with perturbed
    queries (also discussed in §5) is outside this model: a query is identified by its index.

    Args:
        hist_or_histograms: one histogram ``(C,)`` or ``K`` histograms ``(K, C)``.
        sigma: noise standard deviation, > 0.
        rng: seeded generator (or seed / ``SeedSequence``) for the noise.
        cache_answers: enable the answer cache.

    Attributes:
        histograms: ``(K, C)`` float array.
        queries_received: number of queries answered (cached or not).
        fresh_answers: number of answers computed with fresh noise (what PATE's accountant
            must charge: a cached answer is post-processing of an earlier one).

    Example:
        >>> api = NoisyArgmaxInterface([200, 50, 0], 40.0, rng=0, cache_answers=True)
        >>> len({api.query(0) for _ in range(20)})
        1
    """

    def __init__(self, hist_or_histograms, sigma: float, rng: SeedLike, cache_answers: bool = False) -> None:
        h, _ = as_histograms(hist_or_histograms, "hist_or_histograms")
        self.histograms: np.ndarray = h
        self.sigma: float = check_sigma(sigma)
        self._rng = _generator(rng)
        if not isinstance(cache_answers, (bool, np.bool_)):
            raise ValueError(f"cache_answers must be a bool, got {cache_answers!r}")
        self.cache_answers: bool = bool(cache_answers)
        self._cache: dict[int, int] = {}
        self.queries_received: int = 0
        self.fresh_answers: int = 0

    @property
    def num_classes(self) -> int:
        return int(self.histograms.shape[1])

    def _index(self, i) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= int(i) < self.histograms.shape[0]:
            raise ValueError(f"query index must be an integer in [0, {self.histograms.shape[0]}), got {i!r}")
        return int(i)

    def query(self, i: int = 0) -> int:
        """Answer one query of histogram ``i``: ``argmax_c (H_c + N(0, σ²))`` (Wang §3.1, steps 1–4)."""
        k = self._index(i)
        self.queries_received += 1
        if self.cache_answers and k in self._cache:
            return self._cache[k]
        noisy = self.histograms[k] + self.sigma * self._rng.standard_normal(self.num_classes)
        answer = int(np.argmax(noisy))
        self.fresh_answers += 1
        if self.cache_answers:
            self._cache[k] = answer
        return answer

    def answer_counts(self, i: int, num_queries: int) -> np.ndarray:
        """Counts of the answers to ``num_queries`` repetitions of query ``i``.

        Same distribution as ``num_queries`` calls of :meth:`query`, computed in bulk: with
        the cache every repetition returns the cached (or first) answer; without it the
        answers are drawn by :func:`ppaudit.montecarlo.noisy_argmax_counts` (chunked
        sampling with the interface's generator).

        Returns:
            ``(C,)`` int64 counts summing to ``num_queries``.
        """
        k = self._index(i)
        m = check_positive_int(num_queries, "num_queries")
        counts = np.zeros(self.num_classes, dtype=np.int64)
        if self.cache_answers:
            answer = self.query(k)
            self.queries_received += m - 1
            counts[answer] = m
            return counts
        counts += noisy_argmax_counts(self.histograms[k], self.sigma, m, rng=self._rng, mode="sample")
        self.queries_received += m
        self.fresh_answers += m
        return counts


# --------------------------------------------------------------------------------------
# Q and its Jacobian
# --------------------------------------------------------------------------------------


def _jacobian_grid(num_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Trapezoid nodes and weights on ``[−L, L]`` for the Jacobian integrands.

    The integrand carries two Gaussian densities (variance 1/2 instead of 1), so the step
    is the one of :mod:`ppaudit.noisy_argmax` divided by √2: ``min(0.4, 0.33 (10/C)^¼)/√2``.
    """
    step = min(0.4, 0.33 * (10.0 / max(num_classes, 2)) ** 0.25) / math.sqrt(2.0)
    m = int(math.ceil(2.0 * _JAC_L / step)) + 1
    u, h = np.linspace(-_JAC_L, _JAC_L, m, retstep=True)
    w = np.full(m, h)
    w[0] *= 0.5
    w[-1] *= 0.5
    return u, w


def class_probability_jacobian(hist, sigma: float) -> np.ndarray:
    """Exact Jacobian ``J[c, j] = ∂Pr[c]/∂n_j`` of the noisy-argmax output distribution.

    Derivation (Wang et al. 2022, Thm 1, in the normalised variable of
    :mod:`ppaudit.noisy_argmax`): with ``d_i = (n_max − n_i)/σ ≥ 0`` and the shifted
    variable ``u``,

        Pr[c] = ∫ φ(u + d_c) ∏_{i≠c} Φ(u + d_i) du.

    Differentiating ``Φ(z + (n_c − n_j)/σ)`` in ``n_j`` gives, for ``j ≠ c``,

        ∂Pr[c]/∂n_j = −(1/σ) ∫ φ(u + d_c) φ(u + d_j) ∏_{i≠c,j} Φ(u + d_i) du =: −W_cj,

    i.e. minus the density of a tie of ``c`` and ``j`` at the top; ``W`` is symmetric. By
    the shift invariance of Wang Thm 2 the rows sum to zero, so ``∂Pr[c]/∂n_c = Σ_{j≠c} W_cj``:
    ``J = −(graph Laplacian of W)``, symmetric, with null space ``1``.

    The integral is a trapezoid rule on ``u ∈ [−L, L]`` (``2Φ(−L) = 1e-13``) with the step of
    :func:`ppaudit.noisy_argmax.class_probabilities` divided by √2; every factor
    ``Φ(u + d_i) ≥ Φ(−L)`` so the product is formed as ``∏Φ / (Φ_c Φ_j)`` without underflow
    of the divisors. Checked against central finite differences of ``class_probabilities``.

    Args:
        hist: histogram(s) ``(C,)`` or ``(N, C)``, non-negative and finite (real counts allowed).
        sigma: noise standard deviation, > 0.

    Returns:
        ``(C, C)`` or ``(N, C, C)`` array.

    Raises:
        ValueError: on a bad histogram or ``sigma``.

    Example:
        >>> J = class_probability_jacobian([30.0, 20.0, 10.0], 10.0)
        >>> bool(np.allclose(J.sum(axis=1), 0.0, atol=1e-12) and np.allclose(J, J.T))
        True
    """
    s = check_sigma(sigma)
    h, squeeze = as_histograms(hist)
    n, c = h.shape
    out = np.zeros((n, c, c))
    if c > 1:
        u, w = _jacobian_grid(c)
        m = u.size
        d = np.minimum((h.max(axis=1, keepdims=True) - h) / s, _JAC_L + _SATURATION + 1.0)
        chunk = max(1, _CHUNK_ELEMENTS // (m * c))
        eye = np.eye(c, dtype=bool)
        for a in range(0, n, chunk):
            x = u[None, :, None] + d[a : a + chunk, None, :]  # (n, m, C)
            cdf = ndtr(x)
            pdf = np.exp(-0.5 * x * x) * _INV_SQRT_2PI
            weight = cdf.prod(axis=-1) * w  # (n, m)
            ratio = pdf / cdf  # inverse Mills ratio, cdf >= Φ(−L) > 0
            tie = np.einsum("nmc,nm,nmj->ncj", ratio, weight, ratio) / s  # W_cj
            tie[:, eye] = 0.0
            block = -tie
            block[:, eye] = tie.sum(axis=2)
            out[a : a + chunk] = block
    return out[0] if squeeze else out


def wang2022_trapezoid_probabilities(hist, sigma: float, step: float = 1.0):
    """``Q(H)`` by the fixed-step trapezoid rule of Wang et al. 2022, §3.2 (torch, differentiable).

    As printed: ``[Q(H)]_k ≈ Σ_{α = H_k − 6σ}^{H_k + 6σ} ∏_{i≠k} Φ_i(α) φ_k(α)`` where ``Φ_i`` is
    the CDF of ``N(H_i, σ²)`` and ``φ_k`` the density of ``N(H_k, σ²)``. The sum runs over
    ``α = H_k + t`` with ``t`` on a grid of fixed ``step`` (in votes; the printed sum over
    ``H_k − 6σ … H_k + 6σ`` has unit step) with trapezoid weights — the grid moves with
    ``H_k``, as in the authors' automatic-differentiation code. Used only by
    :func:`reconstruct_histogram_wang2022`.

    Args:
        hist: a ``torch`` tensor ``(C,)`` (float64; may require grad) or an array.
        sigma: noise standard deviation, > 0.
        step: grid step in votes, > 0.

    Returns:
        ``torch`` tensor ``(C,)`` (not renormalised: its sum is ``1 − O(1e-9)``).
    """
    import torch

    s = check_sigma(sigma)
    if not (isinstance(step, (int, float)) and math.isfinite(step) and step > 0):
        raise ValueError(f"step must be a number > 0, got {step!r}")
    h = hist if isinstance(hist, torch.Tensor) else torch.as_tensor(np.asarray(hist, dtype=np.float64))
    c = h.shape[0]
    half = 6.0 * s
    count = int(math.floor(2.0 * half / step + 1e-9)) + 1
    t = -half + step * torch.arange(count, dtype=torch.float64)
    w = torch.full((count,), float(step), dtype=torch.float64)
    w[0] *= 0.5
    w[-1] *= 0.5
    alpha = h[:, None] + t[None, :]  # (C_k, T)
    cdf = torch.special.ndtr((alpha[:, :, None] - h[None, None, :]) / s)  # Φ_i(α): (C_k, T, C_i)
    eye = torch.eye(c, dtype=torch.bool)[:, None, :]
    cdf = torch.where(eye, torch.ones_like(cdf), cdf)
    pdf = torch.exp(-0.5 * (t / s) ** 2) * (_INV_SQRT_2PI / s)  # φ_k(H_k + t)
    return (cdf.prod(dim=-1) * (pdf * w)[None, :]).sum(dim=-1)


# --------------------------------------------------------------------------------------
# Reconstruction
# --------------------------------------------------------------------------------------


def shift_to_teachers(estimate, num_teachers: int) -> np.ndarray:
    """Wang et al. 2022, §3.2 Step 3 (Alg. 2 line 18): ``Ĥ + (N − ΣĤ)/C`` so that ``ΣĤ = N``.

    By Wang Thm 2 this does not change ``Q(Ĥ)``. The result may hold negative entries if the
    estimate's spread exceeds ``N``; :func:`reconstruct_histogram` never returns those.
    """
    e = np.asarray(estimate, dtype=np.float64)
    if e.ndim != 1 or e.size < 1 or not np.all(np.isfinite(e)):
        raise ValueError(f"estimate must be a finite 1-D array, got {estimate!r}")
    n = check_positive_int(num_teachers, "num_teachers")
    return e + (n - e.sum()) / e.size


def _project_scaled_simplex(v: np.ndarray, total: float) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{x ≥ 0, Σx = total}`` (sort-based, exact)."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    k = np.arange(1, v.size + 1)
    rho = np.nonzero(u - css / k > 0)[0][-1]
    return np.maximum(v - css[rho] / (rho + 1.0), 0.0)


def _initial_guess(counts: np.ndarray, sigma: float, num_teachers: int) -> np.ndarray:
    """Pairwise probit inversion against the most answered class, projected to the feasible set.

    For two classes ``Pr[i beats r] = Φ((n_i − n_r)/(σ√2))``; the conditional win frequency
    ``q̄_i / (q̄_i + q̄_r)`` gives each answered class a start within a few votes of the
    solution for moderate gaps. Unanswered classes start on the bound 0, where the solver
    leaves them unless the fit of the answered classes moves them (so that, where ``Q`` is
    flat in them — classes eclipsed by gaps of many σ — they stay at 0).
    """
    answered = counts > 0
    q = counts / counts.sum()
    ref = int(np.argmax(counts))
    start = np.zeros(counts.size)
    gaps = sigma * math.sqrt(2.0) * ndtri(q[answered] / (q[answered] + q[ref]))
    start[answered] = _project_scaled_simplex(shift_to_teachers(gaps, num_teachers), float(num_teachers))
    return start


@dataclass
class HistogramReconstruction:
    """Result of :func:`reconstruct_histogram`.

    Attributes:
        estimate: ``Ĥ``, ``(C,)`` float, ``Ĥ ≥ 0`` and ``ΣĤ = N``.
        residual_norm: ``‖Q(Ĥ) − q̄‖₂`` at the solution.
        answer_frequencies: ``q̄``.
        unanswered: mask of the classes with no answer.
        at_zero: mask of the classes whose estimate is on the bound ``Ĥ_c = 0``.
        evaluations: number of evaluations of ``Q`` (and of its Jacobian) by the solver.
        seconds: wall-clock time of the reconstruction.
        converged: the solver's convergence flag (``scipy.optimize.least_squares`` status > 0).
        message: the solver's message.
    """

    estimate: np.ndarray
    residual_norm: float
    answer_frequencies: np.ndarray
    unanswered: np.ndarray
    at_zero: np.ndarray
    evaluations: int
    seconds: float
    converged: bool
    message: str = ""


def reconstruct_histogram(
    output_counts,
    sigma: float,
    num_teachers: int,
    *,
    initial=None,
    xtol: float = 1e-12,
    max_evaluations: int = 500,
    return_info: bool = False,
):
    """Reconstruct the vote histogram from the counts of ``M`` noisy-argmax answers (Wang §3.2).

    Solves Wang et al. 2022, §3.2 Step 2 — ``min ‖Q(Ĥ) − q̄‖₂`` with ``q̄`` the answer
    frequencies and ``Q`` the output distribution of Thm 1 — together with Step 3 (the
    estimate sums to the number of teachers ``N``) and the non-negativity the paper leaves
    open (§4.1: "We could also try to constrain it to only-positive values"):

        min_{Ĥ}  ½ ‖Q(Ĥ) − q̄‖₂²   subject to   Ĥ ≥ 0,  ΣĤ = N.

    How (documented choices):

    * ``Q`` is the exact :func:`ppaudit.noisy_argmax.class_probabilities` (abs. error
      ≤ 1e-12), its Jacobian the exact :func:`class_probability_jacobian` — not the paper's
      ±6σ fixed-step trapezoid with autodiff.
    * Gauge: ``Q`` depends only on differences of counts (Thm 2), so the problem on all of
      ``R^C`` has a flat direction ``1``. Fixing the gauge by ``ΣĤ = N`` is equivalent to
      solving in any gauge and then applying Step 3's shift, and it makes ``Ĥ ≥ 0`` a
      constraint on the same variables. The reference class ``r`` (the most answered one) is
      eliminated, ``Ĥ_r = N − Σ_{i≠r} Ĥ_i``, and the other ``C − 1`` counts are solved with
      box bounds ``[0, N]`` by ``scipy.optimize.least_squares`` (trust-region reflective,
      Gauss–Newton steps with the exact Jacobian, quadratic convergence when the residual is
      zero). ``Ĥ_r ≥ 0`` holds at the solution because ``r`` carries the largest estimate; it
      is checked and the solve is repeated with the estimate's argmax as reference if not.
    * Start: a pairwise probit inversion of the answered classes against ``r``, projected
      onto the feasible set, with unanswered classes at 0 (not the paper's all-zero start),
      or ``initial``.
    * When every class was answered and the exact inversion ``Q(Ĥ) = q̄`` is feasible, the
      minimum is zero and unique (``Q`` is one-to-one modulo shifts, the inversion of a
      Gaussian random-utility model), so the estimate is also the maximum-likelihood one.

    Classes never answered (count 0): their target frequency is 0, so the objective pushes
    their count down. Unconstrained (the paper's loop) they drift to −∞ and Step 3's shift
    then inflates every other class; here they stop at the bound ``Ĥ_c = 0`` unless fitting
    the answered classes needs them higher. Nothing is smoothed or dropped, and ties among
    unanswered classes get equal estimates. With a single distinct answer (e.g. a caching
    interface) the estimate is ``N`` votes for that class and 0 elsewhere.

    Identifiability: a class whose output probability is below the absolute accuracy of
    ``Q`` (~1e-12; a gap of more than ~10σ below the top) cannot be located by any fit —
    the "eclipsing" of Wang §4.2 taken to its limit. With Wang's ensembles (``N = 250``,
    ``σ ≥ 40``) every gap is at most ``6.25σ`` and every class is identifiable from exact
    frequencies (tested to < 1e-3 vote); from ``M`` answers the error is ``O(1/√M)``.

    Args:
        output_counts: ``(C,)`` answer counts (or any non-negative weights; only
            ``q̄ = counts / Σcounts`` is used).
        sigma: GNMax noise standard deviation, > 0 (public in PATE, Wang §3.1).
        num_teachers: the number of teachers ``N`` (assumed known, Wang §3.1).
        initial: optional ``(C,)`` start (projected onto ``{Ĥ ≥ 0, ΣĤ = N}``).
        xtol: relative step tolerance of the solver (``least_squares`` ``xtol``); ``ftol``
            is the same and ``gtol`` is off (gradients are tiny for rare classes).
        max_evaluations: cap on evaluations of ``Q`` per solve.
        return_info: also return a :class:`HistogramReconstruction`.

    Returns:
        ``Ĥ`` as a ``(C,)`` float array, ``Ĥ ≥ 0`` and ``ΣĤ = N`` (or the info object).

    Raises:
        ValueError: on bad counts, ``sigma``, ``num_teachers`` or ``initial``.

    Example:
        >>> from ppaudit.noisy_argmax import class_probabilities
        >>> h = np.array([150.0, 60.0, 30.0, 10.0])
        >>> est = reconstruct_histogram(class_probabilities(h, 40.0), 40.0, 250)
        >>> bool(np.max(np.abs(est - h)) < 1e-3)
        True
    """
    t0 = time.perf_counter()
    counts = _as_counts(output_counts)
    s = check_sigma(sigma)
    n_teachers = check_positive_int(num_teachers, "num_teachers")
    tol = float(xtol)
    if not (math.isfinite(tol) and 0 < tol < 1):
        raise ValueError(f"xtol must be in (0, 1), got {xtol!r}")
    max_eval = check_positive_int(max_evaluations, "max_evaluations")
    c = counts.size
    q = counts / counts.sum()
    unanswered = counts == 0
    if initial is None:
        start = _initial_guess(counts, s, n_teachers)
    else:
        init = np.asarray(initial, dtype=np.float64)
        if init.shape != (c,) or not np.all(np.isfinite(init)):
            raise ValueError(f"initial must be a finite array of shape ({c},), got {initial!r}")
        start = _project_scaled_simplex(init, float(n_teachers))

    if c == 1 or np.count_nonzero(counts) == 1:
        # One class takes every answer: the feasible minimiser is the vertex N·e_k (every
        # other Q_i is minimised, Q_k maximised, by the largest feasible gaps).
        est = np.zeros(c)
        est[int(np.argmax(counts))] = float(n_teachers)
        info = HistogramReconstruction(
            est, float(np.linalg.norm(class_probabilities(est, s) - q)), q, unanswered, est == 0, 1,
            time.perf_counter() - t0, True, "single answered class: vertex of the feasible set",
        )
        return info if return_info else est

    evaluations = 0
    ref = int(np.argmax(counts))
    current = start
    result = None
    for _ in range(3):
        free = np.delete(np.arange(c), ref)

        def full(x: np.ndarray, ref: int = ref, free: np.ndarray = free) -> np.ndarray:
            hist = np.empty(c)
            hist[free] = x
            hist[ref] = n_teachers - x.sum()
            return hist - min(hist.min(), 0.0)  # Thm 2: a shift keeps Q; Q needs counts ≥ 0

        def residual(x: np.ndarray) -> np.ndarray:
            return class_probabilities(full(x), s) - q

        def jacobian(x: np.ndarray, ref: int = ref, free: np.ndarray = free) -> np.ndarray:
            jac = class_probability_jacobian(full(x), s)
            return jac[:, free] - jac[:, [ref]]

        x0 = np.clip(current[free], 0.0, float(n_teachers))
        result = least_squares(
            residual, x0, jac=jacobian, bounds=(0.0, float(n_teachers)), method="trf",
            xtol=tol, ftol=tol, gtol=None, max_nfev=max_eval,
        )
        evaluations += int(result.nfev)
        current = np.empty(c)
        current[free] = result.x
        current[ref] = n_teachers - result.x.sum()
        if current[ref] >= 0.0:
            break
        ref = int(np.argmax(current))
        current = _project_scaled_simplex(current, float(n_teachers))
    est = np.maximum(current, 0.0)
    est *= n_teachers / est.sum()
    res = float(np.linalg.norm(class_probabilities(est, s) - q))
    info = HistogramReconstruction(
        estimate=est,
        residual_norm=res,
        answer_frequencies=q,
        unanswered=unanswered,
        at_zero=est <= 1e-9 * n_teachers,
        evaluations=evaluations,
        seconds=time.perf_counter() - t0,
        converged=bool(result.status > 0),
        message=str(result.message),
    )
    return info if return_info else est


@dataclass
class Wang2022Reconstruction:
    """Result of :func:`reconstruct_histogram_wang2022`.

    Attributes:
        estimate: ``Ĥ`` after Step 3's shift (sums to ``N``; may hold negative entries).
        loss: ``‖Q(Ĥ) − q̄‖₂`` (the paper's trapezoid ``Q``) at the returned iterate.
        iterations: gradient steps taken.
        converged: the loss reached the threshold ``T``.
        stopped_at_negative: stopped because the shifted estimate turned negative.
        seconds: wall-clock time.
        loss_history: loss per iteration.
    """

    estimate: np.ndarray
    loss: float
    iterations: int
    converged: bool
    stopped_at_negative: bool
    seconds: float
    loss_history: list = field(default_factory=list)


def reconstruct_histogram_wang2022(
    output_counts,
    sigma: float,
    num_teachers: int,
    *,
    threshold: float = 0.01,
    max_iterations: int = 20_000,
    stop_at_negative: bool = False,
    integration_step: float = 1.0,
    time_budget: float | None = None,
) -> Wang2022Reconstruction:
    """Faithful re-implementation of the attack as printed in Wang et al. 2022 (Alg. 2, §3.2, §4.1).

    * ``Q`` by the fixed-step trapezoid rule over ``H_k ± 6σ`` (§3.2,
      :func:`wang2022_trapezoid_probabilities`), gradient by automatic differentiation
      (torch here, Jax in the paper).
    * Alg. 2: ``Ĥ ← 0``; while ``‖Q(Ĥ) − q̄‖₂ > T``: ``Ĥ ← Ĥ − λ ∇‖Q(Ĥ) − q̄‖₂``; then
      ``Ĥ ← Ĥ + (N − ΣĤ)/C`` (line 18).
    * §4.1: ``λ = 10/‖∇J‖₂`` at first, then ``1/‖∇J‖₂`` "as the optimization starts to
      converge"; ``T = 0.01``. The switching rule is not given; we switch (for good) at the
      first step that does not lower the loss.
    * §4.1: for the budget-limited attacks "we stopped once estimated histograms started
      presenting negative values". Alg. 2 starts at 0 and its raw iterate is negative after
      one step, so we read this as the *shifted* estimate (line 18) turning negative, and
      return the last non-negative one (``stop_at_negative=True``).

    ``max_iterations`` and ``time_budget`` (seconds) bound the run (the paper reports
    ~2.5 h per histogram); ``converged`` tells whether ``T`` was reached. The tensors are
    tiny (``C × 12σ × C``), so torch runs on one thread during the call (restored after):
    intra-op threads only add synchronisation cost here.

    Args:
        output_counts: ``(C,)`` answer counts.
        sigma: noise standard deviation, > 0.
        num_teachers: ``N``.
        threshold: loss threshold ``T`` (0.01 in §4.1).
        max_iterations: cap on the gradient steps.
        stop_at_negative: the budget-attack stopping rule of §4.1.
        integration_step: trapezoid step in votes (1 as printed).
        time_budget: optional wall-clock cap in seconds.

    Returns:
        A :class:`Wang2022Reconstruction`.
    """
    import torch

    t0 = time.perf_counter()
    counts = _as_counts(output_counts)
    s = check_sigma(sigma)
    n_teachers = check_positive_int(num_teachers, "num_teachers")
    thr = float(threshold)
    if not (math.isfinite(thr) and thr > 0):
        raise ValueError(f"threshold must be > 0, got {threshold!r}")
    iters = check_positive_int(max_iterations, "max_iterations")
    if time_budget is not None and not (math.isfinite(float(time_budget)) and float(time_budget) > 0):
        raise ValueError(f"time_budget must be > 0 seconds, got {time_budget!r}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _wang2022_loop(counts, s, n_teachers, thr, iters, stop_at_negative, integration_step, time_budget, t0)
    finally:
        torch.set_num_threads(threads)


def _wang2022_loop(
    counts: np.ndarray,
    s: float,
    n_teachers: int,
    thr: float,
    iters: int,
    stop_at_negative: bool,
    integration_step: float,
    time_budget: float | None,
    t0: float,
) -> Wang2022Reconstruction:
    """Alg. 2 lines 14–18 of Wang et al. 2022 (see :func:`reconstruct_histogram_wang2022`)."""
    import torch

    c = counts.size
    q = torch.as_tensor(counts / counts.sum(), dtype=torch.float64)
    h = torch.zeros(c, dtype=torch.float64)
    scale = 10.0
    previous_loss = math.inf
    history: list[float] = []
    last_good = shift_to_teachers(h.numpy(), n_teachers)
    converged = stopped_negative = False
    loss_value = math.inf
    it = 0
    for it in range(iters + 1):
        hv = h.clone().requires_grad_(True)
        loss = torch.linalg.vector_norm(wang2022_trapezoid_probabilities(hv, s, integration_step) - q)
        loss_value = float(loss.detach())
        history.append(loss_value)
        shifted = shift_to_teachers(h.numpy(), n_teachers)
        if stop_at_negative and np.any(shifted < 0):
            stopped_negative = True
            break
        last_good = shifted
        if loss_value <= thr:
            converged = True
            break
        if it == iters or (time_budget is not None and time.perf_counter() - t0 > float(time_budget)):
            break
        if scale == 10.0 and loss_value >= previous_loss:
            scale = 1.0
        previous_loss = loss_value
        (grad,) = torch.autograd.grad(loss, hv)
        norm = float(torch.linalg.vector_norm(grad))
        if norm == 0.0 or not math.isfinite(norm):
            break
        h = (h - (scale / norm) * grad).detach()
    return Wang2022Reconstruction(
        estimate=last_good,
        loss=loss_value if not stopped_negative else history[-2] if len(history) > 1 else loss_value,
        iterations=it,
        converged=converged,
        stopped_at_negative=stopped_negative,
        seconds=time.perf_counter() - t0,
        loss_history=history,
    )


def reconstruct_with_solver(
    output_counts,
    sigma: float,
    num_teachers: int,
    solver: str = "ours",
    *,
    stop_at_negative: bool = False,
    max_iterations: int = 20_000,
) -> np.ndarray:
    """Reconstruct ``Ĥ`` with one of the two solvers (Wang et al. 2022, §3.2 and §4.1).

    * ``"ours"`` — :func:`reconstruct_histogram`: exact ``Q`` and Jacobian, constrained
      Gauss–Newton on ``{Ĥ ≥ 0, ΣĤ = N}``.
    * ``"paper"`` — :func:`reconstruct_histogram_wang2022`: Alg. 2 as printed (all-zero
      start, i.e. ``N/C`` per class after Step 3; ±6σ unit-step trapezoid ``Q``; normalised
      gradient steps ``10/‖∇J‖`` then ``1/‖∇J‖``; stop when ``‖J‖₂ < 0.01``), capped at
      ``max_iterations`` steps (the paper states no cap; it reports hours per histogram),
      with the "stop once estimated histograms started presenting negative values" rule of
      the budget-limited attack when ``stop_at_negative``.

    Args:
        output_counts: ``(C,)`` answer counts.
        sigma: GNMax σ > 0.
        num_teachers: ``N``.
        solver: ``"ours"`` or ``"paper"``.
        stop_at_negative: the paper's budget-attack stopping rule (``"paper"`` only).
        max_iterations: gradient-step cap of ``"paper"``.

    Returns:
        ``Ĥ`` ``(C,)`` summing to ``N``.

    Raises:
        ValueError: on an unknown solver or any input the solver rejects.
    """
    if solver == "ours":
        return reconstruct_histogram(output_counts, sigma, num_teachers)
    if solver == "paper":
        return reconstruct_histogram_wang2022(
            output_counts, sigma, num_teachers, stop_at_negative=stop_at_negative, max_iterations=max_iterations
        ).estimate
    raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")


# --------------------------------------------------------------------------------------
# Metrics and privacy cost
# --------------------------------------------------------------------------------------


def normalised_l1_error(true, estimate) -> np.ndarray | float:
    """Error rate of Wang et al. 2022, §4.1: ``Σ_i |H_i − Ĥ_i| / (2 Σ_i |H_i|)``.

    The share of miscounted votes: 0 for a perfect estimate, 1 when the estimate puts all
    ``N`` votes on classes with no true vote. Vectorised over rows.

    Args:
        true: true histogram(s) ``(C,)`` or ``(K, C)`` (non-negative, positive total).
        estimate: estimate(s) of the same shape (any finite reals).

    Returns:
        A float, or ``(K,)`` array.

    Raises:
        ValueError: on shape mismatch, non-finite values or a zero true total.
    """
    h, squeeze = as_histograms(true, "true")
    e = np.atleast_2d(np.asarray(estimate, dtype=np.float64))
    if e.shape != h.shape:
        raise ValueError(f"estimate must have the shape of true {h.shape[1:] if squeeze else h.shape}, got {np.shape(estimate)}")
    if not np.all(np.isfinite(e)):
        raise ValueError(f"estimate must be finite, got {estimate!r}")
    total = h.sum(axis=1)
    if np.any(total <= 0):
        raise ValueError(f"true histogram must have a positive total, got totals {total}")
    err = np.abs(h - e).sum(axis=1) / (2.0 * total)
    return float(err[0]) if squeeze else err


def _check_method(method: str | None, accountant: str) -> str:
    if accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
    if method is None:
        return ACCOUNTANT_CONVERSION[accountant]
    if method not in ("classic", "balle2020"):
        raise ValueError(f"method must be 'classic' or 'balle2020', got {method!r}")
    return method


def per_query_rdp(hist, sigma: float, orders, accountant: str = "gnmax", threshold=None, sigma_threshold=None) -> np.ndarray:
    """Per-query data-dependent RDP of one histogram under a PATE accountant.

    ``"gnmax"``: :func:`ppaudit.accounting.gnmax_rdp_data_dependent` at ``σ``;
    ``"confident_gnmax"``: :func:`ppaudit.accounting.confident_gnmax_rdp` with
    ``(threshold, sigma_threshold, σ)`` (both required).

    Raises:
        ValueError: on an unknown accountant or missing threshold parameters.
    """
    if accountant == "gnmax":
        return gnmax_rdp_data_dependent(hist, sigma, orders)
    if accountant == "confident_gnmax":
        if threshold is None or sigma_threshold is None:
            raise ValueError(
                f"accountant 'confident_gnmax' needs threshold and sigma_threshold, got {threshold!r} and {sigma_threshold!r}"
            )
        return confident_gnmax_rdp(hist, threshold, sigma_threshold, sigma, orders)
    raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")


def attack_privacy_cost(
    hist,
    sigma: float,
    num_queries,
    delta: float,
    orders=DEFAULT_ORDERS,
    method: str | None = None,
    *,
    accountant: str = "gnmax",
    threshold: float | None = None,
    sigma_threshold: float | None = None,
):
    """Privacy cost ``ε`` of ``M`` queries of one histogram (Wang et al. 2022, §4.1 "privacy cost").

    The per-query data-dependent RDP at the true histogram (:func:`per_query_rdp`: plain
    GNMax, Papernot et al. 2018 Prop. 7 + Thm 6, or Confident-GNMax's expected cost, threshold
    check + Pr[answered] · GNMax) is composed ``M`` times (:func:`ppaudit.audit.compose_rdp`)
    and converted to ``(ε, δ)``-DP, minimised over the orders
    (:func:`ppaudit.accounting.rdp_to_dp`). This is PATE's own accounting of the attacker's
    queries, i.e. the quantity PATE's budget monitor compares to its budget. Under
    Confident-GNMax ``M`` counts *submitted* queries (answered or not).

    Args:
        hist: the true histogram ``(C,)``.
        sigma: noise standard deviation, > 0.
        num_queries: ``M`` (int ≥ 0) or a 1-D array of them.
        delta: δ in (0, 1) (1e-5 for MNIST, 1e-6 for SVHN in Wang §4.1).
        orders: Rényi orders (default: Papernot et al.'s list, :data:`DEFAULT_ORDERS`).
        method: ``"classic"`` (Mironov 2017, Prop. 3) or ``"balle2020"`` (Balle et al.
            2020, Thm 20); ``None``: the accountant's own (:data:`ACCOUNTANT_CONVERSION`).
        accountant: ``"gnmax"`` (default, for backward compatibility) or
            ``"confident_gnmax"`` (the paper's; needs ``threshold`` and ``sigma_threshold``).
        threshold: Confident-GNMax's ``T``.
        sigma_threshold: Confident-GNMax's ``σ₁``.

    Returns:
        ``ε`` (float) or an array for an array of ``M``; ``M = 0`` costs 0.

    Raises:
        ValueError: on a bad histogram, σ, ``M``, δ, orders, method or accountant.
    """
    h, squeeze = as_histograms(hist)
    if not squeeze:
        raise ValueError(f"hist must have shape (C,), got shape {h.shape}")
    s = check_sigma(sigma)
    a = as_orders(orders)
    d = check_probability(delta, "delta")
    meth = _check_method(method, accountant)
    try:
        m = np.asarray(num_queries, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"num_queries must be non-negative integers, got {num_queries!r}") from None
    if m.ndim > 1 or not np.all(np.isfinite(m)) or np.any(m < 0) or np.any(np.round(m) != m):
        raise ValueError(f"num_queries must be non-negative integers, got {num_queries!r}")
    per_query = per_query_rdp(h[0], s, a, accountant, threshold, sigma_threshold)
    out = np.array([
        0.0 if int(k) == 0 else rdp_to_dp(compose_rdp(per_query, repetitions=int(k)), a, d, method=meth)
        for k in np.atleast_1d(m)
    ])
    return float(out[0]) if m.ndim == 0 else out


def queries_within_budget(
    hist,
    sigma: float,
    budget: float,
    delta: float,
    max_queries: int | None = HARD_QUERY_LIMIT,
    orders=DEFAULT_ORDERS,
    method: str | None = None,
    *,
    accountant: str = "gnmax",
    threshold: float | None = None,
    sigma_threshold: float | None = None,
) -> int:
    """Number of answers an attacker gets before PATE's privacy budget is spent (Wang §4.1).

    Returns the largest ``M`` with ``attack_privacy_cost(hist, σ, M) ≤ budget`` (the query
    whose answer would push the cost past the budget is refused), capped at
    ``max_queries``. The cost is non-decreasing in ``M`` (a minimum over orders of
    non-decreasing functions), so an exponential then binary search finds ``M`` exactly.
    The two attackers of §4.1: ``budget=1.97, δ=1e-5`` (MNIST) or ``4.96, 1e-6`` (SVHN)
    with ``σ = 40`` and ``max_queries=None`` (no hard limit), and the hard limit
    ``budget=inf, max_queries=10**4``.

    Args:
        hist: the true histogram ``(C,)``.
        sigma: noise standard deviation.
        budget: privacy budget ``ε`` > 0 (``math.inf`` for none).
        delta: δ in (0, 1).
        max_queries: hard query limit (default 10^4), or ``None`` for none — the search then
            stops at 10^15 answers, returned if even those stay within the budget (a
            histogram so consensual that its data-dependent cost vanishes).
        orders: Rényi orders.
        method: ``"classic"``, ``"balle2020"`` or ``None`` (the accountant's own).
        accountant, threshold, sigma_threshold: as in :func:`attack_privacy_cost`. With
            ``"confident_gnmax"`` the budget counts submitted queries; about
            ``M · Pr[answered]`` of them return a label (:func:`answered_queries`).

    Returns:
        ``M`` ≥ 0.

    Raises:
        ValueError: on a bad budget, limit, or any input :func:`attack_privacy_cost` rejects.
    """
    b = float(budget)
    if math.isnan(b) or b <= 0:
        raise ValueError(f"budget must be > 0, got {budget!r}")
    cap = 10**15 if max_queries is None else check_positive_int(max_queries, "max_queries")

    def cost(k: int) -> float:
        return attack_privacy_cost(
            hist, sigma, k, delta, orders, method, accountant=accountant, threshold=threshold, sigma_threshold=sigma_threshold
        )

    if math.isinf(b) or cost(cap) <= b:
        cost(1)  # validate the inputs even when the budget cannot bind
        return int(cap)
    lo, hi = 0, 1  # invariant: cost(lo) <= b < cost(hi)
    while cost(hi) <= b:
        lo, hi = hi, min(2 * hi, cap)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if cost(mid) <= b:
            lo = mid
        else:
            hi = mid
    return int(lo)


# --------------------------------------------------------------------------------------
# Consensus levels (Wang §4.1, Fig. 3)
# --------------------------------------------------------------------------------------


def max_vote_share(histograms) -> np.ndarray | float:
    """Consensus of a histogram: its maximum count over its total (Wang §4.1, Fig. 3).

    The paper defines consensus as "its maximum value" and plots it as the "top-agreed label
    percentage"; the share (max / total) is the same ordering for a fixed number of teachers
    and stays comparable across ensembles.

    Returns:
        A float in ``[1/C, 1]`` for one histogram, or a ``(K,)`` array.

    Raises:
        ValueError: on a bad histogram or one with no vote.
    """
    h, squeeze = as_histograms(histograms, "histograms")
    total = h.sum(axis=1)
    if np.any(total <= 0):
        bad = np.nonzero(total <= 0)[0]
        raise ValueError(f"histograms must have at least one vote, got empty histogram(s) at rows {bad[:10]}")
    share = h.max(axis=1) / total
    return float(share[0]) if squeeze else share


def consensus_tertiles(histograms, rng: SeedLike | None = None) -> np.ndarray:
    """Split histograms into three equal-sized consensus levels (Wang §4.1, Fig. 3).

    "We [...] divide each dataset into three equal-sized groups corresponding to high
    consensus, medium consensus, and low consensus" — the dashed lines of Fig. 3 are the
    33.3% and 66.7% quantiles of the max vote share. Consensus values tie massively (e.g.
    every unanimous MNIST histogram has share 1), so thresholds at the quantiles cannot give
    equal groups; we take the stated equal sizes as the definition: histograms are ranked by
    max vote share and the ranks are cut into three groups of sizes differing by at most
    one (``numpy.array_split``). Ties across a cut are broken by a seeded random order when
    ``rng`` is given, by index otherwise.

    Args:
        histograms: ``(K, C)`` histograms, ``K ≥ 3``.
        rng: optional seeded generator for the tie-break.

    Returns:
        ``(K,)`` int array: 0 = low, 1 = medium, 2 = high consensus.

    Raises:
        ValueError: on bad histograms or fewer than three of them.
    """
    h, squeeze = as_histograms(histograms, "histograms")
    if squeeze or h.shape[0] < 3:
        raise ValueError(f"histograms must be (K, C) with K >= 3, got shape {np.shape(histograms)}")
    share = max_vote_share(h)
    k = share.size
    tie = _generator(rng).permutation(k) if rng is not None else np.arange(k)
    order = np.lexsort((tie, share))
    levels = np.empty(k, dtype=np.int64)
    for level, idx in enumerate(np.array_split(order, 3)):
        levels[idx] = level
    return levels


def select_consensus_histograms(histograms, rng: SeedLike, per_level: int = 5) -> pd.DataFrame:
    """Pick ``per_level`` histograms at random from each consensus level (Wang §4.1, Figs. 4, 6, 7).

    "We sample five histograms randomly from each group": levels from
    :func:`consensus_tertiles` (ties broken with the same generator), then ``per_level``
    distinct histograms per level drawn with ``rng``; within a level the picks are numbered
    by increasing max vote share (then index), giving the labels ``L1–L5, M1–M5, H1–H5``.

    Args:
        histograms: ``(K, C)`` histograms.
        rng: seeded generator, seed or ``SeedSequence`` (reproducible selection).
        per_level: histograms per level, ≥ 1.

    Returns:
        DataFrame with columns ``label``, ``level`` (``low``/``medium``/``high``),
        ``index`` (row in ``histograms``) and ``max_vote_share``, in L, M, H order.

    Raises:
        ValueError: if a level has fewer than ``per_level`` histograms.
    """
    gen = _generator(rng)
    k = check_positive_int(per_level, "per_level")
    levels = consensus_tertiles(histograms, gen)
    share = max_vote_share(histograms)
    rows = []
    for level, (name, prefix) in enumerate((("low", "L"), ("medium", "M"), ("high", "H"))):
        members = np.nonzero(levels == level)[0]
        if members.size < k:
            raise ValueError(f"per_level={per_level} exceeds the {members.size} histograms of the {name}-consensus level")
        picks = gen.choice(members, size=k, replace=False)
        picks = picks[np.lexsort((picks, share[picks]))]
        for j, idx in enumerate(picks, start=1):
            rows.append({"label": f"{prefix}{j}", "level": name, "index": int(idx), "max_vote_share": float(share[idx])})
    return pd.DataFrame(rows, columns=["label", "level", "index", "max_vote_share"])
