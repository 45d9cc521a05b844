"""Benchmarks of the audit core, printed as ratios against a baseline measured in the same run.

1. ``class_probabilities``: histograms/s, batched, C = 10, 250 votes, σ = 40, against
   ``scipy.integrate.quad`` per class (the straightforward way to evaluate Eq. (4)); with the
   maximum absolute difference between the two.
2. Monte Carlo engine (``noisy_argmax_counts``, sample mode): trials/s against the raw cost
   of drawing the same standard normals with numpy (goal ≥ 50% of it); peak memory of the
   chunk buffer.
3. Exact-count mode: wall time of a complete 1e8-trial audit of one pair (counts for both
   histograms + 2-cut Clopper–Pearson bound over 13 orders).

Run: ``.venv/bin/python bench/bench_core.py`` (add ``--quick`` for a shorter run).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import integrate
from scipy.special import log_ndtr
from scipy.stats import norm

from ppaudit.audit import two_cut_lower_bound
from ppaudit.montecarlo import DEFAULT_CHUNK_ELEMENTS, noisy_argmax_counts, noisy_argmax_counts_pair
from ppaudit.noisy_argmax import class_probabilities


def best_of(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def quad_probabilities(hist, sigma):
    gaps = (hist.max() - hist) / sigma
    out = np.empty(hist.size)
    for c in range(hist.size):
        others = np.delete(gaps, c)
        f = lambda u: norm.pdf(u + gaps[c]) * np.exp(np.sum(log_ndtr(u + others)))  # noqa: E731
        out[c] = integrate.quad(f, -12, 12, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)

    # 1. class_probabilities vs quad
    n_batch = 20_000 if args.quick else 200_000
    n_quad = 10 if args.quick else 40
    hists = rng.multinomial(250, rng.dirichlet(np.ones(10) * 0.3), size=n_batch).astype(float)
    t_fast, p_fast = best_of(lambda: class_probabilities(hists, 40.0))
    t_quad, p_quad = best_of(lambda: np.array([quad_probabilities(h, 40.0) for h in hists[:n_quad]]), repeat=1)
    err = np.abs(p_fast[:n_quad] - p_quad).max()
    rate_fast, rate_quad = n_batch / t_fast, n_quad / t_quad
    print("class_probabilities (C=10, k=250, sigma=40)")
    print(f"  batched  : {rate_fast:12.0f} histograms/s")
    print(f"  quad     : {rate_quad:12.1f} histograms/s")
    print(f"  ratio    : {rate_fast / rate_quad:12.0f} x   (goal >= 1000x, >= 1e5 hist/s)")
    print(f"  max |diff| vs quad: {err:.2e}   (goal <= 1e-9)")

    # 2. Monte Carlo engine vs raw normal draws
    trials = 2_000_000 if args.quick else 20_000_000
    hist = np.array([14, 12, 10, 8, 6], dtype=float)
    c = hist.size
    rows = DEFAULT_CHUNK_ELEMENTS // c

    def raw():
        g = np.random.default_rng(1)
        buf = np.empty((rows, c))
        done = 0
        while done < trials:
            n = min(rows, trials - done)
            g.standard_normal(out=buf[:n])
            done += n

    t_raw, _ = best_of(raw)
    t_mc, counts = best_of(lambda: noisy_argmax_counts(hist, 2.0, trials, rng=1))
    print(f"\nMonte Carlo engine (C={c}, {trials:.0e} trials, chunk {rows} rows = {rows * c * 8 / 2**20:.0f} MiB)")
    print(f"  engine   : {trials / t_mc:12.3e} trials/s")
    print(f"  raw draws: {trials / t_raw:12.3e} trials/s (numpy standard_normal only)")
    print(f"  ratio    : {t_raw / t_mc:12.2f}     (goal >= 0.50)")

    # 3. exact-count mode: one 1e8-trial audit
    orders = np.array([1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64])

    def audit():
        c0, c1 = noisy_argmax_counts_pair([14, 12, 10, 8, 6], [13, 13, 10, 8, 6], 2.0, 10**8, rng=3, mode="exact")
        return two_cut_lower_bound(c0, c1, orders).lower_bound

    audit()
    t_exact, _ = best_of(audit, repeat=5)
    t_sample_est = 2 * 10**8 * t_mc / trials
    print("\nExact-count mode, 1e8-trial 2-cut audit of one pair")
    print(f"  exact    : {t_exact * 1e3:10.2f} ms   (goal <= 10 ms)")
    print(f"  sampling : {t_sample_est:10.1f} s (estimated from the engine rate)")
    print(f"  ratio    : {t_sample_est / t_exact:10.0f} x")


if __name__ == "__main__":
    main()
