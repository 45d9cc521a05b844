"""Benchmark: search_mechanism over 10 pairs at 2·10⁵ draws per side, against auditing every pair.

Run: ``.venv/bin/python bench/bench_search.py [--trials 200000] [--repeats 3]``.

Workload (issue 28, "Speed"): pilot + certification of 10 neighbouring pairs at ``T`` draws per
side per pair, for two mechanisms:

* ``exponential_bug``: the exponential mechanism over 3 candidates that forgot its utility's
  sensitivity (``p ∝ exp(ε·u)``, claim (1, 0)-DP, true ε = 2), on ``replace_one([0]*5, [0, 1, 2])``
  (10 pairs);
* ``laplace_rnm``: correct Laplace report-noisy-max (scale 1, claim (1, 0)-DP) on 10 pairs
  sampled from ``count_vectors(4, 1)``;
* ``reused_noise_2d``: a 2-D Laplace mechanism that adds one noise draw to both coordinates
  (claim (1, 0)-DP), real outputs, so ``outputs="classifier"``; no baseline (``audit_mechanism``
  bins 1-D outputs only).

Baseline: what a user does without the search — :func:`ppaudit.blackbox.audit_mechanism` on
every pair with the full ``T`` draws per side (its own split selects the output set),
Bonferroni over the 10 pairs (confidence ``1 − 0.05/10`` each). The search draws
``10·0.2·T + 5·0.8·T`` per side (0.6 of the baseline's ``10·T``) and tests 5 candidates instead
of 10.

Prints, per mechanism: wall time (median of ``--repeats``) of the search and of the baseline,
their ratio, draws, verdicts and the certified ε lower bound of the witness against the best
baseline bound.

Then the **benchmark target** (``blackbox_benchmark``): :func:`ppaudit.experiments.blackbox.benchmark.run_blackbox_benchmark`
on the settings of ``config/config.yaml`` (the embedded default), once with the pilot objective
of the search (``"shrunk"``: a lower confidence bound of the certified excess, relative to the
claim, with honestly ordered likelihood-ratio sets and ordinal threshold sets) and once with the
first version's plug-in objective, in the same process: wall and CPU seconds of each, their
ratios, and the buggy / correct rows that meet their bars. Measured 26 Nov 2026 on the project
machine (2 shared cores): shrunk 124.5 s CPU / 188 s wall, plug-in 104.6 s CPU / 113 s wall
(CPU ratio 1.19); bars met on
buggy rows 13/18 against 10/18 (the five misses are the ε0 = 0.1 rows at 5·10⁴ that even the best
output set cannot pass, ``bench/oracle_power.py``). ``--no-benchmark`` skips it.
No assertion: timings are informative.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

from ppaudit.blackbox import Claim, audit_mechanism, search_mechanism
from ppaudit.blackbox.neighbours import count_vectors, random_pairs, replace_one


def exponential_bug(votes, n, rng):
    u = np.bincount(np.asarray(votes), minlength=3).astype(float)
    p = np.exp(u - u.max())  # forgot the 1 / (2 Δu): true ε = 2
    return rng.choice(3, size=n, p=p / p.sum())


def laplace_rnm(c, n, rng):
    c = np.asarray(c, dtype=float)
    return np.argmax(c + rng.laplace(0.0, 1.0, (n, c.size)), axis=1)


def reused_noise(c, n, rng):
    c = np.asarray(c, dtype=float)
    return c + rng.laplace(0.0, 1.0, (n, 1))  # bug: one noise draw for both coordinates


CASES = {
    "exponential_bug": (exponential_bug, lambda: list(replace_one([0] * 5, [0, 1, 2]))),
    "laplace_rnm": (laplace_rnm, lambda: random_pairs(count_vectors(4, 1), 10, rng=0)),
    # 2-D real outputs: outputs="classifier" (gradient boosting); audit_mechanism has no 2-D baseline.
    "reused_noise_2d": (reused_noise, lambda: random_pairs(count_vectors(2, 2), 10, rng=0)),
}


def run_case(name: str, trials: int, repeats: int) -> dict:
    mech, pairs_fn = CASES[name]
    pairs = pairs_fn()
    claim = Claim.dp(1.0)
    t_search, t_base = [], []
    for r in range(repeats):
        t0 = time.perf_counter()
        res = search_mechanism(mech, pairs, trials, rng=r, claim=claim)
        t_search.append(time.perf_counter() - t0)
        if name == "reused_noise_2d":
            base = []
            continue
        t0 = time.perf_counter()
        base = [audit_mechanism(mech, d, nb, trials, res.orders, confidence=1 - 0.05 / len(pairs), rng=(r, i), claim=claim)
                for i, (d, nb) in enumerate(pairs)]
        t_base.append(time.perf_counter() - t0)
    ts, tb = float(np.median(t_search)), (float(np.median(t_base)) if t_base else float("nan"))
    return {
        "case": name, "pairs": len(pairs), "trials_per_side": trials,
        "search_seconds": ts, "baseline_seconds": tb, "speedup": tb / ts,
        "search_draws": 2 * (len(pairs) * res.pilot_trials + res.certified * res.certification_trials),
        "baseline_draws": 2 * len(pairs) * trials if base else 0,
        "search_verdict": res.verdict,
        "baseline_verdict": ("violation" if any(b.violation for b in base) else "consistent") if base else "n/a",
        "search_epsilon_lower_bound": float(res.audit.epsilon_lower_bound),
        "baseline_best_epsilon_lower_bound": float(max(b.epsilon_lower_bound for b in base)) if base else float("nan"),
        "witness": f"{res.witness.dataset} vs {res.witness.neighbour}: {res.witness.output_set.description}",
    }


def run_benchmark_target() -> dict:
    """The default config's ``blackbox_benchmark`` under both pilot objectives: seconds and bars met."""
    from pathlib import Path

    import yaml

    import ppaudit.blackbox.pilot as search_module  # the pilot objective lives in blackbox.pilot
    from ppaudit.experiments.blackbox.benchmark import run_blackbox_benchmark

    cfg = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "config.yaml").read_text())["blackbox_benchmark"]
    kw = dict(confidence=cfg["confidence"], slack_level=cfg["slack_level"], cases=cfg["cases"] or None,
              search_options={"pilot_fraction": cfg["pilot_fraction"], "certify_top": cfg["certify_top"]})
    out = {"settings": cfg["settings"], "seeds": cfg["seeds"]}
    saved = search_module._PILOT_OBJECTIVE
    try:
        for objective in ("shrunk", "plug-in"):
            search_module._PILOT_OBJECTIVE = objective
            c0, w0 = time.process_time(), time.perf_counter()
            res = run_blackbox_benchmark(cfg["settings"], cfg["seeds"], **kw)
            t = res.table
            out[objective] = {
                "wall_seconds": time.perf_counter() - w0, "cpu_seconds": time.process_time() - c0,
                "buggy_rows_passed": f"{int(t.loc[t['buggy'], 'passed'].sum())}/{int(t['buggy'].sum())}",
                "correct_rows_passed": f"{int(t.loc[~t['buggy'], 'passed'].sum())}/{int((~t['buggy']).sum())}",
                "flagged": {f"{r.case}@{r.epsilon0:g}/{r.trials}": f"{r.flagged}/{r.seeds}" for r in t.itertuples()},
            }
    finally:
        search_module._PILOT_OBJECTIVE = saved
    out["wall_ratio_shrunk_over_plugin"] = out["shrunk"]["wall_seconds"] / out["plug-in"]["wall_seconds"]
    out["cpu_ratio_shrunk_over_plugin"] = out["shrunk"]["cpu_seconds"] / out["plug-in"]["cpu_seconds"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=lambda s: int(float(s)), default=200_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-benchmark", action="store_true", help="skip the blackbox_benchmark target's timing")
    args = ap.parse_args()
    rows = [run_case(name, args.trials, args.repeats) for name in CASES]
    bench = None if args.no_benchmark else run_benchmark_target()
    if args.json:
        print(json.dumps({"machine": platform.processor() or platform.machine(), "rows": rows, "benchmark": bench},
                         indent=2))
        return
    for r in rows:
        print(f"{r['case']}: {r['pairs']} pairs x {r['trials_per_side']} draws per side")
        print(f"  search   {r['search_seconds']:.2f} s, {r['search_draws']:,} draws, verdict {r['search_verdict']}, "
              f"witness eps >= {r['search_epsilon_lower_bound']:.3f}")
        if r["baseline_verdict"] == "n/a":
            print(f"  baseline: none (real 2-D outputs)\n  witness: {r['witness']}")
            continue
        print(f"  baseline {r['baseline_seconds']:.2f} s, {r['baseline_draws']:,} draws, verdict {r['baseline_verdict']}, "
              f"best eps >= {r['baseline_best_epsilon_lower_bound']:.3f} (audit_mechanism on every pair, Bonferroni / 10)")
        print(f"  ratio baseline / search: {r['speedup']:.2f}x")
        print(f"  witness: {r['witness']}")
    if bench is not None:
        print(f"blackbox_benchmark (config/config.yaml: {bench['settings']}, {bench['seeds']} seeds):")
        for objective in ("shrunk", "plug-in"):
            b = bench[objective]
            print(f"  pilot objective {objective!r}: {b['wall_seconds']:.1f} s wall, {b['cpu_seconds']:.1f} s CPU; "
                  f"bars met: buggy {b['buggy_rows_passed']}, correct {b['correct_rows_passed']}")
        print(f"  ratio shrunk / plug-in: wall {bench['wall_ratio_shrunk_over_plugin']:.2f}, "
              f"CPU {bench['cpu_ratio_shrunk_over_plugin']:.2f} (CPU is the steadier on a shared machine)")


if __name__ == "__main__":
    main()
