"""Querying a PATE interface: noisy-argmax answer counts, Confident-GNMax answered queries (Wang et al. 2022, §3)."""

from __future__ import annotations

import math
from typing import Union

import numpy as np

from ..._validation import as_histograms, check_positive_int, check_sigma
from ...accounting import confident_gnmax_log_pr_answered
from ...montecarlo import noisy_argmax_counts

__all__ = [
    "NoisyArgmaxInterface",
    "sample_answer_counts",
    "answer_frequencies",
    "answered_queries",
]

SeedLike = Union[np.random.Generator, np.random.SeedSequence, int]

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
