"""Auditing randomized response on synthetic data (observational paper, §6.6 and App. C).

Data (Eq. (10)): ``y ~ Uniform([k])``, ``x | y ~ N(e_y, I_d)``. The label-DP mechanism is
k-ary RR with the theoretical ε; its output — the noisy label vector — is what the
adversary observes, so the "target model" is the one-hot encoding of the noisy labels
(``M(x)[y] = 1[ỹ = y]``; a model that memorises its training labels). The reference model
``M'`` (which also generates the counterfactual labels ``y¹ ~ Multinoulli(M'(x))``) is either

* the ground-truth posterior ``Pr[y | x] = softmax_y(x_y)`` (uniform classes, equal
  covariances: ``‖x − e_y‖² = ‖x‖² − 2 x_y + 1``), or
* a scikit-learn ``LogisticRegression`` with default hyper-parameters fitted on fresh data.

The adversary guesses on a fixed fraction of the canaries (0.1 % and 1 %; every sample is a
canary, ``m = n``), and Theorem 5 with τ = 0 gives ε at 95 % confidence (δ = 1e-5) over the μ-GDP
family as the paper reports it (``epsilon_empirical``: assumes a Gaussian trade-off curve, which
RR's is not; not a lower bound on RR's ε); the game
is repeated 100 times with fresh counterfactual labels on the same data and RR output.

τ-shift experiment (App. C, Fig. 4): binary labels, counterfactual labels
``y¹ ~ Bernoulli(s_x)`` with ``s_x = min(Pr[y = 1 | x] + τ, 1)`` (TV ≤ τ), the same shifted
distribution as the adversary's ``M'``, and Theorem 5 with that τ.

Ambiguity: App. C fixes ``d = 5`` but uses ``e_y ∈ R^d`` for ``y ∈ [k]`` with ``k = 10``,
which needs ``d ≥ k``. We use ``d_eff = max(d, k)`` (reported in the ``dim`` column), which
keeps the paper's d = 5 for k ∈ {2, 5}.

Randomness: one SeedSequence per experiment (:mod:`ppaudit.rng`), spawned per job: the data
per k, the RR output per (k, ε), the proxy per k, the game per (k, ε, proxy) — so a job's
numbers do not depend on which other jobs run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import softmax

from ..._validation import check_positive_int, check_probability
from ...attacks.observational import label_inference_counts, num_guesses_for_fractions
from ...attacks.one_run import epsilon_gdp_family
from ...mechanisms.labeldp import randomized_response
from ...rng import job_generator

__all__ = [
    "DEFAULT_EPSILONS",
    "DEFAULT_TAUS",
    "sample_mixture",
    "true_posterior",
    "logistic_regression_posterior",
    "rr_audit_experiment",
    "tau_shift_experiment",
    "summarize",
]

#: ε_theory grid of Figs. 2–3.
DEFAULT_EPSILONS = (0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0)
#: τ grid of Fig. 4: 1e-6, 1e-5, …, 1e-1.
DEFAULT_TAUS = tuple(10.0 ** -np.arange(6, 0, -1))

_EXPERIMENT = "obs_synthetic_rr"
_EXPERIMENT_TAU = "obs_tau_shift"


def _dim(dim: int, num_classes: int) -> int:
    return max(check_positive_int(dim, "dim"), num_classes)


def sample_mixture(n: int, num_classes: int, dim: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``y ~ Uniform([k])``, ``x | y ~ N(e_y, I)`` in ``max(dim, k)`` dimensions (App. C, Eq. (10)).

    Returns:
        ``(x, y)`` of shapes ``(n, max(dim, k))`` and ``(n,)``.
    """
    n = check_positive_int(n, "n")
    k = check_positive_int(num_classes, "num_classes", minimum=2)
    d = _dim(dim, k)
    y = rng.integers(0, k, size=n)
    x = rng.standard_normal((n, d))
    x[np.arange(n), y] += 1.0
    return x, y


def true_posterior(x, num_classes: int) -> np.ndarray:
    """``Pr[y | x] = softmax_y(x_y)`` for the mixture of :func:`sample_mixture`."""
    x = np.asarray(x, dtype=np.float64)
    k = check_positive_int(num_classes, "num_classes", minimum=2)
    if x.ndim != 2 or x.shape[1] < k:
        raise ValueError(f"x must have shape (n, d) with d >= num_classes={k}, got {x.shape}")
    return softmax(x[:, :k], axis=1)


def logistic_regression_posterior(x_eval, num_classes: int, dim: int, train_size: int, rng: np.random.Generator) -> np.ndarray:
    """Proxy ``M'``: scikit-learn ``LogisticRegression()`` (defaults) fitted on fresh mixture data.

    Args:
        x_eval: points to predict.
        num_classes, dim: the mixture.
        train_size: size of the fresh training sample.
        rng: numpy Generator for the fresh sample.

    Returns:
        ``(len(x_eval), k)`` predicted probabilities.
    """
    from sklearn.linear_model import LogisticRegression

    x_tr, y_tr = sample_mixture(train_size, num_classes, dim, rng)
    model = LogisticRegression().fit(x_tr, y_tr)
    out = np.zeros((np.shape(x_eval)[0], num_classes))
    out[:, model.classes_] = model.predict_proba(np.asarray(x_eval))
    return out


def _one_hot(y: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((y.size, k))
    out[np.arange(y.size), y] = 1.0
    return out


def _check_list(values, name: str, lo: float, hi: float, open_lo: bool = True) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(values, dtype=np.float64))
    bad = np.isnan(arr) | (arr > hi) | ((arr <= lo) if open_lo else (arr < lo))
    if arr.ndim != 1 or arr.size == 0 or np.any(bad):
        raise ValueError(f"{name} must be a non-empty list of values in {'(' if open_lo else '['}{lo}, {hi}], got {arr}")
    return arr


def _audit_rows(counts, cps, m, fractions, delta, confidence, tau, base: dict) -> list[dict]:
    reps = counts.shape[0]
    eps = epsilon_gdp_family(np.broadcast_to(cps, counts.shape), counts, m, delta=delta, confidence=confidence, tau=tau)
    rows = []
    for r in range(reps):
        for j, f in enumerate(fractions):
            rows.append(
                dict(base, guess_fraction=float(f), repetition=r, num_guesses=int(cps[j]), num_correct=int(counts[r, j]), epsilon_empirical=float(eps[r, j]))
            )
    return rows


def rr_audit_experiment(
    n: int = 10**6,
    num_classes=(2, 5, 10),
    epsilons=DEFAULT_EPSILONS,
    guess_fractions=(0.001, 0.01),
    counterfactuals=("true_posterior", "logistic_regression"),
    num_repetitions: int = 100,
    *,
    dim: int = 5,
    t: float = 2.0,
    delta: float = 1e-5,
    confidence: float = 0.95,
    proxy_train_size: int | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Empirical ε of randomized response from the observational audit (Figs. 2–3, App. C).

    Args:
        n: samples (= canaries); 10⁶ in the paper.
        num_classes: the k values.
        epsilons: theoretical ε of RR.
        guess_fractions: fractions of non-abstaining guesses (each audited on its own).
        counterfactuals: ``"true_posterior"`` and/or ``"logistic_regression"``.
        num_repetitions: games per setting (100).
        dim: d (5); ``max(d, k)`` is used.
        t: score exponent (2).
        delta: δ (1e-5).
        confidence: 1 − γ (0.95).
        proxy_train_size: fresh samples for the logistic regression (default n).
        seed: experiment seed.

    Returns:
        Long DataFrame, one row per (k, ε, counterfactual, fraction, repetition) with
        ``num_guesses``, ``num_correct``, ``epsilon_empirical`` and ``epsilon_theory``.
    """
    n = check_positive_int(n, "n")
    ks = [check_positive_int(k, "num_classes", minimum=2) for k in np.atleast_1d(num_classes)]
    eps_grid = _check_list(epsilons, "epsilons", 0.0, np.inf)
    fr = _check_list(guess_fractions, "guess_fractions", 0.0, 1.0)
    reps = check_positive_int(num_repetitions, "num_repetitions")
    d = check_probability(delta, "delta")
    conf = check_probability(confidence, "confidence")
    for c in counterfactuals:
        if c not in ("true_posterior", "logistic_regression"):
            raise ValueError(f"counterfactuals must be 'true_posterior' or 'logistic_regression', got {c!r}")
    train = n if proxy_train_size is None else check_positive_int(proxy_train_size, "proxy_train_size")
    cps = num_guesses_for_fractions(fr, n)
    rows: list[dict] = []
    for k in ks:
        x, y = sample_mixture(n, k, dim, job_generator(seed, _EXPERIMENT, "data", k))
        refs = {}
        for c in counterfactuals:
            if c == "true_posterior":
                refs[c] = true_posterior(x, k)
            else:
                refs[c] = logistic_regression_posterior(x, k, dim, train, job_generator(seed, _EXPERIMENT, "proxy", k))
        for eps in eps_grid:
            noisy = randomized_response(y, eps, k, job_generator(seed, _EXPERIMENT, "rr", k, repr(float(eps)))).labels
            target = _one_hot(noisy, k)
            for c, ref in refs.items():
                gen = job_generator(seed, _EXPERIMENT, "game", k, repr(float(eps)), c)
                counts = label_inference_counts(y, target, ref, cps, reps, gen, t=t)
                base = dict(num_classes=k, dim=_dim(dim, k), n=n, epsilon_theory=float(eps), counterfactual=c)
                rows += _audit_rows(counts, cps, n, fr, d, conf, 0.0, base)
    return pd.DataFrame(rows)


def tau_shift_experiment(
    n: int = 10**6,
    epsilons=(0.5, 2.0, 4.0),
    taus=DEFAULT_TAUS,
    guess_fractions=(0.001, 0.01, 0.1),
    num_repetitions: int = 100,
    *,
    dim: int = 5,
    t: float = 2.0,
    delta: float = 1e-5,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Empirical ε of binary RR with τ-shifted counterfactual labels (App. C, Fig. 4).

    ``y¹ ~ Bernoulli(min(Pr[y = 1 | x] + τ, 1))``; the adversary's ``M'`` is the same shifted
    distribution; ε from Theorem 5 with ``g(s) = f(min(1, s + τ))``.

    Args:
        n: samples (10⁶ in the paper).
        epsilons: theoretical ε of RR (0.5, 2, 4).
        taus: shifts τ in [0, 1) (1e-6, …, 1e-1).
        guess_fractions: fractions of non-abstaining guesses.
        num_repetitions: games per setting (100).
        dim, t, delta, confidence, seed: as in :func:`rr_audit_experiment`.

    Returns:
        Long DataFrame with columns ``epsilon_theory``, ``tau``, ``guess_fraction``,
        ``repetition``, ``num_guesses``, ``num_correct``, ``epsilon_empirical``.
    """
    n = check_positive_int(n, "n")
    eps_grid = _check_list(epsilons, "epsilons", 0.0, np.inf)
    tau_grid = _check_list(taus, "taus", 0.0, 1.0 - 1e-12, open_lo=False)
    fr = _check_list(guess_fractions, "guess_fractions", 0.0, 1.0)
    reps = check_positive_int(num_repetitions, "num_repetitions")
    d = check_probability(delta, "delta")
    conf = check_probability(confidence, "confidence")
    cps = num_guesses_for_fractions(fr, n)
    k = 2
    x, y = sample_mixture(n, k, dim, job_generator(seed, _EXPERIMENT_TAU, "data"))
    post1 = true_posterior(x, k)[:, 1]
    rows: list[dict] = []
    for eps in eps_grid:
        noisy = randomized_response(y, eps, k, job_generator(seed, _EXPERIMENT_TAU, "rr", repr(float(eps)))).labels
        target = _one_hot(noisy, k)
        for tau in tau_grid:
            s = np.minimum(post1 + tau, 1.0)
            shifted = np.stack([1.0 - s, s], axis=1)
            gen = job_generator(seed, _EXPERIMENT_TAU, "game", repr(float(eps)), repr(float(tau)))
            counts = label_inference_counts(y, target, shifted, cps, reps, gen, t=t)
            base = dict(num_classes=k, dim=_dim(dim, k), n=n, epsilon_theory=float(eps), tau=float(tau))
            rows += _audit_rows(counts, cps, n, fr, d, conf, float(tau), base)
    return pd.DataFrame(rows)


def summarize(df: pd.DataFrame, by=None) -> pd.DataFrame:
    """Mean and standard deviation (ddof=1) of ``epsilon_empirical`` over the repetitions.

    Args:
        df: output of :func:`rr_audit_experiment` or :func:`tau_shift_experiment`.
        by: grouping columns (default: every column except the repetition and the counts).

    Returns:
        DataFrame with ``epsilon_mean``, ``epsilon_std``, ``repetitions`` per group.
    """
    skip = {"repetition", "num_correct", "epsilon_empirical"}
    keys = [c for c in df.columns if c not in skip] if by is None else list(by)
    g = df.groupby(keys, sort=True)["epsilon_empirical"]
    return g.agg(epsilon_mean="mean", epsilon_std="std", repetitions="count").reset_index()
