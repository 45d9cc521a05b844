"""Ours beside StatDP and DP-Sniper on the same mechanisms at equal draws per side (#36 §7).

Neither peer is on PyPI and neither is a dependency of ppaudit (never vendored): pass paths to
checkouts of their repositories (github.com/cmla-psu/statdp, github.com/eth-sri/dp-sniper) and an
interpreter that can import them (StatDP needs numba; DP-Sniper needs torch). Each peer runs in a
subprocess of that interpreter, on *its own* definition of the mechanism (the names in
``ppaudit.blackbox.catalogue``'s ``peers`` column); ours runs ``search_mechanism`` on the
catalogue's definition with the same claimed ε0.

Equal draws per side: with ``--draws N``, ours gets ``trials = N`` per pair (pilot 20 % + certification);
StatDP gets ``event_iterations = N`` (its event selection) and ``detect_iterations = N`` (its test);
DP-Sniper gets ``n_train = n_check = n_final = N``. Flagged: ours ``verdict == "violation"``;
StatDP ``p < 0.05``; DP-Sniper ``eps_lcb > ε0``.

Usage::

    python bench/bench_peers.py --statdp /path/statdp --dpsniper /path/dp-sniper \
        [--python /path/python] [--draws 200000] [--seeds 3] [--cases rnm_laplace_value,svt4,svt6]

Without either path (or when one cannot be imported) it prints why and skips that peer; with
neither it exits 0 after saying so.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

_STATDP = r"""
import json, sys, time, logging
sys.path.insert(0, {path!r})
from statdp import detect_counterexample
import statdp.algorithms as A
alg = getattr(A, {name!r})
kw = {{"epsilon": {eps!r}}}
if "SVT" in {name!r}:
    kw.update(N=1, T=1)
t0 = time.process_time()
r = detect_counterexample(alg, {eps!r}, kw, num_input=({m!r},), event_iterations={n!r},
                          detect_iterations={n!r}, cores=1, quiet=True, loglevel=logging.ERROR)
print(json.dumps({{"p": r[0][1], "cpu": time.process_time() - t0}}))
"""

_DPSNIPER = r"""
import json, sys, time, tempfile
sys.path.insert(0, {path!r})
import numpy as np
from dpsniper.attack.dpsniper import DPSniper
from dpsniper.classifiers.classifier_factory import LogisticRegressionFactory
from dpsniper.classifiers.feature_transformer import FlagsFeatureTransformer
from dpsniper.classifiers.torch_optimizer_factory import SGDOptimizerFactory
from dpsniper.search.ddconfig import DDConfig
from dpsniper.search.ddsearch import DDSearch
from dpsniper.input.input_domain import InputDomain, InputBaseType
from dpsniper.input.pattern_generator import PatternGenerator
from dpsniper.utils.initialization import initialize_dpsniper
import dpsniper.mechanisms.report_noisy_max as R
import dpsniper.mechanisms.sparse_vector_technique as S
np.random.seed({seed!r})
name = {name!r}
if name.startswith("ReportNoisyMax"):
    mech, dim, m, ft = getattr(R, name)(eps={eps!r}), 1, 5, None
else:
    mech, m = getattr(S, name)(eps={eps!r}, c=1, t=1), 10
    dim, ft = (20, FlagsFeatureTransformer([-1])) if name[-1] in "124" else (10, None)
# exp_default.py's settings
factory = LogisticRegressionFactory(feature_transform=ft, in_dimensions=dim,
    optimizer_factory=SGDOptimizerFactory(learning_rate=0.3, momentum=0.3, step_size=500),
    regularization_weight=0.001, epochs=10, label=name)
cfg = DDConfig(n_train={n!r}, n={n!r}, n_check={n!r}, n_final={n!r}, n_processes=1)
gen = PatternGenerator(InputDomain(m, InputBaseType.FLOAT, [-10, 10]), True)
t0 = time.process_time()
with initialize_dpsniper(cfg, out_dir=tempfile.mkdtemp()):
    w = DDSearch(mech, DPSniper(mech, factory, cfg), gen, cfg).run()
    w.compute_eps_high_precision(mech, cfg)
print(json.dumps({{"eps_lcb": float(w.lower_bound), "cpu": time.process_time() - t0}}))
"""


def _peer(python, code, timeout):
    """Run a peer in a subprocess; its CPU is the children's user + system time (its workers included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["exit %d" % out.returncode])[-1]}
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--statdp", help="path to a checkout of github.com/cmla-psu/statdp")
    ap.add_argument("--dpsniper", help="path to a checkout of github.com/eth-sri/dp-sniper")
    ap.add_argument("--python", default=sys.executable, help="interpreter that imports the peers")
    ap.add_argument("--draws", type=int, default=200_000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0, help="seeds first-seed … first-seed + seeds − 1")
    ap.add_argument("--epsilon", type=float, default=0.1)
    ap.add_argument("--cases", default="rnm_laplace_value,svt4,svt6")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per peer run")
    args = ap.parse_args(argv)
    paths = {"statdp": args.statdp, "dpsniper": args.dpsniper}
    for k, p in list(paths.items()):
        if p and not os.path.isdir(os.path.join(p, k)):
            print(f"{k}: {p!r} has no {k}/ package folder: skipped")
            paths[k] = None
    if not any(paths.values()):
        print("bench_peers: no peer checkout given (--statdp PATH, --dpsniper PATH): skipped")
        return 0

    from ppaudit.blackbox import Claim, search_mechanism
    from ppaudit.blackbox.catalogue import benchmark_cases

    cases = {c.name: c for c in benchmark_cases(args.epsilon)}
    rows = []
    for name in args.cases.split(","):
        c = cases[name]
        for s in range(args.first_seed, args.first_seed + args.seeds):
            t0 = time.process_time()
            r = search_mechanism(c.audited, c.neighbours(), args.draws, rng=s, claim=Claim.dp(args.epsilon),
                                 outputs=c.outputs)
            row = {"case": name, "seed": s, "ours_flagged": r.violation, "ours_eps_lb": r.audit.epsilon_lower_bound,
                   "ours_cpu": time.process_time() - t0}
            if paths["statdp"] and c.peers[0]:
                st = _peer(args.python, _STATDP.format(path=paths["statdp"], name=c.peers[0], eps=args.epsilon,
                                                       m=5 if name.startswith("rnm") else 10, n=args.draws), args.timeout)
                row.update({f"statdp_{k}": v for k, v in st.items()})
            if paths["dpsniper"] and c.peers[1]:
                dp = _peer(args.python, _DPSNIPER.format(path=paths["dpsniper"], name=c.peers[1], eps=args.epsilon,
                                                         n=args.draws, seed=s), args.timeout)
                row.update({f"dpsniper_{k}": v for k, v in dp.items()})
            print(json.dumps(row), flush=True)
            rows.append(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
