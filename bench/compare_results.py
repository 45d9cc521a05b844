"""Do a git revision and the working tree write the same results? (issue 12's acceptance check)

Exports the revision ``--base`` (``git archive``) and snapshots the working tree (tracked and
untracked files that git does not ignore, as they are on disk now) into a temporary folder,
runs the same Snakemake targets with the same config in each (this interpreter's Snakemake;
each run imports the ``ppaudit`` of its own tree: ``PYTHONPATH=<tree>/src`` goes ahead of the
editable install), then compares every CSV, TSV, Markdown and JSON file under ``results/``:

* byte identity, file by file; files that exist on one side only are listed;
* for a JSON file that differs, the paths of the values that differ (with both values);
* for a CSV/TSV that differs, which columns were added or removed, which columns differ and
  in which rows (the first few, with both values), and the largest absolute difference of
  numeric columns; with ``--rtol`` / ``--atol`` a CSV whose cells are equal within that
  tolerance (and whose text cells are equal) is reported but does not count as different.

The exit status is 0 when nothing differs, 1 when something does (listed at the end), 2 when
a run fails. Neither the checkout nor its git state is touched (no worktree, no checkout).

Usage::

    python bench/compare_results.py --base HEAD --config tests/configs/tiny.yaml --targets chadha_fig2 chadha_fig6
    python bench/compare_results.py --compare results_a results_b --rtol 1e-12   # two trees already written
    make compare-results BASE=HEAD CONFIG=tests/configs/tiny.yaml TARGETS="chadha_fig2 chadha_fig6"

Without arguments it prints this help and exits 0 (``make bench`` runs every bench script).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
COMPARED = (".csv", ".tsv", ".md", ".json")
MAX_ROWS_SHOWN = 5


@dataclass
class FileDiff:
    """How one result file differs between the two trees.

    Attributes:
        path: the file, relative to the compared folders.
        kind: ``only_base``, ``only_work``, ``bytes`` (differs; no table detail) or ``table``.
        within_tolerance: a table whose cells are equal within ``rtol``/``atol`` (not a failure).
        details: human-readable lines (columns and rows that differ).
    """

    path: str
    kind: str
    within_tolerance: bool = False
    details: list[str] = field(default_factory=list)

    @property
    def fails(self) -> bool:
        return not self.within_tolerance


def _read_table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",", keep_default_na=False, na_values=["", "nan", "NaN"])


def _cell(v: object) -> str:
    return repr(v.item() if isinstance(v, np.generic) else v)


def compare_tables(a: Path, b: Path, rtol: float = 0.0, atol: float = 0.0) -> tuple[bool, list[str]]:
    """Compare two CSV/TSV files cell by cell.

    Numeric columns (on both sides) are equal when ``|a − b| ≤ atol + rtol·|b|`` (NaN equals
    NaN, ±inf equals itself); other columns when their text is equal.

    Args:
        a, b: the files (base, working tree).
        rtol, atol: numeric tolerance (0, 0: exact equality of the parsed numbers).

    Returns:
        ``(equal within tolerance, lines describing every difference)``.

    Raises:
        ValueError: if ``rtol`` or ``atol`` is negative.
    """
    if rtol < 0 or atol < 0:
        raise ValueError(f"rtol and atol must be >= 0, got rtol={rtol}, atol={atol}")
    try:
        ta, tb = _read_table(a), _read_table(b)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        return False, [f"not comparable as a table: {exc}"]
    lines: list[str] = []
    ok = True
    removed = [c for c in ta.columns if c not in tb.columns]
    added = [c for c in tb.columns if c not in ta.columns]
    if removed:
        ok = False
        lines.append(f"columns only in base: {removed}")
    if added:
        ok = False
        lines.append(f"columns only in working tree: {added}")
    common = [c for c in ta.columns if c in tb.columns]
    if [c for c in ta.columns if c in common] != [c for c in tb.columns if c in common]:
        ok = False
        lines.append(f"column order differs: {list(ta.columns)} vs {list(tb.columns)}")
    if len(ta) != len(tb):
        ok = False
        lines.append(f"rows: {len(ta)} in base, {len(tb)} in working tree (compared: the first {min(len(ta), len(tb))})")
    n = min(len(ta), len(tb))
    for col in common:
        x, y = ta[col].iloc[:n], tb[col].iloc[:n]
        numeric = pd.api.types.is_numeric_dtype(x) and pd.api.types.is_numeric_dtype(y) and not pd.api.types.is_bool_dtype(x)
        if numeric:
            xv, yv = x.to_numpy(dtype=float), y.to_numpy(dtype=float)
            same = np.isclose(xv, yv, rtol=rtol, atol=atol, equal_nan=True) | (xv == yv)
            with np.errstate(invalid="ignore"):
                gap = np.abs(xv - yv)
            finite = np.isfinite(gap)
            biggest = f"; max |Δ| = {np.max(gap[finite]):.3g}" if finite.any() and not same.all() else ""
        else:
            same = (x.astype(str).to_numpy() == y.astype(str).to_numpy()) | (x.isna().to_numpy() & y.isna().to_numpy())
            biggest = ""
        bad = np.flatnonzero(~same)
        if bad.size:
            ok = False
            shown = ", ".join(f"row {i}: {_cell(x.iloc[i])} → {_cell(y.iloc[i])}" for i in bad[:MAX_ROWS_SHOWN])
            more = f" (+{bad.size - MAX_ROWS_SHOWN} more)" if bad.size > MAX_ROWS_SHOWN else ""
            lines.append(f"column {col!r}: {bad.size} of {n} rows differ{biggest}: {shown}{more}")
    if ok and rtol == 0 and atol == 0:
        lines.append("cells equal after parsing; the bytes differ (number formatting, quoting or line endings)")
    return ok, lines


def compare_json(a: Path, b: Path) -> list[str]:
    """Paths (``key/0/key``) whose values differ between two JSON files, the first few with both values."""
    try:
        ja, jb = json.loads(a.read_text()), json.loads(b.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        return [f"not comparable as JSON: {exc}"]
    found: list[str] = []

    def walk(x: object, y: object, path: str) -> None:
        if isinstance(x, dict) and isinstance(y, dict):
            for k in list(x) + [k for k in y if k not in x]:
                walk(x.get(k, "<absent>"), y.get(k, "<absent>"), f"{path}/{k}")
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{path}/{i}")
        elif x != y or type(x) is not type(y):
            found.append(f"{path or '/'}: {x!r} → {y!r}")

    walk(ja, jb, "")
    shown = found[:MAX_ROWS_SHOWN] + ([f"(+{len(found) - MAX_ROWS_SHOWN} more)"] if len(found) > MAX_ROWS_SHOWN else [])
    return shown or ["values equal after parsing; the bytes differ (formatting or key order)"]


def compare_trees(base: Path, work: Path, rtol: float = 0.0, atol: float = 0.0) -> tuple[list[str], list[FileDiff]]:
    """Compare every CSV/TSV/MD/JSON file below two folders.

    Args:
        base, work: the two folders (e.g. the ``results/`` of the base revision and of the
            working tree).
        rtol, atol: numeric tolerance for tables (:func:`compare_tables`); 0: byte identity.

    Returns:
        ``(identical files, differences)``, paths relative to the folders, sorted.

    Raises:
        ValueError: if a folder does not exist.
    """
    for name, folder in (("base", base), ("work", work)):
        if not Path(folder).is_dir():
            raise ValueError(f"{name} folder {folder} does not exist")

    def files(root: Path) -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.suffix.lower() in COMPARED}

    fa, fb = files(Path(base)), files(Path(work))
    same: list[str] = []
    diffs: list[FileDiff] = [FileDiff(p, "only_base") for p in sorted(fa - fb)] + [FileDiff(p, "only_work") for p in sorted(fb - fa)]
    for rel in sorted(fa & fb):
        a, b = Path(base) / rel, Path(work) / rel
        if a.read_bytes() == b.read_bytes():
            same.append(rel)
        elif a.suffix.lower() in (".csv", ".tsv"):
            ok, lines = compare_tables(a, b, rtol, atol)
            diffs.append(FileDiff(rel, "table", within_tolerance=ok and (rtol > 0 or atol > 0), details=lines))
        elif a.suffix.lower() == ".json":
            diffs.append(FileDiff(rel, "bytes", details=compare_json(a, b)))
        else:
            diffs.append(FileDiff(rel, "bytes", details=[f"{a.stat().st_size} vs {b.stat().st_size} bytes"]))
    diffs.sort(key=lambda d: d.path)
    return same, diffs


def report(same: list[str], diffs: list[FileDiff], out=sys.stdout) -> int:
    """Print the comparison; return the exit status (0: nothing differs beyond tolerance, 1: something does)."""
    failing = [d for d in diffs if d.fails]
    print(f"compared {len(same) + sum(d.kind in ('table', 'bytes') for d in diffs)} file(s) present on both sides: "
          f"{len(same)} byte-identical", file=out)
    for d in diffs:
        head = {"only_base": "only in base", "only_work": "only in working tree", "bytes": "differs", "table": "differs"}[d.kind]
        if d.within_tolerance:
            head = "equal within tolerance (bytes differ)"
        print(f"  {d.path}: {head}", file=out)
        for line in d.details:
            print(f"      {line}", file=out)
    if failing:
        print(f"DIFFERENT: {len(failing)} file(s): " + ", ".join(d.path for d in failing), file=out)
        return 1
    print("IDENTICAL" + (" (within tolerance)" if diffs else ""), file=out)
    return 0


def _git(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True, **kw)


def export_revision(rev: str, dest: Path) -> str:
    """Write the files of git revision ``rev`` into ``dest`` (``git archive``); returns its full hash."""
    commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}", text=True).stdout.strip()
    dest.mkdir(parents=True)
    archive = dest.parent / f"{dest.name}.tar"
    with archive.open("wb") as fh:
        subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", commit], check=True, stdout=fh)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    archive.unlink()
    return commit


def snapshot_working_tree(dest: Path) -> int:
    """Copy the working tree's tracked and untracked-but-not-ignored files into ``dest``; returns the count."""
    names = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout.decode().split("\0")
    count = 0
    for name in dict.fromkeys(n for n in names if n):
        src = REPO / name
        if not src.is_file():  # deleted in the working tree
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / name)
        count += 1
    return count


def run_workflow(tree: Path, configs: list[str], targets: list[str], cores: int, log: Path) -> float:
    """Run Snakemake on ``tree``'s Snakefile in ``tree`` (results land in ``tree/results``).

    Config files are taken from the tree when it has them (a repository-relative path),
    else as given. Returns the wall time in seconds.

    Raises:
        RuntimeError: if Snakemake fails (naming the log file).
    """
    files = []
    for c in configs:
        own = tree / c
        files.append(str(own if own.is_file() else Path(c).resolve()))
    # --configfile takes several files: it comes last, after the targets.
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(tree / "Snakefile"), "--directory", str(tree),
           "--cores", str(cores), *targets, *(["--configfile", *files] if files else [])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree / "src"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
           "OMP_WAIT_POLICY": "PASSIVE"}
    start = time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.run(cmd, cwd=tree, env=env, stdout=fh, stderr=subprocess.STDOUT, check=False)
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
        raise RuntimeError(f"snakemake failed in {tree} (exit {proc.returncode}); the end of its log:\n{tail}")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", help="git revision to compare the working tree with (e.g. HEAD, main~3)")
    parser.add_argument("--config", nargs="*", default=[], help="extra config files (--configfile), repository-relative or absolute")
    parser.add_argument("--targets", nargs="*", default=[], help="Snakemake targets (default: rule all)")
    parser.add_argument("--cores", type=int, default=2, help="Snakemake --cores (default 2)")
    parser.add_argument("--rtol", type=float, default=0.0, help="relative tolerance for numeric cells of CSV/TSV (default 0)")
    parser.add_argument("--atol", type=float, default=0.0, help="absolute tolerance for numeric cells of CSV/TSV (default 0)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (trees, results, logs)")
    parser.add_argument("--compare", nargs=2, metavar=("BASE_DIR", "WORK_DIR"), help="only compare two folders already written")
    if not argv:
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    if args.rtol < 0 or args.atol < 0:
        parser.error(f"--rtol and --atol must be >= 0, got {args.rtol}, {args.atol}")
    if args.compare:
        return report(*compare_trees(Path(args.compare[0]), Path(args.compare[1]), args.rtol, args.atol))
    if not args.base:
        parser.error("give --base REV (or --compare BASE_DIR WORK_DIR)")
    tmp = Path(tempfile.mkdtemp(prefix="ppaudit-compare-"))
    try:
        base, work = tmp / "base", tmp / "work"
        commit = export_revision(args.base, base)
        work.mkdir()
        n = snapshot_working_tree(work)
        what = " ".join(args.targets) or "rule all"
        print(f"base {args.base} = {commit[:12]} vs the working tree ({n} files); targets: {what}; "
              f"config: {' '.join(args.config) or 'config/config.yaml'}", flush=True)
        for name, tree in (("base", base), ("working tree", work)):
            seconds = run_workflow(tree, args.config, args.targets, args.cores, tmp / f"{tree.name}.log")
            print(f"  ran {name} in {seconds:.0f} s", flush=True)
        for tree in (base, work):
            (tree / "results").mkdir(exist_ok=True)
        return report(*compare_trees(base / "results", work / "results", args.rtol, args.atol))
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        detail = exc.stderr.decode(errors="replace").strip() if isinstance(exc, subprocess.CalledProcessError) and exc.stderr else ""
        print(f"error: {exc}{': ' + detail if detail else ''}", file=sys.stderr)
        return 2
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
