"""``ppaudit figure NAME``: build one Snakemake target of the workflow (needs the ``[workflow]``
extra); a failed Snakemake run exits 2, never the violation code.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from .common import EXIT_OK, EXIT_USAGE, UsageError, nonneg_int, write_stdout

__all__ = ["add_parser", "run"]


def _repo_root() -> Path:
    """The repository with the Snakefile: the current directory or a parent, else the source checkout."""
    for base in (Path.cwd(), *Path.cwd().parents):
        if (base / "Snakefile").is_file() and (base / "workflow").is_dir():
            return base
    here = Path(__file__).resolve().parents[3]  # the source checkout: src/ppaudit/cli/figure.py
    if (here / "Snakefile").is_file():
        return here
    raise UsageError("no Snakefile found in the current directory, its parents or the source checkout; "
                     "run `ppaudit figure` from the ppaudit repository")


def run(args) -> int:
    """Run ``ppaudit figure``: ``snakemake`` on one target in the repository root; returns the exit code."""
    root = _repo_root()
    if not (Path(args.profile) if Path(args.profile).is_absolute() else root / args.profile).is_dir():
        raise UsageError(f"--profile {args.profile!r}: no such profile folder (relative paths are read from {root})")
    if args.configfile and not (Path(args.configfile) if Path(args.configfile).is_absolute() else root / args.configfile).is_file():
        raise UsageError(f"--configfile {args.configfile!r}: no such file (relative paths are read from {root})")
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
        write_stdout(json.dumps({"command": cmd, "cwd": str(root), "returncode": proc.returncode,
                                 "stdout_tail": proc.stdout[-4000:], "stderr_tail": proc.stderr[-4000:]}, indent=2))
    if proc.returncode != 0:
        missing = "MissingRuleException" in (proc.stderr or "") + (proc.stdout or "")
        print(f"ppaudit figure: error: snakemake failed for target {args.name!r} (exit {proc.returncode})"
              + ("; NAME must be one of the workflow's target rules (snakemake --list-target-rules)" if missing else ""),
              file=sys.stderr)
        return EXIT_USAGE  # snakemake's own failure: never the violation code
    return EXIT_OK


def add_parser(sub) -> argparse.ArgumentParser:
    """Register ``figure`` on the subparsers ``sub``."""
    f = sub.add_parser("figure", help="build one figure/table target of the Snakemake workflow",
                       description="Runs `snakemake --profile PROFILE --cores N NAME` in the repository root "
                                   "(needs the [workflow] extra).")
    f.add_argument("name", metavar="NAME", help="the target, e.g. chadha_fig3 or selfcheck")
    f.add_argument("--cores", type=nonneg_int("--cores", 1), default=2, help="cores (default 2)")
    f.add_argument("--profile", default="workflow/profiles/default", help="snakemake profile (default workflow/profiles/default)")
    f.add_argument("--configfile", help="config file (default: the workflow's config/config.yaml)")
    f.add_argument("-n", "--dry-run", action="store_true", help="only show what would run")
    f.add_argument("--json", action="store_true", help="print the command and its result as JSON")
    f.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an internal error")
    f.set_defaults(func=run)
    return f
