"""What every subcommand of ``ppaudit`` shares: exit codes, bad-input errors, the argument types
and options, the output helpers and the top-level error reporting.

Imported by each subcommand module of :mod:`ppaudit.cli` (and by the package itself); imports
none of them. Exit codes: 0 = no violation, 1 = a violation was detected (or the self-check
failed), 2 = bad usage or input (one line naming the flag or file, the value and what is
expected), an exception raised in the user's own mechanism or module (named with its file and
line), or an internal error of ppaudit (the traceback only with ``--debug``). Nothing but a real
violation (or a failed self-check) exits 1, and a closed stdout (``ppaudit ... | head -1``) never
changes the code (:func:`write_stdout`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback

import numpy as np

__all__ = [
    "EXIT_OK", "EXIT_VIOLATION", "EXIT_USAGE", "UsageError", "Parser", "clean", "write_stdout", "stdout_closed",
    "emit", "parse_orders", "claim_from_args", "add_claim_options", "fmt_claim", "positive_float", "unit_interval",
    "nonneg_int", "add_common_options", "run_command",
]

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE = 0, 1, 2


class UsageError(ValueError):
    """Bad input detected after parsing (reported with exit code 2).

    A ``ValueError``, so that it is reported as bad input also where a ``ValueError`` is what
    reaches :func:`run_command` (the messages of ``ppaudit search``'s own checks are plain
    ``ValueError`` s)."""


class Parser(argparse.ArgumentParser):
    """``ArgumentParser`` whose usage errors are one line (flag, value, what is expected), exit 2."""

    def error(self, message):  # noqa: D102 (argparse API)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def clean(obj):
    """JSON-ready ``obj``: numpy scalars and arrays as Python numbers and lists, ±inf / nan as strings."""
    if isinstance(obj, dict):
        return {k: clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return x if math.isfinite(x) else ("inf" if x > 0 else ("-inf" if x < 0 else "nan"))
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.ndarray):
        return clean(obj.tolist())
    return obj


def write_stdout(text: str) -> None:
    """Print ``text`` to stdout; a closed pipe (``ppaudit ... | head -1``) is not an error and never
    changes the exit code (CONVENTIONS item 27): the rest of the output goes to ``/dev/null``."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        stdout_closed()


def stdout_closed() -> None:
    """Point stdout at ``/dev/null`` after its reader went away (``ppaudit ... | head -1``)."""
    # Python's advice (signal docs, "Note on SIGPIPE"): point stdout at devnull so that the
    # interpreter's own flush at exit does not raise again (exit status 120)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # pragma: no cover - stdout without a file descriptor
        pass


def emit(args, payload: dict, lines: list[str]) -> None:
    """Print the result: ``payload`` as JSON under ``--json``, else the text ``lines``."""
    if args.json:
        write_stdout(json.dumps(clean(payload), indent=2))
    else:
        write_stdout("\n".join(lines))


def parse_orders(text: str | None, default=None) -> np.ndarray | None:
    """``--orders``: comma-separated Rényi orders > 1 (``default`` when not given)."""
    if text is None:
        return default
    try:
        vals = np.array([float(x) for x in text.split(",") if x.strip()])
    except ValueError:
        raise UsageError(f"--orders must be comma-separated numbers > 1, got {text!r}") from None
    if vals.size == 0 or np.any(~(vals > 1)):
        raise UsageError(f"--orders must be comma-separated numbers > 1, got {text!r}")
    return vals


def claim_from_args(args):
    """The :class:`~ppaudit.blackbox.Claim` of the ``--claim-*`` options (at most one), or ``None``."""
    from ..blackbox import Claim

    given = [n for n in ("claim_zcdp", "claim_dp", "claim_gdp", "claim_rdp") if getattr(args, n, None) is not None]
    if len(given) > 1:
        raise UsageError(f"give at most one claim, got {', '.join('--' + g.replace('_', '-') for g in given)}")
    if not given:
        if getattr(args, "claim_delta", None) is not None:
            raise UsageError("--claim-delta needs --claim-dp")
        return None
    flag = "--" + given[0].replace("_", "-")
    if args.claim_delta is not None and given[0] != "claim_dp":
        raise UsageError(f"--claim-delta needs --claim-dp, got it with {flag}")
    try:
        if args.claim_zcdp is not None:
            return Claim.zcdp(args.claim_zcdp)
        if args.claim_gdp is not None:
            return Claim.gdp(args.claim_gdp)
        if args.claim_dp is not None:
            flag = "--claim-dp/--claim-delta"
            return Claim.dp(args.claim_dp, args.claim_delta if args.claim_delta is not None else 0.0)
        pts = [p.split(":") for p in args.claim_rdp.split(",") if p.strip()]
        if not pts or any(len(p) != 2 for p in pts):
            raise UsageError(f"--claim-rdp must look like '2:0.5,8:2.0' (order:epsilon), got {args.claim_rdp!r}")
        return Claim.rdp([float(p[0]) for p in pts], [float(p[1]) for p in pts])
    except ValueError as exc:
        if given[0] == "claim_dp":
            shown = f"--claim-dp {args.claim_dp:g}" + ("" if args.claim_delta is None else f" --claim-delta {args.claim_delta:g}")
        else:
            shown = f"{flag} {getattr(args, given[0])!r}"
        raise UsageError(f"{shown}: {exc}") from None


def add_claim_options(p: argparse.ArgumentParser) -> None:
    """``--claim-zcdp`` / ``--claim-dp`` (+ ``--claim-delta``) / ``--claim-gdp`` / ``--claim-rdp``."""
    g = p.add_argument_group("claim (at most one; the verdict tests it)")
    g.add_argument("--claim-zcdp", type=float, metavar="RHO", help="the mechanism claims RHO-zCDP")
    g.add_argument("--claim-dp", type=float, metavar="EPS", help="the mechanism claims (EPS, --claim-delta)-DP")
    g.add_argument("--claim-delta", type=float, metavar="DELTA", help="δ of --claim-dp (default 0)")
    g.add_argument("--claim-gdp", type=float, metavar="MU", help="the mechanism claims MU-GDP")
    g.add_argument("--claim-rdp", metavar="A:E,...", help="claimed RDP curve, e.g. '2:0.5,8:2.0'")


def fmt_claim(c) -> str:
    """The claim in words (``none`` without one)."""
    return "none" if c is None else c.describe()


def positive_float(name):
    """Argument type: a finite number > 0 (``name`` is the flag its error names)."""
    def conv(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number > 0, got {text!r}") from None
        if not (math.isfinite(v) and v > 0):
            raise argparse.ArgumentTypeError(f"{name} must be a number > 0, got {text!r}")
        return v
    return conv


def unit_interval(name, closed_left=False):
    """Argument type: a number in (0, 1), or [0, 1) with ``closed_left``."""
    def conv(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number in (0, 1), got {text!r}") from None
        if not ((0 <= v if closed_left else 0 < v) and v < 1):
            raise argparse.ArgumentTypeError(f"{name} must be in {'[0' if closed_left else '(0'}, 1), got {text!r}")
        return v
    return conv


def nonneg_int(name, minimum=0):
    """Argument type: an integer >= ``minimum``."""
    def conv(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}")
        return v
    return conv


def add_common_options(sp: argparse.ArgumentParser, seed: bool = True) -> None:
    """``--debug``, ``--json``, ``--confidence`` (and ``--seed`` unless ``seed=False``) of a subcommand."""
    sp.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                    help="show the traceback of an internal error")
    sp.add_argument("--json", action="store_true", help="print the result as JSON")
    sp.add_argument("--confidence", type=unit_interval("--confidence"), default=0.95,
                    help="confidence of the lower bounds / verdict (default 0.95)")
    if seed:
        sp.add_argument("--seed", type=nonneg_int("--seed"), default=0, help="random seed (default 0)")


def run_command(args) -> int:
    """Run the parsed subcommand ``args.func(args)`` and map what it raises to an exit code.

    Bad input (a :class:`UsageError`, or a ``ValueError`` the library raises on a value the
    command passed on) → one line on stderr and exit 2; an exception of the user's mechanism or
    module (:class:`~ppaudit.blackbox.mechanism_checks.MechanismError`) → one line, exit 2; any
    other exception is an internal error → exit 2 with one line, and the traceback only under
    ``--debug``. Only a detected violation (or a failed self-check) exits 1.
    """
    from ..blackbox.mechanism_checks import MechanismError

    prog = f"ppaudit {args.command}"
    try:
        code = int(args.func(args))
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            stdout_closed()
        return code  # the verdict's code, whether or not the reader of stdout is still there
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
    except MechanismError as exc:  # the user's mechanism or module: theirs, with their traceback under --debug
        if getattr(args, "debug", False):
            traceback.print_exc()
        hint = "" if getattr(args, "debug", False) or exc.__cause__ is None else " (rerun with --debug for its traceback)"
        print(f"{prog}: error: {exc}{hint}", file=sys.stderr)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        if getattr(args, "debug", False):
            traceback.print_exc()
    except BrokenPipeError:  # pragma: no cover - every stdout write goes through write_stdout
        stdout_closed()
        print(f"{prog}: error: stdout was closed before the result was written", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 (the top-level handler: nothing escapes as a crash)
        if getattr(args, "debug", False):
            traceback.print_exc()
        print(f"{prog}: internal error: {type(exc).__name__}: {exc}"
              + ("" if getattr(args, "debug", False) else " (rerun with --debug for the traceback; please report it)"),
              file=sys.stderr)
    return EXIT_USAGE

