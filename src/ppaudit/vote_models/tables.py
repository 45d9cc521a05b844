"""Inverse-CDF tables of the conditional binomials of ``Mult(n, q)``: the fast, certified vote-model sampler (issue 29).

A multinomial ``Mult(n, q)`` over the ``s`` classes of positive probability is the chain of
``s − 1`` conditional binomials ``X_j ~ Bin(R_j, c_j)``, ``R_j = n − X_1 − … − X_{j−1}``,
``c_j = q_j / (q_j + … + q_s)``, and ``X_s = R_s``. The model of an audit is fixed (PATE's
``Mult(k − 1, P_q)``, CaPC's groups of identical teachers), so every conditional law
``Bin(r, c_j)``, ``r = 0 … n``, is tabulated once: its CDF ``F_{j,r}(x)``, ``x < r``, rounded to
an integer grid ``F̂ = round(2^K F)``. One draw is then one integer uniform ``U`` on
``[0, 2^K)`` and ``X = #{x : F̂_{j,r}(x) ≤ U}`` — inverse-CDF sampling with exact integer
comparisons, so the law drawn is *exactly* the table's law ``P̂(X = x) = (F̂(x) − F̂(x − 1)) / 2^K``.

All rows ``r`` of one step are searched in one ``searchsorted`` over one sorted ``int64`` array:
row ``r``'s thresholds are stored as ``r·2^K + F̂`` (with ``(n + 1)·2^K < 2^63``), the query is
``R·2^K + U``, and the entries with ``F̂ = 0`` (always counted) or ``F̂ = 2^K`` (never) are
left out of the array and added back as a per-row offset. A binary search is slow on a CPU
(≈ 100 ns of dependent loads), so a guide table answers first: ``U``'s top ``G`` bits pick
one of ``2^G`` buckets of row ``R``; a bucket that holds no threshold has one answer for all
its ``U`` (stored), the others (≈ 3 % of draws for ``k = 250``) go to the binary search — the
same ``X`` either way, so the guide changes the speed, not the law. The same arrays serve
numpy (:meth:`ppaudit.vote_models.NeighbouringVoteModel.sample`) and torch
(``sample_torch``, CPU and CUDA).

**Blocks** (CaPC). A sum of many small, different components (CaPC's random single teachers,
small groups of identical ones) has no chain over remaining counts — its conditionals depend
on which teachers voted. Components are merged instead, greedily, into blocks whose exact
joint law (convolution in longdouble over the distinct histograms, with a per-outcome bound
on its relative error) has at most :data:`BLOCK_MAX_SUPPORT` histograms; each block is one
table of the same kind (``K = 62``, outcomes likeliest first), one draw and one gather per
block: the fitted CaPC model of ``bench/bench_gpu.py`` (≈ 180 random teachers) becomes 14 draws
instead of ≈ 180.

**Certified distance from the exact law.** The CDF is computed in ``numpy.longdouble``
(x86: 64-bit mantissa, unit roundoff ``u = 2^-64``): the pmf by the ratio recurrence started
at the larger end (``(1 − c)^r`` or ``c^r``, no underflow for ``r ≤`` :data:`TABLE_MAX_COUNT`),
the lower tail by a cumulative sum, the upper tail by a reverse one (each entry of
``F`` from the smaller of the two, so its error is relative to ``min(F, 1 − F)``). With
``γ = (r·(s + 8) + 20)·u`` a bound on the relative error of every computed pmf and partial
sum (the ratio recurrence: 3 roundings per step; the power ``(1 − c)^r``: ``r + 2``; ``c_j``
from ``s + 2`` longdouble sums; a cumulative sum: ``r``), each entry's distance to the exact
``F`` is at most ``|F̂ 2^-K − F̃| + 1.01·γ·min(F̃, 1 − F̃) + 2u``, and the total variation
between ``Bin(r, c_j)`` and its table is at most the sum of those over ``x``
(``½ Σ_x |Δp_x| ≤ Σ_x |ΔF_x|``). The chain's distance is at most the sum over steps of the
worst row (a coupling, step by step), :attr:`ChainTable.tv_bound`: about ``1e-14`` per step
for ``k = 250`` on x86 (dominated by the ``2^-K`` grid), so ``1e-13`` per PATE histogram,
``2·T·τ ≈ 2e-5`` of confidence at ``T = 1e8`` — charged like the exact-count mode's
pruning (``effective_confidence = confidence − 2·T·τ``,
:func:`ppaudit.audit.per_query.audit_query`). Where ``longdouble`` is plain double
(``u = 2^-53``) the same formula gives a larger, still certified, bound.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from .._unique_rows import unique_rows

__all__ = [
    "BLOCK_MAX_SUPPORT",
    "GUIDE_BITS",
    "TABLE_MAX_COUNT",
    "BlockTable",
    "ChainTable",
    "PackedBlocks",
    "block_tables",
    "chain_table",
    "pack_blocks",
    "per_draw_samplers",
]

#: Groups of more voters than this keep the per-draw samplers (``Generator.multinomial``,
#: ``torch.binomial``): the tables hold ``n(n + 1)/2`` int64 per step (4 MiB at n = 1024).
TABLE_MAX_COUNT = 1024

#: ``G``: each row's uniforms are cut into ``2^G`` buckets for the guide table.
GUIDE_BITS = 10

_U = float(np.finfo(np.longdouble).epsneg)  # unit roundoff of longdouble (2^-64 on x86)


@dataclass(frozen=True)
class ChainTable:
    """The tabulated chain of conditional binomials of ``Mult(n, q)`` (module doc).

    Attributes:
        n: the number of voters.
        columns: ``(s,)`` the classes of positive probability, in chain order.
        bits: ``K``: thresholds are integers in ``[0, 2^K]``, uniforms in ``[0, 2^K)``.
        keys: ``s − 1`` sorted int64 arrays, ``r·2^K + F̂_{j,r}(x)`` over the stored entries.
        base: ``s − 1`` int64 arrays ``(n + 1,)``: ``X = searchsorted(keys, R·2^K + U, right) + base[R]``.
        guide: ``s − 1`` int16 arrays ``((n + 1)·2^G,)``: entry ``R·2^G + (U >> (K − G))`` is ``X``
            when the bucket of ``U`` holds no threshold of row ``R`` (then every ``U`` of the
            bucket gives the same ``X``), else ``−1`` (then the binary search decides).
        tv_bound: certified total variation between the chain drawn and ``Mult(n, q)``.
    """

    n: int
    columns: np.ndarray
    bits: int
    keys: tuple
    base: tuple
    guide: tuple
    tv_bound: float

    def invert(self, j: int, rem: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Step ``j``'s inverse CDF (numpy): ``X = #{x : F̂_{j,R}(x) ≤ U}`` for int64 arrays ``R``, ``U``.

        The guide table answers when ``U``'s bucket holds no threshold of row ``R``; the
        binary search over the step's keys answers the rest (same result by construction).
        """
        k, g = self.bits, GUIDE_BITS
        x = self.guide[j][(rem << g) + (u >> (k - g))].astype(np.int64)
        miss = np.flatnonzero(x < 0)
        if miss.size:
            rm = rem[miss]
            x[miss] = np.searchsorted(self.keys[j], (rm << k) + u[miss], side="right") + self.base[j][rm]
        return x

    def sample(self, rng: np.random.Generator, out: np.ndarray) -> None:
        """Add ``len(out)`` draws of ``Mult(n, q)`` to the int64 histograms ``out`` (numpy)."""
        m = out.shape[0]
        rem = np.full(m, self.n, dtype=np.int64)
        for j, col in enumerate(self.columns[:-1]):
            x = self.invert(j, rem, rng.integers(0, 1 << self.bits, size=m, dtype=np.int64))
            out[:, col] += x
            rem -= x
        out[:, self.columns[-1]] += rem

    def torch_arrays(self, device):
        """``(keys, base, guide)`` as lists of torch tensors on ``device`` (cached per device)."""
        import torch

        cache = self.__dict__.setdefault("_torch", {})
        key = str(device)
        if key not in cache:
            cache[key] = tuple(
                [torch.as_tensor(np.array(a), device=device) for a in arrays]
                for arrays in (self.keys, self.base, self.guide)
            )
        return cache[key]

    def invert_torch(self, j: int, rem, u):
        """:meth:`invert` on torch int64 tensors ``rem``, ``u`` (same device as the tables asked for)."""
        import torch

        k, g = self.bits, GUIDE_BITS
        keys, base, guide = self.torch_arrays(u.device)
        idx = torch.bitwise_right_shift(u, k - g).add_(rem, alpha=1 << g)
        x = guide[j].index_select(0, idx).to(torch.int64)
        miss = torch.nonzero(x < 0).squeeze(1)
        if miss.numel():
            rm = rem.index_select(0, miss)
            v = u.index_select(0, miss).add_(rm, alpha=1 << k)
            x.index_copy_(0, miss, torch.searchsorted(keys[j], v, right=True).add_(base[j].index_select(0, rm)))
        return x

    def sample_torch(self, generator, out) -> None:
        """Add draws of ``Mult(n, q)`` to the float32 histograms ``out`` ``(m, C)`` on a torch device."""
        import torch

        m, dev = out.shape[0], out.device
        steps = self.columns.size - 1
        u = torch.empty((steps, m), dtype=torch.int64, device=dev)
        u.random_(0, 1 << self.bits, generator=generator)
        xs = torch.empty((m, steps + 1), dtype=torch.int64, device=dev)
        rem = torch.full((m,), self.n, dtype=torch.int64, device=dev)
        for j in range(steps):
            x = self.invert_torch(j, rem, u[j])
            xs[:, j] = x
            rem.sub_(x)
        xs[:, steps] = rem
        if self.columns.size == out.shape[1]:  # every class in the support, in order
            out.add_(xs)
        else:
            out.index_add_(1, torch.as_tensor(np.array(self.columns), device=dev), xs.to(out.dtype))


def _binomial_rows(c: np.longdouble, one_minus_c: np.longdouble, n: int) -> np.ndarray:
    """``(n + 1, n + 1)`` longdouble: row ``r`` is the pmf of ``Bin(r, c)`` (zeros beyond ``x = r``)."""
    flip = c > 0.5
    a, b = (one_minus_c, c) if flip else (c, one_minus_c)  # a ≤ 1/2: start at x = 0 with b^r ≥ 2^-r
    r = np.arange(n + 1, dtype=np.longdouble)
    pmf = np.zeros((n + 1, n + 1), dtype=np.longdouble)
    pmf[:, 0] = np.power(b, r)
    rho = a / b
    for x in range(1, n + 1):
        pmf[:, x] = pmf[:, x - 1] * np.maximum(r - (x - 1), 0) / x * rho
    if flip:  # pmf_c(r, x) = pmf_{1−c}(r, r − x)
        rows = np.arange(n + 1)[:, None]
        cols = rows - np.arange(n + 1)[None, :]
        pmf = np.where(cols >= 0, np.take_along_axis(pmf, np.maximum(cols, 0), axis=1), 0)
    return pmf


#: Chain tables built in this process (:func:`chain_table`), by ``(q, n)``: the models of one
#: audit job share their groups (PATE's ``Mult(k − 1, P_q)`` is the same for every candidate
#: asking query ``q``, its control, the shadow model of the transcript audit and the joint
#: Pois-NatQ audit). Least recently used first out, within :data:`_CHAIN_CACHE_BYTES` (a
#: ``k = 250``, ten-class table is ≈ 5 MB: the default's 40 queries fit); ``_CHAIN_CACHE_SIZE = 0``
#: turns the cache off.
_CHAIN_CACHE: dict = {}
_CHAIN_CACHE_SIZE = 256
_CHAIN_CACHE_BYTES = 256 * 2**20


def _table_bytes(table: "ChainTable") -> int:
    return int(sum(a.nbytes for a in table.keys + table.base + table.guide))


def chain_table(q, n: int) -> ChainTable:
    """Tabulate ``Mult(n, q)`` as its chain of conditional binomials (module doc).

    A table is a pure function of ``(q, n)``: the same arguments return the same (immutable)
    table, built once per process (:data:`_CHAIN_CACHE`).

    Args:
        q: ``(C,)`` non-negative probabilities (normalised here; the classes of positive
            probability form the chain).
        n: number of voters, ``1 ≤ n ≤`` :data:`TABLE_MAX_COUNT`.

    Returns:
        the :class:`ChainTable`.

    Raises:
        ValueError: for ``n`` out of range or ``q`` without positive mass.
    """
    n = int(n)
    if not 1 <= n <= TABLE_MAX_COUNT:
        raise ValueError(f"n must be in [1, {TABLE_MAX_COUNT}], got {n}")
    q = np.asarray(q, dtype=np.float64)
    if not _CHAIN_CACHE_SIZE:  # the cache off (bench/bench_audit_algorithms.py)
        return _chain_table(q, n)
    key = (q.shape, np.ascontiguousarray(q).tobytes(), n)
    table = _CHAIN_CACHE.pop(key, None)
    if table is None:
        table = _chain_table(q, n)
    _CHAIN_CACHE[key] = table  # most recently used last
    while len(_CHAIN_CACHE) > 1 and (len(_CHAIN_CACHE) > _CHAIN_CACHE_SIZE
                                     or sum(_table_bytes(t) for t in _CHAIN_CACHE.values()) > _CHAIN_CACHE_BYTES):
        del _CHAIN_CACHE[next(iter(_CHAIN_CACHE))]
    return table


def _chain_table(q: np.ndarray, n: int) -> ChainTable:
    """:func:`chain_table` without the cache."""
    cols = np.flatnonzero(q > 0)
    if cols.size == 0:
        raise ValueError(f"q must have positive mass, got {q}")
    s = cols.size
    bits = min(56, 63 - (n + 1).bit_length())
    scale = np.longdouble(2.0) ** bits
    ql = q[cols].astype(np.longdouble)
    tail = np.cumsum(ql[::-1])[::-1]  # tail[j] = q_j + … + q_s (longdouble)
    keys, bases, guides, tv = [], [], [], 0.0
    g = GUIDE_BITS
    bucket = np.arange(1 << g, dtype=np.int64) << (bits - g)  # first U of every bucket
    r_col = np.arange(n + 1)[:, None]
    x_row = np.arange(n + 1)[None, :]
    inside = x_row < r_col  # entries x = 0 … r − 1 of row r
    for j in range(s - 1):
        c = ql[j] / tail[j]
        pmf = _binomial_rows(c, tail[j + 1] / tail[j], n)
        lower = np.cumsum(pmf, axis=1)
        upper = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]  # Σ_{y ≥ x}
        upper = np.concatenate([upper[:, 1:], np.zeros((n + 1, 1), dtype=np.longdouble)], axis=1)  # Σ_{y > x}
        use_lower = lower <= upper
        f = np.where(use_lower, lower, 1 - upper)
        f = np.clip(f, 0, 1)
        fhat = np.rint(f * scale)
        gamma = (np.arange(n + 1, dtype=np.float64)[:, None] * (s + 8) + 20) * _U
        err = np.abs(fhat / scale - f).astype(np.float64) + 1.01 * gamma * np.minimum(lower, upper).astype(np.float64) + 2 * _U
        tv += float(np.max(np.where(inside, err, 0.0).sum(axis=1)))
        fi = fhat.astype(np.int64)
        lo = np.where(inside, fi == 0, False).sum(axis=1)
        stored = inside & (fi > 0) & (fi < (1 << bits))
        key = np.where(stored, fi + (r_col.astype(np.int64) << bits), -1)[stored]  # row-major: sorted
        start = np.concatenate([[0], np.cumsum(stored.sum(axis=1))[:-1]])
        key = np.ascontiguousarray(key, dtype=np.int64)
        base = (lo - start).astype(np.int64)
        first = (r_col.astype(np.int64) << bits) + bucket[None, :]  # (n + 1, 2^G): first and last U of each bucket
        x_first = np.searchsorted(key, first, side="right") + base[:, None]
        x_last = np.searchsorted(key, first + ((1 << (bits - g)) - 1), side="right") + base[:, None]
        guides.append(np.where(x_first == x_last, x_first, -1).astype(np.int16).ravel())
        keys.append(key)
        bases.append(base)
    for a in keys + bases + guides:
        a.setflags(write=False)
    cols.setflags(write=False)
    return ChainTable(n, cols, bits, tuple(keys), tuple(bases), tuple(guides), tv)


# ----------------------------------------------------------------------------- finite blocks

#: Largest support (distinct histograms) of one block of small components (CaPC's single
#: teachers and small groups of identical ones); 0 turns the blocks off.
BLOCK_MAX_SUPPORT = 4096

#: Largest ``G`` of the blocks' guide tables (a block of ``L`` outcomes gets
#: ``G = min(BLOCK_GUIDE_BITS, bit_length(L) + 4)``: at most ``L / 2^G`` of its draws miss).
BLOCK_GUIDE_BITS = 16

_BLOCK_BITS = 62


@dataclass(frozen=True)
class BlockTable:
    """The exact joint law of a block of independent small components, as one inverse-CDF table.

    Outcome ``i`` (the block's histogram ``outcomes[i]``) has probability
    ``(F̂(i) − F̂(i − 1)) / 2^K`` (``K = 62``), drawn by one integer uniform as the chain steps are
    (guide table, then binary search); the summed histograms of the block are added in one gather.

    Attributes:
        outcomes: ``(L, C)`` int64 histograms of the block.
        keys: sorted int64 thresholds ``F̂(i)`` strictly inside ``(0, 2^K)``.
        lo: outcomes with ``F̂ = 0`` before the first key (``X = searchsorted(keys, U, right) + lo``).
        guide: int32 ``(2^G,)``: the outcome of every bucket of ``U`` without a threshold, else ``−1``.
        gbits: ``G``.
        tv_bound: certified total variation between the table and the block's exact law.
        size: number of components (voters or groups) in the block.
    """

    outcomes: np.ndarray
    keys: np.ndarray
    lo: int
    guide: np.ndarray
    gbits: int
    tv_bound: float
    size: int

    def invert(self, u: np.ndarray) -> np.ndarray:
        x = self.guide[u >> (_BLOCK_BITS - self.gbits)].astype(np.int64)
        miss = np.flatnonzero(x < 0)
        if miss.size:
            x[miss] = np.searchsorted(self.keys, u[miss], side="right") + self.lo
        return x

    def sample(self, rng: np.random.Generator, out: np.ndarray) -> None:
        """Add ``len(out)`` draws of the block to the int64 histograms ``out`` (numpy)."""
        out += self.outcomes[self.invert(rng.integers(0, 1 << _BLOCK_BITS, size=out.shape[0], dtype=np.int64))]

    def torch_arrays(self, device):
        import torch

        cache = self.__dict__.setdefault("_torch", {})
        key = str(device)
        if key not in cache:
            cache[key] = (torch.as_tensor(np.array(self.keys), device=device), torch.as_tensor(np.array(self.guide), device=device),
                          torch.as_tensor(np.array(self.outcomes), dtype=torch.float32, device=device))
        return cache[key]

    def invert_torch(self, u):
        import torch

        keys, guide, _ = self.torch_arrays(u.device)
        x = guide.index_select(0, torch.bitwise_right_shift(u, _BLOCK_BITS - self.gbits))  # int32
        miss = torch.nonzero(x < 0).squeeze(1)
        if miss.numel():
            x.index_copy_(0, miss, torch.searchsorted(keys, u.index_select(0, miss), right=True, out_int32=True).add_(self.lo))
        return x

    def sample_torch(self, generator, out) -> None:
        """Add draws of the block to the float32 histograms ``out`` ``(m, C)`` on a torch device."""
        import torch

        u = torch.empty(out.shape[0], dtype=torch.int64, device=out.device)
        u.random_(0, 1 << _BLOCK_BITS, generator=generator)
        out.add_(self.torch_arrays(out.device)[2].index_select(0, self.invert_torch(u)))


def _component_law(count: int, p: np.ndarray):
    """``Mult(count, p)`` as (outcomes ``(L, C)`` int64, probabilities longdouble, relative error bounds)."""
    c = p.size
    support = np.flatnonzero(p > 0)
    q = p[support].astype(np.longdouble)
    q = q / q.sum()
    s = support.size
    comps = [xs for xs in _compositions(count, s)]
    outcomes = np.zeros((len(comps), c), dtype=np.int64)
    outcomes[:, support] = np.array(comps, dtype=np.int64).reshape(len(comps), s)
    from math import factorial

    coef = np.array([factorial(count) // np.prod([factorial(int(v)) for v in xs], dtype=object) for xs in comps], dtype=object)
    probs = np.array([np.longdouble(int(k)) for k in coef], dtype=np.longdouble)
    probs *= np.prod(q[None, :] ** outcomes[:, support].astype(np.longdouble), axis=1)
    err = np.full(len(comps), (2 * count + 2 * s + 6) * _U)
    return outcomes, probs, err


def _compositions(n: int, s: int):
    if s == 1:
        yield (n,)
        return
    for x in range(n + 1):
        for rest in _compositions(n - x, s - 1):
            yield (x,) + rest


def num_outcomes(count: int, p: np.ndarray) -> int:
    """Distinct histograms of ``Mult(count, p)``: ``C(count + s − 1, s − 1)``."""
    from math import comb

    s = int((np.asarray(p) > 0).sum())
    return comb(int(count) + s - 1, s - 1)


def _merge(a, b):
    oa, pa, ea = a
    ob, pb, eb = b
    o = (oa[:, None, :] + ob[None, :, :]).reshape(-1, oa.shape[1])
    p = (pa[:, None] * pb[None, :]).ravel()
    e = (ea[:, None] + eb[None, :]).ravel() + _U
    uniq, inv = unique_rows(o)  # histograms as mixed-radix integers: a 1-D unique
    ps = np.zeros(uniq.shape[0], dtype=np.longdouble)
    np.add.at(ps, inv, p)
    es = np.zeros(uniq.shape[0])
    np.maximum.at(es, inv, e)
    es += np.bincount(inv, minlength=uniq.shape[0]) * _U  # the sum of the duplicates
    return uniq, ps, es


def block_table(law, size: int) -> BlockTable:
    """The :class:`BlockTable` of a finite law ``(outcomes, probabilities, relative error bounds)``."""
    outcomes, p, err = law
    order = np.argsort(-p.astype(np.float64), kind="stable")  # likeliest first: the CDF nears 1 early
    outcomes, p, err = outcomes[order], p[order], err[order]
    p = p / p.sum()
    err = err + (p.size + 2) * _U  # the normalisation
    scale = np.longdouble(2.0) ** _BLOCK_BITS
    lower = np.cumsum(p)
    upper = np.concatenate([np.cumsum(p[::-1])[::-1][1:], [np.longdouble(0)]])  # P(X > i)
    f = np.clip(np.where(lower <= upper, lower, 1 - upper), 0, 1)
    idx = np.arange(p.size)
    low_err = np.cumsum((err * p).astype(np.float64)) + idx * _U * lower.astype(np.float64)
    up_err = np.concatenate([np.cumsum((err * p).astype(np.float64)[::-1])[::-1][1:], [0.0]]) + (p.size - idx) * _U * upper.astype(np.float64)
    fhat = np.rint(f * scale)
    fhat[-1] = scale
    dist = np.abs(fhat / scale - f).astype(np.float64) + np.where(lower <= upper, low_err, up_err) + 2 * _U
    tv = float(dist[:-1].sum())
    fi = fhat.astype(np.int64)
    fi[-1] = 1 << _BLOCK_BITS
    lo = int((fi[:-1] == 0).sum())
    keys = fi[:-1][(fi[:-1] > 0) & (fi[:-1] < (1 << _BLOCK_BITS))]
    g = min(BLOCK_GUIDE_BITS, int(p.size).bit_length() + 4)
    first = np.arange(1 << g, dtype=np.int64) << (_BLOCK_BITS - g)
    x_first = np.searchsorted(keys, first, side="right") + lo
    x_last = np.searchsorted(keys, first + ((1 << (_BLOCK_BITS - g)) - 1), side="right") + lo
    guide = np.where(x_first == x_last, x_first, -1).astype(np.int32)
    for a in (outcomes, keys, guide):
        a.setflags(write=False)
    return BlockTable(outcomes, keys, lo, guide, g, tv, size)


def block_tables(components, max_support: int | None = None) -> list[BlockTable]:
    """Blocks of the small components ``[(count, p), …]`` (``count`` voters of law ``p``), greedily in
    the order given, each block's support at most ``max_support`` (default :data:`BLOCK_MAX_SUPPORT`)."""
    cap = BLOCK_MAX_SUPPORT if max_support is None else int(max_support)
    blocks, cur, size = [], None, 0
    for count, p in components:
        law = _component_law(int(count), np.asarray(p, dtype=np.float64))
        if cur is not None and cur[0].shape[0] * law[0].shape[0] <= 8 * cap:
            merged = _merge(cur, law)
            if merged[0].shape[0] <= cap:
                cur, size = merged, size + 1
                continue
        if cur is not None:
            blocks.append(block_table(cur, size))
        cur, size = law, 1
    if cur is not None:
        blocks.append(block_table(cur, size))
    return blocks


@contextlib.contextmanager
def per_draw_samplers():
    """Inside the block, vote models sample as before issue 29 (``Generator.multinomial`` /
    ``torch.binomial`` per group, one inverse CDF per single voter): the baseline of
    ``bench/bench_gpu.py`` and of the tests of the fallback."""
    global TABLE_MAX_COUNT, BLOCK_MAX_SUPPORT
    old = TABLE_MAX_COUNT, BLOCK_MAX_SUPPORT
    TABLE_MAX_COUNT, BLOCK_MAX_SUPPORT = 0, 0
    try:
        yield
    finally:
        TABLE_MAX_COUNT, BLOCK_MAX_SUPPORT = old


@dataclass(frozen=True)
class PackedBlocks:
    """All blocks of a model, drawn together: their histograms packed into int64 words.

    Every class's count gets ``bits`` bits (enough for all the blocks' voters together), so a
    block's histogram is ``W`` packed int64 words and summing the blocks is ``W`` integer adds
    per block instead of ``C`` (no carry can cross a field); the sum is unpacked once.

    Attributes:
        blocks: the :class:`BlockTable` s.
        bits: bits per class.
        words: ``(C,)`` the word of each class; shifts: ``(C,)`` its offset in the word.
        packed: per block, ``(L, W)`` int64 packed outcomes.
    """

    blocks: tuple
    bits: int
    words: np.ndarray
    shifts: np.ndarray
    packed: tuple

    @property
    def tv_bound(self) -> float:
        return float(sum(b.tv_bound for b in self.blocks))

    def sample(self, rng: np.random.Generator, out: np.ndarray) -> None:
        """Add ``len(out)`` draws of every block to the int64 histograms ``out`` (numpy)."""
        m = out.shape[0]
        acc = np.zeros((m, self.packed[0].shape[1]), dtype=np.int64)
        u = rng.integers(0, 1 << _BLOCK_BITS, size=(len(self.blocks), m), dtype=np.int64)
        for b, pk, ub in zip(self.blocks, self.packed, u):
            acc += pk[b.invert(ub)]
        out += (acc[:, self.words] >> self.shifts) & ((1 << self.bits) - 1)

    def sample_torch(self, generator, out) -> None:
        """Add draws of every block to the float32 histograms ``out`` ``(m, C)`` on a torch device."""
        import torch

        m, dev = out.shape[0], out.device
        cache = self.__dict__.setdefault("_torch", {})
        if str(dev) not in cache:
            cache[str(dev)] = ([torch.as_tensor(np.array(p), device=dev) for p in self.packed],
                               torch.as_tensor(self.words, device=dev), torch.as_tensor(self.shifts, device=dev))
        packed, words, shifts = cache[str(dev)]
        acc = torch.zeros((m, packed[0].shape[1]), dtype=torch.int64, device=dev)
        u = torch.empty((len(self.blocks), m), dtype=torch.int64, device=dev)
        u.random_(0, 1 << _BLOCK_BITS, generator=generator)
        for j, (b, pk) in enumerate(zip(self.blocks, packed)):
            acc.add_(pk.index_select(0, b.invert_torch(u[j])))
        counts = torch.bitwise_and(torch.bitwise_right_shift(acc.index_select(1, words), shifts), (1 << self.bits) - 1)
        out.add_(counts)


def pack_blocks(blocks, num_classes: int) -> PackedBlocks | None:
    """:class:`PackedBlocks` of ``blocks`` (``None`` for none)."""
    if not blocks:
        return None
    total = sum(int(b.outcomes.sum(axis=1).max()) for b in blocks)  # ≥ any class's sum over the blocks
    bits = max(1, total.bit_length())
    per_word = max(1, 63 // bits)
    cls = np.arange(num_classes)
    words, shifts = cls // per_word, (cls % per_word) * bits
    nw = int(words.max()) + 1
    packed = []
    for b in blocks:
        pk = np.zeros((b.outcomes.shape[0], nw), dtype=np.int64)
        for j in range(num_classes):
            pk[:, words[j]] += b.outcomes[:, j].astype(np.int64) << shifts[j]
        pk.setflags(write=False)
        packed.append(pk)
    for a in (words, shifts):
        a.setflags(write=False)
    return PackedBlocks(tuple(blocks), bits, words.astype(np.int64), shifts.astype(np.int64), tuple(packed))
