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

**Devices** (``device=``, issue 17). ``device="cpu"`` (the default) is the numpy sampler
above, unchanged byte for byte. Any other torch device string (``"cuda"``, ``"cuda:1"``,
``"torch-cpu"`` for the torch sampler on the CPU, used by the CPU tests) runs the sample
mode in torch (imported lazily: this module stays part of the lean core):

* **float32 only.** Half precision measurably biases the output law (issue 17: class 0 of a
  test histogram has probability 0.6332, bf16 sampling gives 0.6353 — bf16 keeps 8 bits of
  mantissa, so ``h/σ + Z`` is rounded to a grid coarse enough to create and break ties), so
  ``dtype`` is not a parameter. In float32 the rounding of ``h/σ + Z`` changes the argmax
  only on an event of probability of order ``2^-24`` per trial, far below the sampling error
  of any audit (1e8 trials: standard error ~1e-4 per class). Ties are broken as numpy does:
  ``torch.argmax`` returns the first maximal index (the lowest class).
* **Chunked**: at most :data:`DEFAULT_TORCH_CHUNK_ELEMENTS` float32 normals per chunk
  (``chunk_size`` rows when given); the noise buffer is reused, the counts accumulate on the
  device and are copied back once.
* **Seeded per job**: the torch ``Generator`` of a call is seeded with one 63-bit integer
  drawn from the numpy generator of the job (:func:`torch_seed`), so the job's
  ``SeedSequence`` fixes everything and the same seed gives the same bytes *on the same
  device type* (torch's CPU and CUDA generators are different streams). The counts depend
  on ``chunk_size`` (not only in law): keep it fixed to reproduce a run.
* **Scoped default**: ``device=None`` (the default of every sampler) means the device of the
  enclosing :func:`device_scope` (``"cpu"`` outside any scope). The workflow's audit scripts
  wrap the audit in ``device_scope(config device)``, so the audit code between the script
  and the sampler does not carry a device argument; an explicit ``device=`` always wins.
* **Histogram models on the device**: a sampler with a ``sample_torch(generator, n, device)``
  attribute (:class:`DiscreteHistogramModel`,
  :meth:`ppaudit.vote_models.NeighbouringVoteModel.sampler`) draws its histograms on the
  device; any other sampler is drawn by numpy (from the job's generator) and copied over.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable
from dataclasses import dataclass
from typing import Union

import numpy as np
from tqdm.auto import tqdm

from ._validation import as_histograms, check_positive_int, check_sigma
from .noisy_argmax import class_probabilities

__all__ = [
    "DEFAULT_CHUNK_ELEMENTS",
    "DEFAULT_TORCH_CHUNK_ELEMENTS",
    "DiscreteHistogramModel",
    "current_device",
    "device_scope",
    "model_noisy_argmax_counts",
    "noisy_argmax_counts",
    "noisy_argmax_counts_pair",
    "spawn_generators",
    "torch_seed",
]

#: Normals drawn per chunk (8 MiB of float64): bounds the memory of every sampler.
DEFAULT_CHUNK_ELEMENTS = 1 << 20

#: Normals drawn per chunk on a torch device (128 MiB of float32).
DEFAULT_TORCH_CHUNK_ELEMENTS = 1 << 25

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

    def sample_torch(self, generator, n: int, device):
        """``n`` histograms drawn on a torch device: ``(n, C)`` float32 (torch path of :func:`model_noisy_argmax_counts`).

        Args:
            generator: a ``torch.Generator`` on ``device``.
            n: number of histograms.
            device: the torch device.

        Returns:
            ``(n, C)`` float32 tensor on ``device``.
        """
        import torch

        key = ("torch", str(device))
        cache = self.__dict__.setdefault("_torch_cache", {})
        if key not in cache:
            cache[key] = (
                torch.as_tensor(self.weights, dtype=torch.float64, device=device),
                torch.as_tensor(self.histograms, dtype=torch.float32, device=device),
            )
        w, h = cache[key]
        idx = torch.multinomial(w, n, replacement=True, generator=generator)
        return h[idx]


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


def _chunk_rows(chunk_size: int | None, num_classes: int, elements: int = DEFAULT_CHUNK_ELEMENTS) -> int:
    if chunk_size is None:
        return max(1, elements // num_classes)
    return check_positive_int(chunk_size, "chunk_size")


_DEVICE: contextvars.ContextVar[str] = contextvars.ContextVar("ppaudit_montecarlo_device", default="cpu")


def current_device() -> str:
    """The sampling device of the enclosing :func:`device_scope` (``"cpu"`` outside any)."""
    return _DEVICE.get()


@contextlib.contextmanager
def device_scope(device: str):
    """Make ``device`` the default of the samplers of this module inside the block.

    Args:
        device: ``"cpu"`` (numpy), ``"torch-cpu"``, ``"cuda"`` or another CUDA device string.

    Raises:
        ValueError: for a device that is not one of those, or ``"cuda"`` without a CUDA device
            (checked on entry, so a misconfigured run stops before any work).

    Example:
        >>> with device_scope("cpu"):
        ...     int(noisy_argmax_counts([3, 1], 1.0, 100, rng=0).sum())
        100
    """
    _torch_device(device)
    token = _DEVICE.set(str(device))
    try:
        yield
    finally:
        _DEVICE.reset(token)


def _torch_device(device) -> object | None:
    """``None`` for the numpy path (``"cpu"``), else the ``torch.device``; ``ValueError`` if unusable."""
    if device is None:
        device = _DEVICE.get()
    if isinstance(device, str) and device == "cpu":
        return None
    if not isinstance(device, str):
        device = str(device)
    name = "cpu" if device == "torch-cpu" else device
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is a dependency of the GPU extra
        raise ValueError(f"device={device!r} needs torch, which is not installed") from exc
    try:
        dev = torch.device(name)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device must be 'cpu', 'torch-cpu' or a torch device such as 'cuda', got {device!r}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was requested but torch sees no CUDA device")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise ValueError(f"device={device!r} was requested but torch sees {torch.cuda.device_count()} CUDA device(s)")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu', 'torch-cpu' or a CUDA device, got {device!r}")
    return dev


def torch_seed(rng: SeedLike) -> int:
    """A 63-bit seed for a ``torch.Generator``, drawn from a numpy generator / seed / ``SeedSequence``.

    Deterministic in the job's seed: ``torch_seed(job_seed_sequence(...))`` is the same on
    every run, so the torch path is seeded per job exactly like the numpy path.

    Args:
        rng: a ``numpy.random.Generator`` (one draw is consumed), a seed or a ``SeedSequence``.

    Returns:
        an integer in ``[0, 2**63)``.
    """
    return int(_generator(rng).integers(0, 2**63 - 1, dtype=np.int64))


def _torch_generator(gen: np.random.Generator, dev):
    import torch

    return torch.Generator(device=dev).manual_seed(torch_seed(gen))


def _torch_count_chunks(draw_hist, scaled, c: int, trials: int, rows: int, dev, tgen, progress: bool, desc: str) -> np.ndarray:
    """Counts of ``argmax(hist/σ + Z)`` in float32 on ``dev``; ``draw_hist(n)`` gives ``(n, C)`` histograms or ``None`` for a fixed one."""
    import torch

    counts = torch.zeros(c, dtype=torch.int64, device=dev)
    buf = torch.empty((min(rows, trials), c), dtype=torch.float32, device=dev)
    with torch.no_grad(), tqdm(total=trials, disable=not progress, desc=desc, unit="trial", unit_scale=True, mininterval=2.0) as bar:
        done = 0
        while done < trials:
            n = min(rows, trials - done)
            z = buf[:n]
            if draw_hist is not None:
                hist = draw_hist(n)
                if tuple(hist.shape) != (n, c):
                    raise ValueError(f"the histogram model must return shape ({n}, {c}), got {tuple(hist.shape)}")
            z.normal_(generator=tgen)
            if draw_hist is None:
                z.add_(scaled)
            else:
                z.mul_(scaled)  # scaled = σ here: σ·Z + H, as the numpy path
                z.add_(hist)
            counts += torch.bincount(z.argmax(dim=1), minlength=c)
            done += n
            bar.update(n)
    return counts.cpu().numpy().astype(np.int64)


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
    device: str | None = None,
) -> np.ndarray:
    """Output counts of ``trials`` runs of the noisy argmax on one fixed histogram.

    Args:
        hist: histogram ``(C,)``.
        sigma: noise standard deviation, > 0.
        trials: number of runs ``T`` (an integer; ``1e8`` is accepted).
        rng: generator, seed or ``SeedSequence``.
        mode: ``"sample"`` (simulate) or ``"exact"`` (``Multinomial(T, p)``, see module doc).
        chunk_size: rows per chunk in sample mode (default: 2^20 / C with numpy, 2^25 / C
            with torch).
        progress: show a tqdm progress bar (on stderr).
        device: ``"cpu"`` (numpy) or a torch device (``"cuda"``, ``"torch-cpu"``): float32
            torch sampler, see the module doc; ``None``: the :func:`device_scope` default
            (``"cpu"``). Exact mode ignores it.

    Returns:
        ``(C,)`` int64 counts summing to ``trials``.

    Raises:
        ValueError: on a bad histogram, σ, trial count, mode or device.

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
    dev = _torch_device(device)
    if dev is not None:
        import torch

        scaled = torch.as_tensor(h[0] / s, dtype=torch.float32, device=dev)
        rows = _chunk_rows(chunk_size, h.shape[1], DEFAULT_TORCH_CHUNK_ELEMENTS)
        return _torch_count_chunks(None, scaled, h.shape[1], t, rows, dev, _torch_generator(gen, dev), progress, "noisy argmax")
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
    device: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Output counts on a fixed neighbouring pair ``(H_S, H_S')``, independent streams.

    The two runs use two independent children of ``rng`` (:func:`spawn_generators`); on a
    torch device each child seeds its own ``torch.Generator``. Arguments as
    :func:`noisy_argmax_counts`.
    """
    g0, g1 = spawn_generators(rng, 2)
    c0 = noisy_argmax_counts(h0, sigma, trials, g0, mode, chunk_size, progress, device)
    c1 = noisy_argmax_counts(h1, sigma, trials, g1, mode, chunk_size, progress, device)
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
    device: str | None = None,
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
        device: ``"cpu"`` (numpy) or a torch device: the noise in float32 on the device, and
            the histograms too when ``model`` has ``sample_torch`` (module doc); ``None``:
            the :func:`device_scope` default. Exact mode ignores it.

    Returns:
        ``(C,)`` int64 counts.

    Raises:
        ValueError: on bad σ, classes, trials, mode or device, or a model returning the wrong shape.
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
    dev = _torch_device(device)
    if dev is not None:
        import torch

        tgen = _torch_generator(gen, dev)
        if hasattr(model, "sample_torch"):
            def draw(n):
                return model.sample_torch(tgen, n, dev).to(torch.float32)
        else:
            def draw(n):
                return torch.as_tensor(np.asarray(model(gen, n), dtype=np.float32), device=dev)
        rows = _chunk_rows(chunk_size, c, DEFAULT_TORCH_CHUNK_ELEMENTS)
        return _torch_count_chunks(draw, float(s), c, t, rows, dev, tgen, progress, "histogram model")
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
