"""Joint model of the Pois-NatQ transcript: one training draw shared by all natural queries.

Chadha et al. 2024 (§4.1, §5.1, §5.4) audit Pois-NatQ query by query and sum the per-query
RDP over the ``n_Q`` natural queries ("paper: per-query composition"). The sum is the RDP of
the transcript only if the answers to different queries are independent, i.e. if every query
had its own training run. With random partitions (PATE) or a randomised learner (CaPC with
seeds) one training run is shared by all queries: the canary-holding teacher that flips its
vote on query ``q`` is the same model that votes on every other query, so its votes across
the queries are dependent, and the per-query sum is then neither an upper nor a lower bound of
the transcript's divergence in general.

**The joint model** (``procedure = "ours"``, twin-paired as :mod:`.twin`): one transcript is
one training draw ``g`` (uniform over the ``N_g'`` instantiations that exist) and one answer
per query:

    S:   ``H_q = B_q + e_{V^twin_g[q]}``,   S':  ``H_q = B_q + e_{V^canary_g[q]}``,   answer ``argmax(H_q + N(0, σ²I))``,

with ``V^twin_g`` / ``V^canary_g`` the **joint vote vectors** over the ``n_Q`` queries of the
canary-free twin and the canary-holding teacher of instantiation ``g`` (the empirical joint
law of the ``N_g'`` pairs: its per-query marginals are exactly the fitted ``P^twin_q`` /
``P'_q`` of :class:`~ppaudit.vote_models.twin.TwinFit`), and ``B_q`` the other ``k − 1``
voters drawn **per the fitted model, independently per query** (``Mult(k−1, P_q)`` for PATE,
``Σ_{i≠j} Mult(1, P^i_q)`` for CaPC). What the data do not give: the other teachers' votes are
identical in law on both sides, but their own dependence across queries (they too share the
training draw) is not modelled — ``N_g`` = 1–2 instantiations of ``k`` teachers do not pin
down a ``C^{n_Q}`` joint law; and the empirical joint law of the differing voter rests on the
``N_g'`` (4 on the default) paired instantiations, so it is the maximum-likelihood joint law,
as uncertain as the marginals it reproduces.

Queries on which every twin and canary instantiation casts the same vote are independent of
the draw and identically distributed on both sides; dropping their answers changes no
divergence (they are an independent, side-free factor of the transcript law), so the model
keeps only the *informative* queries.

Per informative query ``q`` and vote ``v``, ``R_q(v) = Pr[answer | B_q + e_v]`` (Eq. (4)
mixed over the base): exact by certified enumeration of ``B_q``
(:func:`~ppaudit.vote_models.enumerate_base_certified`), else estimated from pilot draws.
Given the draw ``g`` the answers are independent with laws ``R_q(V_g[q])``, so

    ``L_S(a) = (1/N) Σ_g Π_q R_q(V^twin_g[q])(a_q)``  (and ``L_S'`` with the canary vectors).

* :meth:`JointNaturalQueryModel.sample_transcripts` / :meth:`~JointNaturalQueryModel.transcript_statistic`
  make the model a *transcript source* of :func:`ppaudit.audit.transcript_audit` (the one
  transcript audit; the statistic is the exact log-likelihood ratio ``log L_S − log L_S'``).
* :func:`joint_transcript_rdp` — the joint transcript's RDP: exact by enumeration of the
  ``Π_q C`` answer vectors when small (with the exact ε by PLD), else a Monte Carlo estimate
  with a standard error; and the certified **joint cap**
  ``max_g max(Σ_q D̄_α(R_q(V^twin_g[q]) ‖ R_q(V^canary_g[q])), reverse)`` by the joint
  quasi-convexity of Rényi divergence (van Erven & Harremoës 2014, Thm 13: the divergence of
  two mixtures with the same weights is at most the largest divergence of the paired
  components) and additivity over the independent answers given ``g``; ``D̄`` are the
  certified upper ends from the boxes ``[R̂ − e, R̂ + r + e]`` of each law (pruned base mass
  ``r``, absolute quadrature error ``e = 1e-12`` of :func:`ppaudit.noisy_argmax.class_probabilities`;
  no renormalisation, as :func:`~ppaudit.vote_models.certified_mixture_rdp`). A box whose lower
  end is 0 makes the cap infinite at that order (honestly uninformative, never too small).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from .._logsumexp import logsumexp  # scipy.special.logsumexp, the same numbers (issue 30 §1)

from .._validation import as_orders, check_positive_int, check_sigma
from ..divergence import poisson_binomial_pmf, renyi_divergence_from_llr_samples, renyi_divergence_from_log
from ..noisy_argmax import class_probabilities
from .enumeration import _log_power_sum, enumerate_base_certified
from .model import QUADRATURE_ABS_ERROR, NeighbouringVoteModel

#: Most base draws of the estimated tables (Rao–Blackwellised: each draw is an exact law).
_MAX_ESTIMATE_DRAWS = 5000

__all__ = ["JointNaturalQueryModel", "JointTranscriptRDP", "joint_natural_query_model", "joint_transcript_rdp"]


def _point(c: int, v: int) -> np.ndarray:
    p = np.zeros(c)
    p[int(v)] = 1.0
    return p


@dataclass
class JointNaturalQueryModel:
    """The joint Pois-NatQ model of one candidate canary (module docstring).

    Attributes:
        bases: per informative query, a :class:`NeighbouringVoteModel` whose base (constant
            and groups) is the query's other ``k − 1`` voters (its ``last`` is not used).
        votes: ``(N, Q)`` the twins' votes on the informative queries (S side).
        votes_prime: ``(N, Q)`` the canary teachers' votes, paired row by row (S' side).
        queries: ``(Q,)`` the informative queries (indices into the query set).
        num_dropped: natural queries dropped as uninformative (same vote everywhere).
        num_classes: ``C``.
    """

    bases: list
    votes: np.ndarray
    votes_prime: np.ndarray
    queries: np.ndarray
    num_dropped: int
    num_classes: int
    _tables: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def num_queries(self) -> int:
        return int(self.queries.size)

    @property
    def identical(self) -> bool:
        """True when the two joint laws are equal: no informative query, or the same multiset of
        vote vectors on both sides (the empirical joint laws coincide)."""
        if self.num_queries == 0:
            return True
        if self.votes.shape != self.votes_prime.shape:
            return False
        # the empirical joint laws are equal when the two multisets of vote vectors are
        return bool(np.array_equal(np.unique(self.votes, axis=0, return_counts=True)[1], np.unique(self.votes_prime, axis=0, return_counts=True)[1])
                    and np.array_equal(np.unique(self.votes, axis=0), np.unique(self.votes_prime, axis=0)))

    # -- transcript source protocol of ppaudit.audit.transcript_audit
    def transcript_total_variation(self) -> float:
        """Certified total variation between one transcript of :meth:`sample_transcripts` (either
        side) and its exact law: one base draw per informative query, each within
        :meth:`~ppaudit.vote_models.NeighbouringVoteModel.base_total_variation` of exact."""
        return float(sum(base.base_total_variation() for base in self.bases))

    def sample_transcripts(self, which: str, sigma: float, num_repeats: int, trials: int, rng: np.random.Generator) -> np.ndarray:
        """``trials`` joint transcripts of one side: ``(trials, Q)`` answers (int64).

        Each transcript draws one instantiation ``g`` (uniform), then per informative query a
        base ``B_q`` from the fitted model, the vote ``V_g[q]`` of that side and one noisy argmax.

        Raises:
            ValueError: ``num_repeats != 1`` (Pois-NatQ asks each natural query once), a bad side.
        """
        if int(num_repeats) != 1:
            raise ValueError(f"the joint natural-query transcript asks each query once: num_repeats must be 1, got {num_repeats}")
        s = check_sigma(sigma)
        t = check_positive_int(trials, "trials")
        v = self._side(which)
        c = self.num_classes
        g = rng.integers(0, v.shape[0], size=t)
        out = np.empty((t, self.num_queries), dtype=np.int64)
        for j, base in enumerate(self.bases):
            h = base.sample_base(rng, t).astype(np.float64)
            h[np.arange(t), v[g, j]] += 1.0
            out[:, j] = np.argmax(h + s * rng.standard_normal((t, c)), axis=1)
        return out

    def transcript_statistic(self, sigma: float, num_repeats: int, rng: np.random.Generator, pilot_trials: int, statistic: str = "auto",
                             max_support: int = 50_000):
        """``(f, kind)``: ``f(answers (M, Q)) -> (M,)`` the log-likelihood ratio ``log L_S − log L_S'``.

        ``kind = "exact"`` when every informative query's base enumerates within
        ``max_support`` (tables :meth:`log_tables`), else ``"pilot"`` (tables estimated from
        ``min(pilot_trials, 5000)`` base draws per query, :meth:`estimated_tables`, on the
        pilot stream). Either is a fixed function of the transcript, fixed before the audit
        draws, so the audit is valid; estimation costs power only.
        """
        if statistic not in ("auto", "exact", "pilot"):
            raise ValueError(f"statistic must be 'auto', 'exact' or 'pilot', got {statistic!r}")
        if int(num_repeats) != 1:
            raise ValueError(f"num_repeats must be 1 for the joint natural-query transcript, got {num_repeats}")
        tables, kind = None, "pilot"
        if statistic in ("auto", "exact"):
            tables = self.log_tables(sigma, max_support=max_support)
            if tables is None and statistic == "exact":
                raise ValueError("a query's base does not enumerate within max_support: use statistic='pilot'")
            kind = "exact" if tables is not None else "pilot"
        if tables is None:
            tables = self.estimated_tables(sigma, min(check_positive_int(pilot_trials, "pilot_trials"), _MAX_ESTIMATE_DRAWS), rng)
        lt, vs, vp = tables[0], self.votes, self.votes_prime
        q = np.arange(self.num_queries)

        def f(answers: np.ndarray) -> np.ndarray:
            a = np.asarray(answers, dtype=np.int64)
            l0 = logsumexp(lt[q[None, None, :], vs[None, :, :], a[:, None, :]].sum(axis=2), axis=1) - math.log(vs.shape[0])
            l1 = logsumexp(lt[q[None, None, :], vp[None, :, :], a[:, None, :]].sum(axis=2), axis=1) - math.log(vp.shape[0])
            return l0 - l1

        return f, kind

    # -- output tables
    def log_tables(self, sigma: float, max_tail_mass: float = 1e-12, max_support: int = 50_000):
        """Exact ``log R_q(v)(a)`` by certified enumeration of each base, or None if one does not enumerate.

        Returns:
            ``(log_R (Q, C, C), tail (Q,))``: ``log_R[q, v, a]`` for the votes ``v`` used at
            ``q`` (``-inf`` rows elsewhere); the retained laws are sub-probabilities missing at
            most ``tail[q]``.
        """
        s = check_sigma(sigma)
        key = ("exact", s, float(max_tail_mass), int(max_support))
        if key in self._tables:
            return self._tables[key]
        c = self.num_classes
        lt = np.full((self.num_queries, c, c), -np.inf)
        tails = np.zeros(self.num_queries)
        for j, base in enumerate(self.bases):
            enum = enumerate_base_certified(base, max_tail_mass, max_support)
            if enum is None:
                self._tables[key] = None
                return None
            hist, w, tail = enum
            tails[j] = tail
            for v in self._used(j):
                h = hist.astype(np.float64)
                h[:, v] += 1.0
                with np.errstate(divide="ignore"):
                    lt[j, v] = np.log(np.maximum(w @ np.atleast_2d(class_probabilities(h, s)), 1e-300))  # finite statistic
        self._tables[key] = (lt, tails)
        return self._tables[key]

    def estimated_tables(self, sigma: float, draws: int, rng: np.random.Generator):
        """``log R̂_q(v)`` by Rao–Blackwellised Monte Carlo: ``R̂ = mean_m p(B_m + e_v)`` over
        ``draws`` base draws, with ``p`` the exact noisy-argmax law of Eq. (4) (an unbiased
        estimate of ``R_q(v)``; not certified). Returns ``(log_R̂ (Q, C, C), zeros (Q,))``."""
        s = check_sigma(sigma)
        m = check_positive_int(draws, "draws")
        c = self.num_classes
        lt = np.full((self.num_queries, c, c), -np.inf)
        for j, base in enumerate(self.bases):
            b = base.sample_base(rng, m).astype(np.float64)
            for v in self._used(j):
                h = b.copy()
                h[:, v] += 1.0
                with np.errstate(divide="ignore"):
                    lt[j, v] = np.log(np.maximum(class_probabilities(h, s).mean(axis=0), 1e-300))
        return lt, np.zeros(self.num_queries)

    def conditional_statistic_draws(self, sigma: float, draws: int, rng: np.random.Generator, pilot_draws: int = 500,
                                    chunk_size: int = 4096):
        """Rao–Blackwellised draws of a joint-transcript statistic (for :func:`ppaudit.audit.rao_blackwell_two_cut`).

        Statistic: ``N = Σ_q 1[a_q ∈ A_q]``, the number of informative queries answered with a
        class the canary side makes likelier, ``A_q = {c : mean_g R̂_q(V'_g[q])(c) > mean_g R̂_q(V_g[q])(c)}``
        (fixed on ``pilot_draws`` independent base draws, :meth:`estimated_tables`). Per draw ``m``
        of the bases ``B_q`` (one per query, independently, as the model draws them) and per
        instantiation ``g``, the answers are independent with ``Pr[a_q ∈ A_q] = Σ_{c ∈ A_q} p(B_q + e_{V_g[q]})(c)``
        (Eq. (4)), so ``N`` is Poisson-binomial given ``(B, g)``; averaging over ``g`` gives the exact
        conditional laws ``p_m``, ``q_m`` of ``N`` given the bases on the two sides — i.i.d. rows
        whose means are the laws of ``N`` under the joint model. ``N`` is a post-processing of the
        transcript (data processing).

        Constants: ``|p_m(O) − q_m(O)| ≤ TV`` of the two empirical vote-vector laws (the same
        component laws mixed with different weights); numerical error ``≤ Q · τ_C`` (each answer's
        Bernoulli within the quadrature total variation ``τ_C``, and Poisson-binomial laws are
        within the sum of their coordinates' errors).

        Returns:
            ``(p, q, difference_bound, bias)`` with ``p``, ``q`` ``(draws, Q + 1)``.
        """
        from ..quadrature_bound import quadrature_error_bound

        s = check_sigma(sigma)
        m = check_positive_int(draws, "draws", minimum=2)
        if self.num_queries == 0:
            raise ValueError("no informative query: the two joint laws are identical, nothing to audit")
        g_pilot, g_draw = rng.spawn(2)
        c, nq = self.num_classes, self.num_queries
        lt, _ = self.estimated_tables(s, check_positive_int(pilot_draws, "pilot_draws"), g_pilot)
        r = np.exp(lt)
        qi = np.arange(nq)[None, :]
        shift = r[qi, self.votes_prime].mean(axis=0) - r[qi, self.votes].mean(axis=0)  # (Q, C)
        sets = shift > 0
        # TV of the empirical vote-vector laws (uniform over the paired instantiations of each side)
        both = np.concatenate([self.votes, self.votes_prime], axis=0)
        _, inv = np.unique(both, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        n0 = self.votes.shape[0]
        w0 = np.bincount(inv[:n0], minlength=inv.max() + 1) / n0
        w1 = np.bincount(inv[n0:], minlength=inv.max() + 1) / (both.shape[0] - n0)
        tv = float(min(1.0, 0.5 * np.abs(w0 - w1).sum()))
        p_out, q_out = np.empty((m, nq + 1)), np.empty((m, nq + 1))
        for a in range(0, m, chunk_size):
            k = min(chunk_size, m - a)
            pi = np.zeros((k, nq, c))  # Pr[a_q ∈ A_q | B_q + e_v] for every vote v
            for j, base in enumerate(self.bases):
                b = base.sample_base(g_draw, k).astype(np.float64)
                for v in self._used(j):
                    h = b.copy()
                    h[:, v] += 1.0
                    pi[:, j, v] = class_probabilities(h, s)[:, sets[j]].sum(axis=1)
            for side, out in ((self.votes, p_out), (self.votes_prime, q_out)):
                acc = np.zeros((k, nq + 1))
                for g in range(side.shape[0]):
                    acc += poisson_binomial_pmf(pi[:, np.arange(nq), side[g]])
                out[a : a + k] = acc / side.shape[0]
        bias = nq * quadrature_error_bound(c).total_variation
        return np.clip(p_out, 0.0, 1.0), np.clip(q_out, 0.0, 1.0), max(tv, 1e-300), bias

    def _used(self, j: int) -> np.ndarray:
        return np.unique(np.concatenate([self.votes[:, j], self.votes_prime[:, j]]))

    def _side(self, which) -> np.ndarray:
        if which in ("S", "s", 0):
            return self.votes
        if which in ("S'", "S_prime", "s_prime", 1):
            return self.votes_prime
        raise ValueError(f"which must be 'S' or 'S_prime', got {which!r}")


def joint_natural_query_model(fit, candidate: int, votes_twin, votes_canary, queries) -> JointNaturalQueryModel:
    """The joint Pois-NatQ model of one candidate from its twin-paired joint vote vectors (module docstring).

    Args:
        fit: a :class:`~ppaudit.vote_models.twin.TwinFit` (its per-query models give the
            other voters' bases ``B_q``).
        candidate: row of the fit.
        votes_twin: ``(N_g', n_queries)`` the canary-free twins' votes on the query set.
        votes_canary: ``(N_g', n_queries)`` the canary teachers' votes, paired row by row.
        queries: the natural queries asked (indices into the query set).

    Returns:
        A :class:`JointNaturalQueryModel` over the informative queries.

    Raises:
        ValueError: mismatched shapes, votes outside ``[0, C)``, queries out of range.
    """
    vt = np.asarray(votes_twin, dtype=np.int64)
    vc = np.asarray(votes_canary, dtype=np.int64)
    if vt.ndim != 2 or vt.shape != vc.shape or vt.shape[0] < 1:
        raise ValueError(f"votes_twin and votes_canary must both be (N_g' >= 1, n_queries), got {vt.shape} and {vc.shape}")
    q = np.asarray(queries, dtype=np.int64).reshape(-1)
    if q.size and (q.min() < 0 or q.max() >= vt.shape[1]):
        raise ValueError(f"queries must lie in [0, {vt.shape[1]}), got {q.tolist()}")
    first = fit.model(candidate, int(q[0]) if q.size else 0)
    c = first.num_classes
    if vt.size and (min(vt.min(), vc.min()) < 0 or max(vt.max(), vc.max()) >= c):
        raise ValueError(f"votes must lie in [0, {c})")
    both = np.concatenate([vt[:, q], vc[:, q]], axis=0)
    informative = q[(both != both[:1]).any(axis=0)]
    bases = []
    for qq in informative:
        m = fit.model(candidate, int(qq))
        bases.append(NeighbouringVoteModel(m.constant, m.group_counts, m.group_probs, _point(c, 0), _point(c, 0)))
    return JointNaturalQueryModel(bases, vt[:, informative], vc[:, informative], informative, int(q.size - informative.size), c)


@dataclass(frozen=True)
class JointTranscriptRDP:
    """RDP of the joint transcript and its certified cap (all ``(len(orders),)``).

    Attributes:
        orders: the orders α.
        rdp: exact (``"enumerate"``) or Monte Carlo estimate (``"monte_carlo"``, or
            ``"monte_carlo (estimated laws)"`` where a base does not enumerate) of
            ``max(D_α(L_S ‖ L_S'), D_α(L_S' ‖ L_S))``.
        rdp_se: its Monte Carlo standard error (0 when enumerated).
        cap: certified upper bound by joint quasi-convexity (module docstring; NaN when the
            tables are not exact).
        exact_eps: exact ε at ``delta`` (dp-accounting PLD; ``"enumerate"`` only, else NaN).
        method: ``"enumerate"``, ``"monte_carlo"``, ``"monte_carlo (estimated laws)"``,
            ``"identical"`` or ``"not enumerable"``.
        num_queries, num_dropped: informative and dropped queries.
    """

    orders: np.ndarray
    rdp: np.ndarray
    rdp_se: np.ndarray
    cap: np.ndarray
    exact_eps: float
    method: str
    num_queries: int
    num_dropped: int


def joint_transcript_rdp(model: JointNaturalQueryModel, sigma: float, orders, delta: float | None = None, max_outputs: int = 1_000_000,
                         mc_draws: int = 20_000, rng=None, max_support: int = 50_000, estimate_draws: int = 2000) -> JointTranscriptRDP:
    """RDP of the joint Pois-NatQ transcript, exact or estimated, with its certified cap (module docstring).

    Args:
        model: a :class:`JointNaturalQueryModel`.
        sigma: noise standard deviation.
        orders: orders α > 1 (finite).
        delta: δ of the exact ε (only when enumerated; None: not computed).
        max_outputs: enumerate the answer vectors when ``Π_q C ≤ max_outputs``, else Monte Carlo.
        mc_draws: transcripts per direction of the Monte Carlo estimate.
        rng: seed or generator of the Monte Carlo.
        max_support: enumeration budget of each query's base.
        estimate_draws: where a base does not enumerate, the tables are estimated from this
            many base draws (:meth:`JointNaturalQueryModel.estimated_tables`) and ``rdp`` is a
            Monte Carlo estimate on them (``method = "monte_carlo (estimated laws)"``; its
            ``rdp_se`` covers the transcript draws, not the error of the estimated laws; no cap,
            no PLD); 0: NaN (``"not enumerable"``).

    Returns:
        A :class:`JointTranscriptRDP`.

    Raises:
        ValueError: on bad orders or sigma.
    """
    a = as_orders(orders)
    if np.any(np.isinf(a)):
        raise ValueError("orders must be finite for the joint transcript")
    zero, nan = np.zeros(a.size), np.full(a.size, np.nan)
    if model.identical:
        return JointTranscriptRDP(a, zero, zero, zero, 0.0 if delta is not None else np.nan, "identical", model.num_queries, model.num_dropped)
    tables = model.log_tables(sigma, max_support=max_support)
    gen = np.random.default_rng(rng)
    if tables is None:
        if not estimate_draws:
            return JointTranscriptRDP(a, nan, nan, nan, np.nan, "not enumerable", model.num_queries, model.num_dropped)
        lt, tails = model.estimated_tables(sigma, estimate_draws, gen)
        cap = nan  # no certified cap from estimated laws
        max_outputs = 0  # an estimate: Monte Carlo over transcripts, no PLD
    else:
        lt, tails = tables
        cap = _joint_cap(lt, tails, model.votes, model.votes_prime, a)
    # point values: the retained (sub-probability) laws renormalised per (query, vote)
    with np.errstate(invalid="ignore"):
        ln = np.where(np.isfinite(lt), lt - logsumexp(lt, axis=2, keepdims=True), -np.inf)
    c, nq = model.num_classes, model.num_queries
    if c ** nq <= max_outputs:
        l0 = _enumerate_joint(ln, model.votes)
        l1 = _enumerate_joint(ln, model.votes_prime)
        rdp = np.maximum(renyi_divergence_from_log(l0, l1, a), renyi_divergence_from_log(l1, l0, a))
        eps = np.nan
        if delta is not None:
            from ..accounting.pld import exact_epsilon

            eps = float(exact_epsilon(l0, l1, float(delta), log_pmf=True))
        return JointTranscriptRDP(a, rdp, zero, np.maximum(cap, rdp), eps, "enumerate", nq, model.num_dropped)
    draws = check_positive_int(mc_draws, "mc_draws", minimum=2)
    est, se = np.empty((2, a.size)), np.empty((2, a.size))
    for d, (va, vb) in enumerate(((model.votes, model.votes_prime), (model.votes_prime, model.votes))):
        g = gen.integers(0, va.shape[0], size=draws)
        p = np.exp(ln[np.arange(nq)[None, :], va[g]])  # (draws, Q, C)
        u = gen.random((draws, nq, 1))
        ans = np.minimum((np.cumsum(p, axis=2) < u).sum(axis=2), c - 1)
        llr = _joint_loglik(ln, va, ans) - _joint_loglik(ln, vb, ans)
        est[d], se[d] = renyi_divergence_from_llr_samples(llr, a)
    pick = np.argmax(est, axis=0)
    cols = np.arange(a.size)
    method = "monte_carlo" if tables is not None else "monte_carlo (estimated laws)"
    return JointTranscriptRDP(a, est[pick, cols], se[pick, cols], cap, np.nan, method, nq, model.num_dropped)


def _joint_loglik(ln: np.ndarray, votes: np.ndarray, answers: np.ndarray) -> np.ndarray:
    q = np.arange(ln.shape[0])
    return logsumexp(ln[q[None, None, :], votes[None, :, :], answers[:, None, :]].sum(axis=2), axis=1) - math.log(votes.shape[0])


def _enumerate_joint(ln: np.ndarray, votes: np.ndarray) -> np.ndarray:
    """``log L(a)`` for every answer vector ``a`` (row-major over the queries)."""
    cur = np.zeros((votes.shape[0], 1))
    for j in range(ln.shape[0]):
        cur = (cur[:, :, None] + ln[j, votes[:, j], :][:, None, :]).reshape(votes.shape[0], -1)
    return logsumexp(cur, axis=0) - math.log(votes.shape[0])


def _joint_cap(lt: np.ndarray, tails: np.ndarray, votes: np.ndarray, votes_prime: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """``max_g max(Σ_q D̄_α(R_q(v_g) ‖ R_q(v'_g)), Σ_q D̄_α(R_q(v'_g) ‖ R_q(v_g)))`` with certified upper ends."""
    nq = lt.shape[0]
    cache: dict = {}
    fwd = np.zeros((votes.shape[0], orders.size))
    rev = np.zeros((votes.shape[0], orders.size))
    for g in range(votes.shape[0]):
        for j in range(nq):
            v, w = int(votes[g, j]), int(votes_prime[g, j])
            if v == w:
                continue
            if (j, v, w) not in cache:
                # true law ∈ [R̂ − e, R̂ + r + e]: absolute quadrature error e of Eq. (4), pruned base mass r
                p, q = np.exp(lt[j, v]), np.exp(lt[j, w])
                e = QUADRATURE_ABS_ERROR
                with np.errstate(divide="ignore"):
                    lp_hi, lq_hi = np.log(np.minimum(p + tails[j] + e, 1.0)), np.log(np.minimum(q + tails[j] + e, 1.0))
                    lp_lo, lq_lo = np.log(np.maximum(p - e, 0.0)), np.log(np.maximum(q - e, 0.0))
                cache[(j, v, w)] = (_log_power_sum(lp_hi, lq_lo, orders), _log_power_sum(lq_hi, lp_lo, orders))
            f, b = cache[(j, v, w)]
            fwd[g] += f
            rev[g] += b
    return np.maximum(fwd.max(axis=0), rev.max(axis=0))
