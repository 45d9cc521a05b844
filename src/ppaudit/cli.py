"""The ``ppaudit`` command line.

Subcommands (``ppaudit SUBCOMMAND --help`` for each):

* ``audit-votes VOTES.npz --sigma S [--threshold T --sigma1 S1]`` — a PATE operator's own
  teacher votes: accounted (data-dependent GNMax / Confident-GNMax) cost, exact per-query RDP,
  audit of the most exposed query, ε at δ (:func:`ppaudit.blackbox.votes.audit_votes`).
* ``audit-counts COUNTS.csv`` — two output-count vectors → RDP and (ε, δ) lower bounds and a
  verdict against an optional claim (:func:`ppaudit.blackbox.audit_counts`).
* ``one-run --guesses C' --correct C --samples M [--tau T]`` — one-run f-DP audit (Alg. 3).
* ``selfcheck`` — the auditor's own soundness and power (:mod:`ppaudit.selfcheck`).
* ``search module:function --neighbours count-vectors --length 5 --claim-dp 1`` — search
  neighbouring pairs for the worst case and certify it (:mod:`ppaudit.cli_search`).
* ``figure NAME`` — build one Snakemake target of the workflow (needs the ``[workflow]`` extra).

Exit codes: 0 = no violation, 1 = a violation was detected (or the self-check failed), 2 = bad
usage or input (the message names the bad value).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input detected after parsing (reported with exit code 2)."""


def _clean(obj):
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return x if math.isfinite(x) else ("inf" if x > 0 else ("-inf" if x < 0 else "nan"))
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.ndarray):
        return _clean(obj.tolist())
    return obj


def _emit(args, payload: dict, lines: list[str]) -> None:
    if args.json:
        print(json.dumps(_clean(payload), indent=2))
    else:
        print("\n".join(lines))


def _orders(text: str | None, default=None) -> np.ndarray | None:
    if text is None:
        return default
    try:
        vals = np.array([float(x) for x in text.split(",") if x.strip()])
    except ValueError:
        raise UsageError(f"--orders must be comma-separated numbers > 1, got {text!r}") from None
    if vals.size == 0 or np.any(~(vals > 1)):
        raise UsageError(f"--orders must be comma-separated numbers > 1, got {text!r}")
    return vals


def _claim_from_args(args):
    from .blackbox import Claim

    given = [n for n in ("claim_zcdp", "claim_dp", "claim_gdp", "claim_rdp") if getattr(args, n, None) is not None]
    if len(given) > 1:
        raise UsageError(f"give at most one claim, got {', '.join('--' + g.replace('_', '-') for g in given)}")
    if not given:
        if getattr(args, "claim_delta", None) is not None:
            raise UsageError("--claim-delta needs --claim-dp")
        return None
    try:
        if args.claim_zcdp is not None:
            return Claim.zcdp(args.claim_zcdp)
        if args.claim_gdp is not None:
            return Claim.gdp(args.claim_gdp)
        if args.claim_dp is not None:
            return Claim.dp(args.claim_dp, args.claim_delta if args.claim_delta is not None else 0.0)
        pts = [p.split(":") for p in args.claim_rdp.split(",") if p.strip()]
        if not pts or any(len(p) != 2 for p in pts):
            raise UsageError(f"--claim-rdp must look like '2:0.5,8:2.0' (order:epsilon), got {args.claim_rdp!r}")
        return Claim.rdp([float(p[0]) for p in pts], [float(p[1]) for p in pts])
    except ValueError as exc:
        raise UsageError(f"bad claim: {exc}") from None


def _add_claim_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("claim (at most one; the verdict tests it)")
    g.add_argument("--claim-zcdp", type=float, metavar="RHO", help="the mechanism claims RHO-zCDP")
    g.add_argument("--claim-dp", type=float, metavar="EPS", help="the mechanism claims (EPS, --claim-delta)-DP")
    g.add_argument("--claim-delta", type=float, metavar="DELTA", help="δ of --claim-dp (default 0)")
    g.add_argument("--claim-gdp", type=float, metavar="MU", help="the mechanism claims MU-GDP")
    g.add_argument("--claim-rdp", metavar="A:E,...", help="claimed RDP curve, e.g. '2:0.5,8:2.0'")


def _fmt_claim(c) -> str:
    return "none" if c is None else c.describe()


# --------------------------------------------------------------------------------------
# subcommands
# --------------------------------------------------------------------------------------


def _cmd_audit_votes(args) -> int:
    from .blackbox.votes import audit_votes, load_votes

    path = Path(args.votes)
    if not path.is_file():
        raise UsageError(f"votes file not found: {str(path)!r}")
    try:
        hist = load_votes(path)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read votes file {str(path)!r}: {exc}") from None
    res = audit_votes(hist, args.sigma, threshold=args.threshold, sigma_threshold=args.sigma1,
                      orders=_orders(args.orders), delta=args.delta, trials=args.trials,
                      exact_queries=args.exact_queries, confidence=args.confidence, rng=args.seed)
    d = res.to_dict()
    a = res.audit
    lines = [
        f"votes: {res.num_queries} queries, {res.num_classes} classes; mechanism {res.mechanism}, sigma={res.sigma:g}"
        + (f", threshold={res.threshold:g}, sigma1={res.sigma_threshold:g}" if res.threshold is not None else ""),
        f"accounted epsilon at delta={res.delta:g}: data-dependent {res.epsilon_data_dependent:.4f} "
        f"(order {res.order_data_dependent:.3g}); data-independent GNMax {res.epsilon_data_independent:.4f}",
        f"most exposed query: #{res.most_exposed_query} {d['most_exposed_histogram']} -> worst neighbour {d['worst_neighbour']}; "
        f"exact RDP at that order {d['most_exposed_exact_rdp_at_order']:.4g}",
        f"audit ({a.counts0.sum()} + {a.counts1.sum()} draws): max RDP lower bound {a.rdp_lower_bound.max():.4g}, "
        f"epsilon lower bound {a.epsilon_lower_bound:.4g} at delta={a.delta:g}",
        f"exact RDP above the data-dependent bound: {res.exact_exceeds_data_dependent or 'none'}",
        f"verdict: {res.verdict}",
    ]
    _emit(args, d, lines)
    return EXIT_VIOLATION if res.verdict == "violation" else EXIT_OK


def _read_counts(path: Path) -> tuple[np.ndarray, np.ndarray, list | None]:
    import pandas as pd

    try:
        df = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read counts file {str(path)!r}: {exc}") from None
    if {"counts0", "counts1"} <= set(df.columns):
        c0, c1 = df["counts0"], df["counts1"]
    else:
        raise UsageError(f"{str(path)!r} must have columns 'counts0' and 'counts1' (one row per output); found {list(df.columns)}")
    out = []
    for name, col in (("counts0", c0), ("counts1", c1)):
        v = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(v) | (v < 0) | (v != np.round(v))
        if bad.any():
            raise UsageError(f"column {name} must hold non-negative integers; bad value {col[bad].iloc[0]!r} in row {int(np.flatnonzero(bad)[0]) + 1}")
        out.append(v.astype(np.int64))
    labels = df["output"].astype(str).tolist() if "output" in df.columns else None
    return out[0], out[1], labels


def _cmd_audit_counts(args) -> int:
    from .blackbox import audit_counts

    path = Path(args.counts)
    if not path.is_file():
        raise UsageError(f"counts file not found: {str(path)!r}")
    c0, c1, labels = _read_counts(path)
    if c0.sum() == 0 or c1.sum() == 0:
        raise UsageError(f"both count columns need trials, got totals {int(c0.sum())} and {int(c1.sum())}")
    claim = _claim_from_args(args)
    orders = _orders(args.orders, np.array([1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]))
    res = audit_counts(c0, c1, orders, confidence=args.confidence, claim=claim, delta=args.delta,
                       selection=args.selection, rng=args.seed, outputs=labels)
    lines = [f"outputs: {c0.size}; trials: {int(c0.sum())} and {int(c1.sum())}; claim: {_fmt_claim(claim)}",
             "order  RDP lower bound (2-cut CP)  k-cut (asymptotic)  claimed RDP"]
    for j, a in enumerate(res.orders):
        cr = "-" if res.claim_rdp is None else f"{res.claim_rdp[j]:.4g}"
        lines.append(f"{a:6g}  {res.rdp_lower_bound[j]:26.4g}  {res.k_cut_lower_bound[j]:18.4g}  {cr}")
    lines.append(f"epsilon lower bound (Eq. 1) at delta={res.delta:g}: {res.epsilon_lower_bound:.4g}"
                 + ("" if res.claim_epsilon is None else f" (claimed {res.claim_epsilon:.4g})"))
    lines.append(f"verdict: {res.verdict} (confidence {res.confidence:g}, Bonferroni over {res.details.get('tests', 1)} test(s))")
    _emit(args, res.to_dict(), lines)
    return EXIT_VIOLATION if res.violation else EXIT_OK


def _cmd_one_run(args) -> int:
    from .attacks.one_run import gdp_epsilon, mu_lower_bound
    from .blackbox.scores import _claim_rejected, dp_epsilon_lower_bound_one_run

    claim = _claim_from_args(args)
    mu = float(mu_lower_bound(args.guesses, args.correct, args.samples, confidence=args.confidence, tau=args.tau))
    eps = float(gdp_epsilon(mu, args.delta))
    eps_dp = dp_epsilon_lower_bound_one_run(args.guesses, args.correct, args.samples, args.delta, args.confidence, args.tau)
    rejected = None if claim is None else _claim_rejected(claim, args.guesses, args.correct, args.samples, args.confidence,
                                                          args.delta, args.tau)
    verdict = "no claim" if claim is None else ("violation" if rejected else "consistent")
    payload = {"num_guesses": args.guesses, "num_correct": args.correct, "num_samples": args.samples, "tau": args.tau,
               "confidence": args.confidence, "delta": args.delta, "mu_lower_bound": mu, "epsilon_lower_bound": eps,
               "epsilon_lower_bound_dp": eps_dp,
               "claim": None if claim is None else claim.to_dict(), "verdict": verdict, "procedure": "paper"}
    lines = [f"one-run audit: c'={args.guesses}, c={args.correct}, m={args.samples}, tau={args.tau:g}",
             f"mu-GDP rejected for mu <= {mu:.5f}; epsilon lower bound {eps:.4f} at delta={args.delta:g} (GDP family)",
             f"(eps, delta)-DP rejected for eps <= {eps_dp:.4f} at delta={args.delta:g} (any mechanism)",
             f"claim: {_fmt_claim(claim)}; verdict: {verdict}"]
    _emit(args, payload, lines)
    return EXIT_VIOLATION if verdict == "violation" else EXIT_OK


def _cmd_selfcheck(args) -> int:
    from .selfcheck import run_selfcheck

    cases = [c.strip() for c in args.cases.split(",")] if args.cases else None
    res = run_selfcheck(args.repetitions, args.trials, confidence=args.confidence, seed=args.seed, cases=cases,
                        progress=args.progress)
    if args.csv:
        res.table.to_csv(args.csv, index=False)
    cols = ["case", "claim", "mean_rdp_lower_bound_alpha2", "mean_epsilon_lower_bound", "flagged", "bar", "passed"]
    lines = [f"self-check: {res.repetitions} repetitions x {res.trials} trials per side, confidence {res.confidence:g}",
             res.table[cols].to_string(index=False), f"passed: {res.passed}"]
    _emit(args, {"repetitions": res.repetitions, "trials": res.trials, "confidence": res.confidence, "seed": res.seed,
                 "passed": res.passed, "table": res.table.to_dict(orient="records")}, lines)
    return EXIT_OK if res.passed else EXIT_VIOLATION


def _repo_root() -> Path:
    for base in (Path.cwd(), *Path.cwd().parents):
        if (base / "Snakefile").is_file() and (base / "workflow").is_dir():
            return base
    here = Path(__file__).resolve().parents[2]
    if (here / "Snakefile").is_file():
        return here
    raise UsageError("no Snakefile found in the current directory, its parents or the source checkout; "
                     "run `ppaudit figure` from the ppaudit repository")


def _cmd_figure(args) -> int:
    root = _repo_root()
    exe = Path(sys.executable).with_name("snakemake")
    snakemake = str(exe) if exe.is_file() else shutil.which("snakemake")
    if snakemake is None:
        raise UsageError("snakemake is not installed; install the workflow extra: pip install 'ppaudit[workflow]'")
    cmd = [snakemake, "--profile", args.profile, "--cores", str(args.cores), args.name]
    if args.configfile:
        cmd += ["--configfile", args.configfile]
    if args.dry_run:
        cmd.append("--dry-run")
    if not args.json:
        print("+ " + " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, cwd=root, capture_output=args.json, text=True)
    if args.json:
        print(json.dumps({"command": cmd, "cwd": str(root), "returncode": proc.returncode,
                          "stdout_tail": proc.stdout[-4000:], "stderr_tail": proc.stderr[-4000:]}, indent=2))
    if proc.returncode != 0:
        print(f"ppaudit: error: snakemake failed for target {args.name!r} (exit {proc.returncode})", file=sys.stderr)
        return EXIT_USAGE if proc.returncode == 1 and "MissingRuleException" in (proc.stderr or "") else proc.returncode
    return EXIT_OK


# --------------------------------------------------------------------------------------
# parser
# --------------------------------------------------------------------------------------


def _positive_float(name):
    def conv(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number > 0, got {text!r}") from None
        if not (math.isfinite(v) and v > 0):
            raise argparse.ArgumentTypeError(f"{name} must be a number > 0, got {text!r}")
        return v
    return conv


def _unit_interval(name, closed_left=False):
    def conv(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number in (0, 1), got {text!r}") from None
        if not ((0 <= v if closed_left else 0 < v) and v < 1):
            raise argparse.ArgumentTypeError(f"{name} must be in {'[0' if closed_left else '(0'}, 1), got {text!r}")
        return v
    return conv


def _nonneg_int(name, minimum=0):
    def conv(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}")
        return v
    return conv


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ppaudit`` (all subcommands)."""
    p = argparse.ArgumentParser(prog="ppaudit", description="Audit private prediction, label DP and your own mechanisms.",
                                epilog="exit codes: 0 no violation, 1 violation detected, 2 bad usage or input")
    from . import __version__

    p.add_argument("--version", action="version", version=f"ppaudit {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def common(sp, seed=True):
        sp.add_argument("--json", action="store_true", help="print the result as JSON")
        sp.add_argument("--confidence", type=_unit_interval("--confidence"), default=0.95,
                        help="confidence of the lower bounds / verdict (default 0.95)")
        if seed:
            sp.add_argument("--seed", type=_nonneg_int("--seed"), default=0, help="random seed (default 0)")

    v = sub.add_parser("audit-votes", help="audit a PATE operator's teacher votes",
                       description="Accounted cost, exact per-query RDP and an audit of the most exposed query of a "
                                   "PATE deployment, from its votes. VOTES.npz holds 'votes' (n_teachers, n_queries) "
                                   "integer labels [+ optional scalar 'num_classes'] or 'histograms' (n_queries, C).")
    v.add_argument("votes", metavar="VOTES.npz")
    v.add_argument("--sigma", type=_positive_float("--sigma"), required=True, help="GNMax noise sigma (sigma2)")
    v.add_argument("--threshold", type=_positive_float("--threshold"), help="Confident-GNMax threshold T")
    v.add_argument("--sigma1", type=_positive_float("--sigma1"), help="Confident-GNMax threshold noise sigma1")
    v.add_argument("--delta", type=_unit_interval("--delta"), default=1e-5, help="delta of the reported epsilon (default 1e-5)")
    v.add_argument("--orders", help="comma-separated Renyi orders (default: 1.5 ... 2000)")
    v.add_argument("--trials", type=_nonneg_int("--trials", 1), default=200_000, help="draws per side for the audit (default 200000)")
    v.add_argument("--exact-queries", type=_nonneg_int("--exact-queries", 1), default=20,
                   help="costliest queries that get the exact RDP (default 20)")
    common(v)
    v.set_defaults(func=_cmd_audit_votes)

    c = sub.add_parser("audit-counts", help="RDP and (eps, delta) lower bounds from two output-count vectors",
                       description="COUNTS.csv has columns counts0 and counts1 (one row per output; an optional "
                                   "'output' column names it): the output counts of T0 runs on S and T1 runs on S'.")
    c.add_argument("counts", metavar="COUNTS.csv")
    c.add_argument("--orders", help="comma-separated orders > 1 (default 1.5,2,4,8,16,32,64)")
    c.add_argument("--delta", type=_unit_interval("--delta", closed_left=True), default=1e-5,
                   help="delta of the epsilon lower bound (default 1e-5; --claim-dp's delta replaces it)")
    c.add_argument("--selection", choices=("split", "bonferroni"), default="split", help="output-set search (default split)")
    _add_claim_options(c)
    common(c)
    c.set_defaults(func=_cmd_audit_counts)

    o = sub.add_parser("one-run", help="one-run f-DP audit from guess counts (Alg. 3)",
                       description="The one-run f-DP audit (Mahloujifar et al. 2025b, Alg. 3 as in the observational "
                                   "paper's App. B; Theorem 5 with the tau shift) over the mu-GDP family.")
    o.add_argument("--guesses", type=_nonneg_int("--guesses"), required=True, help="c': non-abstaining guesses")
    o.add_argument("--correct", type=_nonneg_int("--correct"), required=True, help="c: correct guesses")
    o.add_argument("--samples", type=_nonneg_int("--samples", 1), required=True, help="m: canaries in the game")
    o.add_argument("--tau", type=_unit_interval("--tau", closed_left=True), default=0.0, help="TV bound tau (default 0)")
    o.add_argument("--delta", type=_unit_interval("--delta"), default=1e-5, help="delta of the epsilon (default 1e-5)")
    _add_claim_options(o)
    common(o, seed=False)
    o.set_defaults(func=_cmd_one_run)

    s = sub.add_parser("selfcheck", help="run the auditor on correct mechanisms and planted-bug twins",
                       description="Exit 0 if correct mechanisms are flagged in <= 5%% (+ binomial slack) of the runs "
                                   "and planted bugs in >= 90%%, else 1.")
    s.add_argument("--repetitions", type=_nonneg_int("--repetitions", 1), default=100, help="runs per case (default 100)")
    s.add_argument("--trials", type=_nonneg_int("--trials", 1), default=30_000, help="draws per side per run (default 30000)")
    s.add_argument("--cases", help="comma-separated case names (default: all)")
    s.add_argument("--csv", help="also write the table to this CSV file")
    s.add_argument("--progress", action="store_true", help="show progress bars")
    common(s)
    s.set_defaults(func=_cmd_selfcheck)

    f = sub.add_parser("figure", help="build one figure/table target of the Snakemake workflow",
                       description="Runs `snakemake --profile PROFILE --cores N NAME` in the repository root "
                                   "(needs the [workflow] extra).")
    f.add_argument("name", metavar="NAME", help="the target, e.g. chadha_fig3 or selfcheck")
    f.add_argument("--cores", type=_nonneg_int("--cores", 1), default=2, help="cores (default 2)")
    f.add_argument("--profile", default="workflow/profiles/default", help="snakemake profile (default workflow/profiles/default)")
    f.add_argument("--configfile", help="config file (default: the workflow's config/config.yaml)")
    f.add_argument("-n", "--dry-run", action="store_true", help="only show what would run")
    f.add_argument("--json", action="store_true", help="print the command and its result as JSON")
    f.set_defaults(func=_cmd_figure)

    from .cli_search import add_search_parser

    add_search_parser(sub, common, _add_claim_options)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ppaudit`` command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        parser.exit(EXIT_USAGE, f"ppaudit {args.command}: error: {exc}\n")
    except ValueError as exc:
        parser.exit(EXIT_USAGE, f"ppaudit {args.command}: error: {exc}\n")
    except BrokenPipeError:  # output piped into e.g. `head`
        sys.stderr.close()
        return EXIT_OK
    return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
