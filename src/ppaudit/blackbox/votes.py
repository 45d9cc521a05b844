"""Audit a PATE operator's own teacher votes (``ppaudit audit-votes``).

Input: a ``.npz`` file with either

* ``votes``: integer array ``(n_teachers, n_queries)`` — teacher ``t``'s label for query ``q``,
  in ``[0, C)``; ``C`` is ``num_classes`` if the file has that scalar, else ``max + 1``; or
* ``histograms``: non-negative integer array ``(n_queries, C)`` — the vote histograms.

What is computed (:func:`audit_votes`):

1. **Accounted cost**, per query and composed over queries (RDP adds up): the
   data-independent GNMax bound ``α/σ²`` (Papernot et al. 2018, Prop. 8), the data-dependent
   GNMax bound (Prop. 7 + Thm 6) or, with ``threshold``/``sigma_threshold``, the expected
   Confident-GNMax cost (:func:`ppaudit.accounting.confident_gnmax_rdp`); each converted to ε
   at δ with Balle et al. 2020, Thm 20 (Chadha et al. 2024, Thm 1) — valid, these are upper
   bounds.
2. **Exact per-query RDP** of the GNMax answer (Chadha et al. 2024, Eq. (4)): for the
   ``exact_queries`` queries with the largest data-dependent cost at the order that sets the
   composed ε, the maximum over *all* neighbouring histograms (one teacher's vote moved from
   class ``i`` to class ``j``) of ``D_α`` in both directions. A deterministic check: the exact
   forward divergence ``D_α(M(h) ‖ M(h'))`` must not exceed the data-dependent bound at ``h``
   (Thm 6 bounds that direction); an excess is reported as a violation.
3. **Audit of the most exposed query** (largest exact RDP at that order): ``trials`` noisy-argmax
   draws on ``h`` and on its worst neighbour, then :func:`ppaudit.blackbox.audit_counts` against
   the data-independent claim ``α/σ²`` every GNMax answer makes. Under Confident-GNMax an
   answered query is a GNMax answer at ``σ`` (the check's noise is independent), so the same
   claim applies to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import as_orders, check_positive_int, check_probability, check_sigma
from ..accounting import gnmax_rdp_data_dependent, rdp_to_dp
from ..audit.planning import SAFETY_FACTOR, two_cut_trials_needed
from ..divergence import renyi_divergence_from_log
from ..noisy_argmax import log_class_probabilities
from .claims import Claim
from .mechanism import CountsAudit, audit_counts

__all__ = [
    "DEFAULT_VOTE_ORDERS", "VotesAudit", "VotesLayoutWarning", "read_votes_file", "votes_to_histograms",
    "votes_look_transposed", "load_votes", "neighbour_histograms", "audit_votes",
    "audit_resolution", "CONVERSIONS", "MAX_CLASSES", "RESOLVED_FRACTION",
]

#: The two RDP → (ε, δ) conversions :func:`audit_votes` reports (``rdp_to_dp`` methods).
CONVERSIONS = {
    "balle2020": "RDP → (ε, δ): Balle et al. 2020, Thm 20",
    "classic": "RDP → (ε, δ): classic, ε = RDP_α + log(1/δ)/(α−1) (Papernot et al. 2018; Mironov 2017, Prop. 3)",
}
#: The audit resolves the exposed query's effect when its RDP lower bound reaches this share of
#: the most a 2-cut of the pair can show, at some order.
RESOLVED_FRACTION = 0.5

#: Most classes a votes file may have (a label above it is not a class index).
MAX_CLASSES = 100_000

#: Orders used by :func:`audit_votes` unless given.
DEFAULT_VOTE_ORDERS = np.concatenate([np.linspace(1.5, 10.0, 18), np.geomspace(12.0, 2000.0, 40)])


class VotesLayoutWarning(UserWarning):
    """A votes array that looks transposed (queries × teachers); see :func:`votes_look_transposed`."""


def _column_plurality_share(lines: np.ndarray, c: int) -> float:
    """Mean over the columns of ``lines`` of the share of the most frequent label in the column."""
    counts = np.zeros((c, lines.shape[1]), dtype=np.int64)
    np.add.at(counts, (lines, np.broadcast_to(np.arange(lines.shape[1]), lines.shape)), 1)
    return float((counts.max(axis=0) / lines.shape[0]).mean())


def votes_look_transposed(votes, num_classes: int | None = None) -> bool:
    """Whether a ``(n_teachers, n_queries)`` label array looks like ``(n_queries, n_teachers)``.

    Rule: it has more columns ("queries") than rows ("teachers"), **and** its rows agree more
    than its columns: the mean plurality share of a row (the share of its most frequent label)
    exceeds that of a column. Teachers of a PATE deployment agree on a query — the consensus is
    what PATE's data-dependent accounting pays for — while one teacher's labels across
    queries follow the class mix; so in the right layout the columns (queries) agree more. Both
    conditions are needed: more queries than teachers alone is common (250 teachers, 9,000
    queries). Only a warning: a deployment whose teachers agree no better than chance cannot
    be told apart.

    Args:
        votes: 2-D integer labels in ``[0, C)``.
        num_classes: ``C`` (default ``max + 1``).
    """
    v = np.asarray(votes, dtype=np.int64)
    if v.ndim != 2 or v.shape[1] <= v.shape[0]:
        return False
    c = int(num_classes) if num_classes is not None else int(v.max()) + 1
    return _column_plurality_share(v.T, c) > _column_plurality_share(v, c)  # rows agree more than columns


def _describe_start(raw: bytes) -> str:
    text = raw[:24].decode("utf-8", errors="replace")
    return repr(text) if text.isprintable() else f"bytes {raw[:8]!r}"


def _integer_array(arr: np.ndarray, what: str) -> np.ndarray:
    if arr.dtype.kind not in "iuf" or arr.dtype.kind == "b":
        raise ValueError(f"{what} must hold integers, got dtype {arr.dtype}")
    bad = ~np.isfinite(arr) | (arr < 0) | (arr != np.round(arr))
    if bad.any():
        raise ValueError(f"{what} must hold integers >= 0, got {arr[bad][:5].tolist()}")
    return arr.astype(np.int64)


def _num_classes(value, given: int | None, where: str) -> int | None:
    if value is None:
        return given
    arr = np.asarray(value)
    if arr.ndim != 0 or arr.dtype.kind not in "iu" or int(arr) < 2:
        shown = arr.tolist() if arr.size <= 8 else f"an array of shape {arr.shape}"
        raise ValueError(f"{where}: 'num_classes' must be one integer >= 2, got {shown!r}")
    c = int(arr)
    if given is not None and given != c:
        raise ValueError(f"{where}: 'num_classes' is {c} but num_classes={given} was given")
    return c


def read_votes_file(path, *, histograms: bool = False) -> tuple[str, np.ndarray, int | None]:
    """Read a votes file as stored: ``(kind, array, num_classes)`` with kind ``"votes"`` or ``"histograms"``.

    ``.npz`` (``numpy.savez``): the array ``votes`` (``(n_teachers, n_queries)`` labels, with an
    optional scalar ``num_classes``) or ``histograms`` (``(n_queries, C)``). ``.npy``
    (``numpy.save``): one array, labels ``(n_teachers, n_queries)``, or histograms
    ``(n_queries, C)`` with ``histograms=True``. The format is told by the file's first bytes,
    not its name. Pickled (object) arrays are refused.

    Raises:
        ValueError: naming the file, for an empty, unreadable or non-numpy file, missing or
            malformed arrays, or a ``num_classes`` that is not one integer ``>= 2``.
    """
    import zipfile

    where = str(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        raise ValueError(f"{where}: cannot open: {exc.strerror or exc}") from None
    if not head:
        raise ValueError(f"{where} is empty (0 bytes); expected a .npz (numpy.savez) or .npy (numpy.save) file")
    is_npz, is_npy = head.startswith(b"PK"), head.startswith(b"\x93NUMPY")
    if not (is_npz or is_npy):
        raise ValueError(f"{where} is not a numpy .npz/.npy file (it starts with {_describe_start(head)}); "
                         "write the votes with numpy.savez(path, votes=...) or numpy.save(path, votes)")
    try:
        if is_npy:
            arr = np.load(path, allow_pickle=False)
            return ("histograms" if histograms else "votes"), np.asarray(arr), None
        with np.load(path, allow_pickle=False) as z:
            keys = set(z.files)
            if "histograms" in keys:
                return "histograms", np.asarray(z["histograms"]), None
            if histograms:
                raise ValueError(f"{where} has no array 'histograms' (found {sorted(keys)}); "
                                 "--histograms applies to .npy files and to .npz files with 'histograms'")
            if "votes" not in keys:
                raise ValueError(f"{where}: expected an array 'votes' (n_teachers, n_queries) or 'histograms' "
                                 f"(n_queries, C); found {sorted(keys)}")
            c = _num_classes(z["num_classes"], None, where) if "num_classes" in keys else None
            return "votes", np.asarray(z["votes"]), c
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise ValueError(f"{where} holds a pickled (object) array; save plain integer arrays "
                             "(numpy.savez(path, votes=np.asarray(votes, dtype=int)))") from None
        raise
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        raise ValueError(f"{where} is not a readable .npz/.npy file ({type(exc).__name__}: {exc})") from None


def votes_to_histograms(votes, num_classes: int | None = None) -> np.ndarray:
    """``(n_teachers, n_queries)`` labels in ``[0, C)`` → ``(n_queries, C)`` vote histograms.

    Raises:
        ValueError: for a non-2-D or empty array, labels that are not integers ``>= 0``, or a
            label ``>= num_classes``.
    """
    v = np.asarray(votes)
    if v.ndim != 2 or v.size == 0:
        raise ValueError(f"'votes' must have shape (n_teachers, n_queries), got {v.shape}")
    v = _integer_array(v, "'votes'")
    c = int(v.max()) + 1 if num_classes is None else int(num_classes)
    if c > MAX_CLASSES:
        raise ValueError(f"'votes' has label {int(v.max())}: labels must be class indices 0..C-1 with C <= {MAX_CLASSES:,}")
    if v.max() >= c:
        raise ValueError(f"'votes' has label {int(v.max())} >= num_classes={c}")
    c = max(c, 2)
    out = np.zeros((v.shape[1], c), dtype=np.int64)
    np.add.at(out, (np.broadcast_to(np.arange(v.shape[1]), v.shape), v), 1)
    return out


def load_votes(path, *, histograms: bool = False, num_classes: int | None = None) -> np.ndarray:
    """Read a votes file (:func:`read_votes_file`) and return ``(n_queries, C)`` integer histograms.

    Warns :class:`VotesLayoutWarning` when a label array looks transposed
    (:func:`votes_look_transposed`).

    Args:
        path: a ``.npz`` or ``.npy`` file.
        histograms: a ``.npy`` file holds ``(n_queries, C)`` histograms, not labels.
        num_classes: ``C`` for label arrays (default: the file's ``num_classes``, else ``max + 1``).

    Raises:
        ValueError: if the file has neither ``votes`` nor ``histograms``, or they are malformed.
    """
    import warnings

    kind, arr, c_file = read_votes_file(path, histograms=histograms)
    if kind == "histograms":
        if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 2:
            raise ValueError(f"{path}: 'histograms' must have shape (n_queries, C) with C >= 2, got {arr.shape}")
        h = _integer_array(arr, f"{path}: 'histograms'")
        empty = np.flatnonzero(h.sum(axis=1) == 0)
        if empty.size:
            raise ValueError(f"{path}: 'histograms' row {int(empty[0])} has no votes; every query needs at least one")
        if num_classes is not None and num_classes != h.shape[1]:
            raise ValueError(f"{path}: 'histograms' has C={h.shape[1]} classes but num_classes={num_classes} was given")
        return h
    c = _num_classes(c_file, num_classes, str(path)) if c_file is not None else num_classes
    try:
        h = votes_to_histograms(arr, c)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if votes_look_transposed(arr, h.shape[1]):
        warnings.warn(f"{path}: 'votes' of shape {arr.shape} is read as {arr.shape[0]} teachers x {arr.shape[1]} queries, "
                      "but its rows agree more than its columns: it looks transposed (queries x teachers); "
                      "if so, save votes.T", VotesLayoutWarning, stacklevel=2)
    return h


def neighbour_histograms(hist) -> tuple[np.ndarray, np.ndarray]:
    """Every histogram reachable by moving one vote from class ``i`` (``h_i > 0``) to ``j ≠ i``.

    Returns:
        ``(neighbours, moves)``: ``(K, C)`` histograms and ``(K, 2)`` ``(i, j)`` pairs.
    """
    h = np.asarray(hist, dtype=np.int64)
    c = h.size
    moves = np.array([(i, j) for i in range(c) if h[i] > 0 for j in range(c) if j != i], dtype=np.int64)
    nb = np.repeat(h[None], len(moves), 0)
    nb[np.arange(len(moves)), moves[:, 0]] -= 1
    nb[np.arange(len(moves)), moves[:, 1]] += 1
    return nb, moves


@dataclass
class VotesAudit:
    """Result of :func:`audit_votes` (every number; ``to_dict`` for JSON).

    Attributes:
        num_queries, num_classes: the shape of the votes.
        sigma, threshold, sigma_threshold, delta, orders: the settings.
        mechanism: ``"gnmax"`` or ``"confident_gnmax"``.
        per_query_rdp: ``(n_queries, len(orders))`` accounted data-dependent cost.
        epsilon_data_dependent, order_data_dependent: composed ε at δ and its order
            (Balle et al. 2020, Thm 20; :data:`CONVERSIONS`).
        epsilon_data_dependent_classic, order_data_dependent_classic: the same RDP curve with the
            classic conversion of Papernot et al. 2018 (larger; what pate_2018 reports).
        epsilon_data_independent: ε at δ of ``n_queries · α/σ²`` (GNMax answers only).
        exact_queries: indices of the queries whose exact RDP was computed.
        exact_rdp: ``(len(exact_queries), len(orders))`` exact worst-neighbour RDP.
        exact_exceeds_data_dependent: queries where the exact forward RDP exceeds the bound.
        most_exposed_query, worst_neighbour: the audited pair.
        audit: the :class:`CountsAudit` of that pair against ``α/σ²``.
        verdict: ``"violation"`` or ``"consistent"``.
        resolution: whether the audit resolves the exposed query's effect
            (:func:`audit_resolution`).
    """

    num_queries: int
    num_classes: int
    sigma: float
    threshold: float | None
    sigma_threshold: float | None
    delta: float
    orders: np.ndarray
    mechanism: str
    per_query_rdp: np.ndarray
    epsilon_data_dependent: float
    order_data_dependent: float
    epsilon_data_independent: float
    exact_queries: np.ndarray
    exact_rdp: np.ndarray
    exact_exceeds_data_dependent: list
    most_exposed_query: int
    worst_neighbour: np.ndarray
    audit: CountsAudit
    verdict: str
    details: dict = field(default_factory=dict)
    epsilon_data_dependent_classic: float = float("nan")
    order_data_dependent_classic: float = float("nan")
    resolution: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        j = int(np.argmin(np.abs(self.orders - self.order_data_dependent)))
        q = list(self.exact_queries).index(self.most_exposed_query)
        return {
            "mechanism": self.mechanism, "num_queries": self.num_queries, "num_classes": self.num_classes,
            "sigma": self.sigma, "threshold": self.threshold, "sigma_threshold": self.sigma_threshold,
            "delta": self.delta,
            "epsilon_data_dependent": self.epsilon_data_dependent, "order_data_dependent": self.order_data_dependent,
            "epsilon_data_independent": self.epsilon_data_independent,
            "epsilon_data_dependent_classic": self.epsilon_data_dependent_classic,
            "order_data_dependent_classic": self.order_data_dependent_classic,
            "accounted_epsilon": [
                {"kind": "data_dependent", "epsilon": self.epsilon_data_dependent, "order": self.order_data_dependent,
                 "conversion": "balle2020", "procedure": CONVERSIONS["balle2020"]},
                {"kind": "data_dependent", "epsilon": self.epsilon_data_dependent_classic,
                 "order": self.order_data_dependent_classic, "conversion": "classic", "procedure": CONVERSIONS["classic"]},
                {"kind": "data_independent", "epsilon": self.epsilon_data_independent, "conversion": "balle2020",
                 "procedure": CONVERSIONS["balle2020"]},
            ],
            "exact_queries": [int(x) for x in self.exact_queries],
            "exact_rdp_at_order": [float(x) for x in self.exact_rdp[:, j]],
            "data_dependent_rdp_at_order": [float(self.per_query_rdp[k, j]) for k in self.exact_queries],
            "exact_exceeds_data_dependent": self.exact_exceeds_data_dependent,
            "most_exposed_query": self.most_exposed_query,
            "most_exposed_histogram": [int(x) for x in self.details["histogram"]],
            "worst_neighbour": [int(x) for x in self.worst_neighbour],
            "most_exposed_exact_rdp_at_order": float(self.exact_rdp[q, j]),
            "audit": self.audit.to_dict(),
            "resolution": self.resolution,
            "verdict": self.verdict,
            "procedure": {"accounting": "paper", "exact_and_audit": "ours"},
        }


def audit_votes(
    histograms,
    sigma: float,
    *,
    threshold: float | None = None,
    sigma_threshold: float | None = None,
    orders=None,
    delta: float = 1e-5,
    trials: int = 200_000,
    exact_queries: int = 20,
    confidence: float = 0.95,
    rng: np.random.Generator | np.random.SeedSequence | int | None = 0,
) -> VotesAudit:
    """Accounted cost, exact per-query RDP and an audit of the most exposed query (module docstring).

    Args:
        histograms: ``(n_queries, C)`` vote histograms (see :func:`load_votes`).
        sigma: GNMax noise σ (σ₂ of Confident-GNMax).
        threshold, sigma_threshold: Confident-GNMax's ``T`` and ``σ₁`` (both or neither).
        orders: Rényi orders (default :data:`DEFAULT_VOTE_ORDERS`).
        delta: δ of the reported ε.
        trials: noisy-argmax draws per side for the audit.
        exact_queries: how many of the costliest queries get the exact RDP.
        confidence: confidence of the audit's verdict.
        rng: generator / SeedSequence / seed.

    Returns:
        :class:`VotesAudit`.

    Raises:
        ValueError: on bad histograms, σ, orders, δ, trials, or only one of
            ``threshold`` / ``sigma_threshold``.
    """
    h = np.asarray(histograms)
    if h.ndim != 2 or h.shape[1] < 2 or h.shape[0] < 1:
        raise ValueError(f"histograms must have shape (n_queries, C) with C >= 2, got {h.shape}")
    s = check_sigma(sigma)
    a = as_orders(DEFAULT_VOTE_ORDERS if orders is None else orders)
    d = check_probability(delta, "delta")
    t = check_positive_int(trials, "trials")
    k = check_positive_int(exact_queries, "exact_queries")
    if (threshold is None) != (sigma_threshold is None):
        raise ValueError(f"give both threshold and sigma1 (Confident-GNMax) or neither, got threshold={threshold}, sigma1={sigma_threshold}")
    n_q, c = h.shape
    if np.any(h.sum(axis=1) <= 0):
        raise ValueError(f"every query needs at least one vote; query {int(np.flatnonzero(h.sum(axis=1) <= 0)[0])} has none")
    dd_gnmax = np.atleast_2d(gnmax_rdp_data_dependent(h, s, a))
    if threshold is not None:
        from ..accounting import confident_gnmax_rdp  # issue 14 §1

        per_query = np.atleast_2d(confident_gnmax_rdp(h, threshold, sigma_threshold, s, a))
        mech = "confident_gnmax"
    else:
        per_query = dd_gnmax
        mech = "gnmax"
    total = per_query.sum(axis=0)
    eps_dd, order_dd = rdp_to_dp(total, a, d, return_order=True)
    eps_classic, order_classic = rdp_to_dp(total, a, d, method="classic", return_order=True)
    eps_di = float(rdp_to_dp(n_q * a / (s * s), a, d))
    j = int(np.argmin(np.abs(a - order_dd)))
    chosen = np.argsort(-per_query[:, j], kind="stable")[: min(k, n_q)]
    exact = np.empty((chosen.size, a.size))
    worst = []
    exceeds = []
    for r, q in enumerate(chosen):
        nb, _ = neighbour_histograms(h[q])
        l0 = log_class_probabilities(h[q][None].astype(np.float64), s)
        l1 = log_class_probabilities(nb.astype(np.float64), s)
        fwd = renyi_divergence_from_log(l0, l1, a)
        rev = renyi_divergence_from_log(l1, l0, a)
        both = np.maximum(fwd, rev)
        exact[r] = both.max(axis=0)
        worst.append(nb[int(np.argmax(both[:, j]))])
        over = fwd.max(axis=0) > dd_gnmax[q] * (1 + 1e-6) + 1e-9
        if np.any(over):
            exceeds.append({"query": int(q), "orders": [float(x) for x in a[over]]})
    best = int(np.argmax(exact[:, j]))
    q_star = int(chosen[best])
    from ..montecarlo import noisy_argmax_counts_pair, spawn_generators

    g_mc, g_audit = spawn_generators(rng, 2)
    c0, c1 = noisy_argmax_counts_pair(h[q_star], worst[best], s, t, rng=g_mc)
    audit = audit_counts(c0, c1, a, confidence=confidence, claim=Claim.rdp(a, a / (s * s)), delta=d, rng=g_audit,
                         outputs=list(range(c)))
    verdict = "violation" if (audit.violation or exceeds) else "consistent"
    resolution = audit_resolution(h[q_star], worst[best], s, audit, exact[best])
    return VotesAudit(n_q, c, s, threshold, sigma_threshold, d, a, mech, per_query, float(eps_dd), float(order_dd), eps_di,
                      chosen, exact, exceeds, q_star, worst[best], audit, verdict, {"histogram": h[q_star]},
                      float(eps_classic), float(order_classic), resolution)


def audit_resolution(hist, neighbour, sigma: float, audit: CountsAudit, exact_rdp, fraction: float = RESOLVED_FRACTION) -> dict:
    """Whether a Monte Carlo audit of a GNMax answer resolves the pair's effect, and the trials it would need.

    The audit's 2-cut bound can never exceed the ideal 2-cut ``D_O(α)`` of the exact
    distributions (:func:`ppaudit.divergence.two_cut`, both directions). The effect counts as
    resolved when ``lower_bound(α) ≥ fraction · D_O(α)`` at some order; otherwise the draws per
    side that would bring the bound there are predicted by
    :func:`ppaudit.audit.two_cut_trials_needed` (same confidence, Bonferroni count and split as
    the audit; the needed draws grow as ``1/D_O²``, see there).

    Args:
        hist, neighbour: the audited histogram pair.
        sigma: GNMax σ.
        audit: the :class:`CountsAudit` of the pair.
        exact_rdp: the pair's exact worst-neighbour RDP per order (for the report).
        fraction: the share of ``D_O`` that counts as resolved.

    Returns:
        A dict: ``resolved``, ``resolved_fraction`` (max over orders of bound / ``D_O``), ``order``
        (where that max is reached; if unresolved, the order of the prediction) and
        ``lower_bound`` / ``attainable_two_cut`` / ``exact_rdp`` there, ``trials`` (the audit's draws
        per side), ``fraction``, ``trials_needed`` (the lower estimate of
        :func:`ppaudit.audit.two_cut_trials_needed`; ``None`` when resolved, or when even 10¹² draws
        would not do) and ``trials_suggested`` (:data:`ppaudit.audit.planning.SAFETY_FACTOR` times it).
    """
    from ..divergence import two_cut
    from ..noisy_argmax import class_probabilities

    a = audit.orders
    p = class_probabilities(np.asarray(hist, dtype=np.float64), sigma)
    q = class_probabilities(np.asarray(neighbour, dtype=np.float64), sigma)
    ideal = np.maximum(two_cut(p, q, a), two_cut(q, p, a))
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(ideal > 0, audit.rdp_lower_bound / ideal, 0.0)
    j = int(np.argmax(share))
    resolved = bool(share[j] >= fraction)
    need = None
    if not resolved:
        need = two_cut_trials_needed(p, q, a, fraction=fraction, confidence=audit.confidence,
                                     tests=int(audit.details.get("tests", 1)))
        j = int(np.argmin(np.abs(a - need.order)))  # report at the order the prediction uses
    out = {"resolved": resolved, "resolved_fraction": float(share.max()), "fraction": float(fraction),
           "order": float(a[j]), "lower_bound": float(audit.rdp_lower_bound[j]), "attainable_two_cut": float(ideal[j]),
           "exact_rdp": float(np.asarray(exact_rdp)[j]), "trials": int(min(audit.counts0.sum(), audit.counts1.sum())),
           "trials_needed": None if need is None else need.trials,
           "trials_suggested": None if need is None or need.trials is None else SAFETY_FACTOR * need.trials,
           "procedure": "ours (ppaudit.audit.two_cut_trials_needed; suggested = SAFETY_FACTOR x needed)"}
    return out
