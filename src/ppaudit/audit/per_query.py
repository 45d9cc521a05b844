"""The per-query audit row of the private-prediction papers, written once (Chadha et al. 2024, §4.2, §5, §6).

One query, one neighbouring pair ``(S, S')``: ``T`` outputs of the noisy argmax on each side,
then per Rényi order

* ``two_cut_cp`` — the 2-cut Clopper–Pearson lower bound (§4.2, App. B), the paper's audit;
* ``k_cut`` — the k-cut lower bound with simultaneous intervals (App. B; ``k_cut_goodman`` /
  ``k_cut_sison_glaz`` name the interval explicitly), and the bootstrap variants
  ``two_cut_bootstrap`` / ``k_cut_bootstrap``;
* ``exact`` — the Rényi divergence between the two output laws (both directions, the
  larger), with a certified interval ``[exact_lo, exact_hi]`` when the law is enumerated, or
  a Monte Carlo mixture with standard error ``exact_se``;
* ``data_dependent`` / ``data_independent`` — the theory of the mechanism (Papernot et al.
  2018, Prop. 7 + Thm 6 and Prop. 8 for GNMax; the subsampled Gaussian for Private-kNN).

A mechanism contributes only *how its outputs are drawn*: an object of the
:class:`QuerySource` protocol. Two sources live here:

* :class:`HistogramPairSource` — a fixed pair of vote histograms (Figs. 2 and 6, PromptPATE
  §5.3): the output law is Eq. (4) in closed form;
* :class:`VoteModelSource` — a fitted random-histogram model of PATE / CaPC (§5.1–5.2,
  :mod:`ppaudit.vote_models`): every trial draws a fresh histogram.

Private-kNN's source (:class:`ppaudit.experiments.chadha2024.private_knn.KnnModelSource`) follows the same
protocol. :func:`audit_query` is the one entry point; every stage calls it.

Randomness: ``rng`` is split into streams in a fixed order — the count streams (one for a
fixed pair, which :func:`ppaudit.montecarlo.noisy_argmax_counts_pair` splits again; two for a
model), then the 2-cut selection stream, then (models only) the Monte Carlo exact stream, then
the two bootstrap streams. The same seed gives the same bytes.

Repeated queries: a per-query row is for ONE answer; the composition over a query sequence
(:func:`ppaudit.audit.compose_candidates`) multiplies it by the repetitions. For a randomly
trained mechanism the repeated answers share one histogram, and that composition is the
paper's procedure, not a sound one (see :mod:`ppaudit.audit.composition`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

import numpy as np
import pandas as pd

from .._validation import as_histograms, as_orders, check_positive_int, check_probability, check_sigma
from .bounds import (
    k_cut_bootstrap_lower_bound,
    k_cut_lower_bound,
    two_cut_bootstrap_lower_bound,
    two_cut_lower_bound,
)

__all__ = [
    "ModelSource",
    "RDP_COLUMNS",
    "LOWER_BOUNDS",
    "QuerySource",
    "HistogramPairSource",
    "VoteModelSource",
    "QueryAudit",
    "audit_query",
    "bonferroni_confidence",
    "TRUNCATION_RESERVE",
]

#: The per-order RDP columns of a per-query row that are composed over queries.
RDP_COLUMNS = ("two_cut_cp", "k_cut", "exact", "exact_lo", "exact_hi", "data_dependent", "data_independent")

#: Lower bounds :func:`audit_query` can compute from the counts (App. B).
LOWER_BOUNDS = ("two_cut_cp", "k_cut", "k_cut_goodman", "k_cut_sison_glaz", "two_cut_bootstrap", "k_cut_bootstrap")


#: Share of the error probability ``1 − confidence`` that :func:`bonferroni_confidence` holds back
#: (``reserve``) for the certified slack of the audits (``effective_confidence``: the truncation
#: of an enumerated law, the distance of a tabulated sampler), so that the union bound over the
#: audits *with* their slack still reaches the configured level (issue 34 §5).
TRUNCATION_RESERVE = 0.02  # as exact_count_tail_budget's loss_fraction


def bonferroni_confidence(confidence: float, num_tests: int, reserve: float = 0.0) -> float:
    """Per-test confidence ``1 − (1 − reserve)·(1 − confidence)/N`` so that ``N`` bounds hold simultaneously
    with probability ``≥ confidence`` (Bonferroni / union bound), leaving ``reserve·(1 − confidence)``
    for the audits' certified slack (``effective_confidence = per-test level − slack``; with
    :data:`TRUNCATION_RESERVE` the union stays ``≥ confidence`` while the slack summed over the
    ``N`` audits is at most ``reserve·(1 − confidence)``).

    Args:
        confidence: the simultaneous confidence wanted, in ``(0, 1)``.
        num_tests: ``N ≥ 1`` (candidates × queries × variants).
        reserve: share of ``1 − confidence`` held back, in ``[0, 1)`` (default 0: plain Bonferroni).

    Returns:
        The per-test confidence.

    Raises:
        ValueError: ``confidence`` not in ``(0, 1)``, ``num_tests < 1`` or ``reserve`` outside ``[0, 1)``.
    """
    conf = check_probability(confidence, "confidence")
    n = check_positive_int(num_tests, "num_tests")
    r = float(reserve)
    if not (0.0 <= r < 1.0):
        raise ValueError(f"reserve must be in [0, 1), got {reserve!r}")
    return 1.0 - (1.0 - r) * (1.0 - conf) / n


class QuerySource(Protocol):
    """How a mechanism's outputs on ``S`` and ``S'`` are drawn for one query.

    Attributes:
        num_classes: ``C``.
        identical: the two output laws are equal (every divergence is 0; no Monte Carlo).
        count_streams: generators the counts consume (1 or 2).
        mixture_stream: whether the Monte Carlo exact value consumes a stream.
    """

    num_classes: int
    identical: bool
    count_streams: int
    mixture_stream: bool

    def theory(self, sigma: float, orders: np.ndarray) -> dict[str, np.ndarray]:
        """Upper bounds (``data_dependent``, ``data_independent``) per order."""

    def enumerate(self, sigma: float, max_tail_mass: float, max_support: int) -> Any:
        """The exact (possibly truncated, certified) output laws, or ``None`` if too large."""

    def exact_rdp(self, enum: Any, sigma: float, orders: np.ndarray) -> dict[str, np.ndarray]:
        """``{"rdp", "rdp_lo", "rdp_hi"}`` of the enumeration."""

    def mixture_rdp(self, sigma: float, draws: int, rng: np.random.Generator, orders: np.ndarray) -> dict[str, np.ndarray]:
        """``{"rdp", "se"}``: Monte Carlo estimate of the exact RDP."""

    def exact_counts(self, enum: Any, sigma: float, trials: int, gens: Sequence[np.random.Generator]) -> tuple[np.ndarray, np.ndarray, float]:
        """Counts of ``trials`` outputs per side drawn from the enumerated law, and the
        total variation ``τ`` per trial between that law and the true one."""

    def sample_counts(self, sigma: float, trials: int, gens: Sequence[np.random.Generator], chunk_size: int | None, progress: bool) -> tuple[np.ndarray, np.ndarray]:
        """Counts of ``trials`` simulated runs of the mechanism per side."""

    # Optional: ``sample_total_variation() -> float``, the certified total variation per
    # trial between the simulated runs and the mechanism, summed over the two sides (a
    # source without it simulates exactly: 0). ``audit_query`` charges ``T`` times it to
    # the confidence of sampled counts (issue 29: tabulated vote-model samplers).


@dataclass(frozen=True)
class _PairLaw:
    p: np.ndarray
    q: np.ndarray
    tail_mass: float = 0.0
    support_size: int = 1


@dataclass
class HistogramPairSource:
    """A fixed neighbouring pair of vote histograms ``(H_S, H_S')`` (Chadha et al. 2024, Figs. 2, 6; §5.3).

    The output law is Eq. (4) (:func:`ppaudit.noisy_argmax.class_probabilities`); ``T`` runs
    on a fixed histogram have counts ``Multinomial(T, p)`` exactly, so ``"exact"`` counts are
    the same experiment as ``T`` black-box runs.

    Args:
        h0, h1: the two histograms (same length ``C ≥ 2``).

    Raises:
        ValueError: shapes differ or are not 1-D.
    """

    h0: Any
    h1: Any
    count_streams: int = field(default=1, init=False)
    mixture_stream: bool = field(default=False, init=False)

    def __post_init__(self):
        x0, _ = as_histograms(self.h0, "h0")
        x1, _ = as_histograms(self.h1, "h1")
        if x0.shape != x1.shape or x0.shape[0] != 1:
            raise ValueError(f"h0 and h1 must be 1-D of the same length, got {np.shape(self.h0)} and {np.shape(self.h1)}")
        self.h0, self.h1 = x0[0], x1[0]

    @property
    def num_classes(self) -> int:
        return int(self.h0.size)

    @property
    def identical(self) -> bool:
        return bool(np.array_equal(self.h0, self.h1))

    def theory(self, sigma, orders):
        from ..accounting import gnmax_rdp_data_dependent, gnmax_rdp_data_independent

        dd = np.maximum(gnmax_rdp_data_dependent(self.h0, sigma, orders), gnmax_rdp_data_dependent(self.h1, sigma, orders))
        return {"data_dependent": dd, "data_independent": gnmax_rdp_data_independent(sigma, orders)}

    def enumerate(self, sigma, max_tail_mass, max_support):
        from ..noisy_argmax import class_probabilities

        return _PairLaw(class_probabilities(self.h0, sigma), class_probabilities(self.h1, sigma))

    def exact_rdp(self, enum, sigma, orders):
        from ..divergence import exact_rdp

        r = exact_rdp(self.h0, self.h1, sigma, orders)
        return {"rdp": r, "rdp_lo": r, "rdp_hi": r}

    def mixture_rdp(self, sigma, draws, rng, orders):
        raise ValueError("a fixed histogram pair has a closed-form output law: use exact='auto' or 'enumerate'")

    def exact_counts(self, enum, sigma, trials, gens):
        from ..montecarlo import noisy_argmax_counts_pair

        from ..noisy_argmax import quadrature_error_bound

        c0, c1 = noisy_argmax_counts_pair(self.h0, self.h1, sigma, trials, rng=gens[0], mode="exact")
        return c0, c1, quadrature_error_bound(self.num_classes).total_variation  # Eq. (4)'s proven error

    def sample_counts(self, sigma, trials, gens, chunk_size, progress):
        from ..montecarlo import noisy_argmax_counts_pair

        return noisy_argmax_counts_pair(self.h0, self.h1, sigma, trials, rng=gens[0], mode="sample", chunk_size=chunk_size, progress=progress)


@dataclass
class ModelSource:
    """Base of the sources whose every trial draws fresh histograms from a neighbouring vote
    model (``model`` with ``num_classes`` and ``identical``): two count streams and one for
    the Monte Carlo exact value. Subclasses add ``theory``, ``enumerate`` and the samplers."""

    model: Any
    count_streams: int = field(default=2, init=False)
    mixture_stream: bool = field(default=True, init=False)

    @property
    def num_classes(self) -> int:
        return int(self.model.num_classes)

    @property
    def identical(self) -> bool:
        return bool(self.model.identical)


@dataclass
class VoteModelSource(ModelSource):
    """A fitted random-histogram model of PATE or CaPC (Chadha et al. 2024, §5.1–5.2).

    Every trial draws a fresh histogram from the model
    (:func:`ppaudit.montecarlo.model_noisy_argmax_counts`); the exact law is the certified
    enumeration of :func:`ppaudit.vote_models.enumerate_output_distributions` or the Monte
    Carlo mixture of :func:`ppaudit.vote_models.estimate_output_distributions`.

    Theory: the data-dependent bound is stated for a fixed histogram; it is evaluated at the
    expected histograms ``E[H_S]``, ``E[H_S']`` and the larger is kept (``dd_at="mean"``, the
    reading of §5.4 the figures used so far); ``dd_at="expected"`` / ``"max"`` report
    ``E_H[dd(H)]`` / ``max_H dd(H)`` over the enumerated support when a routine for it is
    available in :mod:`ppaudit.vote_models`.

    Args:
        model: a :class:`ppaudit.vote_models.NeighbouringVoteModel`.
    """

    def theory(self, sigma, orders):
        from ..accounting import gnmax_rdp_data_dependent, gnmax_rdp_data_independent

        m = self.model
        dd = np.maximum(gnmax_rdp_data_dependent(m.mean("S"), sigma, orders), gnmax_rdp_data_dependent(m.mean("S_prime"), sigma, orders))
        return {"data_dependent": dd, "data_independent": gnmax_rdp_data_independent(sigma, orders)}

    def enumerate(self, sigma, max_tail_mass, max_support):
        from ..vote_models import enumerate_output_distributions

        return enumerate_output_distributions(self.model, sigma, max_tail_mass, max_support)

    def exact_rdp(self, enum, sigma, orders):
        from ..vote_models import certified_mixture_rdp

        return certified_mixture_rdp(enum, orders)

    def enumerated_theory(self, enum, sigma, orders):
        """``data_dependent_expected`` = ``max(E_S[dd(H)], E_S'[dd(H)])`` and ``data_dependent_max``
        = ``max_H dd(H)`` over the enumerated support (issue 13 §3;
        :func:`ppaudit.vote_models.data_dependent.data_dependent_theory`). The ``data_dependent``
        column stays ``dd(E[H])``, the reading the figures use."""
        from ..vote_models.data_dependent import data_dependent_theory

        t = data_dependent_theory(enum, sigma, orders)
        return {"data_dependent_expected": t.expected, "data_dependent_max": t.maximum}

    def mixture_rdp(self, sigma, draws, rng, orders):
        from ..vote_models import estimate_output_distributions, mixture_rdp_estimate

        return mixture_rdp_estimate(estimate_output_distributions(self.model, sigma, draws, rng), orders)

    def exact_counts(self, enum, sigma, trials, gens):
        """Counts ``Multinomial(T, μ̂)`` per side from the enumerated law, and ``τ_eff``: the total
        variation of the two sides' ``T``-trial count laws from the true ones
        (:func:`ppaudit.vote_models.count_law_total_variation`, the smaller of ``T·τ`` and the
        Pinsker–χ² bound ``τ·√(T/min μ̂)``, ``τ = r + τ_q(C)``), divided by ``2T`` so that
        ``2·T·τ_eff`` is the confidence it costs (issue 34 §5)."""
        from .._validation import check_positive_int, check_sigma
        from ..vote_models import count_law_total_variation, exact_count_total_variation

        s, t = check_sigma(sigma), check_positive_int(trials, "trials")
        tv = exact_count_total_variation(enum.tail_mass, self.num_classes)
        # μ̂ once per side: the counts (model_noisy_argmax_counts' exact mode, the same draws) and its smallest class
        mu = [enum.discrete_model(side).output_distribution(s) for side in ("S", "S_prime")]
        c0, c1 = (np.random.default_rng(g) if not isinstance(g, np.random.Generator) else g for g in gens[:2])
        c0, c1 = c0.multinomial(t, mu[0]).astype(np.int64), c1.multinomial(t, mu[1]).astype(np.int64)
        total = sum(count_law_total_variation(tv, t, m) for m in mu)
        return c0, c1, total / (2.0 * t)

    def sample_counts(self, sigma, trials, gens, chunk_size, progress):
        from ..montecarlo import model_noisy_argmax_counts

        c, m = self.num_classes, self.model
        c0 = model_noisy_argmax_counts(m.sampler("S"), c, sigma, trials, gens[0], chunk_size=chunk_size, progress=progress)
        c1 = model_noisy_argmax_counts(m.sampler("S_prime"), c, sigma, trials, gens[1], chunk_size=chunk_size, progress=progress)
        return c0, c1

    def sample_total_variation(self) -> float:
        """``τ_S + τ_S'`` of the histogram samplers
        (:meth:`ppaudit.vote_models.NeighbouringVoteModel.sampler_total_variation`)."""
        m = self.model
        if not hasattr(m, "sampler_total_variation"):
            return 0.0
        return float(m.sampler_total_variation("S") + m.sampler_total_variation("S_prime"))


@dataclass
class QueryAudit:
    """Result of :func:`audit_query`.

    Attributes:
        orders: ``(A,)`` Rényi orders.
        columns: name → ``(A,)`` values (the lower bounds asked for, ``exact``,
            ``exact_lo``, ``exact_hi``, ``exact_se`` and the theory columns).
        meta: scalars describing how the row was made: ``identical``, ``simulated``,
            ``count_mode`` (``"exact"``/``"sample"``/``"none"``), ``trials`` (the ``T`` actually
            used per side; 0 when nothing was simulated), ``effective_confidence``
            (``confidence − 2·T·τ`` for counts from a truncated law), ``exact_method``
            (``"enumerate"``/``"average"``/``"identical"``), ``tail_mass``, ``support_size``.
        counts0, counts1: ``(C,)`` output counts on ``S`` and ``S'`` (``None`` if not simulated).
    """

    orders: np.ndarray
    columns: dict[str, np.ndarray]
    meta: dict[str, Any]
    counts0: np.ndarray | None = None
    counts1: np.ndarray | None = None

    def frame(self, columns: Sequence[str], meta: Sequence[str] = ()) -> pd.DataFrame:
        """One row per order: ``order``, the named ``columns``, then the named ``meta`` scalars.

        Raises:
            ValueError: a name that the audit did not compute.
        """
        missing = [c for c in columns if c not in self.columns] + [m for m in meta if m not in self.meta]
        if missing:
            raise ValueError(f"the audit has no column(s) {missing}; it has {sorted(self.columns) + sorted(self.meta)}")
        # one constructor call (the meta scalars broadcast): a column assignment each cost ~0.1 ms per query
        return pd.DataFrame({"order": self.orders, **{c: self.columns[c] for c in columns}, **{m: self.meta[m] for m in meta}})


def audit_query(
    source: QuerySource,
    sigma: float,
    trials: int,
    orders,
    confidence: float = 0.95,
    rng=None,
    *,
    lower_bounds: Sequence[str] = ("two_cut_cp", "k_cut"),
    count_mode: str = "auto",
    sample_trials: int | None = None,
    exact: str = "auto",
    exact_draws: int = 20_000,
    max_tail_mass: float = 1e-10,
    max_support: int = 200_000,
    k_cut_method: str = "goodman",
    selection: str = "split",
    num_bootstrap: int = 1000,
    simulate: bool = True,
    theory: dict[str, np.ndarray] | None = None,
    chunk_size: int | None = None,
    progress: bool = False,
) -> QueryAudit:
    """The per-query audit row: counts → lower bounds, exact RDP, theory (Chadha et al. 2024, §4.2, App. B).

    Args:
        source: how the outputs are drawn (:class:`HistogramPairSource`,
            :class:`VoteModelSource`, the Private-kNN source, …).
        sigma: noise standard deviation of the noisy argmax.
        trials: ``T`` per side with counts from the exact law (cost independent of ``T``:
            the paper's 1e8 is affordable).
        orders: Rényi orders α > 1.
        confidence: of every lower bound (apply :func:`bonferroni_confidence` first for a
            union over several audits).
        rng: seed / ``SeedSequence`` / generator (split as the module docstring says).
        lower_bounds: subset of :data:`LOWER_BOUNDS` to compute from the counts.
        count_mode: ``"exact"`` — counts ``Multinomial(T, μ̂)`` from the enumerated law
            (fail if it is too large); ``"sample"`` — ``sample_trials`` simulated runs;
            ``"auto"`` — exact when the enumeration succeeds, else sampled. For a random
            histogram model the enumerated law is truncated at tail mass ``r``: the counts
            follow a law within total variation ``τ`` per trial of the true one (``r`` plus
            the proven quadrature error of Eq. (4)), and
            ``effective_confidence = confidence − 2·T·τ`` is reported, where the sources charge the
            two ``T``-trial count laws' distance ``2·T·τ_eff ≤ 2·T·τ``
            (:func:`ppaudit.vote_models.count_law_total_variation`: the Pinsker–χ² bound
            ``τ·√(T/min μ̂)`` per side when smaller; issue 34 §5). Exact counts prune at
            :func:`ppaudit.vote_models.exact_count_tail_budget` (so that
            ``2·T·τ ≤ 0.02·(1 − confidence)``: ≥ 0.949 at 95 %, T = 1e8, C ≤ 10) when that
            enumeration fits in ``max_support``, else at ``max_tail_mass``. Sampled counts
            of a source with ``sample_total_variation`` (the vote models' tabulated
            samplers, :mod:`ppaudit.vote_models.tables`) report
            ``effective_confidence = confidence − T·(τ_S + τ_S')`` the same way.
        sample_trials: ``T`` when sampling (default ``trials``; with ``count_mode="sample"``
            ``trials`` is used).
        exact: ``"auto"`` (enumerate when cheap, else Monte Carlo mixture), ``"enumerate"``
            (fail if not cheap) or ``"average"`` (Monte Carlo mixture).
        exact_draws: base draws of the Monte Carlo mixture.
        max_tail_mass, max_support: budget of the enumeration.
        k_cut_method: interval of ``k_cut`` (``"goodman"`` or ``"sison-glaz"``).
        selection: output-set search of the 2-cut (``"split"`` or ``"bonferroni"``).
        num_bootstrap: bootstrap replicates of the bootstrap bounds.
        simulate: ``False`` skips the Monte Carlo (lower bounds reported as 0, always valid),
            e.g. when the two laws differ by less than ``T`` trials resolve.
        theory: upper-bound columns to report instead of ``source.theory``.
        chunk_size, progress: of the sampling engine.

    Returns:
        A :class:`QueryAudit`.

    Raises:
        ValueError: a bad option, or an enumeration that was required but too large.

    Example:
        >>> r = audit_query(HistogramPairSource([14, 12, 10], [13, 13, 10]), 2.0, 10**6, [2.0, 8.0], rng=0)
        >>> bool(np.all(r.columns["two_cut_cp"] <= r.columns["exact"]))
        True
    """
    s = check_sigma(sigma)
    a = as_orders(orders)
    t = check_positive_int(trials, "trials")
    conf = check_probability(confidence, "confidence")
    t_sample = t if sample_trials is None else check_positive_int(sample_trials, "sample_trials")
    if count_mode not in ("sample", "exact", "auto"):
        raise ValueError(f"count_mode must be 'sample', 'exact' or 'auto', got {count_mode!r}")
    if exact not in ("auto", "enumerate", "average"):
        raise ValueError(f"exact must be 'auto', 'enumerate' or 'average', got {exact!r}")
    unknown = [b for b in lower_bounds if b not in LOWER_BOUNDS]
    if unknown:
        raise ValueError(f"unknown lower bound(s) {unknown}; choose from {list(LOWER_BOUNDS)}")
    if k_cut_method not in ("goodman", "sison-glaz"):
        raise ValueError(f"k_cut_method must be 'goodman' or 'sison-glaz', got {k_cut_method!r}")
    from ..montecarlo import spawn_generators

    ncs = int(source.count_streams)
    gens = spawn_generators(rng, ncs + 1 + int(source.mixture_stream) + 2)
    g_counts, g_select = gens[:ncs], gens[ncs]
    g_exact = gens[ncs + 1] if source.mixture_stream else None
    g_boot2, g_bootk = gens[-2], gens[-1]
    cols: dict[str, np.ndarray] = dict(theory) if theory is not None else dict(source.theory(s, a))
    zero, nan = np.zeros(a.size), np.full(a.size, np.nan)
    meta: dict[str, Any] = {"identical": False, "simulated": False, "count_mode": "none", "trials": 0, "effective_confidence": conf,
                            "exact_method": "identical", "tail_mass": np.nan, "support_size": 0}
    if source.identical:
        meta["identical"] = True
        cols.update(exact=zero, exact_lo=zero, exact_hi=zero, exact_se=zero, **{b: zero for b in lower_bounds})
        return QueryAudit(a, cols, meta)
    enum = None
    if exact in ("auto", "enumerate") or count_mode in ("exact", "auto"):
        if count_mode != "sample":  # prune finer for exact counts: loss 2·T·τ ≤ 2 % of 1 − confidence
            from ..vote_models import exact_count_tail_budget

            tight = exact_count_tail_budget(t, source.num_classes, conf)
            enum = source.enumerate(s, tight, max_support) if tight < max_tail_mass else None
        if enum is None:
            enum = source.enumerate(s, max_tail_mass, max_support)
        if enum is None and (exact == "enumerate" or count_mode == "exact"):
            raise ValueError(
                f"the model's support is too large to enumerate within max_support={max_support} "
                f"and max_tail_mass={max_tail_mass}; use exact='average' and count_mode='sample' (or 'auto')"
            )
    if enum is not None and exact != "average":
        cert = source.exact_rdp(enum, s, a)
        cols.update(exact=cert["rdp"], exact_lo=cert["rdp_lo"], exact_hi=cert["rdp_hi"], exact_se=zero)
        meta.update(exact_method="enumerate", tail_mass=float(enum.tail_mass), support_size=int(enum.support_size))
        if hasattr(source, "enumerated_theory"):
            cols.update(source.enumerated_theory(enum, s, a))
    else:
        est = source.mixture_rdp(s, exact_draws, g_exact, a)
        cols.update(exact=est["rdp"], exact_lo=nan, exact_hi=nan, exact_se=est["se"])
        meta.update(exact_method="average")
    if not simulate:
        cols.update({b: zero for b in lower_bounds})
        return QueryAudit(a, cols, meta)
    if enum is not None and count_mode != "sample":
        c0, c1, tv = source.exact_counts(enum, s, t, g_counts)
        meta.update(count_mode="exact", trials=t, effective_confidence=max(0.0, conf - 2.0 * t * tv))
    else:
        tt = t if count_mode == "sample" else t_sample
        c0, c1 = source.sample_counts(s, tt, g_counts, chunk_size, progress)
        tv_sample = float(source.sample_total_variation()) if hasattr(source, "sample_total_variation") else 0.0
        meta.update(count_mode="sample", trials=tt, effective_confidence=max(0.0, conf - tt * tv_sample))
    meta["simulated"] = True
    for b in lower_bounds:
        if b == "two_cut_cp":
            cols[b] = two_cut_lower_bound(c0, c1, a, conf, selection=selection, rng=g_select).lower_bound
        elif b == "k_cut":
            cols[b] = k_cut_lower_bound(c0, c1, a, conf, method=k_cut_method)
        elif b == "k_cut_goodman":
            cols[b] = k_cut_lower_bound(c0, c1, a, conf, method="goodman")
        elif b == "k_cut_sison_glaz":
            cols[b] = k_cut_lower_bound(c0, c1, a, conf, method="sison-glaz")
        elif b == "two_cut_bootstrap":
            cols[b] = two_cut_bootstrap_lower_bound(c0, c1, a, conf, num_bootstrap, rng=g_boot2)
        elif b == "k_cut_bootstrap":
            cols[b] = k_cut_bootstrap_lower_bound(c0, c1, a, conf, num_bootstrap, rng=g_bootk)
    return QueryAudit(a, cols, meta, c0, c1)
