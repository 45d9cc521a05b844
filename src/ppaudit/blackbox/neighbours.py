"""Generators of neighbouring inputs, each under a named adjacency notion.

A privacy claim is only meaningful with its adjacency (DP-Auditorium's dataset generators and
the papers name it; CONVENTIONS item 25), so every generator here says which one it walks:

=====================  ===================================================================
generator              adjacency of each yielded ``(dataset, neighbour)``
=====================  ===================================================================
:func:`count_vectors`   one count of a count vector changes by ±1 (histograms, report-noisy-max)
:func:`query_answers`   every query answer moves by at most ``sensitivity`` (ℓ∞; SVT, RNM)
:func:`replace_one`     one record replaced by another value (bounded DP)
:func:`add_remove_one`  one record added or removed (unbounded DP)
:func:`label_flips`     one label changed (label DP, Ghazi et al. 2021)
=====================  ===================================================================

Each yields ``(dataset, neighbour)`` tuples lazily; :func:`random_pairs` draws a uniform
sample of a (possibly long) generator. Any iterable of pairs — a list written by hand, a
JSON file's content — works wherever one of these does
(:func:`ppaudit.blackbox.search_mechanism`, :func:`random_pairs`).

Every pair is yielded in one order only: the audits bound the divergence in both directions
(``D(μ_S ‖ μ_S')`` and ``D(μ_S' ‖ μ_S)``), so the swapped pair would be the same test.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

__all__ = ["count_vectors", "query_answers", "replace_one", "add_remove_one", "label_flips", "random_pairs"]

Pair = tuple[Any, Any]


def _int_arg(value, name: str, minimum: int) -> int:
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}") from None
    if v != value or v < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return v


def _sequence(value, name: str) -> list:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise ValueError(f"{name} must be a list, tuple or 1-D array of records, got {type(value).__name__}")
    return list(value.tolist() if isinstance(value, np.ndarray) else value)


def _like(template, items: list):
    """``items`` in the container type of ``template`` (tuple, list or numpy array)."""
    if isinstance(template, np.ndarray):
        return np.asarray(items, dtype=template.dtype)
    if isinstance(template, tuple):
        return tuple(items)
    return list(items)


def count_vectors(length: int, max_count: int = 1) -> Iterator[Pair]:
    """Count vectors ``c ∈ {0, …, max_count}^length`` and ``c + e_i`` (one count +1).

    Adjacency: **one count changes by ±1** — the histogram / report-noisy-max / counting-query
    notion (Dwork & Roth 2014, §3.3); the pair ``(c + e_i, c)`` is the −1 case, covered since the
    audit is two-sided. Every vector and every coordinate is enumerated (lazily), so a mechanism
    that treats coordinates differently is still covered: ``length · max_count · (max_count +
    1)^(length − 1)`` pairs (80 for ``length=5, max_count=1``); sample with :func:`random_pairs`
    when that is too many.

    Args:
        length: number of counts ``L ≥ 1``.
        max_count: largest count ``≥ 1``; only counts ``c_i < max_count`` are raised, so
            both vectors stay in ``{0, …, max_count}^length``.

    Yields:
        ``(c, c + e_i)`` as integer numpy arrays.

    Raises:
        ValueError: if ``length < 1`` or ``max_count < 1``.
    """
    n = _int_arg(length, "length", 1)
    m = _int_arg(max_count, "max_count", 1)

    def gen():
        for base in itertools.product(range(m + 1), repeat=n):
            c = np.asarray(base, dtype=np.int64)
            for i in range(n):
                if c[i] < m:
                    d = c.copy()
                    d[i] += 1
                    yield c, d

    return gen()


def query_answers(length: int, sensitivity: float = 1.0) -> Iterator[Pair]:
    """StatDP's query-answer patterns (Ding et al. 2018, CCS; ``statdp.generators.generate_databases``).

    Adjacency: **every query answer moves by at most ``sensitivity``** (ℓ∞ distance ≤ Δ,
    component-wise) — the notion of the sparse vector technique and report-noisy-max on
    ``length`` sensitivity-Δ queries (Lyu et al. 2017). With ``Δ = sensitivity`` and the base
    ``D = Δ·(1, …, 1)``, the neighbours are, in StatDP's order: one above ``(2Δ, Δ, …)``, one
    below ``(0, Δ, …)``, one above rest below ``(2Δ, 0, …)``, one below rest above
    ``(0, 2Δ, …)``, half half ``(2Δ, …, 0, …)``, all above ``2Δ·1``, all below ``0``, and the
    X shape ``(Δ, …, 0, …)`` vs ``(0, …, Δ, …)``. Duplicates, swapped ones included
    (``length`` 1), are dropped.

    Args:
        length: number of query answers ``≥ 1``.
        sensitivity: Δ > 0.

    Yields:
        ``(answers, neighbouring answers)`` as float numpy arrays.

    Raises:
        ValueError: if ``length < 1`` or ``sensitivity`` is not a finite number > 0.
    """
    n = _int_arg(length, "length", 1)
    try:
        s = float(sensitivity)
    except (TypeError, ValueError):
        raise ValueError(f"sensitivity must be a number > 0, got {sensitivity!r}") from None
    if not (np.isfinite(s) and s > 0):
        raise ValueError(f"sensitivity must be a finite number > 0, got {sensitivity!r}")
    h = n // 2
    one = np.ones(n)
    raw = [
        (one, np.r_[2.0, np.ones(n - 1)]),          # one above
        (one, np.r_[0.0, np.ones(n - 1)]),          # one below
        (one, np.r_[2.0, np.zeros(n - 1)]),         # one above, rest below
        (one, np.r_[0.0, 2.0 * np.ones(n - 1)]),    # one below, rest above
        (one, np.r_[2.0 * np.ones(h), np.zeros(n - h)]),  # half half
        (one, 2.0 * one),                           # all above
        (one, np.zeros(n)),                         # all below
        (np.r_[np.ones(h), np.zeros(n - h)], np.r_[np.zeros(h), np.ones(n - h)]),  # X shape
    ]

    def gen():
        seen = set()
        for a, b in raw:
            key = tuple(sorted([tuple(a), tuple(b)]))  # a swapped pair is the same test
            if key in seen or np.array_equal(a, b):
                continue
            seen.add(key)
            yield s * a, s * b

    return gen()


def replace_one(database, values) -> Iterator[Pair]:
    """``database`` and every copy with one record replaced by another of ``values``.

    Adjacency: **replace one record** (bounded DP, same size; Dwork & Roth 2014, §2.3).

    Args:
        database: the records (list, tuple or 1-D array; the neighbour has the same type).
        values: the values a record may take.

    Yields:
        ``(database, database with record i = v)`` for every position ``i`` and every
        ``v ∈ values`` with ``v ≠ database[i]``: at most ``len(database) · (len(values) − 1)``
        pairs.

    Raises:
        ValueError: if ``database`` or ``values`` is not a sequence, or ``database`` is empty.
    """
    db = _sequence(database, "database")
    vals = _sequence(values, "values")
    if not db:
        raise ValueError("database must hold at least one record, got an empty sequence")

    def gen():
        for i, old in enumerate(db):
            for v in vals:
                if v == old:
                    continue
                new = list(db)
                new[i] = v
                yield database, _like(database, new)

    return gen()


def add_remove_one(database, pool) -> Iterator[Pair]:
    """``database`` with one record removed, and with one record of ``pool`` added.

    Adjacency: **add or remove one record** (unbounded DP; Dwork et al. 2006).

    Args:
        database: the records (list, tuple or 1-D array).
        pool: records that may be added (may be empty).

    Yields:
        ``(database, database without record i)`` for every ``i``, then
        ``(database, database + [v])`` for every ``v ∈ pool``.

    Raises:
        ValueError: if ``database`` or ``pool`` is not a sequence.
    """
    db = _sequence(database, "database")
    extra = _sequence(pool, "pool")

    def gen():
        for i in range(len(db)):
            yield database, _like(database, db[:i] + db[i + 1:])
        for v in extra:
            yield database, _like(database, db + [v])

    return gen()


def label_flips(labels, num_classes: int) -> Iterator[Pair]:
    """``labels`` and every copy with one label changed to another class.

    Adjacency: **one label changes** (label DP; Chaudhuri & Hsu 2011, Ghazi et al. 2021):
    the features are public and fixed, only the label vector is protected.

    Args:
        labels: integer labels in ``{0, …, num_classes − 1}``.
        num_classes: ``≥ 2``.

    Yields:
        ``(labels, labels with label i = c)`` as integer numpy arrays, ``c ≠ labels[i]``:
        ``len(labels) · (num_classes − 1)`` pairs.

    Raises:
        ValueError: if ``num_classes < 2`` or a label is outside ``[0, num_classes)``.
    """
    k = _int_arg(num_classes, "num_classes", 2)
    y = np.asarray(labels)
    if y.ndim != 1 or y.size == 0 or y.dtype.kind not in "iu":
        raise ValueError(f"labels must be a non-empty 1-D sequence of integers, got {labels!r}")
    if y.min() < 0 or y.max() >= k:
        raise ValueError(f"labels must lie in [0, {k}) for num_classes={k}, got values {np.unique(y)}")
    y = y.astype(np.int64)

    def gen():
        for i in range(y.size):
            for c in range(k):
                if c != y[i]:
                    z = y.copy()
                    z[i] = c
                    yield y, z

    return gen()


def random_pairs(generator: Iterable[Pair], n: int, rng=None) -> list[Pair]:
    """A uniform sample of ``n`` pairs (without replacement) from any iterable of pairs.

    Reservoir sampling (Vitter 1985, Algorithm R): one pass, memory ``O(n)``; an iterable
    with at most ``n`` items is returned whole. The sample keeps the generator's order.

    Args:
        generator: an iterable of ``(dataset, neighbour)`` pairs (finite).
        n: sample size ``≥ 1``.
        rng: generator / seed (``None``: fresh entropy).

    Returns:
        A list of at most ``n`` pairs.

    Raises:
        ValueError: if ``n < 1`` or ``generator`` is not iterable.
    """
    k = _int_arg(n, "n", 1)
    gen = np.random.default_rng(rng)
    try:
        it = iter(generator)
    except TypeError:
        raise ValueError(f"generator must be an iterable of (dataset, neighbour) pairs, got {type(generator).__name__}") from None
    reservoir: list[tuple[int, Pair]] = []
    for i, item in enumerate(it):
        if i < k:
            reservoir.append((i, item))
        else:
            j = int(gen.integers(0, i + 1))
            if j < k:
                reservoir[j] = (i, item)
    reservoir.sort(key=lambda t: t[0])
    return [item for _, item in reservoir]
