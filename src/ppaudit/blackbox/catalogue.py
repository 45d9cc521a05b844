"""The mechanisms of StatDP's and DP-Sniper's evaluations, correct and buggy (target ``blackbox_benchmark``).

Each is written from the pseudo-code of the paper that introduced it and is cited in its
docstring; all take the black-box signature of :mod:`ppaudit.blackbox.mechanism`,
``mechanism(data, n, rng) -> n outputs``, vectorised over the ``n`` draws:

* ``laplace`` — the Laplace mechanism, scale 1/ε₀ (Dwork et al. 2006): ε₀.
* ``laplace_float`` — the same with the textbook inverse-CDF sampler in floating point:
  not DP for any ε (Mironov 2012); DP-Sniper (Bichsel et al. 2021): "not even 0.25-DP".
* ``histogram`` / ``histogram_eps`` — a noisy histogram with ``Lap(1/ε₀)`` (Ding et al. Alg. 9):
  ε₀; with ``Lap(ε₀)`` (Alg. 10): ``1/ε₀`` (a bug only for ε₀ < 1).
* ``rnm_laplace`` / ``rnm_exponential`` — report-noisy-max returning the index, noise of scale
  2/ε₀ (Algs. 5, 6): ε₀.
* ``rnm_laplace_value`` / ``rnm_exponential_value`` — returning the noisy maximum *value*
  (Algs. 7, 8): ``mε₀/2`` and ∞.
* ``svt1`` … ``svt6`` — Lyu et al. 2017, Algs. 1–6: ε₀, ε₀, ∞, ``(1+6c)ε₀/4``, ∞, ∞ (their Table 1).

"Ding et al." is Ding, Wang, Wang, Zhang & Kifer 2018, *Detecting violations of differential
privacy* (CCS; StatDP), whose algorithm numbers DP-Sniper (Bichsel, Steffen, Bogunovic &
Vechev 2021, *DP-Sniper: black-box discovery of differential privacy violations using
classifiers*, IEEE S&P) reuses; Lyu, Su & Li 2017 is *Understanding the sparse vector
technique for differential privacy* (PVLDB 10(6)). The adjacency of each case is named by
the neighbour generator it uses (:mod:`ppaudit.blackbox.neighbours`): report-noisy-max and
SVT take ``m`` sensitivity-1 query answers (every answer moves by ≤ 1), the histogram one
count ±1, the Laplace mechanism a scalar query of sensitivity 1.

Real-valued outputs are audited through a *view*, a fixed data-independent post-processing
(rounding to a grid, or, for the floating-point sampler, a bit feature of the output): an
audit of ``view ∘ M`` is a valid audit of ``M`` (post-processing cannot increase ε), so the
view can only cost power, never soundness.

How the search sees the outputs is part of each case (``BenchmarkCase.outputs``): counted, except
SVT Alg. 6, whose 2^m answer vectors all have positive probability and are too many to order on a
pilot; its answer vector goes to a logistic regression (:func:`svt_answer_features`), as in
DP-Sniper's logistic-regression variant.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "BenchmarkCase",
    "benchmark_cases",
    "float_lattice_view",
    "float_laplace_mechanism",
    "grid_view",
    "laplace_mechanism",
    "noisy_histogram",
    "position_value_view",
    "report_noisy_max",
    "sparse_vector",
    "svt_answer_features",
    "svt_true_epsilon",
]

#: Claimed ε₀ of every case unless the config says otherwise (DP-Sniper's evaluation uses 0.1).
DEFAULT_EPSILON = 0.1


def _as_row(data) -> np.ndarray:
    return np.atleast_1d(np.asarray(data, dtype=np.float64)).ravel()


# --------------------------------------------------------------------------------------
# Laplace mechanism and histograms
# --------------------------------------------------------------------------------------


def laplace_mechanism(epsilon: float, sensitivity: float = 1.0) -> Callable:
    """``f(D) + Lap(Δ/ε)`` for a scalar query ``f`` (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, Def. 3.3).

    ``data`` is the query answer (a number or a one-element array). ε-DP for answers that move by ≤ Δ.
    Uses numpy's Laplace sampler (not the naive one of :func:`float_laplace_mechanism`).
    """
    scale = float(sensitivity) / float(epsilon)

    def mech(data, n, rng):
        return float(_as_row(data)[0]) + rng.laplace(0.0, scale, size=n)

    return mech


def float_laplace_mechanism(epsilon: float, sensitivity: float = 1.0) -> Callable:
    """The Laplace mechanism with the textbook inverse-CDF sampler, in floating point.

    ``u ~ U[0, 1) − 1/2``; ``f(D) − (Δ/ε)·sgn(u)·ln(1 − 2|u|)`` (Dwork & Roth 2014, §3.3's
    Laplace distribution sampled by inversion). Mironov 2012 (*On significance of the least
    significant bits for differential privacy*, CCS) shows that the set of doubles this can
    output depends on ``f(D)``, so it is not ε-DP for any ε; DP-Sniper (Bichsel et al. 2021,
    ε₀ = 0.1) reports it "is not even 0.25-DP" (ε lower bound 0.252 from bit-pattern
    features).
    """
    scale = float(sensitivity) / float(epsilon)

    def mech(data, n, rng):
        u = rng.random(n) - 0.5
        noise = -scale * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u))
        return float(_as_row(data)[0]) + noise

    return mech


def noisy_histogram(scale: float) -> Callable:
    """``h + Lap(scale)^m`` (Ding et al. 2018, Algs. 9 and 10: scale ``1/ε`` correct, ``ε`` buggy).

    One count ±1 moves one coordinate: ``1/scale``-DP. Returns an ``(n, m)`` float array.
    """
    s = float(scale)

    def mech(hist, n, rng):
        h = _as_row(hist)
        return h + rng.laplace(0.0, s, size=(n, h.size))

    return mech


# --------------------------------------------------------------------------------------
# report-noisy-max
# --------------------------------------------------------------------------------------


def report_noisy_max(epsilon: float, noise: str = "laplace", output: str = "index") -> Callable:
    """Report-noisy-max over ``m`` sensitivity-1 queries with noise of scale ``2/ε``.

    Ding et al. 2018: Alg. 5 (Laplace, index), Alg. 6 (exponential, index) — both ε-DP for
    answers that each move by ≤ 1 (Dwork & Roth 2014, Claim 3.9 with scale 2Δ/ε) — and the buggy Algs. 7 / 8 that return the noisy maximum *value* instead of its
    index: with Laplace noise ``mε/2``-DP (the lower tail of the maximum of ``m`` shifted
    Laplace variables, each ratio ``e^{ε/2}``), with exponential noise not ε'-DP for any ε'
    (the support of the maximum moves with the answers).
    """
    if noise not in ("laplace", "exponential"):
        raise ValueError(f"noise must be 'laplace' or 'exponential', got {noise!r}")
    if output not in ("index", "value"):
        raise ValueError(f"output must be 'index' or 'value', got {output!r}")
    scale = 2.0 / float(epsilon)

    def mech(answers, n, rng):
        q = _as_row(answers)
        z = rng.laplace(0.0, scale, size=(n, q.size)) if noise == "laplace" else rng.exponential(scale, size=(n, q.size))
        noisy = q + z
        return np.argmax(noisy, axis=1) if output == "index" else noisy.max(axis=1)

    return mech


# --------------------------------------------------------------------------------------
# sparse vector technique (Lyu, Su & Li 2017, Fig. 1)
# --------------------------------------------------------------------------------------

#: (ε₁ share, threshold scale (× Δ/ε₁), query-noise scale (× Δ/ε₂, 0 = none), cutoff, output, resample ρ)
_SVT = {
    1: (0.5, "1", "2c", True, "bit", False),    # Lyu et al. (their proposal): ε-DP
    2: (0.5, "c", "2c", True, "bit", True),     # Dwork & Roth 2014, Alg. 2: ε-DP
    3: (0.5, "1", "c", True, "value", False),   # Roth 2011 lecture notes: outputs q + ν: ∞
    4: (0.25, "1", "1", True, "bit", False),    # Lee & Clifton 2014: ((1 + 6c)/4)ε-DP
    5: (0.5, "1", "0", False, "bit", False),    # Stoddard et al. 2014: no query noise: ∞
    6: (0.5, "1", "1", False, "bit", False),    # Chen et al. 2015: no cutoff: ∞
}


def svt_true_epsilon(algorithm: int, epsilon: float, c: int = 1) -> float:
    """The privacy of Lyu et al. 2017's Alg. ``algorithm`` at budget ε (their Table 1): ε, ε, ∞, (1+6c)ε/4, ∞, ∞.

    Algs. 5 and 6 are ∞ for unboundedly many queries; Alg. 6 on ``m`` queries is finite but above ε
    (here reported as ∞, Lyu's statement).
    """
    return {1: epsilon, 2: epsilon, 3: math.inf, 4: (1 + 6 * c) * epsilon / 4, 5: math.inf, 6: math.inf}[int(algorithm)]


def sparse_vector(algorithm: int, epsilon: float, c: int = 1, threshold: float = 1.0) -> Callable:
    """Lyu, Su & Li 2017, Fig. 1, Alg. ``algorithm`` ∈ 1…6 on sensitivity-1 query answers.

    With ``ε₁`` the threshold's share: ``ρ = Lap(k_ρ/ε₁)``, ``ν_i = Lap(k_ν/ε₂)``, answer ⊤ iff
    ``q_i + ν_i ≥ T + ρ``, stop after ``c`` ⊤ (Algs. 1–4). Alg. 1: ``k_ρ = 1, k_ν = 2c``;
    Alg. 2 (Dwork & Roth 2014): ``k_ρ = c``, ρ redrawn after each ⊤; Alg. 3 (Roth 2011): ``k_ν =
    c`` and ⊤ is replaced by the noisy answer ``q_i + ν_i``; Alg. 4 (Lee & Clifton 2014): ε₁ =
    ε/4, ``k_ν = 1``; Alg. 5 (Stoddard et al. 2014): no query noise, no cutoff; Alg. 6 (Chen et
    al. 2015): ``k_ν = 1``, no cutoff.

    Output (one integer per draw, a lossless code of the answer vector): for the bit variants
    ``Σ_i (a_i + 1)·3^i`` with ``a_i`` ∈ {1 = ⊤, 0 = ⊥, −1 = not answered after the cutoff};
    for Alg. 3 with ``c = 1`` the tuple ``(position of ⊤ or m, noisy value or nan)`` is returned as
    an ``(n, 2)`` float array (use :func:`grid_view` to count it).
    """
    a = int(algorithm)
    if a not in _SVT:
        raise ValueError(f"algorithm must be one of 1..6 (Lyu et al. 2017), got {algorithm!r}")
    c = int(c)
    if c < 1:
        raise ValueError(f"c must be an integer >= 1, got {c!r}")
    share, k_rho, k_nu, cutoff, out, resample = _SVT[a]
    eps1 = share * float(epsilon)
    eps2 = float(epsilon) - eps1
    mult = {"1": 1.0, "c": float(c), "2c": 2.0 * c, "0": 0.0}
    rho_scale = mult[k_rho] / eps1
    nu_scale = mult[k_nu] / eps2
    if out == "value" and c != 1:
        raise ValueError("the value-returning SVT (Alg. 3) is implemented for c = 1")

    def mech(answers, n, rng):
        q = _as_row(answers)
        m = q.size
        rho = rng.laplace(0.0, rho_scale, size=n)
        nu = rng.laplace(0.0, nu_scale, size=(n, m)) if nu_scale > 0 else np.zeros((n, m))
        noisy = q + nu
        if out == "value":
            above = noisy >= (threshold + rho)[:, None]
            first = np.where(above.any(axis=1), above.argmax(axis=1), m)
            value = np.full(n, np.nan)
            hit = first < m
            value[hit] = noisy[np.flatnonzero(hit), first[hit]]
            return np.column_stack([first.astype(np.float64), value])
        if not resample:  # one pass over the matrix (same draws, same answers as the loop below)
            top = noisy >= (threshold + rho)[:, None]
            ans = top.astype(np.int64)
            if cutoff:  # answered iff fewer than c ⊤ came before
                before = np.cumsum(top, axis=1) - top
                ans[before >= c] = -1
            return ((ans + 1) * (3 ** np.arange(m, dtype=np.int64))).sum(axis=1)
        ans = np.empty((n, m), dtype=np.int64)
        count = np.zeros(n, dtype=np.int64)
        stopped = np.zeros(n, dtype=bool)
        for i in range(m):
            top = noisy[:, i] >= threshold + rho
            ans[:, i] = np.where(stopped, -1, top.astype(np.int64))
            live_top = top & ~stopped
            count += live_top
            if resample:
                fresh = rng.laplace(0.0, rho_scale, size=n)
                rho = np.where(live_top, fresh, rho)
            if cutoff:
                stopped |= count >= c
        return ((ans + 1) * (3 ** np.arange(m, dtype=np.int64))).sum(axis=1)

    return mech


def svt_answer_features(codes, queries: int) -> np.ndarray:
    """The answer vector behind :func:`sparse_vector`'s integer code, as classifier features.

    The code is ``Σ_i (a_i + 1)·3^i`` with ``a_i`` ∈ {1 = ⊤, 0 = ⊥, −1 = not answered}; the features
    are two indicators per query, ``a_i = ⊤`` and ``a_i = ⊥`` (``(n, 2·queries)`` floats). With 10
    queries and no cutoff (Lyu et al. 2017, Algs. 5, 6) there are 2^10 answer vectors: too many cells
    to order by likelihood ratio on a pilot, while a linear score in these indicators comes close to
    the likelihood ratio (DP-Sniper, Bichsel et al. 2021, feeds the answer vector to its classifier).
    """
    c = np.asarray(codes, dtype=np.int64).reshape(-1)
    d = (c[:, None] // (3 ** np.arange(int(queries), dtype=np.int64))) % 3
    return np.concatenate([(d == 2), (d == 1)], axis=1).astype(np.float64)


# --------------------------------------------------------------------------------------
# views: fixed post-processings that make real outputs countable
# --------------------------------------------------------------------------------------


_GRID_CLIP = 2**10


def grid_view(mechanism: Callable, width: float, clip: tuple[int, int] | None = None) -> Callable:
    """``view ∘ M``: real outputs rounded down to multiples of ``width`` (integers; rows → tuples).

    A fixed post-processing chosen before any draw, so auditing it is a valid (possibly weaker)
    audit of ``M``. Vector outputs (≤ 5 coordinates) are coded as one integer (mixed radix);
    cells are clipped to ``±2^10`` (a further post-processing) and NaN (an SVT answer ⊥) is the
    lowest cell. ``clip = (lo, hi)`` clips the cells further (fewer cells: more power per cell).
    """
    w = float(width)
    if not (w > 0 and math.isfinite(w)):
        raise ValueError(f"width must be a finite number > 0, got {width!r}")

    def viewed(data, n, rng):
        x = np.asarray(mechanism(data, n, rng), dtype=np.float64)
        cells = np.floor(np.nan_to_num(x, nan=-np.inf, neginf=-np.inf) / w)
        lo, hi = (-_GRID_CLIP, _GRID_CLIP) if clip is None else (max(int(clip[0]), -_GRID_CLIP), min(int(clip[1]), _GRID_CLIP))
        cells = np.clip(np.where(np.isfinite(cells), cells, lo), lo, hi).astype(np.int64)
        if cells.ndim == 1:
            return cells
        if cells.ndim != 2 or cells.shape[1] > 5:
            raise ValueError(f"grid_view counts outputs of at most 5 coordinates, got shape {x.shape}")
        base = 2 * _GRID_CLIP + 1
        return ((cells + _GRID_CLIP) * base ** np.arange(cells.shape[1], dtype=np.int64)).sum(axis=1)

    return viewed


def position_value_view(mechanism: Callable, width: float, clip: tuple[int, int]) -> Callable:
    """``view ∘ M`` for an ``(n, 2)`` output (position, value or NaN): the position kept, the value rounded.

    The value is rounded down to multiples of ``width`` and clipped to the cells ``[lo, hi]``;
    NaN (no value) is its own cell. A fixed post-processing (see :func:`grid_view`). Used for
    Lyu et al.'s Alg. 3, whose output is the position of the first ⊤ and its noisy answer.
    """
    w = float(width)
    lo, hi = int(clip[0]), int(clip[1])
    if not (w > 0 and math.isfinite(w)) or lo > hi:
        raise ValueError(f"need width > 0 and clip lo <= hi, got width={width!r}, clip={clip!r}")
    span = hi - lo + 2

    def viewed(data, n, rng):
        x = np.asarray(mechanism(data, n, rng), dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != 2:
            raise ValueError(f"position_value_view needs (n, 2) outputs, got shape {x.shape}")
        val = x[:, 1]
        cell = np.where(np.isnan(val), hi + 1, np.clip(np.floor(np.nan_to_num(val) / w), lo, hi)).astype(np.int64) - lo
        return x[:, 0].astype(np.int64) * span + cell

    return viewed


def float_lattice_view(mechanism: Callable, bits: int = 53) -> Callable:
    """``view ∘ M`` for a floating-point sampler: the binade of the output and whether it lies on the ``2^-bits`` lattice.

    Mironov 2012's observation in the form of a feature: ``f(D) + noise`` computed in doubles
    lands on the grid of ``f(D)``'s binade, while the noise alone has finer resolution near 0. For
    ``f(D) = 1`` every output in ``(0, 1/2)`` is a multiple of ``2^-53`` (Sterbenz), for ``f(D) =
    0`` almost none is. Output: ``(⌊log2|x|⌋ clipped to [−8, 8], sign, on-lattice)`` as an int code.
    This is a domain-aware feature — DP-Sniper feeds the 64 bits of the double to its classifier
    for the same reason (Bichsel et al. 2021).
    """
    scale = float(2.0**bits)

    def viewed(data, n, rng):
        x = np.asarray(mechanism(data, n, rng), dtype=np.float64)
        on = (x * scale) == np.floor(x * scale)
        with np.errstate(divide="ignore"):
            binade = np.clip(np.floor(np.log2(np.abs(x))), -8, 8)
        binade = np.where(x == 0, -8, binade).astype(np.int64)
        return (binade + 8) * 4 + (x < 0).astype(np.int64) * 2 + on.astype(np.int64)

    return viewed


# --------------------------------------------------------------------------------------
# the benchmark cases
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchmarkCase:
    """One mechanism of the benchmark.

    Attributes:
        name: identifier (also the key into the published-values table).
        family: the correct mechanism it belongs to.
        source: paper and algorithm number it is written from.
        bug: the bug in words, or ``""`` for a correct mechanism.
        mechanism: the mechanism as written in the paper (``mechanism(data, n, rng)``).
        audited: what is audited: the mechanism or a fixed view of it (see the module docstring).
        view: the view in words (``""``: none).
        claim_epsilon: the claimed ε₀ (pure DP).
        true_epsilon: the mechanism's true ε (``inf``: not DP for any ε; ``nan``: not known).
        true_epsilon_source: where ``true_epsilon`` comes from.
        neighbours: a zero-argument callable returning a fresh iterable of neighbouring pairs.
        adjacency: the adjacency those pairs walk, in words.
        peers: ``(StatDP name, DP-Sniper name)`` of the case in the peers' code, for the published table.
        outputs: the ``outputs`` argument the benchmark gives :func:`~ppaudit.blackbox.search_mechanism`
            for this case: ``"auto"`` (count the outputs), or a
            :class:`~ppaudit.blackbox.ClassifierOutputs` where the output is a sequence whose cells
            are too many to count: Lyu et al.'s Alg. 6 has query noise and no cutoff, so all ``2^m``
            answer vectors have positive probability (1024 for 10 queries, ~10 pilot draws each at
            50,000 draws per pair, too few to order them by likelihood ratio); it gets logistic
            regression on :func:`svt_answer_features`, as DP-Sniper's logistic-regression variant
            does. Alg. 5 has no query noise, so most answer vectors are impossible on one side of a
            pair and counting finds them; with a cutoff ``c = 1`` an answer is the position of the
            first ⊤ (``m + 1`` cells) and is counted.
    """

    name: str
    family: str
    source: str
    bug: str
    mechanism: Callable
    audited: Callable
    view: str
    claim_epsilon: float
    true_epsilon: float
    true_epsilon_source: str
    neighbours: Callable[[], Iterable]
    adjacency: str
    peers: tuple[str, str] = field(default=("", ""))
    outputs: object = "auto"

    @property
    def buggy(self) -> bool:
        """True iff the claim is false: a bug whose true ε exceeds the claim (or is unknown).

        ``histogram_eps`` (noise ``Lap(ε₀)``) is only buggy for ε₀ < 1: at ε₀ ≥ 1 its true ε
        ``1/ε₀`` meets the claim.
        """
        return bool(self.bug) and not (self.true_epsilon <= self.claim_epsilon)


def _pairs_query_answers(length: int):
    from .neighbours import query_answers

    return lambda: query_answers(length, 1.0)


def _pairs_count_vectors(length: int, sample: int):
    from .neighbours import count_vectors, random_pairs

    # every pair moves one count by one, so a fixed uniform sample covers the adjacency
    return lambda: random_pairs(count_vectors(length, 1), sample, rng=0)


def benchmark_cases(epsilon: float = DEFAULT_EPSILON, *, queries: int = 5, svt_queries: int = 10,
                    svt_cutoff: int = 1, svt_threshold: float = 1.0, histogram_pairs: int = 8) -> list[BenchmarkCase]:
    """The cases of the module table at claimed ε₀ = ``epsilon`` (DP-Sniper's settings by default).

    Args:
        epsilon: the claimed ε₀ of every case.
        queries: ``m`` of report-noisy-max and the histogram length (DP-Sniper: 5).
        svt_queries: number of SVT queries (DP-Sniper: 10).
        svt_cutoff: SVT's ``c`` (DP-Sniper: 1).
        svt_threshold: SVT's threshold ``T`` (DP-Sniper: 1, 0.5 for Alg. 1).
        histogram_pairs: the histogram cases search a fixed uniform sample of this many of the
            ``m·2^(m−1)`` pairs of ``count_vectors(m, 1)`` (each moves one count by one).

    Raises:
        ValueError: on ε₀ ≤ 0 or sizes < 1.
    """
    e = float(epsilon)
    if not (e > 0 and math.isfinite(e)):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    m, k, c, histogram_pairs = int(queries), int(svt_queries), int(svt_cutoff), int(histogram_pairs)
    if min(m, k, c, histogram_pairs) < 1:
        raise ValueError("queries, svt_queries, svt_cutoff and histogram_pairs must be >= 1")
    ding = "Ding et al. 2018 (StatDP)"
    lyu = "Lyu, Su & Li 2017, Fig. 1"
    scalar = "a scalar query of sensitivity 1 (answers 1 vs 0 or 2)"
    linf = f"{m} sensitivity-1 query answers, each moves by <= 1 (StatDP patterns)"
    svt_adj = f"{k} sensitivity-1 query answers, each moves by <= 1 (StatDP patterns)"
    hist_adj = f"a histogram of {m} counts, one count +-1"
    w_value = 0.5 / e     # grid of the real outputs: a quarter of the noise scale 2/ε
    cases = []

    def add(name, family, source, bug, mech, view_fn, view, true_eps, true_src, pairs, adj, peers, outputs="auto"):
        cases.append(BenchmarkCase(name, family, source, bug, mech, view_fn(mech) if view_fn else mech, view, e,
                                   float(true_eps), true_src, pairs, adj, peers, outputs))

    from .families import ClassifierOutputs

    svt_outputs = ClassifierOutputs("logistic", features=functools.partial(svt_answer_features, queries=k))

    lap = laplace_mechanism(e)
    add("laplace", "Laplace mechanism", "Dwork et al. 2006; Dwork & Roth 2014, Def. 3.3", "", lap,
        lambda f: grid_view(f, 0.5 / e), f"rounded to multiples of {0.5 / e:g}", e, "Dwork & Roth 2014, Thm 3.6",
        _pairs_query_answers(1), scalar, ("", "LaplaceMechanism"))
    add("laplace_float", "Laplace mechanism", "Mironov 2012; Bichsel et al. 2021 (textbook inverse-CDF sampler)",
        "floating-point inverse-CDF Laplace sampler (support depends on the input)", float_laplace_mechanism(e),
        float_lattice_view, "binade, sign and whether the double lies on the 2^-53 lattice", math.inf,
        "Mironov 2012 (not DP for any ε); Bichsel et al. 2021: > 0.25", _pairs_query_answers(1), scalar,
        ("", "floating_point"))
    hist_view = "each noisy count rounded down to an integer, clipped to [-1, 2] (4^m cells)"
    add("histogram", "noisy histogram", f"{ding}, Alg. 9", "", noisy_histogram(1.0 / e),
        lambda f: grid_view(f, 1.0, (-1, 2)), hist_view, e,
        "Dwork & Roth 2014, Thm 3.6 (a histogram has sensitivity 1)", _pairs_count_vectors(m, histogram_pairs), hist_adj, ("histogram", "NoisyHist1"))
    add("histogram_eps", "noisy histogram", f"{ding}, Alg. 10", "Laplace scale ε instead of 1/ε", noisy_histogram(e),
        lambda f: grid_view(f, 1.0, (-1, 2)), hist_view, 1.0 / e,
        "Lap(ε) on a sensitivity-1 count: (1/ε)-DP", _pairs_count_vectors(m, histogram_pairs), hist_adj, ("histogram_eps", "NoisyHist2"))
    add("rnm_laplace", "report-noisy-max", f"{ding}, Alg. 5", "", report_noisy_max(e, "laplace", "index"), None, "", e,
        "Dwork & Roth 2014, Claim 3.9 (scale 2/ε for answers that each move by 1)", _pairs_query_answers(m), linf,
        ("noisy_max_v1a", "ReportNoisyMax1"))
    add("rnm_exponential", "report-noisy-max", f"{ding}, Alg. 6", "", report_noisy_max(e, "exponential", "index"), None,
        "", e, "Ding et al. 2018, Alg. 6 (exponential noise of scale 2/ε)", _pairs_query_answers(m), linf,
        ("noisy_max_v2a", "ReportNoisyMax2"))
    add("rnm_laplace_value", "report-noisy-max", f"{ding}, Alg. 7", "returns the noisy maximum value, not its index",
        report_noisy_max(e, "laplace", "value"), lambda f: grid_view(f, w_value), f"rounded to multiples of {w_value:g}",
        m * e / 2, f"m·ε/2 (lower tail of the max of {m} Laplace(2/ε), each ratio e^(ε/2))", _pairs_query_answers(m),
        linf, ("noisy_max_v1b", "ReportNoisyMax3"))
    add("rnm_exponential_value", "report-noisy-max", f"{ding}, Alg. 8", "returns the noisy maximum value, not its index",
        report_noisy_max(e, "exponential", "value"), lambda f: grid_view(f, w_value),
        f"rounded to multiples of {w_value:g}", math.inf, "support of the max moves with the answers",
        _pairs_query_answers(m), linf, ("noisy_max_v2b", "ReportNoisyMax4"))
    svt_bugs = {1: "", 2: "", 3: "outputs the noisy answer instead of ⊤ (Roth 2011)",
                4: "threshold share ε/4, query noise 1/ε₂ without c (Lee & Clifton 2014)",
                5: "no noise on the queries (Stoddard et al. 2014)", 6: "no cutoff c (Chen et al. 2015)"}
    statdp_svt = {1: "SVT", 2: "", 3: "iSVT4", 4: "iSVT3", 5: "iSVT1", 6: "iSVT2"}
    for alg in range(1, 7):
        thr = 0.5 if alg == 1 else svt_threshold  # DP-Sniper's settings (exp_default.py)
        mech = sparse_vector(alg, e, c, thr)
        view_fn = (lambda f: position_value_view(f, c / e, (-3, 3))) if alg == 3 else None
        view = (f"position of the first ⊤ and its noisy answer rounded to multiples of {c / e:g} "
                f"(half its noise scale), clipped to [{-3 * c / e:g}, {4 * c / e:g})") if alg == 3 else ""
        add(f"svt{alg}", "sparse vector technique", f"{lyu}, Alg. {alg}", svt_bugs[alg], mech, view_fn, view,
            svt_true_epsilon(alg, e, c), "Lyu et al. 2017, Table 1", _pairs_query_answers(k), svt_adj,
            (statdp_svt[alg], f"SparseVectorTechnique{alg}"), svt_outputs if alg == 6 else "auto")
    return cases
