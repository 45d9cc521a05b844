"""The ``ppaudit`` command line: one module per subcommand over :mod:`ppaudit.cli.common`.

Subcommands (``ppaudit SUBCOMMAND --help`` for each), each in its own module:

* ``audit-votes VOTES.npz|VOTES.npy --sigma S [--threshold T --sigma1 S1]`` — a PATE operator's own
  teacher votes: accounted (data-dependent GNMax / Confident-GNMax) cost, exact per-query RDP,
  audit of the most exposed query, ε at δ (:func:`ppaudit.blackbox.votes.audit_votes`;
  :mod:`ppaudit.cli.audit_votes`).
* ``audit-counts COUNTS.csv`` — two output-count vectors → RDP and (ε, δ) lower bounds and a
  verdict against an optional claim (:func:`ppaudit.blackbox.audit_counts`; :mod:`ppaudit.cli.audit_counts`).
* ``one-run --guesses C' --correct C --samples M [--tau T]`` or ``one-run --scores FILE`` — one-run
  f-DP audit (Alg. 3); with scores also AUROC, TPR at ``--fpr`` and that attack's ε interval
  (:mod:`ppaudit.cli.one_run`).
* ``selfcheck`` — the auditor's own soundness and power (:mod:`ppaudit.selfcheck`; :mod:`ppaudit.cli.selfcheck`).
* ``figure NAME`` — build one Snakemake target of the workflow (needs the ``[workflow]`` extra;
  :mod:`ppaudit.cli.figure`).
* ``search module:function --neighbours count-vectors --length 5 --claim-dp 1`` — search
  neighbouring pairs for the worst case and certify it (:mod:`ppaudit.cli.search`).

Each subcommand module has ``add_parser(sub)`` (registers its subparser, ``func=run``) and
``run(args) -> int``; all of them import :mod:`ppaudit.cli.common` (exit codes, :class:`UsageError
<ppaudit.cli.common.UsageError>`, argument types and options, output helpers, the error
reporting), which imports none of them. This package only assembles the parser and runs it.

Exit codes: 0 = no violation, 1 = a violation was detected (or the self-check failed), 2 = bad
usage or input (one line naming the flag or file, the value and what is expected), a failed
Snakemake run of ``figure``, an exception raised in the user's own mechanism or module (named with
its file and line), or an internal error of ppaudit (the traceback only with ``--debug``). Nothing
but a real violation (or a failed self-check) exits 1, and a closed stdout (``ppaudit ... | head -1``)
never changes the code (:func:`ppaudit.cli.common.write_stdout`).
"""

from __future__ import annotations

import argparse
import sys

from . import audit_counts, audit_votes, figure, one_run, search, selfcheck
from .common import EXIT_OK, Parser, run_command, stdout_closed

__all__ = ["main", "build_parser"]

#: The subcommand modules, in the order ``ppaudit --help`` lists them.
SUBCOMMANDS = (audit_votes, audit_counts, one_run, selfcheck, figure, search)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ppaudit`` (all subcommands)."""
    p = Parser(prog="ppaudit", description="Audit private prediction, label DP and your own mechanisms.",
               epilog="exit codes: 0 no violation, 1 violation detected, 2 bad usage or input (or an internal error)")
    from .. import __version__

    p.add_argument("--version", action="version", version=f"ppaudit {__version__}")
    p.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ppaudit`` command; returns the exit code.

    Bad input (a :class:`~ppaudit.cli.common.UsageError`, or a ``ValueError`` the library raises
    on a value the command passed on) → one line on stderr and exit 2; any other exception is an
    internal error → exit 2 with one line, and the traceback only under ``--debug``. Only a
    detected violation (or a failed self-check) exits 1 (:func:`ppaudit.cli.common.run_command`).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except BrokenPipeError:  # `ppaudit --help | head -1`: the help was printed
        stdout_closed()
        return EXIT_OK
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command as typed (for reports)
    return run_command(args)
