"""``ppaudit search``: find the worst neighbouring pair of a mechanism and certify it.

``ppaudit search package.module:function --neighbours count-vectors --length 5 --claim-dp 1
--trials 2e5 [--json]`` imports the mechanism from a ``module:function`` path (as pytest and
gunicorn do; the current directory is on the path), builds the pairs with a generator of
:mod:`ppaudit.blackbox.neighbours` (or reads ``--pairs pairs.json``: a JSON list of
``[dataset, neighbour]``), and runs :func:`ppaudit.blackbox.search_mechanism`. A file path,
``path/to/mymechs.py:function``, is loaded as a module. ``--time-budget`` / ``--max-draws``
bound the search (:mod:`ppaudit.blackbox.budget`); ``--report OUT.html`` writes the HTML report
and ``--save FILE.pkl`` the result for a later ``recheck``. Exit codes as the other subcommands:
0 no violation, 1 violation, 2 bad input — an exception raised in the user's mechanism or module
included (named with its file and line; ``--debug`` shows its traceback).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import sys
from pathlib import Path

from .common import (EXIT_OK, EXIT_VIOLATION, add_claim_options, add_common_options, claim_from_args, emit,
                     nonneg_int, parse_orders, positive_float, unit_interval)

__all__ = ["add_parser", "run", "load_mechanism"]

GENERATORS = ("count-vectors", "query-answers", "replace-one", "add-remove-one", "label-flips")


def _usage(msg: str) -> Exception:
    # A ValueError: ppaudit.cli.common.run_command reports it with exit code 2 (and its traceback under --debug).
    return ValueError(msg)


def load_mechanism(path: str):
    """Import ``package.module:function`` or ``path/to/file.py:function`` (``function`` may be dotted).

    A file path is loaded as a module under its file name. An exception raised while importing
    the user's module is theirs (:class:`~ppaudit.blackbox.mechanism_checks.MechanismError`, file
    and line named, traceback under ``--debug``), not an internal error.
    """
    from ..blackbox.mechanism_checks import MechanismError, check_mechanism, user_frame

    form = ("give the mechanism as module:function (e.g. mymechs:rr, with mymechs.py in the current directory, "
            "or package.module:function) or as path/to/file.py:function")
    mod_name, sep, attr = path.rpartition(":") if path.count(":") > 1 else path.partition(":")
    if not sep or not mod_name or not attr:
        raise _usage(f"{form}; got {path!r}")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    as_file = mod_name.endswith(".py") or "/" in mod_name or "\\" in mod_name
    try:
        if as_file:
            file = Path(mod_name)
            if not file.is_file():
                raise _usage(f"mechanism file {mod_name!r} not found ({form}; got {path!r})")
            spec = importlib.util.spec_from_file_location(file.stem, file)
            if spec is None or spec.loader is None:
                raise _usage(f"cannot load {mod_name!r} as a Python file ({form}; got {path!r})")
            obj = importlib.util.module_from_spec(spec)
            sys.modules.setdefault(file.stem, obj)
            spec.loader.exec_module(obj)
        else:
            obj = importlib.import_module(mod_name)
    except ValueError:
        raise
    except ImportError as exc:
        hint = "" if as_file else f" ({form})"
        raise _usage(f"cannot import module {mod_name!r} of mechanism {path!r}: {exc}{hint}") from exc
    except Exception as exc:  # noqa: BLE001 - the user's module raised while being imported
        where = user_frame(exc)
        raise MechanismError(f"importing {mod_name!r} (mechanism {path!r}) raised {exc!r}"
                             + (f" at {where}" if where else "")) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise _usage(f"module {mod_name!r} has no attribute {attr!r} (mechanism {path!r})") from None
    if not callable(obj):
        raise _usage(f"mechanism {path!r} is not callable")
    check_mechanism(obj)
    return obj


def _trials_named(name: str):
    def conv(text: str) -> int:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer (2e5 allowed), got {text!r}") from None
        if not (math.isfinite(v) and v >= 1 and v == int(v)):
            raise argparse.ArgumentTypeError(f"{name} must be a positive integer (2e5 allowed), got {text!r}")
        return int(v)
    return conv


_trials = _trials_named("--trials")


def _json_arg(args, name: str):
    text = getattr(args, name.replace("-", "_"))
    if text is None:
        raise _usage(f"--neighbours {args.neighbours} needs --{name}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _usage(f"--{name} must be JSON (e.g. '[0, 0, 1]'), got {text!r}: {exc}") from None


def _need(args, name: str):
    v = getattr(args, name.replace("-", "_"))
    if v is None:
        raise _usage(f"--neighbours {args.neighbours} needs --{name}")
    return v


def _pairs_from_args(args):
    from ..blackbox import neighbours as nb

    if (args.pairs is None) == (args.neighbours is None):
        raise _usage("give exactly one of --neighbours GENERATOR and --pairs FILE")
    if args.pairs is not None:
        path = Path(args.pairs)
        if not path.is_file():
            raise _usage(f"pairs file not found: {str(path)!r}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise _usage(f"cannot read pairs file {str(path)!r} (a JSON list of [dataset, neighbour]): {exc}") from None
        if not isinstance(data, list) or not all(isinstance(p, list) and len(p) == 2 for p in data):
            raise _usage(f"pairs file {str(path)!r} must hold a JSON list of [dataset, neighbour] pairs")
        gen = [tuple(p) for p in data]
    else:
        g = args.neighbours
        try:
            if g == "count-vectors":
                gen = nb.count_vectors(_need(args, "length"), args.max_count)
            elif g == "query-answers":
                gen = nb.query_answers(_need(args, "length"), args.sensitivity)
            elif g == "replace-one":
                gen = nb.replace_one(_json_arg(args, "database"), _json_arg(args, "values"))
            elif g == "add-remove-one":
                gen = nb.add_remove_one(_json_arg(args, "database"), _json_arg(args, "pool"))
            else:
                gen = nb.label_flips(_json_arg(args, "labels"), _need(args, "num-classes"))
        except ValueError as exc:
            msg = str(exc)
            raise _usage(msg if msg.startswith("--") else f"--neighbours {g}: {msg}") from None
    if args.sample is not None:
        gen = nb.random_pairs(gen, args.sample, rng=args.seed)
    return gen


def _progress(args) -> bool:
    """The progress bar and the cost estimate: on in a terminal, off under --json or when stderr is not a TTY."""
    if args.progress is not None:
        return bool(args.progress)
    return not args.json and sys.stderr.isatty()


def run(args) -> int:
    """Run ``ppaudit search``; returns the exit code."""
    from ..blackbox import ClassifierOutputs, search_mechanism

    mech = load_mechanism(args.mechanism)
    claim = claim_from_args(args)
    pairs = _pairs_from_args(args)
    outputs = ClassifierOutputs("logistic") if args.outputs == "logistic" else args.outputs
    res = search_mechanism(mech, pairs, args.trials, orders=parse_orders(args.orders), confidence=args.confidence,
                           rng=args.seed, claim=claim, pilot_fraction=args.pilot_fraction, certify_top=args.certify_top,
                           outputs=outputs, n_jobs=args.n_jobs, progress=_progress(args),
                           time_budget=args.time_budget, max_draws=args.max_draws)
    if args.save is not None:
        res.save(args.save)
    if args.report is not None:
        import shlex

        res.to_html(args.report, command="ppaudit " + " ".join(shlex.quote(str(x)) for x in getattr(args, "argv", sys.argv[1:])))
    emit(args, res.to_dict(), res.summary().splitlines() + ([f"report: {args.report}"] if args.report else []))
    return EXIT_VIOLATION if res.violation else EXIT_OK


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``search`` on the subparsers ``sub``."""
    s = sub.add_parser(
        "search", help="search neighbouring pairs of a mechanism for the worst case and certify it",
        description="Import MECHANISM (module:function, called as function(data, n, rng) -> n outputs), try every "
                    "pair of --neighbours (or --pairs FILE), rank pairs x output sets on a pilot, certify the top "
                    "--certify-top on fresh draws (ppaudit.blackbox.search_mechanism). Prints the witness: the "
                    "pair, the output set and the two probabilities with their intervals.")
    s.add_argument("mechanism", metavar="MECHANISM",
                   help="package.module:function, or path/to/file.py:function (called as function(data, n, rng))")
    src = s.add_argument_group("pairs (one of --neighbours / --pairs)")
    src.add_argument("--neighbours", choices=GENERATORS, help="a generator of ppaudit.blackbox.neighbours")
    src.add_argument("--pairs", metavar="FILE",
                     help="JSON list of [dataset, neighbour] pairs, each side passed to the mechanism as JSON gives "
                          "it, e.g. [[[0,0,0], [0,0,1]], [[0,0,0], [0,0,2]]]; the search covers only the pairs given")
    src.add_argument("--length", type=nonneg_int("--length", 1), help="count-vectors / query-answers: length")
    src.add_argument("--max-count", type=nonneg_int("--max-count", 1), default=1, help="count-vectors: largest count (default 1)")
    src.add_argument("--sensitivity", type=positive_float("--sensitivity"), default=1.0, help="query-answers: sensitivity (default 1)")
    src.add_argument("--database", metavar="JSON", help="replace-one / add-remove-one: the records, e.g. '[0,0,1]'")
    src.add_argument("--values", metavar="JSON", help="replace-one: values a record may take, e.g. '[0,1,2]'")
    src.add_argument("--pool", metavar="JSON", help="add-remove-one: records that may be added")
    src.add_argument("--labels", metavar="JSON", help="label-flips: the labels, e.g. '[0,1,1]'")
    src.add_argument("--num-classes", type=nonneg_int("--num-classes", 2), help="label-flips: number of classes")
    src.add_argument("--sample", type=nonneg_int("--sample", 1), metavar="N", help="audit a uniform sample of N pairs")
    s.add_argument("--trials", type=_trials, default=200_000, help="draws per side per pair (default 2e5)")
    s.add_argument("--orders", help="comma-separated orders > 1 (default: chosen for the claim)")
    s.add_argument("--pilot-fraction", type=unit_interval("--pilot-fraction"), default=0.2,
                   help="share of the draws spent on the pilot (default 0.2)")
    s.add_argument("--certify-top", type=nonneg_int("--certify-top", 1), default=5,
                   help="pairs certified on fresh draws, Bonferroni over them (default 5)")
    s.add_argument("--outputs", choices=("auto", "counts", "classifier", "logistic"), default="auto",
                   help="count outputs, or a classifier's score thresholds (gradient boosting; logistic "
                        "regression) for real / vector outputs (default auto)")
    s.add_argument("--n-jobs", type=int, default=1, help="threads over pairs (default 1; -1 all cores)")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show the estimated cost and a progress bar on stderr (default: on in a terminal, off "
                        "under --json or when stderr is not a terminal)")
    s.add_argument("--report", metavar="OUT.html",
                   help="also write a self-contained HTML report (verdict, witness, the two output distributions "
                        "with the witness set shaded, every pair)")
    s.add_argument("--save", metavar="FILE.pkl",
                   help="also pickle the result, the witness's fitted classifier included, so that it can be "
                        "re-checked later: SearchResult.load(FILE).recheck(mechanism, trials, rng)")
    s.add_argument("--time-budget", type=positive_float("--time-budget"), metavar="SECONDS",
                   help="stop within SECONDS: trials are lowered to fit the cost estimated from a first batch of "
                        "draws, and drawing stops at the deadline; the verdict is valid for what was drawn")
    s.add_argument("--max-draws", type=_trials_named("--max-draws"), metavar="N",
                   help="draws of the mechanism in all (both sides of every pair; 1e7 allowed): trials are lowered "
                        "to fit (reproducible)")
    add_claim_options(s)
    add_common_options(s)
    s.set_defaults(func=run)
    return s
