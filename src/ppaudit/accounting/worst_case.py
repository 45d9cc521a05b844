"""Worst-case (data-independent) exact RDP of the Gaussian noisy argmax.

Chadha et al. (2024, §4.2 and §7) compute the exact Rényi divergence of the noisy argmax
between two *given* neighbouring histograms (Eq. (4)) and note that its supremum over all
neighbouring histograms — the tight data-independent guarantee — "appears computationally
intractable". :func:`gnmax_rdp_worst_case` computes it (this is *our* procedure; the paper
has none: ``procedure = "ours"``) for ``k`` teachers, ``C`` classes and noise ``σ``:

    ε*(α) = max over h, h' of D_α(M(h) || M(h')),
    h ∈ ℕ^C with Σ h = k, h' = h − e_i + e_j (one teacher moves its vote from i to j),

where ``M(h)`` is the output law of ``argmax(h + N(0, σ² I))``.

What is proven (and used)
-------------------------
1. *Symmetry.* ``M`` commutes with permutations of the classes, and the set of ordered
   neighbouring pairs is closed under swapping ``h`` and ``h'`` (``h = h' − e_j + e_i``).
   Hence it suffices to maximise the single direction ``D_α(M(h) || M(h'))`` over the
   *canonical* pairs ``h = (a, b, r_1, …, r_{C−2})``, ``h' = (a − 1, b + 1, r)``, with
   ``a ≥ 1``, ``b ≥ 0``, ``r_1 ≥ … ≥ r_{C−2} ≥ 0`` and ``a + b + Σ r = k``: class 0 loses
   the vote, class 1 gains it, the other ("rest") classes are sorted. Both directions of
   Chadha's exact RDP (:func:`ppaudit.divergence.exact_rdp`) are thereby covered.
2. *A certified upper bound for every rest configuration* (``rdp_upper``). Let
   ``X = max_m (r_m + σ Z_m)`` be the noisy maximum of the rest classes and ``m*`` its
   class; ``(X, m*)`` has the same law under ``h`` and ``h'`` and is independent of the
   noisy counts ``(Y_a, Y_b)`` of the two moving classes. The output is a function of
   ``(W, X, m*)`` with ``W ∈ {a, b, rest}`` the 3-way winner and ``W ⊥ m* | X``, so by the
   data-processing inequality

       Σ_o P(o)^α Q(o)^{1−α} ≤ E_X[ s(X) ],   s(x) = Σ_{w∈{a,b,rest}} K(w|x)^α K'(w|x)^{1−α},

   where ``K(·|x)`` is the 3-cell law "moving classes against a fixed competitor at
   ``x``" under ``h`` (``K'``: under ``h'``). Every rest count lies in ``[0, s]``,
   ``s = k − a − b``, and the largest is ``≥ ⌈s/(C − 2)⌉``; so the law μ of ``X`` lies
   stochastically between λ (CDF ``min(Φ(x/σ)^{C−2}, Φ((x − ⌈s/(C−2)⌉)/σ))``) and ν (all
   rest classes at ``s``: CDF ``Φ((x − s)/σ)^{C−2}``). Two bounds on ``E_μ[s(X)]`` valid
   for *every* rest configuration of a given ``(a, b)`` follow: ``E_ν[s↑]`` with the
   running maximum ``s↑(x) = sup_{y ≤ x} s(y)`` (cheap, used for all ``(a, b)``), and
   ``∫_0^1 max_{q_λ(t) ≤ x ≤ q_ν(t)} s(x) dt`` (the supremum over the whole stochastic
   interval; used where the first does not already rule ``(a, b)`` out). The mass above
   the integration grid is charged at the data-independent maximum
   ``exp((α − 1) α / σ²)`` (Papernot et al. 2018, Prop. 8), and the result is capped at
   ``α/σ²``. With ``C = 2`` there is no rest and the bound is the exact value; for
   ``s = 0`` (all rest classes at 0) λ = ν = μ. Measured gap to the value found: ≤ 0.2 %
   at (k, C, σ) = (250, 10, 40) for α ≤ 512; ≤ 0.5 % at k = 200, σ ∈ {20, 25} for α ≤ 256
   (14 % at α = 512); ≤ 2.7 % at (250, 10, 100). It is loose at large orders when ``σ`` is
   small against ``k``, where the far tail charged at the ceiling dominates.
3. *Exhaustive search where it is affordable.* When the number of canonical pairs is at
   most ``max_exhaustive_pairs`` (``C = 2``: ``k`` pairs; ``C = 3``: ``k(k+1)/2``, so up to
   k = 315 by default; ``C ≥ 4`` only for small ``k``), every canonical pair is evaluated with Eq. (4); the maximum is
   then the worst case (up to the quadrature error of
   :func:`ppaudit.noisy_argmax.log_class_probabilities`) and ``exhaustive`` is True.

What is numerical
-----------------
* Quadrature: Eq. (4) by :func:`ppaudit.noisy_argmax.log_class_probabilities` (relative
  accuracy ~1e-10), and the cells ``K`` of the bound by 10-point Gauss–Legendre on a grid of
  step ≤ σ/``grid_per_sigma``; suprema of ``s`` are taken over the grid points (``s`` is
  smooth; between grid points it is not bounded rigorously), and below the grid ``s`` is
  taken as its value at the grid's lower end (the two-class limit).
* Otherwise (``C ≥ 4`` and many pairs), the search is a *heuristic* over a reduced space:
  every ``(a, b)`` whose certified bound exceeds the best value found so far is evaluated
  with its rest mass concentrated on one class and spread evenly over all rest classes;
  then a hill climb (move one vote between any two classes, re-sort) from the best pairs.
  Observed (brute force over all pairs for k ≤ 12, C ≤ 5, tests): the maximisers put the
  rest mass as low as possible (``r ≈ 0``; one stray vote for parity), which this family
  contains. ``rdp`` is then the RDP of the returned pair — always a valid *lower* bound on
  the worst case — and ``rdp_upper`` the certified upper bound; ``certified`` marks the
  orders where they agree to ``rtol``.

Observed shape (not a theorem): for small orders the maximiser is a near-tie of two classes
``(a, b) → (a − 1, b + 1)``, ``a ≈ b``, with the other classes low (at 0, or the rest mass
spread thinly — values within ~1e-5 of each other), and ``ε*(α) ≈ (2/π) α/σ²`` (the
χ²-limit of a sign quantiser of ``N(±1, 2σ²)``) when ``k/σ`` is large enough that the other
classes do not compete (less, e.g. 0.56 α/σ² at (250, 10, 100)); as ``α`` grows the pair
moves apart, reaching ``(1, k − 1) → (0, k)``, and ``ε*`` saturates far below ``α/σ²``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import log_ndtr, ndtr, ndtri

from .._unique_rows import unique_rows
from .._validation import as_orders, check_positive_int, check_sigma
from ..divergence import renyi_divergence_from_log
from ..noisy_argmax import log_class_probabilities
from .canonical_histograms import _neighbour, canonical_pairs, count_canonical_pairs

__all__ = [
    "WorstCaseRDP",
    "gnmax_rdp_worst_case",
    "worst_case_epsilon",
    "worst_case_epsilon_table",
]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(10)
#: Half-width (in σ) of the x-grid beyond the counts, at least; it grows with the orders
#: (up to ``_GRID_TAIL_MAX``) so that the mass of ν above it, charged at the data-independent
#: maximum ``exp((α − 1) α / σ²)``, stays below ``exp(−50)``.
_GRID_TAIL = 12.0
_GRID_TAIL_MAX = 30.0
_BATCH = 4096


@dataclass(frozen=True)
class WorstCaseRDP:
    """Worst-case exact RDP of the Gaussian noisy argmax (see :func:`gnmax_rdp_worst_case`).

    Attributes:
        num_teachers, num_classes, sigma: the setting ``(k, C, σ)``.
        orders: Rényi orders α.
        rdp: per order, the largest exact RDP ``D_α(M(h) || M(h'))`` found; it is attained
            by ``argmax_h[j] → argmax_h_prime[j]`` (a valid lower bound on the worst case,
            equal to it when ``exhaustive``).
        rdp_upper: per order, the certified upper bound on the worst case (≤ ``α/σ²``).
        data_independent: ``α/σ²`` (Papernot et al. 2018, Prop. 8).
        argmax_h, argmax_h_prime: ``(len(orders), C)`` integer arrays, the maximising
            neighbouring pair per order (the vote moves from class 0 to class 1).
        exhaustive: every canonical pair was evaluated.
        certified: per order, ``rdp_upper ≤ rdp · (1 + rtol)``.
        num_pairs_evaluated: canonical pairs whose exact RDP was computed.
        method: how the numbers were obtained (human-readable notes).
        procedure: ``"ours"`` (the paper leaves this computation as future work).
    """

    num_teachers: int
    num_classes: int
    sigma: float
    orders: np.ndarray
    rdp: np.ndarray
    rdp_upper: np.ndarray
    data_independent: np.ndarray
    argmax_h: np.ndarray
    argmax_h_prime: np.ndarray
    exhaustive: bool
    certified: np.ndarray
    num_pairs_evaluated: int
    method: str
    procedure: str = field(default="ours")

    def to_frame(self) -> pd.DataFrame:
        """One row per order: the numbers and the maximising pair as strings."""
        return pd.DataFrame(
            {
                "num_teachers": self.num_teachers,
                "num_classes": self.num_classes,
                "sigma": self.sigma,
                "order": self.orders,
                "rdp_worst_case": self.rdp,
                "rdp_upper": self.rdp_upper,
                "data_independent": self.data_independent,
                "ratio_to_data_independent": self.rdp / self.data_independent,
                "relative_gap": self.rdp_upper / self.rdp - 1.0,
                "h": [" ".join(map(str, row)) for row in self.argmax_h],
                "h_prime": [" ".join(map(str, row)) for row in self.argmax_h_prime],
                "exhaustive": self.exhaustive,
                "certified": self.certified,
                "procedure": self.procedure,
            }
        )


def _exact_one_direction(h: np.ndarray, sigma: float, orders: np.ndarray) -> np.ndarray:
    """``D_α(M(h) || M(h − e_0 + e_1))`` for canonical rows ``h`` (Eq. (4)), batched."""
    out = np.empty((h.shape[0], orders.size))
    for a in range(0, h.shape[0], _BATCH):
        hb = h[a : a + _BATCH]
        both = np.concatenate([hb, _neighbour(hb)], axis=0)
        uniq, inv = unique_rows(both)  # np.unique(axis=0, return_inverse=True)'s result, one 1-D sort
        logp = log_class_probabilities(uniq.astype(np.float64), sigma)[inv.ravel()]
        n = hb.shape[0]
        out[a : a + n] = renyi_divergence_from_log(logp[:n], logp[n:], orders)
    return out


# ------------------------------------------------------------------- certified upper bound


def _log_cell_table(num_teachers: int, sigma: float, r: int, v: np.ndarray) -> tuple[np.ndarray, int]:
    """``log J(e; v) = log ∫_v^∞ φ(y/σ)/σ · Φ((y + e)/σ) dy`` for integer ``e``, grid ``v``.

    ``J(c − o; x − c) = Pr(Y_c > x, Y_c > Y_o)`` for independent ``Y_c ~ N(c, σ²)``,
    ``Y_o ~ N(o, σ²)``. Gauss–Legendre (10 nodes) on every grid cell, accumulated from the
    top in log space; the piece above the grid is bounded by ``Pr(Y_c > v_max)``.

    Returns:
        ``(2 E + 1, len(v))`` array for ``e = −E..E`` and the offset ``E``.
    """
    e_max = num_teachers + 2
    e = np.arange(-e_max, e_max + 1, dtype=np.float64)
    lo, hi = v[:-1], v[1:]
    half = 0.5 * (hi - lo)
    nodes = 0.5 * (hi + lo)[:, None] + half[:, None] * _GL_X[None, :]  # (G-1, 10)
    logw = np.log(half[:, None] * _GL_W[None, :]) - 0.5 * (nodes / sigma) ** 2 - _LOG_SQRT_2PI - math.log(sigma)
    out = np.empty((e.size, v.size))
    top = float(log_ndtr(-v[-1] / sigma))
    for i, ei in enumerate(e):
        seg = _logsumexp0((logw + log_ndtr((nodes + ei) / sigma)).T)
        acc = np.logaddexp.accumulate(np.concatenate([[top], seg[::-1]]))[::-1]
        out[i] = acc
    return out, e_max


def _logsumexp0(x: np.ndarray) -> np.ndarray:
    """``log Σ exp`` over axis 0 for finite inputs (lighter than scipy's in a hot loop)."""
    top = x.max(axis=0)
    return top + np.log(np.exp(x - top).sum(axis=0))


def _single_thread_blas():
    """Limit BLAS to one thread where threadpoolctl is installed (small matmuls in a loop
    are slowed down by orders of magnitude by oversubscribed BLAS threads)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


class _Bound:
    """Certified bounds on the Rényi sum of every canonical ``(a, b)`` (module item 2).

    Coordinates: ``u = x − b``, the competitor level relative to the class that gains the
    vote, on a grid of step ``1/r ≤ σ/grid_per_sigma`` spanning every count ± 12σ.
    """

    def __init__(self, k: int, c: int, sigma: float, orders: np.ndarray, grid_per_sigma: int):
        self.k, self.m, self.sigma, self.alphas = k, c - 2, sigma, orders
        self.r = r = max(1, math.ceil(grid_per_sigma / sigma))
        # Data-independent ceiling of any Rényi sum: exp((α − 1) α / σ²).
        self.ceiling = (orders - 1.0) * orders / (sigma * sigma)
        self.tail_z = float(np.clip(math.sqrt(2.0 * (self.ceiling.max() + 50.0)), _GRID_TAIL, _GRID_TAIL_MAX))
        tail = (self.tail_z + 1.0) * sigma
        self.u_lo = -(k + 1) - tail
        nu = math.ceil((2 * (k + 1) + 2 * tail) * r)
        self.u = self.u_lo + np.arange(nu + 1) / r
        # v = x − (own count) = u − (own − b), own − b ∈ [−k, k].
        self.v0 = self.u_lo - (k + 2)
        v = self.v0 + np.arange(nu + 2 * (k + 2) * r + 1) / r
        self.logj, self.e_off = _log_cell_table(k, sigma, r, v)
        # CDF of ν in u-coordinates, Φ((u + b − s)/σ)^m, with b − s = 3b + d − k an integer in
        # [−2k, k]: one table on the u-grid extended by those shifts.
        self.ext_lo = 2 * k + 1
        t = self.u_lo - self.ext_lo + np.arange(self.u.size + (3 * k + 2) * r) / r
        log_f = self.m * log_ndtr(t / sigma) if self.m else np.zeros_like(t)
        self.f_table = np.exp(log_f)
        self.df_table = np.maximum(np.diff(self.f_table), 0.0)
        self.top_table = -np.expm1(log_f)

    def _cell(self, own_minus_b: int, other_minus_b: int) -> np.ndarray:
        """log Pr(Y_own > x, Y_own > Y_other) on the u-grid: J(own − other; u − (own − b))."""
        start = round((self.u_lo - own_minus_b - self.v0) * self.r)
        return self.logj[own_minus_b - other_minus_b + self.e_off, start : start + self.u.size]

    def log_s(self, d: int) -> np.ndarray:
        """``log s(x)`` at ``x = b + u`` for the 3-cell law {a wins, b wins, competitor}, ``(U, A)``."""
        u, sg = self.u, self.sigma
        L = np.stack([self._cell(d, 0), self._cell(0, d), log_ndtr((u - d) / sg) + log_ndtr(u / sg)])
        Lp = np.stack([self._cell(d - 1, 1), self._cell(1, d - 1), log_ndtr((u - d + 1) / sg) + log_ndtr((u - 1) / sg)])
        a = self.alphas
        return _logsumexp0(a * L[:, :, None] + (1.0 - a) * Lp[:, :, None])

    def canonical_b(self, d: int) -> np.ndarray:
        """Every ``b`` with ``a = b + d ≥ 1``, ``b ≥ 0``, ``a + b ≤ k`` (``= k`` when C = 2)."""
        b = np.arange(max(0, -d), (self.k - d) // 2 + 1)
        b = b[b + d >= 1]
        return b[self.k - 2 * b - d == 0] if self.m == 0 else b

    def envelope_bound(self, d: int, b: np.ndarray, logs: np.ndarray) -> np.ndarray:
        """``log E_ν[s↑]`` per ``b`` (ν: all rest classes at ``s = k − a − b``), ``(B, A)``."""
        if self.m == 0:
            # C = 2: no competitor; the exact two-class Rényi sum (bottom of the grid).
            return np.repeat(logs[:1], b.size, axis=0)
        s_rest = self.k - 2 * b - d
        env = np.maximum.accumulate(logs, axis=0)  # running maximum s↑ (non-decreasing)
        idx = ((b - s_rest + self.ext_lo) * self.r)[:, None] + np.arange(self.u.size)[None, :]
        w = self.df_table[idx[:, :-1]]  # ν-mass of (u_{j−1}, u_j], charged at s↑(u_j)
        below = self.f_table[idx[:, 0]]  # ν below the grid, charged at s(u_0)
        top = self.top_table[idx[:, -1]]  # ν above the grid, charged at the ceiling
        shift = env.max(axis=0)
        lin = w @ np.exp(env[1:] - shift) + below[:, None] * np.exp(env[:1] - shift)
        vals = np.log(np.maximum(lin, 1e-300)) + shift
        with np.errstate(divide="ignore"):
            return np.logaddexp(vals, np.log(top)[:, None] + self.ceiling[None, :])

    def quantile_bound(self, d: int, b: np.ndarray, logs: np.ndarray, z_step: float = 0.1) -> np.ndarray:
        """Tighter ``log sup_μ E_μ[s]`` over all laws λ ≤_st μ ≤_st ν, per ``b``, ``(B, A)``.

        Every rest class has count ≥ 0 and the largest has ≥ ⌈s/(C − 2)⌉, so the law μ of
        ``X`` lies above λ with CDF ``min(Φ(x/σ)^m, Φ((x − ⌈s/m⌉)/σ))`` and below ν. Over that
        set, ``sup E_μ[s] = ∫_0^1 max_{q_λ(t) ≤ x ≤ q_ν(t)} s(x) dt``; the integral is bounded
        on a grid of levels ``t`` (the interval of a level cell is widened to its ends).
        """
        if self.m == 0:
            return self.envelope_bound(d, b, logs)
        m, sg, k = self.m, self.sigma, self.k
        z = np.arange(-_GRID_TAIL, self.tail_z + z_step / 2, z_step)
        # Levels t = Φ(z); masses and quantiles through the tails so that nothing rounds to 1.
        dt = np.where(z[1:] > 0, ndtr(-z[:-1]) - ndtr(-z[1:]), ndtr(z[1:]) - ndtr(z[:-1]))
        log_t = log_ndtr(z)
        log_level = log_t / m  # Φ^{-1}(t^{1/m}) in units of σ, from the nearer tail
        q_max_of_m = np.where(
            log_level < -math.log(2.0), ndtri(np.exp(log_level)), -ndtri(-np.expm1(log_level))
        )
        s_rest = (k - 2 * b - d).astype(np.float64)
        r_low = np.ceil(s_rest / m)
        q_nu = s_rest[:, None] + sg * q_max_of_m[None, :] - b[:, None]
        q_la = np.maximum(sg * q_max_of_m[None, :], r_low[:, None] + sg * z[None, :]) - b[:, None]
        lo = np.floor((q_la[:, :-1] - self.u_lo) * self.r).astype(np.int64)
        hi = np.ceil((q_nu[:, 1:] - self.u_lo) * self.r).astype(np.int64)
        n_u = self.u.size
        beyond = hi > n_u - 1  # the cell reaches above the grid: charged at the ceiling
        lo = np.clip(lo, 0, n_u - 1)
        hi = np.clip(hi, 0, n_u - 1)
        mx = _range_max(logs, lo, hi)  # (B, T−1, A)
        mx = np.where(beyond[:, :, None], np.maximum(mx, self.ceiling), mx)
        first = _range_max(logs, np.zeros((b.size, 1), np.int64), np.clip(
            np.ceil((q_nu[:, :1] - self.u_lo) * self.r).astype(np.int64), 0, n_u - 1))[:, 0]
        terms = np.concatenate(
            [
                (log_t[0] + first)[:, None, :],
                np.log(dt)[None, :, None] + mx,
                np.broadcast_to(log_ndtr(-z[-1]) + self.ceiling, (b.size, 1, self.alphas.size)),
            ],
            axis=1,
        )
        return _logsumexp0(np.moveaxis(terms, 1, 0))


def _range_max(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``max(values[lo:hi + 1])`` along axis 0 for index arrays ``lo ≤ hi`` (sparse table)."""
    levels = [values]
    while (1 << len(levels)) <= values.shape[0]:
        prev, span = levels[-1], 1 << (len(levels) - 1)
        levels.append(np.maximum(prev[:-span], prev[span:]))
    length = hi - lo + 1
    level = np.floor(np.log2(np.maximum(length, 1))).astype(np.int64)
    out = np.empty(lo.shape + values.shape[1:])
    for j in np.unique(level):
        sel = level == j
        tab = levels[j]
        span = 1 << j
        out[sel] = np.maximum(tab[lo[sel]], tab[hi[sel] - span + 1])
    return out


def _upper_bounds(k: int, c: int, sigma: float, orders: np.ndarray, grid_per_sigma: int):
    """Envelope bounds (log Rényi sums) of every canonical ``(a, b)``, and the bound object."""
    bound = _Bound(k, c, sigma, orders, grid_per_sigma)
    abs_, vals = [], []
    with _single_thread_blas():
        for d in range(-(k - 1), k + 1):  # d = a − b with a ≥ 1, b ≥ 0, a + b ≤ k
            b = bound.canonical_b(d)
            if b.size:
                abs_.append(np.stack([b + d, b], axis=1))
                vals.append(bound.envelope_bound(d, b, bound.log_s(d)))
    return np.concatenate(abs_, axis=0), np.concatenate(vals, axis=0), bound


def _refine(bound: _Bound, ab: np.ndarray, log_env: np.ndarray, best_log: np.ndarray) -> np.ndarray:
    """Replace the envelope bound by the quantile bound where it exceeds the best found."""
    out = log_env.copy()
    open_rows = np.nonzero(np.any(log_env > best_log, axis=1))[0]
    d_all = ab[:, 0] - ab[:, 1]
    for d in np.unique(d_all[open_rows]):
        rows = open_rows[d_all[open_rows] == d]
        logs = bound.log_s(int(d))
        out[rows] = np.minimum(out[rows], bound.quantile_bound(int(d), ab[rows, 1], logs))
    return out


# ------------------------------------------------------------------------------- search


def _family(ab: np.ndarray, num_teachers: int, num_classes: int, spread: bool) -> np.ndarray:
    """Rest mass ``s = k − a − b`` concentrated on one class, or spread evenly."""
    m = num_classes - 2
    s = num_teachers - ab.sum(axis=1)
    rest = np.zeros((ab.shape[0], m), dtype=np.int64)
    if spread:
        q, rem = np.divmod(s, m)
        rest += q[:, None]
        rest += (np.arange(m)[None, :] < rem[:, None]).astype(np.int64)
    else:
        rest[:, 0] = s
    return np.concatenate([ab, rest], axis=1)


def _moves(h: np.ndarray) -> np.ndarray:
    """Canonical rows one vote away from the canonical row ``h`` (moves between any classes)."""
    c = h.size
    out = []
    for i in range(c):
        for j in range(c):
            if i == j or h[i] == 0:
                continue
            g = h.copy()
            g[i] -= 1
            g[j] += 1
            if g[0] < 1:
                continue
            g[2:] = np.sort(g[2:])[::-1]
            out.append(g)
    return np.unique(np.asarray(out, dtype=np.int64), axis=0) if out else np.empty((0, c), dtype=np.int64)


def _heuristic_search(k, c, sigma, orders, ab_bound, bound_ab, climb_steps):
    """Reduced search for ``C ≥ 4`` with many pairs (module docstring, "What is numerical").

    ``(a, b)`` pairs whose certified bound (over *all* their rest configurations) is at most
    the best value found at every order are skipped: they cannot contain a better pair.
    """
    s_rest = k - ab_bound.sum(axis=1)
    # Seed: every (a, b) with rest mass 0 or 1 (the observed maximisers).
    seed = s_rest <= 1
    cand = _family(ab_bound[seed], k, c, spread=False)
    vals = _exact_one_direction(cand, sigma, orders)
    # The concentrated family, then (C ≥ 4) the spread family, where the bound is open.
    for spread in (False, True) if c > 3 else (False,):
        best = vals.max(axis=0)
        open_ab = np.any(bound_ab > best, axis=1) & (s_rest >= 2)
        if open_ab.any():
            extra = _family(ab_bound[open_ab], k, c, spread=spread)
            cand = np.concatenate([cand, extra], axis=0)
            vals = np.concatenate([vals, _exact_one_direction(extra, sigma, orders)], axis=0)
    cand, idx = np.unique(cand, axis=0, return_index=True)
    vals = vals[idx]
    seen = {tuple(row) for row in cand.tolist()}
    for j in range(orders.size):
        cur = cand[int(np.argmax(vals[:, j]))]
        cur_val = float(vals[:, j].max())
        for _ in range(climb_steps):
            nb = [g for g in _moves(cur).tolist() if tuple(g) not in seen]
            if not nb:
                break
            nb = np.asarray(nb, dtype=np.int64)
            nv = _exact_one_direction(nb, sigma, orders)
            seen.update(tuple(g) for g in nb.tolist())
            cand = np.concatenate([cand, nb], axis=0)
            vals = np.concatenate([vals, nv], axis=0)
            i = int(np.argmax(nv[:, j]))
            if nv[i, j] <= cur_val:
                break
            cur, cur_val = nb[i], float(nv[i, j])
    return cand, vals


def gnmax_rdp_worst_case(
    num_teachers: int,
    num_classes: int,
    sigma: float,
    orders,
    *,
    max_exhaustive_pairs: int = 50_000,
    grid_per_sigma: int = 20,
    rtol: float = 1e-2,
    climb_steps: int = 40,
) -> WorstCaseRDP:
    """Worst-case exact RDP of the Gaussian noisy argmax over all neighbouring histograms.

    ``ε*(α) = max_{h ~ h'} D_α(M(h) || M(h'))``, ``h`` a vote histogram of ``k`` teachers
    over ``C`` classes and ``h'`` the same with one teacher's vote moved; ``M(h)`` the exact
    output law of Chadha et al. 2024, Eq. (4). The paper (§4.2, §7) leaves this as future
    work; the module docstring states which steps are proven (symmetry reduction,
    certified upper bound, exhaustive search when affordable) and which are numerical
    (quadrature, the heuristic search for many classes). Per order, it returns the value
    found with its maximising pair and a certified upper bound; for accounting use
    ``rdp_upper`` (sound), or ``rdp`` when ``exhaustive``.

    Args:
        num_teachers: number of teachers ``k ≥ 1`` (every histogram sums to ``k``).
        num_classes: number of classes ``C ≥ 2``.
        sigma: noise standard deviation per count, > 0.
        orders: Rényi orders α > 1 (finite).
        max_exhaustive_pairs: evaluate every canonical pair when there are at most this
            many (:func:`count_canonical_pairs`); otherwise search the reduced family.
        grid_per_sigma: grid points per σ of the certified bound (step ≤ σ / this).
        rtol: relative tolerance at which ``rdp_upper`` counts as certifying ``rdp``.
        climb_steps: maximum hill-climbing steps per order in the heuristic search.

    Returns:
        :class:`WorstCaseRDP`.

    Raises:
        ValueError: if ``num_teachers < 1``, ``num_classes < 2``, ``sigma <= 0``, an order
            is ≤ 1 or infinite, or a tuning argument is out of range.

    Example:
        >>> res = gnmax_rdp_worst_case(12, 3, 2.0, [2.0, 8.0])
        >>> bool(res.exhaustive and (res.rdp <= res.data_independent).all())
        True
    """
    k = check_positive_int(num_teachers, "num_teachers")
    c = check_positive_int(num_classes, "num_classes", minimum=2)
    s = check_sigma(sigma)
    a = as_orders(orders)
    if np.any(~np.isfinite(a)):
        raise ValueError(f"orders must be finite, got {a[~np.isfinite(a)]}")
    check_positive_int(max_exhaustive_pairs, "max_exhaustive_pairs", minimum=0)
    check_positive_int(grid_per_sigma, "grid_per_sigma", minimum=4)
    check_positive_int(climb_steps, "climb_steps", minimum=0)
    try:
        rtol_ok = 0.0 <= float(rtol) < 1.0
    except (TypeError, ValueError):
        rtol_ok = False
    if not rtol_ok:
        raise ValueError(f"rtol must be a number in [0, 1), got {rtol!r}")

    di = a / (s * s)
    ab_bound, log_bound, bound = _upper_bounds(k, c, s, a, grid_per_sigma)
    bound_ab = log_bound / (a - 1.0)  # per (a, b): RDP bound of every rest configuration

    n_pairs = count_canonical_pairs(k, c)
    exhaustive = n_pairs <= max_exhaustive_pairs
    if exhaustive:
        cand = canonical_pairs(k, c)
        vals = _exact_one_direction(cand, s, a)
        evaluated = cand.shape[0]
        method = (
            f"exhaustive over all {n_pairs} canonical pairs (class permutations and pair order "
            "removed, proven); exact Eq. (4) per pair"
        )
    else:
        cand, vals = _heuristic_search(k, c, s, a, ab_bound, bound_ab, climb_steps)
        evaluated = cand.shape[0]
        method = (
            f"heuristic search ({n_pairs} canonical pairs > max_exhaustive_pairs="
            f"{max_exhaustive_pairs}): every (a, b) whose certified bound exceeds the best value "
            "found is evaluated with its rest mass concentrated on one class and spread evenly, "
            f"then a hill climb; {evaluated} pairs evaluated"
        )
    best_idx = np.argmax(vals, axis=0)
    rdp = vals[best_idx, np.arange(a.size)]
    # Tighten the bound of the (a, b) that the envelope bound leaves open.
    with _single_thread_blas():
        log_bound = _refine(bound, ab_bound, log_bound, rdp * (a - 1.0))
    upper = np.minimum(log_bound.max(axis=0) / (a - 1.0), di)
    h = cand[best_idx]
    method += (
        "; certified upper bound: competitor level revealed, its law bounded stochastically "
        f"(E_ν[s↑], refined by the quantile bound where open; grid step ≤ σ/{grid_per_sigma}), "
        "capped at α/σ²"
    )
    return WorstCaseRDP(
        num_teachers=k,
        num_classes=c,
        sigma=s,
        orders=a,
        rdp=rdp,
        rdp_upper=upper,
        data_independent=di,
        argmax_h=h,
        argmax_h_prime=_neighbour(h),
        exhaustive=bool(exhaustive),
        certified=np.asarray(exhaustive | (upper <= rdp * (1.0 + rtol)), dtype=bool),
        num_pairs_evaluated=int(evaluated),
        method=method,
    )


def _epsilon_rows(orders, rdp, rdp_upper, data_independent, num_queries, delta) -> pd.DataFrame:
    from .conversion import rdp_to_dp

    t = np.atleast_1d(np.asarray(num_queries, dtype=np.float64))
    if t.ndim != 1 or t.size == 0 or np.any(~np.isfinite(t)) or np.any(t < 1):
        raise ValueError(f"num_queries must be numbers >= 1, got {num_queries!r}")
    rows = []
    for n in t:
        row = {"num_queries": int(n) if float(n).is_integer() else float(n)}
        for name, curve in (("worst_case", rdp), ("upper", rdp_upper), ("data_independent", data_independent)):
            eps, order = rdp_to_dp(n * np.asarray(curve, dtype=np.float64), orders, delta, return_order=True)
            row[f"epsilon_{name}"] = eps
            row[f"order_{name}"] = order
        rows.append(row)
    return pd.DataFrame(rows)


def worst_case_epsilon(result: WorstCaseRDP, num_queries, delta: float) -> pd.DataFrame:
    """``ε`` at ``δ`` after ``T`` adaptively composed queries, worst case vs data-independent.

    RDP composes additively (Mironov 2017, Prop. 1): ``T`` queries cost ``T · ε*(α)`` at
    every order; the curve is converted with Chadha et al. 2024, Thm 1 (Balle et al. 2020,
    Thm 20; :func:`ppaudit.accounting.rdp_to_dp`), minimised over ``result.orders``.

    Args:
        result: output of :func:`gnmax_rdp_worst_case`.
        num_queries: numbers of queries ``T ≥ 1``.
        delta: target δ in (0, 1).

    Returns:
        One row per ``T``: ``epsilon_worst_case`` (from ``rdp``: the ε of the worst pair
        found — a valid guarantee when the search is ``exhaustive`` or ``certified``),
        ``epsilon_upper`` (from ``rdp_upper``: always a valid guarantee),
        ``epsilon_data_independent`` (from ``α/σ²``) and the minimising orders.

    Raises:
        ValueError: on a ``T < 1`` or a ``delta`` outside (0, 1).
    """
    return _epsilon_rows(result.orders, result.rdp, result.rdp_upper, result.data_independent, num_queries, delta)


def worst_case_epsilon_table(table: pd.DataFrame, num_queries, delta: float) -> pd.DataFrame:
    """:func:`worst_case_epsilon` for every setting of a table of :meth:`WorstCaseRDP.to_frame` rows.

    Args:
        table: rows of ``to_frame()`` (columns ``order``, ``rdp_worst_case``, ``rdp_upper``,
            ``data_independent``) with a ``setting`` column naming each curve.
        num_queries: numbers of queries ``T ≥ 1``.
        delta: target δ in (0, 1).

    Returns:
        The rows of :func:`worst_case_epsilon` per setting, with ``setting``,
        ``num_teachers``, ``num_classes``, ``sigma`` and ``delta``.

    Raises:
        ValueError: if a column is missing, or on the inputs :func:`worst_case_epsilon` rejects.
    """
    needed = {"setting", "order", "rdp_worst_case", "rdp_upper", "data_independent", "num_teachers", "num_classes", "sigma"}
    missing = needed - set(table.columns)
    if missing:
        raise ValueError(f"table lacks the columns {sorted(missing)}")
    frames = []
    for setting, part in table.groupby("setting", sort=False):
        part = part.sort_values("order")
        eps = _epsilon_rows(
            part["order"].to_numpy(), part["rdp_worst_case"], part["rdp_upper"], part["data_independent"], num_queries, delta
        )
        first = part.iloc[0]
        eps.insert(0, "setting", setting)
        eps.insert(1, "num_teachers", int(first["num_teachers"]))
        eps.insert(2, "num_classes", int(first["num_classes"]))
        eps.insert(3, "sigma", float(first["sigma"]))
        eps["delta"] = delta
        frames.append(eps)
    return pd.concat(frames, ignore_index=True)
