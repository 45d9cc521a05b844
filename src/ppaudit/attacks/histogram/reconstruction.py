"""Reconstructing a vote histogram from answer frequencies: our constrained Gauss–Newton fit and the paper's gradient-descent loop (Wang et al. 2022, §3.2)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares
from scipy.special import ndtri

from ..._validation import check_positive_int, check_sigma
from ...noisy_argmax import class_probabilities
from .jacobian import class_probability_jacobian, wang2022_trapezoid_probabilities
from .querying import _as_counts

__all__ = [
    "SOLVERS",
    "HistogramReconstruction",
    "Wang2022Reconstruction",
    "shift_to_teachers",
    "reconstruct_histogram",
    "reconstruct_histogram_wang2022",
    "reconstruct_with_solver",
]

#: Reconstruction solvers: ``ours`` and ``paper`` (Wang et al. 2022's procedure).
SOLVERS = ("ours", "paper")


# --------------------------------------------------------------------------------------
# Reconstruction
# --------------------------------------------------------------------------------------


def shift_to_teachers(estimate, num_teachers: int) -> np.ndarray:
    """Wang et al. 2022, §3.2 Step 3 (Alg. 2 line 18): ``Ĥ + (N − ΣĤ)/C`` so that ``ΣĤ = N``.

    By Wang Thm 2 this does not change ``Q(Ĥ)``. The result may hold negative entries if the
    estimate's spread exceeds ``N``; :func:`reconstruct_histogram` never returns those.
    """
    e = np.asarray(estimate, dtype=np.float64)
    if e.ndim != 1 or e.size < 1 or not np.all(np.isfinite(e)):
        raise ValueError(f"estimate must be a finite 1-D array, got {estimate!r}")
    n = check_positive_int(num_teachers, "num_teachers")
    return e + (n - e.sum()) / e.size


def _project_scaled_simplex(v: np.ndarray, total: float) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{x ≥ 0, Σx = total}`` (sort-based, exact)."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    k = np.arange(1, v.size + 1)
    rho = np.nonzero(u - css / k > 0)[0][-1]
    return np.maximum(v - css[rho] / (rho + 1.0), 0.0)


def _initial_guess(counts: np.ndarray, sigma: float, num_teachers: int) -> np.ndarray:
    """Pairwise probit inversion against the most answered class, projected to the feasible set.

    For two classes ``Pr[i beats r] = Φ((n_i − n_r)/(σ√2))``; the conditional win frequency
    ``q̄_i / (q̄_i + q̄_r)`` gives each answered class a start within a few votes of the
    solution for moderate gaps. Unanswered classes start on the bound 0, where the solver
    leaves them unless the fit of the answered classes moves them (so that, where ``Q`` is
    flat in them — classes eclipsed by gaps of many σ — they stay at 0).
    """
    answered = counts > 0
    q = counts / counts.sum()
    ref = int(np.argmax(counts))
    start = np.zeros(counts.size)
    gaps = sigma * math.sqrt(2.0) * ndtri(q[answered] / (q[answered] + q[ref]))
    start[answered] = _project_scaled_simplex(shift_to_teachers(gaps, num_teachers), float(num_teachers))
    return start


@dataclass
class HistogramReconstruction:
    """Result of :func:`reconstruct_histogram`.

    Attributes:
        estimate: ``Ĥ``, ``(C,)`` float, ``Ĥ ≥ 0`` and ``ΣĤ = N``.
        residual_norm: ``‖Q(Ĥ) − q̄‖₂`` at the solution.
        answer_frequencies: ``q̄``.
        unanswered: mask of the classes with no answer.
        at_zero: mask of the classes whose estimate is on the bound ``Ĥ_c = 0``.
        evaluations: number of evaluations of ``Q`` (and of its Jacobian) by the solver.
        seconds: wall-clock time of the reconstruction.
        converged: the solver's convergence flag (``scipy.optimize.least_squares`` status > 0).
        message: the solver's message.
    """

    estimate: np.ndarray
    residual_norm: float
    answer_frequencies: np.ndarray
    unanswered: np.ndarray
    at_zero: np.ndarray
    evaluations: int
    seconds: float
    converged: bool
    message: str = ""


def reconstruct_histogram(
    output_counts,
    sigma: float,
    num_teachers: int,
    *,
    initial=None,
    xtol: float = 1e-12,
    max_evaluations: int = 500,
    return_info: bool = False,
):
    """Reconstruct the vote histogram from the counts of ``M`` noisy-argmax answers (Wang §3.2).

    Solves Wang et al. 2022, §3.2 Step 2 — ``min ‖Q(Ĥ) − q̄‖₂`` with ``q̄`` the answer
    frequencies and ``Q`` the output distribution of Thm 1 — together with Step 3 (the
    estimate sums to the number of teachers ``N``) and the non-negativity the paper leaves
    open (§4.1: "We could also try to constrain it to only-positive values"):

        min_{Ĥ}  ½ ‖Q(Ĥ) − q̄‖₂²   subject to   Ĥ ≥ 0,  ΣĤ = N.

    How (documented choices):

    * ``Q`` is the exact :func:`ppaudit.noisy_argmax.class_probabilities` (abs. error
      ≤ 1e-12), its Jacobian the exact :func:`class_probability_jacobian` — not the paper's
      ±6σ fixed-step trapezoid with autodiff.
    * Gauge: ``Q`` depends only on differences of counts (Thm 2), so the problem on all of
      ``R^C`` has a flat direction ``1``. Fixing the gauge by ``ΣĤ = N`` is equivalent to
      solving in any gauge and then applying Step 3's shift, and it makes ``Ĥ ≥ 0`` a
      constraint on the same variables. The reference class ``r`` (the most answered one) is
      eliminated, ``Ĥ_r = N − Σ_{i≠r} Ĥ_i``, and the other ``C − 1`` counts are solved with
      box bounds ``[0, N]`` by ``scipy.optimize.least_squares`` (trust-region reflective,
      Gauss–Newton steps with the exact Jacobian, quadratic convergence when the residual is
      zero). ``Ĥ_r ≥ 0`` holds at the solution because ``r`` carries the largest estimate; it
      is checked and the solve is repeated with the estimate's argmax as reference if not.
    * Start: a pairwise probit inversion of the answered classes against ``r``, projected
      onto the feasible set, with unanswered classes at 0 (not the paper's all-zero start),
      or ``initial``.
    * When every class was answered and the exact inversion ``Q(Ĥ) = q̄`` is feasible, the
      minimum is zero and unique (``Q`` is one-to-one modulo shifts, the inversion of a
      Gaussian random-utility model), so the estimate is also the maximum-likelihood one.

    Classes never answered (count 0): their target frequency is 0, so the objective pushes
    their count down. Unconstrained (the paper's loop) they drift to −∞ and Step 3's shift
    then inflates every other class; here they stop at the bound ``Ĥ_c = 0`` unless fitting
    the answered classes needs them higher. Nothing is smoothed or dropped, and ties among
    unanswered classes get equal estimates. With a single distinct answer (e.g. a caching
    interface) the estimate is ``N`` votes for that class and 0 elsewhere.

    Identifiability: a class whose output probability is below the absolute accuracy of
    ``Q`` (~1e-12; a gap of more than ~10σ below the top) cannot be located by any fit —
    the "eclipsing" of Wang §4.2 taken to its limit. With Wang's ensembles (``N = 250``,
    ``σ ≥ 40``) every gap is at most ``6.25σ`` and every class is identifiable from exact
    frequencies (tested to < 1e-3 vote); from ``M`` answers the error is ``O(1/√M)``.

    Args:
        output_counts: ``(C,)`` answer counts (or any non-negative weights; only
            ``q̄ = counts / Σcounts`` is used).
        sigma: GNMax noise standard deviation, > 0 (public in PATE, Wang §3.1).
        num_teachers: the number of teachers ``N`` (assumed known, Wang §3.1).
        initial: optional ``(C,)`` start (projected onto ``{Ĥ ≥ 0, ΣĤ = N}``).
        xtol: relative step tolerance of the solver (``least_squares`` ``xtol``); ``ftol``
            is the same and ``gtol`` is off (gradients are tiny for rare classes).
        max_evaluations: cap on evaluations of ``Q`` per solve.
        return_info: also return a :class:`HistogramReconstruction`.

    Returns:
        ``Ĥ`` as a ``(C,)`` float array, ``Ĥ ≥ 0`` and ``ΣĤ = N`` (or the info object).

    Raises:
        ValueError: on bad counts, ``sigma``, ``num_teachers`` or ``initial``.

    Example:
        >>> from ppaudit.noisy_argmax import class_probabilities
        >>> h = np.array([150.0, 60.0, 30.0, 10.0])
        >>> est = reconstruct_histogram(class_probabilities(h, 40.0), 40.0, 250)
        >>> bool(np.max(np.abs(est - h)) < 1e-3)
        True
    """
    t0 = time.perf_counter()
    counts = _as_counts(output_counts)
    s = check_sigma(sigma)
    n_teachers = check_positive_int(num_teachers, "num_teachers")
    tol = float(xtol)
    if not (math.isfinite(tol) and 0 < tol < 1):
        raise ValueError(f"xtol must be in (0, 1), got {xtol!r}")
    max_eval = check_positive_int(max_evaluations, "max_evaluations")
    c = counts.size
    q = counts / counts.sum()
    unanswered = counts == 0
    if initial is None:
        start = _initial_guess(counts, s, n_teachers)
    else:
        init = np.asarray(initial, dtype=np.float64)
        if init.shape != (c,) or not np.all(np.isfinite(init)):
            raise ValueError(f"initial must be a finite array of shape ({c},), got {initial!r}")
        start = _project_scaled_simplex(init, float(n_teachers))

    if c == 1 or np.count_nonzero(counts) == 1:
        # One class takes every answer: the feasible minimiser is the vertex N·e_k (every
        # other Q_i is minimised, Q_k maximised, by the largest feasible gaps).
        est = np.zeros(c)
        est[int(np.argmax(counts))] = float(n_teachers)
        info = HistogramReconstruction(
            est, float(np.linalg.norm(class_probabilities(est, s) - q)), q, unanswered, est == 0, 1,
            time.perf_counter() - t0, True, "single answered class: vertex of the feasible set",
        )
        return info if return_info else est

    evaluations = 0
    ref = int(np.argmax(counts))
    current = start
    result = None
    for _ in range(3):
        free = np.delete(np.arange(c), ref)

        def full(x: np.ndarray, ref: int = ref, free: np.ndarray = free) -> np.ndarray:
            hist = np.empty(c)
            hist[free] = x
            hist[ref] = n_teachers - x.sum()
            return hist - min(hist.min(), 0.0)  # Thm 2: a shift keeps Q; Q needs counts ≥ 0

        def residual(x: np.ndarray) -> np.ndarray:
            return class_probabilities(full(x), s) - q

        def jacobian(x: np.ndarray, ref: int = ref, free: np.ndarray = free) -> np.ndarray:
            jac = class_probability_jacobian(full(x), s)
            return jac[:, free] - jac[:, [ref]]

        x0 = np.clip(current[free], 0.0, float(n_teachers))
        result = least_squares(
            residual, x0, jac=jacobian, bounds=(0.0, float(n_teachers)), method="trf",
            xtol=tol, ftol=tol, gtol=None, max_nfev=max_eval,
        )
        evaluations += int(result.nfev)
        current = np.empty(c)
        current[free] = result.x
        current[ref] = n_teachers - result.x.sum()
        if current[ref] >= 0.0:
            break
        ref = int(np.argmax(current))
        current = _project_scaled_simplex(current, float(n_teachers))
    est = np.maximum(current, 0.0)
    est *= n_teachers / est.sum()
    res = float(np.linalg.norm(class_probabilities(est, s) - q))
    info = HistogramReconstruction(
        estimate=est,
        residual_norm=res,
        answer_frequencies=q,
        unanswered=unanswered,
        at_zero=est <= 1e-9 * n_teachers,
        evaluations=evaluations,
        seconds=time.perf_counter() - t0,
        converged=bool(result.status > 0),
        message=str(result.message),
    )
    return info if return_info else est


@dataclass
class Wang2022Reconstruction:
    """Result of :func:`reconstruct_histogram_wang2022`.

    Attributes:
        estimate: ``Ĥ`` after Step 3's shift (sums to ``N``; may hold negative entries).
        loss: ``‖Q(Ĥ) − q̄‖₂`` (the paper's trapezoid ``Q``) at the returned iterate.
        iterations: gradient steps taken.
        converged: the loss reached the threshold ``T``.
        stopped_at_negative: stopped because the shifted estimate turned negative.
        seconds: wall-clock time.
        loss_history: loss per iteration.
    """

    estimate: np.ndarray
    loss: float
    iterations: int
    converged: bool
    stopped_at_negative: bool
    seconds: float
    loss_history: list = field(default_factory=list)


def reconstruct_histogram_wang2022(
    output_counts,
    sigma: float,
    num_teachers: int,
    *,
    threshold: float = 0.01,
    max_iterations: int = 20_000,
    stop_at_negative: bool = False,
    integration_step: float = 1.0,
    time_budget: float | None = None,
) -> Wang2022Reconstruction:
    """Faithful re-implementation of the attack as printed in Wang et al. 2022 (Alg. 2, §3.2, §4.1).

    * ``Q`` by the fixed-step trapezoid rule over ``H_k ± 6σ`` (§3.2,
      :func:`wang2022_trapezoid_probabilities`), gradient by automatic differentiation
      (torch here, Jax in the paper).
    * Alg. 2: ``Ĥ ← 0``; while ``‖Q(Ĥ) − q̄‖₂ > T``: ``Ĥ ← Ĥ − λ ∇‖Q(Ĥ) − q̄‖₂``; then
      ``Ĥ ← Ĥ + (N − ΣĤ)/C`` (line 18).
    * §4.1: ``λ = 10/‖∇J‖₂`` at first, then ``1/‖∇J‖₂`` "as the optimization starts to
      converge"; ``T = 0.01``. The switching rule is not given; we switch (for good) at the
      first step that does not lower the loss.
    * §4.1: for the budget-limited attacks "we stopped once estimated histograms started
      presenting negative values". Alg. 2 starts at 0 and its raw iterate is negative after
      one step, so we read this as the *shifted* estimate (line 18) turning negative, and
      return the last non-negative one (``stop_at_negative=True``).

    ``max_iterations`` and ``time_budget`` (seconds) bound the run (the paper reports
    ~2.5 h per histogram); ``converged`` tells whether ``T`` was reached. The tensors are
    tiny (``C × 12σ × C``), so torch runs on one thread during the call (restored after):
    intra-op threads only add synchronisation cost here.

    Args:
        output_counts: ``(C,)`` answer counts.
        sigma: noise standard deviation, > 0.
        num_teachers: ``N``.
        threshold: loss threshold ``T`` (0.01 in §4.1).
        max_iterations: cap on the gradient steps.
        stop_at_negative: the budget-attack stopping rule of §4.1.
        integration_step: trapezoid step in votes (1 as printed).
        time_budget: optional wall-clock cap in seconds.

    Returns:
        A :class:`Wang2022Reconstruction`.
    """
    import torch

    t0 = time.perf_counter()
    counts = _as_counts(output_counts)
    s = check_sigma(sigma)
    n_teachers = check_positive_int(num_teachers, "num_teachers")
    thr = float(threshold)
    if not (math.isfinite(thr) and thr > 0):
        raise ValueError(f"threshold must be > 0, got {threshold!r}")
    iters = check_positive_int(max_iterations, "max_iterations")
    if time_budget is not None and not (math.isfinite(float(time_budget)) and float(time_budget) > 0):
        raise ValueError(f"time_budget must be > 0 seconds, got {time_budget!r}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _wang2022_loop(counts, s, n_teachers, thr, iters, stop_at_negative, integration_step, time_budget, t0)
    finally:
        torch.set_num_threads(threads)


def _wang2022_loop(
    counts: np.ndarray,
    s: float,
    n_teachers: int,
    thr: float,
    iters: int,
    stop_at_negative: bool,
    integration_step: float,
    time_budget: float | None,
    t0: float,
) -> Wang2022Reconstruction:
    """Alg. 2 lines 14–18 of Wang et al. 2022 (see :func:`reconstruct_histogram_wang2022`)."""
    import torch

    c = counts.size
    q = torch.as_tensor(counts / counts.sum(), dtype=torch.float64)
    h = torch.zeros(c, dtype=torch.float64)
    scale = 10.0
    previous_loss = math.inf
    history: list[float] = []
    last_good = shift_to_teachers(h.numpy(), n_teachers)
    converged = stopped_negative = False
    loss_value = math.inf
    it = 0
    for it in range(iters + 1):
        hv = h.clone().requires_grad_(True)
        loss = torch.linalg.vector_norm(wang2022_trapezoid_probabilities(hv, s, integration_step) - q)
        loss_value = float(loss.detach())
        history.append(loss_value)
        shifted = shift_to_teachers(h.numpy(), n_teachers)
        if stop_at_negative and np.any(shifted < 0):
            stopped_negative = True
            break
        last_good = shifted
        if loss_value <= thr:
            converged = True
            break
        if it == iters or (time_budget is not None and time.perf_counter() - t0 > float(time_budget)):
            break
        if scale == 10.0 and loss_value >= previous_loss:
            scale = 1.0
        previous_loss = loss_value
        (grad,) = torch.autograd.grad(loss, hv)
        norm = float(torch.linalg.vector_norm(grad))
        if norm == 0.0 or not math.isfinite(norm):
            break
        h = (h - (scale / norm) * grad).detach()
    return Wang2022Reconstruction(
        estimate=last_good,
        loss=loss_value if not stopped_negative else history[-2] if len(history) > 1 else loss_value,
        iterations=it,
        converged=converged,
        stopped_at_negative=stopped_negative,
        seconds=time.perf_counter() - t0,
        loss_history=history,
    )


def reconstruct_with_solver(
    output_counts,
    sigma: float,
    num_teachers: int,
    solver: str = "ours",
    *,
    stop_at_negative: bool = False,
    max_iterations: int = 20_000,
) -> np.ndarray:
    """Reconstruct ``Ĥ`` with one of the two solvers (Wang et al. 2022, §3.2 and §4.1).

    * ``"ours"`` — :func:`reconstruct_histogram`: exact ``Q`` and Jacobian, constrained
      Gauss–Newton on ``{Ĥ ≥ 0, ΣĤ = N}``.
    * ``"paper"`` — :func:`reconstruct_histogram_wang2022`: Alg. 2 as printed (all-zero
      start, i.e. ``N/C`` per class after Step 3; ±6σ unit-step trapezoid ``Q``; normalised
      gradient steps ``10/‖∇J‖`` then ``1/‖∇J‖``; stop when ``‖J‖₂ < 0.01``), capped at
      ``max_iterations`` steps (the paper states no cap; it reports hours per histogram),
      with the "stop once estimated histograms started presenting negative values" rule of
      the budget-limited attack when ``stop_at_negative``.

    Args:
        output_counts: ``(C,)`` answer counts.
        sigma: GNMax σ > 0.
        num_teachers: ``N``.
        solver: ``"ours"`` or ``"paper"``.
        stop_at_negative: the paper's budget-attack stopping rule (``"paper"`` only).
        max_iterations: gradient-step cap of ``"paper"``.

    Returns:
        ``Ĥ`` ``(C,)`` summing to ``N``.

    Raises:
        ValueError: on an unknown solver or any input the solver rejects.
    """
    if solver == "ours":
        return reconstruct_histogram(output_counts, sigma, num_teachers)
    if solver == "paper":
        return reconstruct_histogram_wang2022(
            output_counts, sigma, num_teachers, stop_at_negative=stop_at_negative, max_iterations=max_iterations
        ).estimate
    raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
