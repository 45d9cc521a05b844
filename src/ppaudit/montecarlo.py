"""Seeded, chunked Monte Carlo of the Gaussian noisy argmax with bounded memory.

Two ways to get the output counts of ``T`` trials:

* ``mode="sample"`` — black-box simulation: per chunk, draw the histograms (fixed, or from
  a histogram model), add ``N(0, σ²)`` to every count, take the argmax, count. Memory is
  ``O(chunk_size · C)`` whatever ``T`` is (1e8 trials run in 8 MB chunks).
* ``mode="exact"`` — draw the counts from ``Multinomial(T, p)`` where ``p`` is the exact
  output distribution (Chadha et al. 2024, Eq. (4), :func:`class_probabilities`). The counts
  of ``T`` independent runs of a mechanism with output distribution ``p`` *are*
  ``Multinomial(T, p)``, so this is the same distribution as ``T`` black-box runs, at a cost
  independent of ``T``. It applies whenever ``p`` is computable exactly: a fixed histogram,
  or a histogram model with a finite, enumerable support (a
  :class:`DiscreteHistogramModel`). It does *not* apply to a model known only through a
  sampler (e.g. PATE's ``Mult(k, P_q)`` with C = 10 and k = 250 has ~10^16 histograms):
  there only ``mode="sample"`` reproduces the mechanism.

Every function takes a ``numpy.random.Generator`` (or a seed / ``SeedSequence``): the same
seed gives the same counts, independent of ``chunk_size`` only in exact mode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

import numpy as np
from tqdm.auto import tqdm

from ._validation import as_histograms, check_positive_int, check_sigma
from .noisy_argmax import class_probabilities

__all__ = [
    "DiscreteHistogramModel",
    "noisy_argmax_counts",
    "noisy_argmax_counts_pair",
    "model_noisy_argmax_counts",
    "DEFAULT_CHUNK_ELEMENTS",
]

#: Normals drawn per chunk (8 MiB of float64): bounds the memory of every sampler.
DEFAULT_CHUNK_ELEMENTS = 1 << 20

HistogramSampler = Callable[[np.random.Generator, int], np.ndarray]
SeedLike = Union[np.random.Generator, np.random.SeedSequence, int, None]


@dataclass(frozen=True)
class DiscreteHistogramModel:
    """A histogram model with finite support: ``H = histograms[i]`` with probability ``weights[i]``.

    Callable like any sampler (``model(rng, n)`` draws ``n`` histograms), and its exact
    output distribution is the mixture ``Σ_i w_i class_probabilities(h_i)``.
    """

    histograms: np.ndarray
    weights: np.ndarray

    def __post_init__(self):
        h, _ = as_histograms(self.histograms, "histograms")
        w = np.asarray(self.weights, dtype=np.float64)
        if w.shape != (h.shape[0],) or np.any(w < 0) or abs(w.sum() - 1.0) > 1e-9:
            raise ValueError(f"weights must be {h.shape[0]} non-negative numbers summing to 1, got {self.weights}")
        object.__setattr__(self, "histograms", h)
        object.__setattr__(self, "weights", w)

    def __call__(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return self.histograms[rng.choice(self.weights.size, size=n, p=self.weights)]

    def output_distribution(self, sigma: float) -> np.ndarray:
        return self.weights @ class_probabilities(self.histograms, sigma)


def _generator(rng: SeedLike) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def spawn_generators(rng: SeedLike, n: int) -> list[np.random.Generator]:
    """``n`` independent child generators of ``rng`` (a generator, seed or ``SeedSequence``)."""
    if isinstance(rng, np.random.Generator):
        return rng.spawn(n)
    seq = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(rng)
    return [np.random.default_rng(s) for s in seq.spawn(n)]


def _chunk_rows(chunk_size: int | None, num_classes: int) -> int:
    if chunk_size is None:
        return max(1, DEFAULT_CHUNK_ELEMENTS // num_classes)
    return check_positive_int(chunk_size, "chunk_size")


def _sample_fixed(scaled: np.ndarray, trials: int, gen: np.random.Generator, rows: int, progress: bool, desc: str) -> np.ndarray:
    """Counts of argmax(scaled + Z) over ``trials`` draws; ``scaled = hist / σ``."""
    c = scaled.size
    counts = np.zeros(c, dtype=np.int64)
    buf = np.empty((min(rows, trials), c))
    with tqdm(total=trials, disable=not progress, desc=desc, unit="trial", unit_scale=True, mininterval=2.0) as bar:
        done = 0
        while done < trials:
            n = min(rows, trials - done)
            z = buf[:n]
            gen.standard_normal(out=z)
            z += scaled
            counts += np.bincount(z.argmax(axis=1), minlength=c)
            done += n
            bar.update(n)
    return counts


def noisy_argmax_counts(
    hist,
    sigma,
    trials,
    rng: SeedLike = None,
    mode: str = "sample",
    chunk_size: int | None = None,
    progress: bool = False,
) -> np.ndarray:
    """Output counts of ``trials`` runs of the noisy argmax on one fixed histogram.

    Args:
        hist: histogram ``(C,)``.
        sigma: noise standard deviation, > 0.
        trials: number of runs ``T`` (an integer; ``1e8`` is accepted).
        rng: generator, seed or ``SeedSequence``.
        mode: ``"sample"`` (simulate) or ``"exact"`` (``Multinomial(T, p)``, see module doc).
        chunk_size: rows per chunk in sample mode (default: 2^20 / C).
        progress: show a tqdm progress bar (on stderr).

    Returns:
        ``(C,)`` int64 counts summing to ``trials``.

    Example:
        >>> c = noisy_argmax_counts([14, 12, 10, 8, 6], 2.0, 10_000, rng=1, mode="exact")
        >>> int(c.sum())
        10000
    """
    s = check_sigma(sigma)
    h, squeeze = as_histograms(hist)
    if not squeeze:
        raise ValueError(f"hist must have shape (C,), got shape {np.shape(hist)}")
    t = check_positive_int(trials, "trials")
    gen = _generator(rng)
    if mode == "exact":
        p = class_probabilities(h[0], s)
        return gen.multinomial(t, p).astype(np.int64)
    if mode != "sample":
        raise ValueError(f"mode must be 'sample' or 'exact', got {mode!r}")
    return _sample_fixed(h[0] / s, t, gen, _chunk_rows(chunk_size, h.shape[1]), progress, "noisy argmax")


def noisy_argmax_counts_pair(
    h0,
    h1,
    sigma,
    trials,
    rng: SeedLike = None,
    mode: str = "sample",
    chunk_size: int | None = None,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Output counts on a fixed neighbouring pair ``(H_S, H_S')``, independent streams.

    The two runs use two independent children of ``rng`` (:func:`spawn_generators`). Arguments as :func:`noisy_argmax_counts`.
    """
    g0, g1 = spawn_generators(rng, 2)
    c0 = noisy_argmax_counts(h0, sigma, trials, g0, mode, chunk_size, progress)
    c1 = noisy_argmax_counts(h1, sigma, trials, g1, mode, chunk_size, progress)
    if c0.size != c1.size:
        raise ValueError(f"h0 and h1 must have the same number of classes, got {c0.size} and {c1.size}")
    return c0, c1


def model_noisy_argmax_counts(
    model: HistogramSampler,
    num_classes: int,
    sigma,
    trials,
    rng: SeedLike = None,
    mode: str = "sample",
    chunk_size: int | None = None,
    progress: bool = False,
) -> np.ndarray:
    """Output counts when every trial draws a fresh histogram from a model.

    This is the audit of a training-phase model (Chadha et al. 2024, §5.1–5.2, §6): in each
    trial ``H ~ model`` then ``argmax(H + N(0, σ² I))``.

    Args:
        model: ``model(rng, n) -> (n, C)`` array of histograms (e.g. ``Mult(k, P_q)`` draws);
            a :class:`DiscreteHistogramModel` also allows ``mode="exact"``.
        num_classes: ``C``.
        sigma: noise standard deviation.
        trials: number of trials.
        rng: generator, seed or ``SeedSequence``.
        mode: ``"sample"``, or ``"exact"`` for a :class:`DiscreteHistogramModel`.
        chunk_size: histograms per chunk.
        progress: tqdm progress bar.

    Returns:
        ``(C,)`` int64 counts.
    """
    s = check_sigma(sigma)
    c = check_positive_int(num_classes, "num_classes")
    t = check_positive_int(trials, "trials")
    gen = _generator(rng)
    if mode == "exact":
        if not isinstance(model, DiscreteHistogramModel):
            raise ValueError(
                "mode='exact' needs the exact output distribution: pass a DiscreteHistogramModel "
                f"(finite support), got {type(model).__name__}; use mode='sample' for a sampler"
            )
        return gen.multinomial(t, model.output_distribution(s)).astype(np.int64)
    if mode != "sample":
        raise ValueError(f"mode must be 'sample' or 'exact', got {mode!r}")
    rows = _chunk_rows(chunk_size, c)
    counts = np.zeros(c, dtype=np.int64)
    with tqdm(total=t, disable=not progress, desc="histogram model", unit="trial", unit_scale=True, mininterval=2.0) as bar:
        done = 0
        while done < t:
            n = min(rows, t - done)
            hist = np.asarray(model(gen, n), dtype=np.float64)
            if hist.shape != (n, c):
                raise ValueError(f"the histogram model must return shape ({n}, {c}), got {hist.shape}")
            z = gen.standard_normal((n, c))
            z *= s
            z += hist
            counts += np.bincount(z.argmax(axis=1), minlength=c)
            done += n
            bar.update(n)
    return counts
