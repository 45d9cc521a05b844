"""Neighbouring vote models ``H_S = B + e_V``, ``H_S' = B + e_V'`` of PATE and CaPC, with vectorised samplers."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import check_positive_int
from . import tables as _tables

__all__ = [
    "NeighbouringVoteModel",
    "pate_vote_model",
    "capc_vote_model",
    "QUADRATURE_ABS_ERROR",
]

#: Per-class absolute error bound of :func:`ppaudit.noisy_argmax.class_probabilities` for
#: C ≤ 17 classes (proven: ``quadrature_error_bound(C).per_class``, which the certified boxes
#: and the exact-count confidence use for the actual C).
QUADRATURE_ABS_ERROR = 1e-12

_CHUNK_ELEMENTS = 1 << 22

#: Rows per sub-chunk of the table-driven group sampler on the CPU: numpy's per-step int64
#: vectors stay in the cache; torch-cpu's sub-chunks are larger (each torch op has a fixed
#: cost, and a parallel one waits for every thread).
_TABLE_ROWS = 1 << 15
_TABLE_ROWS_TORCH_CPU = 1 << 17



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
    def _plan(self):
        """How the random voters are drawn (cached per model, shared by ``S`` and ``S'``):
        ``(chains, in_block, blocks)`` — per group of ``n_g > 1`` voters its
        :class:`~ppaudit.vote_models.tables.ChainTable` (``None``: the group is in a block, or
        above :data:`~ppaudit.vote_models.tables.TABLE_MAX_COUNT` voters and drawn per draw),
        per group whether it is in a block, and the
        :class:`~ppaudit.vote_models.tables.PackedBlocks` (or ``None``) of the
        :class:`~ppaudit.vote_models.tables.BlockTable` s of the small components (random
        single voters except the differing one, and groups of at most
        :data:`~ppaudit.vote_models.tables.BLOCK_MAX_SUPPORT` histograms), each block's joint
        law in one table. The differing voter stays a single draw, so both sides share the plan."""
        key = ("plan", _tables.TABLE_MAX_COUNT, _tables.BLOCK_MAX_SUPPORT)
        if key not in self._cache:
            singles, multi_counts, multi_probs = self._split_groups()
            cap = _tables.BLOCK_MAX_SUPPORT
            small = [cap > 0 and (p > 0).sum() > 1 and _tables.num_outcomes(cnt, p) <= cap for cnt, p in zip(multi_counts, multi_probs)]
            chains = [
                _tables.chain_table(p, int(cnt)) if not sm and (p > 0).sum() > 1 and cnt <= _tables.TABLE_MAX_COUNT else None
                for cnt, p, sm in zip(multi_counts, multi_probs, small)
            ]
            comps = [(int(cnt), p) for cnt, p, sm in zip(multi_counts, multi_probs, small) if sm]
            if cap > 0:
                comps += [(1, p) for p in singles if p.max() < 1.0]
            comps.sort(key=lambda cp: tuple((cp[1] > 0).astype(int)[::-1]))  # similar supports side by side
            blocks = _tables.pack_blocks(_tables.block_tables(comps, cap) if comps else [], self.num_classes)
            self._cache[key] = (chains, small, blocks)
        return self._cache[key]

    def _chain_tables(self) -> list:
        """The chain tables of :meth:`_plan` (``None`` for a group drawn otherwise)."""
        return self._plan()[0]

    def sampler_total_variation(self, which: str = "S") -> float:
        """Certified total variation between one histogram drawn by :meth:`sample` /
        :meth:`sample_torch` and the exact law of ``H_S`` (or ``H_S'``), per trial.

        The chains and blocks drawn from inverse-CDF tables contribute their ``tv_bound``
        (:class:`~ppaudit.vote_models.tables.ChainTable`,
        :class:`~ppaudit.vote_models.tables.BlockTable`); the single voters drawn one by one, by
        inverse CDF of a float64 uniform on a float64 CDF, ``(s − 1)(s + 2)·2^-53`` each
        (``s`` classes: every CDF entry within ``(s + 1)·2^-53`` of the exact one after the
        cumulative sum, and the uniform on the ``2^-53`` grid). A group above
        :data:`~ppaudit.vote_models.tables.TABLE_MAX_COUNT` voters is drawn by numpy's or
        torch's binomial sampler and counted as exact. ``T`` trials per side are within
        ``T·τ`` of the exact law of their counts: ``confidence − T·(τ_S + τ_S')`` is the
        confidence left (:func:`ppaudit.audit.per_query.audit_query`).
        """
        self._last(which)
        chains, _, blocks = self._plan()
        tv = sum(t.tv_bound for t in chains if t is not None) + (blocks.tv_bound if blocks is not None else 0.0)
        cats = self._single_draws(which)[1]
        s = (cats > 0).sum(axis=1).astype(np.float64)
        return float(tv + np.sum((s - 1) * (s + 2)) * 2.0**-53)

    def _single_draws(self, which: str):
        """``(fixed, cats)``: the constant votes plus the deterministic single voters, and the
        ``(m, C)`` laws of the single voters drawn one by one (those not in a block of :meth:`_plan`)."""
        singles, _, _ = self._split_groups()
        in_blocks = self._plan()[2] is not None
        cats = np.concatenate([singles, self._last(which)[None]], axis=0)
        det = cats.max(axis=1) == 1.0
        fixed = self.constant + (cats[det] == 1.0).sum(axis=0).astype(np.int64)
        keep = ~det
        if in_blocks:
            keep[: singles.shape[0]] = False  # the random single voters are in the blocks
        return fixed, cats[keep]

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

        How (issue 29, :meth:`_plan`, :mod:`ppaudit.vote_models.tables`): a group of ``n_g > 1``
        identical voters with many histograms (PATE's ``Mult(k−1, P_q)``) by the chain of its
        conditional binomials, each drawn from an exact inverse-CDF table of integer thresholds
        (``Generator.multinomial`` above
        :data:`~ppaudit.vote_models.tables.TABLE_MAX_COUNT` voters); the small components
        (CaPC's random single teachers, groups of at most
        :data:`~ppaudit.vote_models.tables.BLOCK_MAX_SUPPORT` histograms) merged into blocks,
        each block's exact joint law one table; the differing voter by inverse CDF of a float64
        uniform (counted per row with one ``bincount``). Within
        :meth:`sampler_total_variation` of the exact law per histogram. Memory is bounded by
        chunking over rows.
        """
        n = check_positive_int(n, "n", minimum=0)
        c = self.num_classes
        last = self._last(which)
        _, multi_counts, multi_probs = self._split_groups()
        chains, in_block, blocks = self._plan()
        fixed, cats = self._single_draws(which)
        out = np.empty((n, c), dtype=np.int64)
        out[:] = fixed
        for cnt, p, table, blocked in zip(multi_counts, multi_probs, chains, in_block):
            support = np.flatnonzero(p > 0)
            if blocked:
                continue
            if support.size == 1:
                out[:, support[0]] += cnt
            elif table is not None:
                for a in range(0, n, _TABLE_ROWS):
                    table.sample(rng, out[a : a + _TABLE_ROWS])
            else:
                out[:, support] += rng.multinomial(int(cnt), p[support] / p[support].sum(), size=n)
        if blocks is not None:
            for a in range(0, n, _TABLE_ROWS):
                blocks.sample(rng, out[a : a + _TABLE_ROWS])
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

    def sample_torch(self, generator, n: int, which: str = "S", device=None):
        """Draw ``n`` histograms of ``H_S`` / ``H_S'`` on a torch device: ``(n, C)`` float32.

        The torch twin of :meth:`sample` (same law, another random stream; issue 17): the same
        tables (:meth:`_plan`, :mod:`ppaudit.vote_models.tables`) with torch's generator
        (``torch.binomial`` along the chain of conditional binomials
        ``X_j ~ Bin(n_g − X_1 − … − X_{j−1}, P_gj / (1 − P_g1 − … − P_g,j−1))`` above
        :data:`~ppaudit.vote_models.tables.TABLE_MAX_COUNT` voters); the single voters drawn one
        by one by inverse CDF of float64 uniforms on the same CDF as :meth:`sample`
        (``searchsorted``), counted with ``scatter_add``. Memory is bounded by sub-chunks of
        ``2^22 / m`` rows (of ``2^17`` rows for the tables on the CPU).

        Args:
            generator: a ``torch.Generator`` on ``device``.
            n: number of histograms.
            which: ``"S"`` or ``"S_prime"``.
            device: torch device (default: the generator's).

        Returns:
            ``(n, C)`` float32 tensor on ``device``.

        Raises:
            ValueError: on a bad ``n`` or ``which``.
        """
        import torch

        n = check_positive_int(n, "n", minimum=0)
        dev = generator.device if device is None else torch.device(device)
        c = self.num_classes
        last = self._last(which)
        _, multi_counts, multi_probs = self._split_groups()
        chains, in_block, blocks = self._plan()
        fixed, cats = self._single_draws(which)
        out = torch.as_tensor(fixed, dtype=torch.float32, device=dev).expand(n, c).clone()
        step = max(1, _TABLE_ROWS_TORCH_CPU if dev.type == "cpu" else n)
        if blocks is not None:
            for a in range(0, n, step):
                blocks.sample_torch(generator, out[a : a + step])
        for cnt, p, table, blocked in zip(multi_counts, multi_probs, chains, in_block):
            support = np.flatnonzero(p > 0)
            if blocked:
                continue
            if support.size == 1:
                out[:, support[0]] += float(cnt)
                continue
            if table is not None:
                for a in range(0, n, step):
                    table.sample_torch(generator, out[a : a + step])
                continue
            q = p[support] / p[support].sum()
            tail = np.concatenate([np.cumsum(q[::-1])[::-1][1:], [0.0]])  # P(class > j) within the support
            remaining = torch.full((n,), float(cnt), dtype=torch.float32, device=dev)
            for j, col in enumerate(support[:-1]):
                cond = min(1.0, q[j] / (q[j] + tail[j]))
                x = torch.binomial(remaining, torch.full_like(remaining, cond), generator=generator)
                out[:, col] += x
                remaining = remaining - x
            out[:, support[-1]] += remaining
        m = cats.shape[0]
        if m and n:
            cdf = torch.as_tensor(np.ascontiguousarray(_cdf(cats)[:, :-1]), dtype=torch.float64, device=dev)  # (m, C-1)
            rows = max(1, _CHUNK_ELEMENTS // m)
            for a in range(0, n, rows):
                b = min(n, a + rows)
                u = 1.0 - torch.rand((m, b - a), dtype=torch.float64, device=dev, generator=generator)  # (0, 1]
                cls = torch.searchsorted(cdf, u)  # number of CDF entries < u, as (cdf < u).sum()
                out[a:b].scatter_add_(1, cls.T, torch.ones((b - a, m), dtype=torch.float32, device=dev))
        return out

    def sampler(self, which: str = "S"):
        """``model(rng, n) -> (n, C)`` for :func:`ppaudit.montecarlo.model_noisy_argmax_counts`.

        The returned function also carries ``sample_torch(generator, n, device)``, the torch
        sampler used by ``model_noisy_argmax_counts(..., device="cuda")``.
        """
        self._last(which)

        def draw(rng: np.random.Generator, n: int) -> np.ndarray:
            return self.sample(rng, n, which)

        def draw_torch(generator, n: int, device=None):
            return self.sample_torch(generator, n, which, device)

        draw.sample_torch = draw_torch
        return draw

    def _shadow(self) -> "NeighbouringVoteModel":
        """The base ``B`` as a model whose differing voter always votes 0 (built once: its
        inverse-CDF tables are computed once per model, not once per call)."""
        if "shadow" not in self._cache:
            c = self.num_classes
            self._cache["shadow"] = NeighbouringVoteModel(self.constant, self.group_counts, self.group_probs, _point(c), _point(c))
        return self._cache["shadow"]

    def sample_base(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draws of the shared base ``B`` (without the differing voter), ``(n, C)``; each within
        :meth:`base_total_variation` of the exact law of ``B``."""
        out = self._shadow().sample(rng, n, "S")
        out[:, 0] -= 1
        return out

    def base_total_variation(self) -> float:
        """Certified total variation between one draw of :meth:`sample_base` and the exact law of
        the base ``B`` (:meth:`sampler_total_variation` of the base; the differing voter is a
        point mass there and adds nothing). ``M`` base draws are within ``M·τ_B`` of their exact
        joint law, which the Rao–Blackwellised and joint transcript audits charge to their
        confidence."""
        return self._shadow().sampler_total_variation("S")


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
