"""Score-based one-run audit: membership / label-inference scores (or a confusion matrix) in, ε out.

Scores from any tool (an MIA, a label-inference attack, a canary scorer) and the truth of
each canary (member / training label shown = True) go through the one-run f-DP audit of
Mahloujifar et al. 2025b, Algorithm 3 as printed in App. B of the observational-auditing
paper (Theorem 5 / 9 with the τ shift), implemented in :mod:`ppaudit.attacks.one_run`.

**Two-sided guesses.** The adversary guesses *positive* on the ``k₊`` highest scores,
*negative* on the ``k₋`` lowest, and abstains on the rest, so ``c' = k₊ + k₋`` and ``c`` counts
both kinds of correct guesses; the abstentions enter through ``m`` (all canaries). The
one-sided audit (``k₋ = 0``, jax_privacy's ``CanaryScoreAuditor``) is the special case
``two_sided=False``. Any deterministic rule of the scores is a valid adversary for Theorem 5.

**Threshold selection** (which ``(k₊, k₋)`` — the audit is only valid if the choice is paid for):

* ``"split"`` (default): a random ``selection_fraction`` of the canaries chooses ``(k₊, k₋)``
  from the candidate grid (largest ε on that part); the chosen *numbers* of guesses, scaled to
  the size of the other canaries (``r± = round(k± · n_eval / n_sel)``), are then made on
  those by rank — positive on the ``r₊`` highest, negative on the ``r₋`` lowest scores — and
  only they enter the audit (``m`` = their number). So ``c' = r₊ + r₋`` is fixed before the
  evaluation scores are seen, as Theorem 12 requires of the adversary (at most ``c'`` guesses
  almost surely); carrying the selection part's *score thresholds* over instead would make
  ``c'`` random and output-dependent. The selection canaries act as known non-secret data:
  given them, the evaluation canaries' bits are still i.i.d. fair coins, so Theorem 5 applies
  unchanged. Ties in score are broken by the split's random order (independent of the bits).
* ``"bonferroni"``: every candidate on all canaries, each at level ``γ/K`` (K candidates);
  the largest ε is reported. Each candidate already guesses by rank (``k±`` fixed by the grid
  and ``m``), so every test's ``c'`` is fixed in advance.
* ``"fixed"``: the given ``(k₊, k₋)``, one test at level γ.

The paper's own procedure (the maximum over a ``c'`` sweep without correction, App. E) is
:func:`ppaudit.attacks.observational.audit_scores` (``procedure: paper``); everything here
is ``procedure: ours``.

**k-ary guesses.** Label inference over ``k`` classes is the observational paper's binary
game (shown label = training label or counterfactual), which is what is audited here. The
k-ary *reconstruction* variant of Mahloujifar et al. 2025b (one of ``k`` candidates per canary)
needs a different recursion that App. B does not print; it is not implemented (feeding k-ary
correct counts into the binary test would over-reject and is refused by design: ``truth`` must
be boolean).

**Claims.** A μ-GDP claim is tested by Algorithm 3 with ``f_μ``; an (ε, δ)-DP claim with
the trade-off function ``f_{ε,δ}(x) = max(0, 1 − δ − e^ε x, e^{−ε}(1 − δ − x))`` (Dong et
al. 2020, Prop. 2.4); a zCDP / RDP claim with ``f_{ε(δ),δ}`` at the audit's δ, where
``ε(δ)`` is the claim's implied ε (an upper bound, so the mechanism satisfies that f).
Two ε are reported, under names that keep their meanings apart: ``epsilon_lower_bound``, the
family-free bound — the largest ε whose ``f_{ε,δ}`` Algorithm 3 rejects, valid for any
mechanism — and ``epsilon_gdp_family`` (beside ``mu_lower_bound``), the μ-GDP family's ε of
Definition 8 as in the paper, which **assumes a Gaussian trade-off curve** (randomized
response at exactly ε = 1 gives a GDP-family ε above 1 in most games).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validation import check_probability
from ..attacks.one_run import (
    GDP_FAMILY_NOTE,
    alg3_rejects,
    alg3_rejects_tradeoff,
    dp_trade_off,
    epsilon_lower_bound,
    gdp_epsilon,
    gdp_trade_off,
    mu_lower_bound,
)
from .claims import Claim

__all__ = [
    "DEFAULT_SIDE_FRACTIONS",
    "OneRunAudit",
    "alg3_rejects_tradeoff",
    "dp_epsilon_lower_bound_one_run",
    "dp_trade_off",
    "claim_trade_off",
    "one_run_audit",
    "one_run_audit_confusion",
    "plot_tradeoff",
]

#: Candidate shares of the canaries guessed positive (and, two-sided, negative).
DEFAULT_SIDE_FRACTIONS = (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


def claim_trade_off(claim: Claim, x, delta: float = 1e-5) -> np.ndarray:
    """The trade-off curve a claim guarantees (the mechanism's curve lies on or above it).

    μ-GDP: ``f_μ``; (ε, δ)-DP: ``f_{ε,δ}``; zCDP / RDP: the upper envelope of ``f_{ε(δ'),δ'}``
    over a grid of δ' (each is implied by the claim, so their maximum is too).
    """
    x = np.asarray(x, dtype=np.float64)
    if claim.kind == "gdp":
        return gdp_trade_off(x, claim.mu)
    if claim.kind == "dp":
        return dp_trade_off(x, claim.epsilon, claim.delta)
    out = np.zeros_like(x)
    for d in np.geomspace(1e-10, 0.5, 60):
        e = claim.epsilon_at(d)
        if math.isfinite(e):
            out = np.maximum(out, dp_trade_off(x, e, d))
    return out


def dp_epsilon_lower_bound_one_run(num_guesses: int, num_correct: int, num_samples: int, delta: float = 1e-5,
                                   confidence: float = 0.95, tau: float = 0.0, tol: float = 1e-4) -> float:
    """Deprecated name of :func:`ppaudit.attacks.one_run.epsilon_lower_bound` (same value; removed in the next release)."""
    warnings.warn("dp_epsilon_lower_bound_one_run is deprecated: call ppaudit.attacks.one_run.epsilon_lower_bound "
                  "(the same family-free bound)", DeprecationWarning, stacklevel=2)
    return float(epsilon_lower_bound(num_guesses, num_correct, num_samples, delta, confidence, tau, tol))


def _claim_rejected(claim: Claim, cp: int, c: int, m: int, confidence: float, delta: float, tau: float) -> bool:
    if claim.kind == "gdp":
        return bool(alg3_rejects(claim.mu, cp, c, m, confidence=confidence, tau=tau))
    if claim.kind == "dp":
        e, d = claim.epsilon, claim.delta
    else:
        e, d = claim.epsilon_at(delta), delta
        if not math.isfinite(e):
            return False
    return alg3_rejects_tradeoff(lambda r: float(dp_trade_off(1.0 - r, e, d)), cp, c, m, confidence, tau)


@dataclass
class OneRunAudit:
    """Result of a score-based one-run audit.

    Attributes:
        strategy: ``"split"``, ``"bonferroni"``, ``"fixed"`` or ``"confusion"``.
        num_samples: ``m`` of the audit (the evaluation canaries under ``"split"``).
        num_guesses, num_correct: ``c'`` and ``c`` of the reported test.
        positive_guesses, negative_guesses: ``k₊`` and ``k₋`` of the reported test.
        thresholds: ``(upper, lower)``: under ``"split"`` the evaluation scores at the two rank
            cuts (the ``r₊``-th highest, the ``r₋``-th lowest; descriptive only — the guesses
            are made by rank), else ``None``.
        mu_lower_bound: the largest rejected μ (μ-GDP family).
        epsilon_gdp_family: ε at ``delta`` of that μ (Definition 8, the paper's report). It
            **assumes a Gaussian trade-off curve**: no μ-GDP curve with ε(δ) below it fits, but
            a mechanism whose curve has another shape (e.g. randomized response) can be
            (ε', δ)-DP with ε' below it.
        epsilon_lower_bound: the family-free ε lower bound at ``delta`` — the largest ε whose
            ``f_{ε,δ}`` Algorithm 3 rejects (:func:`ppaudit.attacks.one_run.epsilon_lower_bound`);
            valid for any mechanism, not above ``epsilon_gdp_family`` (up to tolerances). (Until this release
            the name held the GDP-family value and this one was ``epsilon_lower_bound_dp``,
            which is kept one release as a deprecated alias of the same value. The old name
            takes the new meaning at once: a caller that read the GDP value under it now reads a
            smaller, valid bound — conservative, never an over-statement.)
        delta, confidence, tau: as given.
        candidates: DataFrame of the candidates tried (on the selection part for ``"split"``).
        claim, claim_rejected, verdict: the claim test (``"violation"`` / ``"consistent"`` /
            ``"no claim"``).
        procedure: ``"ours"``.
    """

    strategy: str
    num_samples: int
    num_guesses: int
    num_correct: int
    positive_guesses: int
    negative_guesses: int
    thresholds: tuple | None
    mu_lower_bound: float
    epsilon_gdp_family: float
    epsilon_lower_bound: float
    delta: float
    confidence: float
    tau: float
    candidates: pd.DataFrame = field(default_factory=pd.DataFrame)
    claim: Claim | None = None
    claim_rejected: bool = False
    verdict: str = "no claim"
    procedure: str = "ours"

    @property
    def epsilon_lower_bound_dp(self) -> float:
        """Deprecated alias of :attr:`epsilon_lower_bound` (the same family-free bound; removed in the next release)."""
        warnings.warn("OneRunAudit.epsilon_lower_bound_dp is deprecated: the family-free bound is now "
                      "epsilon_lower_bound (the GDP-family value moved to epsilon_gdp_family)",
                      DeprecationWarning, stacklevel=2)
        return self.epsilon_lower_bound

    def to_dict(self) -> dict:
        """JSON-ready dict (without the candidate table)."""
        return {
            "strategy": self.strategy, "num_samples": int(self.num_samples), "num_guesses": int(self.num_guesses),
            "num_correct": int(self.num_correct), "positive_guesses": int(self.positive_guesses),
            "negative_guesses": int(self.negative_guesses),
            "thresholds": None if self.thresholds is None else [float(t) if t is not None else None for t in self.thresholds],
            "epsilon_lower_bound": float(self.epsilon_lower_bound),
            "mu_lower_bound": float(self.mu_lower_bound), "epsilon_gdp_family": float(self.epsilon_gdp_family),
            "epsilon_gdp_family_note": GDP_FAMILY_NOTE,
            "delta": self.delta, "confidence": self.confidence, "tau": self.tau,
            "claim": None if self.claim is None else self.claim.to_dict(),
            "claim_rejected": bool(self.claim_rejected), "verdict": self.verdict, "procedure": self.procedure,
        }


def check_scores_truth(scores, truth) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, truth)`` as a 1-D float array (finite, ≥ 2 entries) and a boolean array of its shape.

    Raises:
        ValueError: naming the bad argument and value.
    """
    s = np.asarray(scores, dtype=np.float64)
    t = np.asarray(truth)
    if s.ndim != 1 or s.size < 2:
        raise ValueError(f"scores must be 1-D with at least 2 canaries, got shape {s.shape}")
    if t.shape != s.shape:
        raise ValueError(f"truth must have the shape of scores {s.shape}, got {t.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError(f"scores must be finite, got {s[~np.isfinite(s)][:5]}")
    if t.dtype != bool:
        if not np.all(np.isin(t, (0, 1))):
            raise ValueError(f"truth must be booleans or 0/1, got values {np.unique(t)[:5]}")
        t = t.astype(bool)
    return s, t


def _candidate_grid(fractions, m: int, two_sided: bool) -> np.ndarray:
    f = np.unique(np.asarray(fractions, dtype=np.float64))
    if f.ndim != 1 or np.any(f < 0) or np.any(f > 1):
        raise ValueError(f"fractions must lie in [0, 1], got {fractions}")
    k = np.unique(np.clip(np.round(f * m).astype(np.int64), 0, m))
    pairs = [(a, b) for a in k for b in (k if two_sided else [0]) if 0 < a + b <= m]
    if not pairs:
        raise ValueError(f"no candidate guesses from fractions {fractions} with {m} canaries")
    return np.array(pairs, dtype=np.int64)


def _counts_for(s: np.ndarray, t: np.ndarray, pairs: np.ndarray):
    order = np.argsort(-s, kind="stable")
    top = np.concatenate([[0], np.cumsum(t[order])])  # true among the k highest
    bottom = np.concatenate([[0], np.cumsum(~t[order[::-1]])])  # false among the k lowest
    cp = pairs[:, 0] + pairs[:, 1]
    c = top[pairs[:, 0]] + bottom[pairs[:, 1]]
    return cp, c


def _finish(strategy, m, cp, c, kp, kn, thr, conf, delta, tau, cands, claim, claim_conf, rejected=None):
    mu = float(mu_lower_bound(cp, c, m, confidence=conf, tau=tau))
    eps = float(gdp_epsilon(mu, delta))
    verdict = "no claim"
    rej = False
    if claim is not None:
        rej = bool(rejected) if rejected is not None else _claim_rejected(claim, cp, c, m, claim_conf, delta, tau)
        verdict = "violation" if rej else "consistent"
    eps_valid = float(epsilon_lower_bound(int(cp), int(c), int(m), delta, conf, tau))
    return OneRunAudit(strategy=strategy, num_samples=int(m), num_guesses=int(cp), num_correct=int(c),
                       positive_guesses=int(kp), negative_guesses=int(kn), thresholds=thr, mu_lower_bound=mu,
                       epsilon_gdp_family=eps, epsilon_lower_bound=eps_valid, delta=float(delta),
                       confidence=float(conf), tau=float(tau), candidates=cands, claim=claim, claim_rejected=rej,
                       verdict=verdict)


def one_run_audit(
    scores,
    truth,
    *,
    strategy: str = "split",
    fractions=DEFAULT_SIDE_FRACTIONS,
    two_sided: bool = True,
    num_guesses: tuple[int, int] | None = None,
    confidence: float = 0.95,
    delta: float = 1e-5,
    tau: float = 0.0,
    selection_fraction: float = 0.5,
    rng: np.random.Generator | int | None = 0,
    claim: Claim | None = None,
) -> OneRunAudit:
    """Two-sided one-run f-DP audit of attack scores (Alg. 3, App. B; Theorem 5 with τ).

    Args:
        scores: ``(m,)`` attack scores, higher = more likely positive (member / training label).
        truth: ``(m,)`` booleans, True where the canary is positive.
        strategy: ``"split"``, ``"bonferroni"`` or ``"fixed"`` (module docstring).
        fractions: candidate shares of canaries guessed positive / negative.
        two_sided: also guess negative on the lowest scores (else ``k₋ = 0``).
        num_guesses: ``(k₊, k₋)`` for ``strategy="fixed"``.
        confidence: 1 − γ.
        delta: δ of the reported ε.
        tau: TV distance between the data distribution and its proxy (Theorem 5).
        selection_fraction: share of canaries that choose the thresholds (``"split"``).
        rng: generator or seed for the split.
        claim: a :class:`Claim` to test, or ``None``.

    Returns:
        :class:`OneRunAudit`.

    Raises:
        ValueError: on mismatched / non-finite inputs, a bad strategy, fraction, τ, δ or
            confidence, or missing ``num_guesses`` for ``"fixed"``.
    """
    s, t = check_scores_truth(scores, truth)
    conf = check_probability(confidence, "confidence")
    d = check_probability(delta, "delta")
    m = s.size
    if strategy == "fixed":
        if num_guesses is None or len(num_guesses) != 2:
            raise ValueError(f"strategy='fixed' needs num_guesses=(k_plus, k_minus), got {num_guesses!r}")
        pairs = np.array([num_guesses], dtype=np.int64)
        if pairs.min() < 0 or pairs.sum() == 0 or pairs.sum() > m:
            raise ValueError(f"num_guesses must be >= 0 with 0 < k_plus + k_minus <= {m}, got {num_guesses!r}")
        cp, c = _counts_for(s, t, pairs)
        return _finish("fixed", m, cp[0], c[0], pairs[0, 0], pairs[0, 1], None, conf, d, tau, pd.DataFrame(), claim, conf)
    if strategy == "bonferroni":
        pairs = _candidate_grid(fractions, m, two_sided)
        cp, c = _counts_for(s, t, pairs)
        k = len(pairs)
        per = 1.0 - (1.0 - conf) / k
        mu = np.atleast_1d(mu_lower_bound(cp, c, m, confidence=per, tau=tau))
        cands = pd.DataFrame({"k_plus": pairs[:, 0], "k_minus": pairs[:, 1], "num_guesses": cp, "num_correct": c, "mu": mu})
        best = int(np.argmax(mu))
        rej = None
        if claim is not None and claim.kind == "gdp":
            rej = bool(np.any(alg3_rejects(claim.mu, cp, c, m, confidence=per, tau=tau)))
        elif claim is not None:
            rej = any(_claim_rejected(claim, int(a), int(b), m, per, d, tau) for a, b in zip(cp, c))
        res = _finish("bonferroni", m, cp[best], c[best], pairs[best, 0], pairs[best, 1], None, per, d, tau, cands, claim, per, rej)
        res.confidence = conf
        return res
    if strategy != "split":
        raise ValueError(f"strategy must be 'split', 'bonferroni' or 'fixed', got {strategy!r}")
    frac = check_probability(selection_fraction, "selection_fraction")
    gen = np.random.default_rng(rng)
    perm = gen.permutation(m)
    n_sel = int(round(frac * m))
    if n_sel < 1 or n_sel >= m:
        raise ValueError(f"selection_fraction={selection_fraction} leaves an empty part of {m} canaries")
    sel, ev = perm[:n_sel], perm[n_sel:]
    pairs = _candidate_grid(fractions, n_sel, two_sided)
    cp_s, c_s = _counts_for(s[sel], t[sel], pairs)
    mu_s = np.atleast_1d(mu_lower_bound(cp_s, c_s, n_sel, confidence=conf, tau=tau))
    cands = pd.DataFrame({"k_plus": pairs[:, 0], "k_minus": pairs[:, 1], "num_guesses": cp_s, "num_correct": c_s, "mu": mu_s})
    best = int(np.argmax(mu_s))
    kp, kn = int(pairs[best, 0]), int(pairs[best, 1])
    # The guess *counts* on the evaluation part are fixed here, before it is looked at: the
    # chosen shares of the selection part, scaled to the evaluation part's size (equal sizes
    # under the default split of an even m). The adversary then guesses positive on the r+
    # highest and negative on the r- lowest evaluation scores, so c' = r+ + r- almost surely
    # (Theorem 12 needs at most c' guesses a.s.; score thresholds carried over from the
    # selection part would make c' random and output-dependent).
    n_ev = ev.size
    rp = int(min(n_ev, round(kp * n_ev / n_sel)))
    rn = int(min(n_ev - rp, round(kn * n_ev / n_sel)))
    if rp + rn == 0:  # a tiny evaluation part rounds the shares to zero: guess once on the chosen side
        rp, rn = (1, 0) if kp >= kn else (0, 1)
    se, te = s[ev], t[ev]
    cp, c = _counts_for(se, te, np.array([[rp, rn]], dtype=np.int64))
    order = np.argsort(-se, kind="stable")  # ties: the random order of the split, independent of the bits
    hi = float(se[order[rp - 1]]) if rp > 0 else None
    lo = float(se[order[n_ev - rn]]) if rn > 0 else None
    return _finish("split", n_ev, cp[0], c[0], rp, rn, (hi, lo), conf, d, tau, cands, claim, conf)


def one_run_audit_confusion(confusion, *, confidence: float = 0.95, delta: float = 1e-5, tau: float = 0.0,
                            claim: Claim | None = None) -> OneRunAudit:
    """One-run audit from a confusion matrix with abstentions (one fixed test).

    Args:
        confusion: ``2 × 3`` counts; rows = truth (positive, negative), columns = guess
            (positive, negative, abstain). ``m`` = total, ``c'`` = guesses, ``c`` = diagonal.
            The guessing rule must not have been tuned on these same canaries (else use
            :func:`one_run_audit` with ``"split"`` or ``"bonferroni"``).
        confidence, delta, tau, claim: as in :func:`one_run_audit`.

    Returns:
        :class:`OneRunAudit` (strategy ``"confusion"``).
    """
    cm = np.asarray(confusion)
    if cm.shape != (2, 3) or np.any(cm < 0) or np.any(cm != np.round(cm)):
        raise ValueError(f"confusion must be a 2x3 array of non-negative integer counts, got {cm.tolist()}")
    cm = cm.astype(np.int64)
    m = int(cm.sum())
    cp = int(cm[:, :2].sum())
    c = int(cm[0, 0] + cm[1, 1])
    if m == 0:
        raise ValueError("confusion must count at least one canary")
    conf = check_probability(confidence, "confidence")
    d = check_probability(delta, "delta")
    return _finish("confusion", m, cp, c, int(cm[:, 0].sum()), int(cm[:, 1].sum()), None, conf, d, tau, pd.DataFrame(), claim, conf)


def plot_tradeoff(audit: OneRunAudit, claim: Claim | None = None, ax=None, num_points: int = 400):
    """Plot the audited μ-GDP trade-off curve against the claimed one.

    The audit rejects every μ-GDP curve with μ ≤ ``audit.mu_lower_bound``: the mechanism's
    true trade-off curve dips below ``f_{μ_lb}`` somewhere. A claim whose curve lies above
    ``f_{μ_lb}`` everywhere is therefore inconsistent with the audit *within the GDP family*.

    Args:
        audit: a :class:`OneRunAudit`.
        claim: the claim to draw (default: ``audit.claim``).
        ax: matplotlib axes (a new figure when ``None``).
        num_points: grid size on [0, 1].

    Returns:
        ``(figure, table)``: the figure and a DataFrame with the plotted curves.
    """
    import matplotlib.pyplot as plt  # lazy: matplotlib is in the [workflow] extra

    claim = claim if claim is not None else audit.claim
    x = np.linspace(0.0, 1.0, num_points)
    table = pd.DataFrame({"type_I_error": x, "audit_gdp_lower_bound": gdp_trade_off(x, audit.mu_lower_bound)})
    if claim is not None:
        table["claim"] = claim_trade_off(claim, x, audit.delta)
    if ax is None:
        fig, ax = plt.subplots(figsize=(4.0, 4.0))
    else:
        fig = ax.figure
    ax.plot(x, table["audit_gdp_lower_bound"], label=f"audit: {audit.mu_lower_bound:.3g}-GDP rejected")
    if claim is not None:
        ax.plot(x, table["claim"], "--", label=f"claim: {claim.describe()}")
    ax.plot(x, 1 - x, ":", color="grey", label="perfect privacy")
    ax.set_xlabel("type I error")
    ax.set_ylabel("type II error")
    ax.legend(fontsize=7)
    return fig, table
