"""The Criteo 1TB Click Logs: a streaming reader of one day file and the paper's per-day split.

The observational audit of label DP trains a reference model M' on Day 0 of the Criteo 1TB
Click Logs and the target model on Day 1, with 1 million rows selected per day and each
day's rows split 80% train / 4% validation / 16% test (:func:`load_criteo_split`,
:func:`split_day`).

Each day file ``day_{N}.gz`` (about 14 GiB of gzip, some 200 million rows) is a TSV without a
header; every line holds 40 tab-separated fields::

    label \\t I1 ... I13 \\t C1 ... C26

``label`` is 1 for a click and 0 otherwise, ``I1..I13`` are integer counts and ``C1..C26``
hashed categories (8 hex digits such as ``68fd1e64``); an empty field is a missing value.
:func:`read_criteo_day` streams such a file (gzip or plain text) and keeps only the selected
rows: the first ``max_rows`` or a uniform reservoir sample of them.

Criteo publishes no checksum for the day files, so they are not in the pinned catalog
(:data:`ppaudit.data.DATASETS`): :func:`criteo_registry_entry` writes the entry of a registry
file of one's own that pins the SHA-256 of a trusted copy (config key ``dataset_registry``),
after which ``download_dataset("criteo", root)`` verifies every download against it.
"""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "CRITEO_URL",
    "CRITEO_COLUMNS",
    "CRITEO_INT_COLUMNS",
    "CRITEO_CAT_COLUMNS",
    "criteo_registry_entry",
    "read_criteo_day",
    "load_criteo_split",
    "split_day",
]

#: The official download URL of one day file (Criteo AI Lab hosting); ``{day}`` is 0..23.
CRITEO_URL = "https://sacriteopcail01.z16.web.core.windows.net/day_{day}.gz"
#: Integer features ``I1..I13`` (float64 in the frames, NaN where missing).
CRITEO_INT_COLUMNS = tuple(f"I{i}" for i in range(1, 14))
#: Categorical features ``C1..C26`` (str in the frames, ``""`` where missing).
CRITEO_CAT_COLUMNS = tuple(f"C{i}" for i in range(1, 27))
#: The 40 fields of a line, in file order.
CRITEO_COLUMNS = ("label", *CRITEO_INT_COLUMNS, *CRITEO_CAT_COLUMNS)

_N_FIELDS = len(CRITEO_COLUMNS)
_GZIP_MAGIC = b"\x1f\x8b"
# One well-formed line: label 0/1, 13 optional (signed) integers, 26 fields without tabs.
_LINE = re.compile(rb"[01](?:\t(?:-?+[0-9]++)?+){13}(?:\t[^\t\r\n]*+){26}\r?\n?")
_INT_FIELD = re.compile(rb"-?[0-9]+")
_DTYPES = {"label": "int64", **{c: "float64" for c in CRITEO_INT_COLUMNS}, **{c: str for c in CRITEO_CAT_COLUMNS}}
_NA_VALUES = {c: [""] for c in CRITEO_INT_COLUMNS}
_SAMPLES = ("first", "reservoir")


def criteo_registry_entry(sha256_by_day: Mapping[int, str], url: str = CRITEO_URL) -> dict:
    """The entry ``"criteo"`` of a dataset registry file that pins one's own copies of the days.

    Criteo publishes no checksum; compute the SHA-256 of a trusted copy (``sha256sum day_0.gz``)
    and write ``{"criteo": criteo_registry_entry({0: ..., 1: ...})}`` as JSON to the file named by
    the config key ``dataset_registry`` (see :func:`ppaudit.data.read_registry`).

    Args:
        sha256_by_day: day number (0..23) → SHA-256 hex digest of ``day_{day}.gz``.
        url: URL pattern with a ``{day}`` field (default the official host, :data:`CRITEO_URL`).

    Returns:
        A JSON-able dict ``{"kind": "criteo", "num_classes": 2, "files": [{"filename":
        "day_0.gz", "url": ..., "sha256": ...}, ...]}``, files in increasing day order.

    Raises:
        ValueError: no days, a day outside 0..23, a digest that is not 64 lowercase hex digits,
            or a URL pattern without ``{day}``.
    """
    if not sha256_by_day:
        raise ValueError("sha256_by_day must name at least one day, got none")
    if "{day}" not in url:
        raise ValueError(f"url must contain the field {{day}}, got {url!r}")
    files = []
    for day in sorted(sha256_by_day):
        digest = sha256_by_day[day]
        if isinstance(day, bool) or not isinstance(day, (int, np.integer)) or not 0 <= day <= 23:
            raise ValueError(f"Criteo days are integers 0..23, got {day!r}")
        if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise ValueError(f"sha256 of day {day} must be 64 lowercase hex digits, got {digest!r}")
        files.append({"filename": f"day_{int(day)}.gz", "url": url.format(day=int(day)), "sha256": digest})
    return {"kind": "criteo", "num_classes": 2, "files": files}


def _open_day(path: Path):
    """The file as a binary stream, decompressed when it starts with the gzip magic bytes."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == _GZIP_MAGIC else open(path, "rb")


def _line_error(path: Path, lineno: int, line: bytes) -> ValueError:
    """The ValueError for a malformed ``line`` (1-based ``lineno``), naming the bad field."""
    text = line.rstrip(b"\r\n")
    fields = text.split(b"\t")
    where = f"Criteo file {str(path)!r}, line {lineno}"
    if len(fields) != _N_FIELDS:
        shown = text[:120].decode("utf-8", "replace")
        return ValueError(f"{where}: expected {_N_FIELDS} tab-separated fields, got {len(fields)}: {shown!r}")
    if fields[0] not in (b"0", b"1"):
        return ValueError(f"{where}: label must be 0 or 1, got {fields[0].decode('utf-8', 'replace')!r}")
    for name, value in zip(CRITEO_INT_COLUMNS, fields[1:14]):
        if value and not _INT_FIELD.fullmatch(value):
            return ValueError(f"{where}: {name} must be an integer or empty, got {value.decode('utf-8', 'replace')!r}")
    shown = text[:120].decode("utf-8", "replace")
    return ValueError(f"{where}: malformed line {shown!r}")  # e.g. a carriage return inside a field


def _chunks(path: Path, chunk_rows: int) -> Iterator[tuple[int, list[bytes]]]:
    """Validated lines in chunks of ``chunk_rows``: ``(number of lines before the chunk, lines)``."""
    match = _LINE.fullmatch
    start = 0
    try:
        with _open_day(path) as fh:
            while True:
                lines = list(itertools.islice(fh, chunk_rows))
                if not lines:
                    return
                for k, line in enumerate(lines):
                    if match(line) is None:
                        raise _line_error(path, start + k + 1, line)
                yield start, lines
                start += len(lines)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ValueError(f"Criteo file {str(path)!r} is a damaged gzip file after line {start}: {exc}") from None


def _parse(lines: Sequence[bytes]) -> pd.DataFrame:
    """Validated lines → the typed frame (label int64, I float64 with NaN, C str with "")."""
    body = b"".join(lines)
    if not body:
        return pd.DataFrame({c: pd.Series([], dtype=_DTYPES[c]) for c in CRITEO_COLUMNS})
    return pd.read_csv(
        io.BytesIO(body),
        sep="\t",
        header=None,
        names=list(CRITEO_COLUMNS),
        dtype=_DTYPES,
        keep_default_na=False,
        na_values=_NA_VALUES,
        quoting=csv.QUOTE_NONE,
        engine="c",
    )


def _concat(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """One frame with index 0..n-1 from the parsed pieces (the typed empty frame if none)."""
    frames = list(frames)
    if not frames:
        return _parse([])
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def read_criteo_day(
    path: str | os.PathLike,
    max_rows: int | None = None,
    *,
    sample: str = "first",
    seed: int | None = None,
    chunk_rows: int = 100_000,
) -> pd.DataFrame:
    """Stream one day file of the Criteo 1TB Click Logs and return the selected rows.

    The file is read ``chunk_rows`` lines at a time and every line is validated; at no time
    does the reader hold more than the selected rows (as raw lines or parsed rows) plus one
    chunk. With ``sample="first"`` it stops reading after ``max_rows`` rows; with
    ``sample="reservoir"`` it reads the whole file and keeps a uniform sample of ``max_rows``
    rows without replacement (reservoir sampling, Algorithm R, draws from
    ``numpy.random.default_rng(seed)``), returned in file order. About 6 s per million rows
    (gzip, validation and parsing); a whole day (~200 million rows) takes minutes.

    Args:
        path: ``day_{N}.gz`` or the same TSV uncompressed (detected by the gzip magic bytes).
        max_rows: number of rows to select, ≥ 1; ``None`` selects every row.
        sample: ``"first"`` (the first ``max_rows`` rows) or ``"reservoir"`` (uniform sample).
        seed: seed of the reservoir sample (ignored by ``"first"``); the same seed and
            ``chunk_rows`` give the same rows.
        chunk_rows: lines read (and validated) per step, ≥ 1.

    Returns:
        A frame with the columns :data:`CRITEO_COLUMNS`: ``label`` int64 (0/1), ``I1..I13``
        float64 (NaN where missing), ``C1..C26`` str (``""`` where missing), index 0..n-1.

    Raises:
        ValueError: on bad arguments, or a malformed line (wrong field count, label not 0/1,
            an ``I`` field that is not an integer), naming the file, the line number and the
            bad value; or a damaged gzip stream.
        FileNotFoundError: if ``path`` does not exist.
    """
    path = Path(path)
    if sample not in _SAMPLES:
        raise ValueError(f"sample must be one of {list(_SAMPLES)}, got {sample!r}")
    if max_rows is not None and (isinstance(max_rows, bool) or not isinstance(max_rows, (int, np.integer)) or max_rows < 1):
        raise ValueError(f"max_rows must be an integer >= 1 or None, got {max_rows!r}")
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be an integer >= 1, got {chunk_rows!r}")
    if not path.is_file():
        raise FileNotFoundError(f"Criteo day file {str(path)!r} does not exist")
    if sample == "reservoir" and max_rows is not None:
        return _reservoir(path, int(max_rows), np.random.default_rng(seed), int(chunk_rows))
    frames, taken = [], 0
    for _, lines in _chunks(path, int(chunk_rows) if max_rows is None else int(min(chunk_rows, max_rows))):
        if max_rows is not None:
            lines = lines[: max_rows - taken]
        frames.append(_parse(lines))
        taken += len(lines)
        if max_rows is not None and taken >= max_rows:
            break  # closes the generator and the file: the rest is never read
    return _concat(frames)


def _reservoir(path: Path, k: int, rng: np.random.Generator, chunk_rows: int) -> pd.DataFrame:
    """Algorithm R over the validated lines of ``path``: a uniform k-subset, in file order."""
    kept: list[bytes] = []  # the reservoir (raw lines); slot s holds line number order[s]
    order = np.empty(0, dtype=np.int64)
    for start, lines in _chunks(path, chunk_rows):
        n = len(lines)
        fill = min(max(k - start, 0), n)  # the first k rows fill the reservoir
        if fill:
            kept.extend(lines[:fill])
            order = np.concatenate([order, np.arange(start, start + fill, dtype=np.int64)])
        if fill == n:
            continue
        # row i (0-based, i >= k) replaces slot j ~ U{0..i} when j < k
        rows = np.arange(start + fill, start + n, dtype=np.int64)
        slots = rng.integers(0, rows + 1)
        hit = slots < k
        rows, slots = rows[hit], slots[hit]
        # a slot hit twice within the chunk keeps the later row (as the sequential algorithm does)
        _, last = np.unique(slots[::-1], return_index=True)
        last = len(slots) - 1 - last
        for row, slot in zip(rows[last].tolist(), slots[last].tolist()):
            kept[slot] = lines[row - start]
        order[slots[last]] = rows[last]
    by_line = np.argsort(order, kind="stable")
    kept = [kept[s] for s in by_line.tolist()]
    return _concat(_parse(kept[i:i + chunk_rows]) for i in range(0, len(kept), chunk_rows))


def load_criteo_split(
    root: str | os.PathLike,
    rows_per_day: int,
    seed: int,
    days: Sequence[int] = (0, 1),
    sample: str = "first",
) -> dict[int, pd.DataFrame]:
    """The selected rows of each day of the paper's setup: ``root/criteo/day_{d}.gz``.

    The observational audit trains the reference model M' on Day 0 and the target model on
    Day 1, 1 million rows per day (``rows_per_day``); :func:`split_day` then splits each day.

    Args:
        root: parent folder of ``criteo/`` (the ``root`` of ``download_dataset("criteo", root)``).
        rows_per_day: rows selected per day, ≥ 1 (see :func:`read_criteo_day`).
        seed: seed of the reservoir samples; day ``d`` uses an independent stream derived from
            ``(seed, d)``.
        days: the day numbers to read.
        sample: ``"first"`` or ``"reservoir"`` (see :func:`read_criteo_day`).

    Returns:
        Day number → frame (:func:`read_criteo_day`), in the order of ``days``.

    Raises:
        FileNotFoundError: a day file is missing; the message says how to download it.
        ValueError: as :func:`read_criteo_day`.
    """
    out = {}
    for day in days:
        path = Path(root) / "criteo" / f"day_{int(day)}.gz"
        if not path.is_file():
            raise FileNotFoundError(
                f"Criteo day file {str(path)!r} does not exist: download it with "
                f"ppaudit.data.download_dataset('criteo', {str(root)!r}) and a dataset registry file that pins "
                "its sha256 (ppaudit.data.criteo_registry_entry), or copy a trusted copy there"
            )
        day_seed = int(np.random.SeedSequence([int(seed), int(day)]).generate_state(1)[0])
        out[int(day)] = read_criteo_day(path, rows_per_day, sample=sample, seed=day_seed)
    return out


def split_day(
    df: pd.DataFrame,
    rng: np.random.Generator,
    fractions: Sequence[float] = (0.8, 0.04, 0.16),
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The paper's train / validation / test split of one day (80% / 4% / 16% by default).

    The rows are shuffled by ``rng.permutation`` and cut at the rounded cumulative fractions,
    so the three parts are disjoint and cover ``df`` (1,000,000 rows → 800,000 / 40,000 /
    160,000).

    Args:
        df: the rows of one day (:func:`read_criteo_day`).
        rng: the random generator of the permutation.
        fractions: three non-negative fractions summing to 1.

    Returns:
        ``(train, validation, test)``, each with a fresh index 0..n-1.

    Raises:
        ValueError: if ``fractions`` are not three non-negative numbers summing to 1.
    """
    fr = np.asarray(fractions, dtype=float)
    if fr.shape != (3,) or not np.all(np.isfinite(fr)) or np.any(fr < 0) or abs(fr.sum() - 1.0) > 1e-9:
        raise ValueError(f"fractions must be three non-negative numbers summing to 1, got {tuple(fractions)!r}")
    n = len(df)
    cut = np.rint(np.cumsum(fr)[:2] * n).astype(np.int64)
    perm = rng.permutation(n)
    parts = np.split(perm, cut)
    return tuple(df.iloc[p].reset_index(drop=True) for p in parts)  # type: ignore[return-value]
