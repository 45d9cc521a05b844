"""Benchmark: the one-run audit at m = 10⁶ with 100 repetitions and the 1–100 % c' sweep.

Run: ``.venv/bin/python bench/bench_one_run.py [--m 1000000] [--reps 100] [--classes 10]``.

Workload (the issue's requirement, ≤ 60 s on 2 cores): randomized response with ε = 2 on
the App. C mixture (k classes, true-posterior counterfactuals), m canaries, R repetitions of
the observational label-inference game, ε at δ = 1e-5 for every c' ∈ {1 %, …, 100 %} (best
per repetition) and at the fixed 1 %. The library path is
:func:`ppaudit.attacks.observational.audit_label_inference`.

Naive baseline, timed on a smaller share of the same work and scaled:

* counting: one ``argsort`` of the m scores per repetition (what a direct implementation
  does), timed on a few repetitions and scaled to R;
* ε: Algorithm 3 as a scalar Python loop over all c steps (no early exit, no cache, no
  vectorisation), bisection on μ from [0, 8] to the same tolerance. Its cost is exactly
  (time per step) × (bisection iterations) × Σ c over all (repetition, c') pairs; the time
  per step is measured, and the model is checked against a full naive run at m = 10⁴.

Prints the times and the ratio naive / library. No assertion: timings are informative.
"""

from __future__ import annotations

import argparse
import math
import time
from statistics import NormalDist

import numpy as np

from ppaudit.attacks import one_run
from ppaudit.attacks.observational import (
    DEFAULT_GUESS_FRACTIONS,
    audit_label_inference,
    correct_guess_counts,
    label_inference_counts,
    label_inference_score_table,
    num_guesses_for_fractions,
    sample_counterfactual_labels,
)
from ppaudit.experiments.labeldp.synthetic_rr import sample_mixture, true_posterior
from ppaudit.mechanisms.labeldp import randomized_response

_N = NormalDist()


def naive_alg3_rejects(mu: float, cp: int, c: int, m: int, gamma: float = 0.05) -> bool:
    """Scalar Algorithm 3, every step, no shortcut."""
    r = gamma * c / m
    h = gamma * (cp - c) / m
    for i in range(c - 1, -1, -1):
        g = _N.cdf(_N.inv_cdf(r) - mu) if 0.0 < r < 1.0 else (0.0 if r <= 0.0 else 1.0)
        hn = max(h, g)
        r = r + i / (cp - i) * (hn - h)
        h = hn
    return r + h >= cp / m


def naive_epsilon(cp: int, c: int, m: int, delta: float, tol: float = one_run.MU_TOL) -> float:
    lo, hi = 0.0, 8.0
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if naive_alg3_rejects(mid, cp, c, m):
            lo = mid
        else:
            hi = mid
    return float(one_run.gdp_epsilon(lo, delta))


def setup(m: int, k: int, rng: np.random.Generator):
    x, y = sample_mixture(m, k, 5, rng)
    ref = true_posterior(x, k)
    target = np.eye(k)[randomized_response(y, 2.0, k, rng).labels]
    return y, target, ref


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=10**6)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    m, reps, k = args.m, args.reps, args.classes
    delta = 1e-5
    y, target, ref = setup(m, k, rng)
    iters = math.ceil(math.log2(8.0 / one_run.MU_TOL))

    # ---------------- library ----------------
    one_run._MU_CACHE.clear()
    t0 = time.perf_counter()
    res = audit_label_inference(y, target, ref, reps, np.random.default_rng(1), delta=delta)
    t_lib = time.perf_counter() - t0
    cps = num_guesses_for_fractions(DEFAULT_GUESS_FRACTIONS, m)
    counts = label_inference_counts(y, target, ref, cps, reps, np.random.default_rng(1))
    one_run._MU_CACHE.clear()
    t0 = time.perf_counter()
    one_run.max_epsilon_gdp_family(np.broadcast_to(cps, counts.shape), counts, m, delta=delta)
    t_lib_eps_sweep = time.perf_counter() - t0
    one_run._MU_CACHE.clear()
    t0 = time.perf_counter()
    exact = one_run.epsilon_gdp_family(np.broadcast_to(cps, counts.shape), counts, m, delta=delta)
    t_lib_eps_all = time.perf_counter() - t0

    # ---------------- naive ----------------
    table = label_inference_score_table(target, ref)
    rows = np.arange(m)
    naive_reps = 3
    t0 = time.perf_counter()
    g = np.random.default_rng(2)
    for _ in range(naive_reps):
        y1 = sample_counterfactual_labels(ref, g)
        b = g.random(m) < 0.5
        shown = np.where(b, y1, y)
        correct_guess_counts(table[rows, shown], ~b, cps, 0.0)
    t_naive_counts = (time.perf_counter() - t0) * reps / naive_reps
    # time per scalar Alg. 3 step, on a few full evaluations
    sample = [(int(cps[j]), int(counts[0, j])) for j in (0, 4, 9)]
    steps = 0
    t0 = time.perf_counter()
    for cp, c in sample:
        naive_alg3_rejects(0.5, cp, c, m)
        steps += c
    per_step = (time.perf_counter() - t0) / steps
    total_steps = iters * float(counts.sum())
    t_naive_eps = per_step * total_steps
    # validate the cost model with a complete naive run at a small size
    ms = 10**4
    cps_s = num_guesses_for_fractions(DEFAULT_GUESS_FRACTIONS, ms)
    ys, ts, rs = setup(ms, k, np.random.default_rng(3))
    cs = label_inference_counts(ys, ts, rs, cps_s, 1, np.random.default_rng(4))[0]
    t0 = time.perf_counter()
    eps_naive_small = [naive_epsilon(int(a), int(b), ms, delta) for a, b in zip(cps_s, cs)]
    t_small = time.perf_counter() - t0
    t_small_model = per_step * iters * float(cs.sum())
    eps_lib_small = one_run.epsilon_gdp_family(cps_s, cs, ms, delta=delta)

    t_naive = t_naive_counts + t_naive_eps
    w = 48

    def line(label: str, value: str) -> None:
        print(f"  {label:<{w}}: {value}")

    print(f"one-run audit, m = {m:,}, {reps} repetitions, c' sweep 1..100 % + fixed 1 %, k = {k}, RR eps = 2")
    line("result eps_sweep / eps_1%", f"{res.epsilon_sweep_mean:.3f} ± {res.epsilon_sweep_std:.3f} / "
         f"{res.epsilon_fixed_mean:.3f} ± {res.epsilon_fixed_std:.3f}")
    line("library, end to end (games + counts + eps)", f"{t_lib:9.2f} s")
    line("  eps for the sweep only (pruned bisection)", f"{t_lib_eps_sweep:9.2f} s")
    line(f"  eps for all {counts.size:,} (c', c) pairs (exact)", f"{t_lib_eps_all:9.2f} s")
    line("naive counting (argsort per repetition, scaled)", f"{t_naive_counts:9.2f} s")
    line(f"naive eps (scalar Alg. 3, {iters} bisection steps)", f"{t_naive_eps:9.0f} s "
         f"(= {per_step * 1e6:.2f} us/step x {total_steps:.3g} steps)")
    line("  cost-model check at m = 10^4, 1 repetition", f"measured {t_small:.2f} s, model {t_small_model:.2f} s, "
         f"max |eps_naive - eps_lib| = {np.max(np.abs(np.array(eps_naive_small) - eps_lib_small)):.1e}")
    line("naive total (estimated)", f"{t_naive:9.0f} s")
    line("speed-up naive / library", f"{t_naive / t_lib:9.0f} x")
    line("sweep best == exact per-pair max", str(bool(np.allclose(exact.max(axis=1), res.per_repetition["epsilon_sweep"], atol=1e-3))))

if __name__ == "__main__":
    main()
