"""Atomic file output: write to a temporary file in the target folder, then rename.

A crash or a kill never leaves a half-written result under the final name, so a rerun
(Snakemake ``--rerun-incomplete``) starts from a clean state.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Iterator

__all__ = ["atomic_path", "write_csv", "write_json", "save_figure", "write_figure_outputs"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it to ``path``.

    On an exception the temporary file is removed and nothing appears at ``path``.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp" + target.suffix, dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def write_csv(df, path: str | os.PathLike, **kwargs) -> None:
    """Write a pandas DataFrame as CSV atomically (no index; full float precision)."""
    kwargs.setdefault("index", False)
    kwargs.setdefault("float_format", "%.17g")
    with atomic_path(path) as tmp:
        df.to_csv(tmp, **kwargs)


def write_json(obj, path: str | os.PathLike) -> None:
    """Write JSON atomically (sorted keys, so identical content gives identical bytes)."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")


def save_figure(fig, path: str | os.PathLike, **kwargs) -> None:
    """Save a matplotlib figure atomically; the format follows the suffix of ``path``.

    PDF metadata dates are cleared so that a rerun gives the same bytes.
    """
    target = Path(path)
    if target.suffix.lower() == ".pdf":
        kwargs.setdefault("metadata", {"CreationDate": None, "ModDate": None})
    elif target.suffix.lower() == ".png":
        kwargs.setdefault("metadata", {"Software": None})
    kwargs.setdefault("dpi", 150)
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format=target.suffix.lstrip(".").lower(), **kwargs)


def write_figure_outputs(fig, table, outputs) -> None:
    """The three files of a figure target (workflow/figures.yaml): the figure as PDF and PNG
    (:func:`save_figure`) and every plotted number as CSV (:func:`write_csv`), each atomically.

    Args:
        fig: the matplotlib figure.
        table: the plotted numbers (a DataFrame).
        outputs: a rule's ``snakemake.output`` (or anything with ``pdf``, ``png`` and ``csv``
            attributes, or a mapping with those keys).

    The workflow's plot scripts call :func:`ppaudit.plots.style.write_figure_outputs`, which checks
    the figure's layout first when ``PPAUDIT_CHECK_FIGURES`` is set and then calls this.
    """
    get = (lambda k: outputs[k]) if isinstance(outputs, dict) else (lambda k: getattr(outputs, k))
    save_figure(fig, get("pdf"))
    save_figure(fig, get("png"))
    write_csv(table, get("csv"))
