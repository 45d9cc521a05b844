"""Black-box audit of any mechanism against its privacy claim.

Protocol (the one DP-Auditorium uses, plus an explicit generator):
``mechanism(data, n, rng) -> n outputs`` — integers, or hashable values (strings, tuples),
or real numbers when ``discretize`` is given. A two-argument ``mechanism(data, n)`` is
accepted too (it then draws its own randomness, so reproducibility is up to it).

Pipeline of :func:`audit_mechanism`:

1. ``trials`` draws on ``dataset`` and ``trials`` draws on ``neighbour`` (chunked, optional
   progress bar); the outputs are mapped to cells and counted. Real-valued outputs are
   first binned (``discretize``): the bin edges are quantiles of *extra* draws made only
   for that purpose, so the counted draws stay independent of the binning.
2. :func:`audit_counts` on the two count vectors:

   * RDP lower bound: the 2-cut Clopper–Pearson audit (Chadha et al. 2024, §4.2 and App. B;
     :func:`ppaudit.audit.two_cut_lower_bound`, output set chosen on a random split of the
     trials, Bonferroni over the distinct sets chosen). It is valid for all orders at once.
   * k-cut lower bound (Goodman intervals, App. B): reported, but asymptotic only, so it
     never enters the verdict.
   * (ε, δ) lower bound: Eq. (1) of Chadha et al. 2024 on the output set chosen on a
     random split (:func:`ppaudit.audit.dp_epsilon_lower_bound`). An RDP lower bound is
     never converted to ε: Thm 1 is only valid for upper bounds.

3. The verdict, when a :class:`~ppaudit.blackbox.Claim` is given. With ``β = 1 −
   confidence`` and ``K`` ∈ {1, 2} tests that the claim makes testable (RDP: the claim
   implies a finite RDP at some audited order; ε: it implies a finite ε at δ), every test
   runs at level ``β/K`` (Bonferroni):

   * RDP test: violation if the 2-cut lower bound exceeds the claim's implied RDP at *any*
     audited order. The 2-cut bounds hold simultaneously over the orders and over the
     output sets that were searched (split selection + Bonferroni over distinct sets), so
     searching the orders costs nothing more.
   * ε test: violation if the Eq. (1) lower bound at δ exceeds the claim's implied ε at δ.
     The set is chosen on a split, so one set is tested.

   So ``P(verdict = "violation") ≤ β`` for a mechanism that meets its claim.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._validation import as_orders, check_positive_int, check_probability
from ..audit import dp_epsilon_lower_bound, k_cut_lower_bound, two_cut_lower_bound
from .claims import Claim
from .mechanism_checks import MechanismError, call_mechanism, check_mechanism, outputs_array

__all__ = ["CountsAudit", "MechanismAudit", "audit_counts", "audit_mechanism"]


@dataclass
class CountsAudit:
    """Every number of an audit of two output-count vectors.

    Attributes:
        orders: the audited orders α.
        counts0, counts1: output counts on ``dataset`` / ``neighbour``.
        outputs: the output value of every cell (``None`` when counts were given).
        rdp_lower_bound: 2-cut Clopper–Pearson RDP lower bound per order (valid at
            ``rdp_confidence``, all orders at once).
        k_cut_lower_bound: k-cut (Goodman) lower bound per order — asymptotic only,
            reported for comparison, never used for the verdict.
        epsilon_lower_bound: Eq. (1) ε lower bound at ``delta`` (valid at
            ``epsilon_confidence``).
        delta: the δ of the ε bound.
        confidence: overall confidence of the verdict.
        rdp_confidence, epsilon_confidence: per-test confidence levels (Bonferroni).
        claim: the claim or ``None``.
        claim_rdp: the claim's implied RDP upper bound per order (or ``None``).
        claim_epsilon: the claim's implied ε at ``delta`` (or ``None``).
        verdict: ``"violation"``, ``"consistent"`` or ``"no claim"``.
        violated_orders: orders at which the RDP lower bound exceeds the claim.
        epsilon_violated: whether the ε lower bound exceeds the claim.
        details: the 2-cut's set selection details, evaluation trials, etc.
    """

    orders: np.ndarray
    counts0: np.ndarray
    counts1: np.ndarray
    outputs: list | None
    rdp_lower_bound: np.ndarray
    k_cut_lower_bound: np.ndarray
    epsilon_lower_bound: float
    delta: float
    confidence: float
    rdp_confidence: float
    epsilon_confidence: float
    claim: Claim | None = None
    claim_rdp: np.ndarray | None = None
    claim_epsilon: float | None = None
    verdict: str = "no claim"
    violated_orders: np.ndarray = field(default_factory=lambda: np.zeros(0))
    epsilon_violated: bool = False
    details: dict = field(default_factory=dict)

    @property
    def violation(self) -> bool:
        """True iff the verdict is ``"violation"``."""
        return self.verdict == "violation"

    def to_dict(self) -> dict:
        """A JSON-ready dict of every number (``inf`` written as the string ``"inf"``)."""

        def num(x):
            x = float(x)
            return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")

        out = {
            "orders": [num(a) for a in self.orders],
            "counts0": [int(c) for c in self.counts0],
            "counts1": [int(c) for c in self.counts1],
            "outputs": None if self.outputs is None else [str(o) for o in self.outputs],
            "rdp_lower_bound": [num(v) for v in self.rdp_lower_bound],
            "k_cut_lower_bound": [num(v) for v in self.k_cut_lower_bound],
            "epsilon_lower_bound": num(self.epsilon_lower_bound),
            "delta": self.delta,
            "confidence": self.confidence,
            "rdp_confidence": self.rdp_confidence,
            "epsilon_confidence": self.epsilon_confidence,
            "claim": None if self.claim is None else self.claim.to_dict(),
            "claim_rdp": None if self.claim_rdp is None else [num(v) for v in self.claim_rdp],
            "claim_epsilon": None if self.claim_epsilon is None else num(self.claim_epsilon),
            "verdict": self.verdict,
            "violated_orders": [num(a) for a in self.violated_orders],
            "epsilon_violated": bool(self.epsilon_violated),
            "procedure": "ours",
            "details": {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in self.details.items()},
        }
        return out


@dataclass
class MechanismAudit(CountsAudit):
    """:class:`CountsAudit` plus how the outputs were drawn.

    Attributes:
        trials: draws per side that were counted.
        bin_edges: the discretisation edges (real-valued outputs), else ``None``.
        discretize_trials: extra draws per side used only to choose ``bin_edges``.
    """

    trials: int = 0
    bin_edges: np.ndarray | None = None
    discretize_trials: int = 0

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["trials"] = int(self.trials)
        out["bin_edges"] = None if self.bin_edges is None else [float(e) for e in self.bin_edges]
        out["discretize_trials"] = int(self.discretize_trials)
        return out


def _generators(rng, n: int) -> list[np.random.Generator]:
    if isinstance(rng, np.random.Generator):
        return rng.spawn(n)
    seq = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(rng)
    return [np.random.default_rng(s) for s in seq.spawn(n)]


def audit_counts(
    counts0,
    counts1,
    orders,
    *,
    confidence: float = 0.95,
    claim: Claim | None = None,
    delta: float = 1e-5,
    selection: str = "split",
    selection_fraction: float = 0.1,
    rng: np.random.Generator | np.random.SeedSequence | int | None = 0,
    outputs: list | None = None,
    output_set=None,
) -> CountsAudit:
    """Audit two output-count vectors (same outputs, runs on neighbouring inputs) against a claim.

    The bounds and the verdict are described in the module docstring: 2-cut Clopper–Pearson
    RDP lower bound (Chadha et al. 2024, App. B), Eq. (1) ε lower bound on a split-selected
    output set, k-cut reported only; the verdict is Bonferroni-corrected over the (at most
    two) tests the claim makes testable, and each test is valid over the orders and the
    output sets it searched.

    Args:
        counts0: output counts of the runs on ``S``.
        counts1: output counts of the runs on ``S'``.
        orders: orders α > 1.
        confidence: overall confidence of the verdict (0.95 = at most 5 % false alarms).
        claim: a :class:`Claim`, or ``None`` for bounds only.
        delta: δ of the ε lower bound; an (ε, δ)-DP claim's own δ replaces it.
        selection: ``"split"`` or ``"bonferroni"`` for the 2-cut's output-set search.
        selection_fraction: share of the trials used to choose output sets.
        rng: generator / seed / SeedSequence for the random splits.
        outputs: optional output value of each cell (kept in the result).
        output_set: a fixed output set ``O`` (boolean mask or cell indices) chosen on *other*
            draws (e.g. the pilot of :func:`ppaudit.blackbox.search_mechanism`): then no
            split is made, all trials give the intervals, and both the 2-cut and Eq. (1) use
            ``O`` (``selection`` and ``selection_fraction`` are ignored).

    Returns:
        :class:`CountsAudit`.

    Raises:
        ValueError: on bad counts (negative, different lengths, fewer than 2 cells), orders
            ≤ 1, a confidence or δ out of range, or a claim that is not a :class:`Claim`.
    """
    c0 = np.asarray(counts0)
    c1 = np.asarray(counts1)
    if c0.ndim != 1 or c1.ndim != 1 or c0.shape != c1.shape:
        raise ValueError(f"counts0 and counts1 must be 1-D of the same length, got shapes {c0.shape} and {c1.shape}")
    if c0.size < 2:
        raise ValueError(f"need at least 2 output cells, got {c0.size}")
    a = as_orders(orders)
    conf = check_probability(confidence, "confidence")
    if claim is not None and not isinstance(claim, Claim):
        raise ValueError(f"claim must be a ppaudit.blackbox.Claim, got {type(claim).__name__}")
    d = float(claim.delta) if (claim is not None and claim.kind == "dp") else float(delta)
    if not (0.0 <= d < 1.0):
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    beta = 1.0 - conf
    claim_rdp = claim_eps = None
    tests_rdp = tests_eps = True
    if claim is not None:
        claim_rdp = claim.rdp_curve(a)
        claim_eps = claim.epsilon_at(d)
        tests_rdp = bool(np.any(np.isfinite(claim_rdp)))
        tests_eps = math.isfinite(claim_eps)
    # Without a claim each bound is reported at the full confidence (each marginally valid).
    k = 1 if claim is None else max(1, int(tests_rdp) + int(tests_eps))
    per_conf = 1.0 - beta / k
    g_rdp, g_eps = _generators(rng, 2)
    two = two_cut_lower_bound(c0, c1, a, confidence=per_conf, output_set=output_set, selection=selection,
                              selection_fraction=selection_fraction, rng=g_rdp)
    kcut = k_cut_lower_bound(c0, c1, a, confidence=conf)
    eps_lb = dp_epsilon_lower_bound(c0, c1, delta=d, confidence=per_conf, output_set=output_set,
                                    selection_fraction=selection_fraction, rng=g_eps)
    verdict = "no claim"
    violated = np.zeros(0)
    eps_violated = False
    if claim is not None:
        over = (two.lower_bound > claim_rdp) if tests_rdp else np.zeros(a.size, dtype=bool)
        violated = a[over]
        eps_violated = bool(tests_eps and eps_lb > claim_eps)
        verdict = "violation" if (over.any() or eps_violated) else "consistent"
    details = dict(two.details)
    if output_set is not None:
        details["selection"] = "fixed output set (chosen on other draws)"
    details["evaluation_trials"] = str(two.evaluation_trials)
    details["tests"] = k
    return CountsAudit(
        orders=a, counts0=c0.astype(np.int64), counts1=c1.astype(np.int64), outputs=outputs,
        rdp_lower_bound=two.lower_bound, k_cut_lower_bound=kcut, epsilon_lower_bound=float(eps_lb),
        delta=d, confidence=conf, rdp_confidence=per_conf if tests_rdp else conf,
        epsilon_confidence=per_conf if tests_eps else conf, claim=claim, claim_rdp=claim_rdp,
        claim_epsilon=claim_eps, verdict=verdict, violated_orders=violated, epsilon_violated=eps_violated,
        details=details,
    )


def quantile_edges(pooled, bins: int) -> np.ndarray:
    """Edges of ``bins`` quantile bins of the pooled real outputs ``pooled`` (ties merged): the
    ``discretize=bins`` binning of :func:`audit_mechanism`, also the pilot's bin family of
    :func:`ppaudit.blackbox.search_mechanism` (:mod:`.families`)."""
    return np.unique(np.quantile(np.asarray(pooled, dtype=np.float64), np.arange(1, bins) / bins))


def bin_index(edges: np.ndarray, outputs) -> np.ndarray:
    """Bin of each real output for ``edges``: ``0 … len(edges)`` (bin ``i`` is ``[edges[i-1], edges[i])``)."""
    return np.searchsorted(edges, np.asarray(outputs, dtype=np.float64), side="right")


def _takes_rng(mechanism: Callable) -> bool:
    """Whether ``mechanism`` takes the generator; its signature checked first (:func:`check_mechanism`)."""
    return check_mechanism(mechanism)


def _draw(mechanism, takes_rng: bool, data, n: int, gen: np.random.Generator) -> np.ndarray:
    """One call of the mechanism: an exception inside it is the mechanism's, and its return value
    is checked (:mod:`ppaudit.blackbox.mechanism_checks`)."""
    return outputs_array(call_mechanism(mechanism, takes_rng, data, n, gen), n)


def _count_into(counter: Counter, arr: np.ndarray) -> None:
    if arr.dtype.kind in "iub":
        if arr.ndim != 1:  # vector outputs: each row is one output, counted as a tuple
            for v in map(tuple, arr.reshape(arr.shape[0], -1).tolist()):
                counter[v] += 1
            return
        vals, cnt = np.unique(arr, return_counts=True)
        for v, c in zip(vals.tolist(), cnt.tolist()):
            counter[v] += c
    elif arr.dtype.kind == "f":
        raise ValueError(
            "the mechanism returned real-valued outputs; pass discretize=<number of bins> "
            "(quantile bins chosen on extra draws) or discretize=<array of bin edges>"
        )
    else:
        for v in arr.tolist():
            counter[tuple(v) if isinstance(v, list) else v] += 1


def audit_mechanism(
    mechanism: Callable[..., Any],
    dataset,
    neighbour,
    trials: int,
    orders,
    confidence: float = 0.95,
    rng: np.random.Generator | np.random.SeedSequence | int | None = None,
    claim: Claim | None = None,
    *,
    delta: float = 1e-5,
    discretize=None,
    discretize_fraction: float = 0.1,
    selection: str = "split",
    selection_fraction: float = 0.1,
    chunk_size: int = 1_000_000,
    progress: bool = False,
) -> MechanismAudit:
    """Audit a black-box mechanism on a pair of neighbouring inputs against its claim.

    Args:
        mechanism: ``mechanism(data, n, rng)`` returning ``n`` outputs (ints, hashable
            values, or reals with ``discretize``); ``mechanism(data, n)`` also accepted.
        dataset: the input ``S`` (passed to ``mechanism`` unchanged).
        neighbour: the neighbouring input ``S'``.
        trials: counted draws per side, ``T``.
        orders: orders α > 1 to audit.
        confidence: overall confidence of the verdict (see :func:`audit_counts`).
        rng: generator, SeedSequence or seed (``None``: fresh entropy). Same seed → same
            counts → same result, provided the mechanism uses only the generator it is given.
        claim: the :class:`Claim` to test, or ``None``.
        delta: δ of the ε lower bound (an (ε, δ) claim's δ replaces it).
        discretize: for real-valued (1-D) outputs: an int ``B`` ≥ 2 — ``B`` quantile bins whose
            edges are the pooled quantiles of ``ceil(discretize_fraction · T)`` extra draws
            per side (so the bins do not depend on the counted draws and the audit stays
            valid) — or an increasing array of fixed edges.
        discretize_fraction: extra draws per side for the bin edges, as a share of ``T``.
        selection, selection_fraction: output-set search of the 2-cut (see
            :func:`ppaudit.audit.two_cut_lower_bound`).
        chunk_size: largest number of draws requested from ``mechanism`` at once.
        progress: show a tqdm progress bar.

    Returns:
        :class:`MechanismAudit` with the counts, every bound and the verdict.

    Raises:
        ValueError: on ``trials < 1``, bad orders/confidence, a mechanism returning the
            wrong number of outputs, real outputs without ``discretize``, bad ``discretize``.

    Example:
        >>> import numpy as np
        >>> from ppaudit.blackbox import Claim, audit_mechanism
        >>> def rr(bit, n, rng):  # randomized response with e^1 odds
        ...     keep = rng.random(n) < np.e / (1 + np.e)
        ...     return np.where(keep, bit, 1 - bit)
        >>> res = audit_mechanism(rr, 0, 1, 20000, [2.0, 8.0], rng=0, claim=Claim.dp(1.0))
        >>> res.verdict
        'consistent'
    """
    t = check_positive_int(trials, "trials")
    a = as_orders(orders)
    conf = check_probability(confidence, "confidence")
    chunk = check_positive_int(chunk_size, "chunk_size")
    takes_rng = _takes_rng(mechanism)
    g_sides = _generators(rng, 5)
    edges = None
    n_disc = 0
    if discretize is not None:
        if np.ndim(discretize) == 0:
            bins = int(discretize)
            if bins != discretize or bins < 2:
                raise ValueError(f"discretize must be an int >= 2 or an array of bin edges, got {discretize!r}")
            frac = check_probability(discretize_fraction, "discretize_fraction")
            n_disc = max(int(math.ceil(frac * t)), 10 * bins)
            pooled = np.concatenate([
                _draw(mechanism, takes_rng, dataset, n_disc, g_sides[2]),
                _draw(mechanism, takes_rng, neighbour, n_disc, g_sides[3]),
            ]).astype(np.float64)
            if pooled.ndim != 1:
                raise ValueError(f"discretize needs 1-D real outputs, got shape {pooled.shape[1:]} per output")
            edges = quantile_edges(pooled, bins)
        else:
            edges = np.asarray(discretize, dtype=np.float64)
            if edges.ndim != 1 or edges.size < 1 or np.any(np.diff(edges) <= 0) or not np.all(np.isfinite(edges)):
                raise ValueError(f"discretize edges must be a 1-D strictly increasing finite array, got {discretize!r}")
    counters = [Counter(), Counter()]
    from tqdm.auto import tqdm

    with tqdm(total=2 * t, disable=not progress, desc="audit_mechanism", unit="draw", unit_scale=True) as bar:
        for side, data in enumerate((dataset, neighbour)):
            done = 0
            while done < t:
                n = min(chunk, t - done)
                arr = _draw(mechanism, takes_rng, data, n, g_sides[side])
                if edges is not None:
                    if arr.ndim != 1:
                        raise ValueError(f"discretize needs 1-D real outputs, got shape {arr.shape}")
                    arr = bin_index(edges, arr)
                _count_into(counters[side], arr)
                done += n
                bar.update(n)
    keys = list(set(counters[0]) | set(counters[1]))
    try:
        keys.sort()
    except TypeError:
        keys.sort(key=repr)
    if edges is not None:
        keys = list(range(edges.size + 1))
    if len(keys) < 2:
        keys = keys + ["<never observed>"]
    c0 = np.array([counters[0].get(k, 0) for k in keys], dtype=np.int64)
    c1 = np.array([counters[1].get(k, 0) for k in keys], dtype=np.int64)
    base = audit_counts(c0, c1, a, confidence=conf, claim=claim, delta=delta, selection=selection,
                        selection_fraction=selection_fraction, rng=g_sides[4],
                        outputs=keys)
    return MechanismAudit(**base.__dict__, trials=t, bin_edges=edges, discretize_trials=n_disc)


def _has_nan(arr: np.ndarray) -> bool:
    if arr.dtype.kind in "fc":
        return bool(np.isnan(arr).any())
    if arr.dtype.kind == "O":
        return any(isinstance(v, float) and v != v for v in arr.tolist()[:100_000])
    return False


def _draws(mechanism, takes_rng, data, n, gen, chunk, what):
    """Draw ``n`` outputs in chunks; check count and NaN."""
    done = 0
    while done < n:
        m = min(chunk, n - done)
        try:  # the mechanism's own errors and bad outputs: MechanismError, its traceback kept (item 27)
            arr = _draw(mechanism, takes_rng, data, m, gen)
        except MechanismError as exc:
            raise MechanismError(f"{exc} (on {what})") from exc.__cause__
        if arr.dtype == object and arr.size and not isinstance(arr[0], (str, bytes)):
            try:  # a list of numbers or of equal-length number lists: a numeric array
                num = np.asarray(arr.tolist())
            except (ValueError, TypeError):
                num = None
            if num is not None and num.dtype.kind in "iubf" and num.shape[:1] == (m,):
                arr = num
        if _has_nan(arr):
            raise ValueError(f"mechanism returned NaN outputs on {what}")
        done += m
        yield arr
