"""``ppaudit audit-votes VOTES.npz|VOTES.npy --sigma S [--threshold T --sigma1 S1]``: a PATE
operator's own teacher votes.

The accounted (data-dependent GNMax / Confident-GNMax) cost, the exact per-query RDP, an audit of
the most exposed query and ε at δ (:func:`ppaudit.blackbox.votes.audit_votes`); whether that audit
resolves the query's effect (:func:`ppaudit.blackbox.votes.audit_resolution`).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from .common import (EXIT_OK, EXIT_VIOLATION, UsageError, add_common_options, emit, nonneg_int, parse_orders,
                     positive_float, unit_interval)

__all__ = ["add_parser", "run"]


def _read_votes(args) -> np.ndarray:
    """The votes file of ``audit-votes`` as ``(n_queries, C)`` histograms; a layout warning goes to stderr."""
    from ..blackbox.votes import VotesLayoutWarning, load_votes

    path = Path(args.votes)
    if not path.exists():
        raise UsageError(f"votes file not found: {str(path)!r}")
    if not path.is_file():
        raise UsageError(f"votes file {str(path)!r} is not a file; expected a .npz or .npy file")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", VotesLayoutWarning)
        try:
            hist = load_votes(path, histograms=args.histograms, num_classes=args.num_classes)
        except ValueError as exc:
            raise UsageError(f"votes file: {exc}") from None
    for w in caught:
        if issubclass(w.category, VotesLayoutWarning):
            print(f"ppaudit audit-votes: warning: {w.message}", file=sys.stderr)
    return hist


def _round_up(n: int, digits: int = 2) -> int:
    scale = 10 ** max(len(str(int(n))) - digits, 0)
    return -(-int(n) // scale) * scale


def _resolution_line(res) -> str:
    """Whether the Monte Carlo audit resolves the exposed query's effect (:func:`ppaudit.blackbox.votes.audit_resolution`)."""
    r = res.resolution
    if not r:
        return "resolution: not assessed"
    where = (f"{r['attainable_two_cut']:.4g} that a 2-cut of this pair can show at order {r['order']:.4g} "
             f"(exact RDP there {r['exact_rdp']:.4g})")
    if r["resolved"]:
        return (f"resolution: resolved: the audit's RDP lower bound {r['lower_bound']:.4g} is "
                f"{r['resolved_fraction']:.0%} of the {where}")
    head = (f"resolution: NOT resolved: with {r['trials']:,} draws per side the audit's RDP lower bound stays below "
            f"{r['fraction']:.0%} of what a 2-cut can show at every order (best {r['resolved_fraction']:.0%}); ")
    if r["trials_needed"] is None:
        return head + "no feasible --trials would resolve it"
    need, suggest = _round_up(r["trials_needed"]), _round_up(r["trials_suggested"])
    return head + (f"it needs at least about {need:,} draws per side to reach {r['fraction']:.0%} of the {where}, "
                   f"and about --trials {suggest} to do so in most runs (the draws needed grow as 1/divergence^2)")


def run(args) -> int:
    """Run ``ppaudit audit-votes``; returns the exit code."""
    from ..blackbox.votes import CONVERSIONS, audit_votes

    hist = _read_votes(args)
    if (args.threshold is None) != (args.sigma1 is None):
        given = "--threshold" if args.threshold is not None else "--sigma1"
        raise UsageError(f"give both --threshold and --sigma1 (Confident-GNMax) or neither, got only {given} "
                         f"{args.threshold if args.threshold is not None else args.sigma1:g}")
    orders = parse_orders(args.orders)
    if orders is not None and not np.isfinite(orders).any():
        raise UsageError(f"--orders needs at least one finite order > 1 for the accounted epsilon, got {args.orders!r}")
    res = audit_votes(hist, args.sigma, threshold=args.threshold, sigma_threshold=args.sigma1,
                      orders=orders, delta=args.delta, trials=args.trials,
                      exact_queries=args.exact_queries, confidence=args.confidence, rng=args.seed)
    d = res.to_dict()
    a = res.audit
    lines = [
        f"votes: {res.num_queries} queries, {res.num_classes} classes; mechanism {res.mechanism}, sigma={res.sigma:g}"
        + (f", threshold={res.threshold:g}, sigma1={res.sigma_threshold:g}" if res.threshold is not None else ""),
        f"accounted epsilon at delta={res.delta:g}, data-dependent, composed over {res.num_queries} queries:",
        f"  {res.epsilon_data_dependent:.4f} (order {res.order_data_dependent:.3g})  {CONVERSIONS['balle2020']}",
        f"  {res.epsilon_data_dependent_classic:.4f} (order {res.order_data_dependent_classic:.3g})  {CONVERSIONS['classic']}",
        f"accounted epsilon at delta={res.delta:g}, data-independent GNMax: {res.epsilon_data_independent:.4f}  "
        f"{CONVERSIONS['balle2020']}",
        f"most exposed query: #{res.most_exposed_query} {d['most_exposed_histogram']} -> worst neighbour {d['worst_neighbour']}; "
        f"exact RDP at that order {d['most_exposed_exact_rdp_at_order']:.4g}",
        f"audit ({a.counts0.sum()} + {a.counts1.sum()} draws): max RDP lower bound {a.rdp_lower_bound.max():.4g}, "
        f"epsilon lower bound {a.epsilon_lower_bound:.4g} at delta={a.delta:g}",
        _resolution_line(res),
        f"exact RDP above the data-dependent bound: {res.exact_exceeds_data_dependent or 'none'}",
        f"verdict: {res.verdict}",
    ]
    emit(args, d, lines)
    return EXIT_VIOLATION if res.verdict == "violation" else EXIT_OK


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``audit-votes`` on the subparsers ``sub``."""
    v = sub.add_parser("audit-votes", help="audit a PATE operator's teacher votes",
                       description="Accounted cost, exact per-query RDP and an audit of the most exposed query of a "
                                   "PATE deployment, from its votes. VOTES.npz holds 'votes' (n_teachers, n_queries) "
                                   "integer labels [+ optional scalar 'num_classes'] or 'histograms' (n_queries, C); "
                                   "VOTES.npy holds one array: labels (n_teachers, n_queries), or histograms "
                                   "(n_queries, C) with --histograms. A label array with more queries than teachers "
                                   "whose rows agree more than its columns is warned about as looking transposed.")
    v.add_argument("votes", metavar="VOTES.npz|VOTES.npy")
    v.add_argument("--histograms", action="store_true", help="the .npy file holds (n_queries, C) histograms, not labels")
    v.add_argument("--num-classes", type=nonneg_int("--num-classes", 2), metavar="C",
                   help="number of classes C of a label array (default: the file's num_classes, else max label + 1)")
    v.add_argument("--sigma", type=positive_float("--sigma"), required=True, help="GNMax noise sigma (sigma2)")
    v.add_argument("--threshold", type=positive_float("--threshold"), help="Confident-GNMax threshold T")
    v.add_argument("--sigma1", type=positive_float("--sigma1"), help="Confident-GNMax threshold noise sigma1")
    v.add_argument("--delta", type=unit_interval("--delta"), default=1e-5, help="delta of the reported epsilon (default 1e-5)")
    v.add_argument("--orders", help="comma-separated Renyi orders (default: 1.5 ... 2000)")
    v.add_argument("--trials", type=nonneg_int("--trials", 100), default=200_000,
                   help="draws per side for the audit (default 200000; at least 100)")
    v.add_argument("--exact-queries", type=nonneg_int("--exact-queries", 1), default=20,
                   help="costliest queries that get the exact RDP (default 20)")
    add_common_options(v)
    v.set_defaults(func=run)
    return v
