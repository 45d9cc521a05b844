"""One visual channel per meaning (CONVENTIONS item 29; issue 34 §5): the shared look of the figures
and the check that a figure can be read.

* :func:`procedure_hatch` — the hatch of a bar from its legend label: the adversary
  (Pois-AdvQ ``//``) and the procedure (the sound transcript-level one, ours: dots; the joint
  transcript: ``xx``; the paper's per-query procedure and the plain quantities: no extra
  hatch). Colour stays the quantity (theory, exact, audit, valid bound).
* :func:`footer_lines` / :func:`add_footer` — a footer of short lines under the panels
  (the wording is the caller's; this only breaks it at its clauses and wraps).
* :func:`layout_problems` — what makes a drawn figure unreadable: a text or legend outside the
  canvas, or two labelled series of one axes with the same colour + line style + marker +
  hatch. The render test (tests/unit/plots/test_render.py) fails on any.
"""

from __future__ import annotations

import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["procedure_hatch", "footer_lines", "add_footer", "footer_inches", "layout_problems", "series_styles", "write_figure_outputs", "FOOTER_WIDTH", "FOOTER_LINE_IN"]

#: The longest footer line, in characters (6 pt: ≈ 0.05 in per character, so it fits a 7 in wide figure).
FOOTER_WIDTH = 130

#: Height of one footer line at 6 pt, in inches.
FOOTER_LINE_IN = 0.11


def procedure_hatch(label: str) -> str | None:
    """The hatch of a bar from its legend label: adversary and procedure (colour is the quantity).

    ``//`` — Pois-AdvQ (Nat-AdvQ and single-adversary figures: none); ``..`` added — the sound
    transcript-level procedure (ours, "sound: transcript"); ``xx`` — the joint transcript
    (Pois-NatQ, "joint"). The paper's procedure has no procedure hatch, so its bar is the plain one.

    Args:
        label: the bar's legend label.

    Returns:
        A matplotlib hatch string, or ``None``.
    """
    s = str(label)
    if "joint" in s:
        return "xx"
    hatch = "//" if "Pois-AdvQ" in s else ""
    if "sound" in s:
        hatch += ".."
    return hatch or None


def footer_lines(text: str, width: int = FOOTER_WIDTH) -> str:
    """The footer as short lines: broken after each clause (``"; "``) and wrapped at ``width`` characters.

    Args:
        text: the footer (any wording; existing newlines are kept).
        width: the longest line, ≥ 20.

    Returns:
        The text with newlines; ``""`` for an empty one.

    Raises:
        ValueError: on ``width < 20``.
    """
    if int(width) < 20:
        raise ValueError(f"width must be >= 20, got {width!r}")
    out = []
    for para in str(text or "").splitlines():
        for clause in para.replace("; ", ";\n").splitlines():
            out.extend(textwrap.wrap(clause, int(width), subsequent_indent="  ") or [""])
    return "\n".join(line for line in out).strip("\n")


def add_footer(fig, text: str | None, fontsize: float = 6.0, width: int | None = None) -> float:
    """Write ``text`` as short lines (:func:`footer_lines`) at the bottom left of ``fig``.

    Args:
        fig: the figure.
        text: the footer; nothing is drawn when empty.
        fontsize: in points.
        width: characters per line (default: what the figure's width holds at ``fontsize``).

    Returns:
        The fraction of the figure's height the footer takes (0 without one): pass it as the
        bottom of ``tight_layout(rect=...)``.
    """
    if not text:
        return 0.0
    w_in, h_in = fig.get_size_inches()
    lines, inches = footer_inches(text, w_in, fontsize, width)
    fig.text(0.01, 0.005, lines, fontsize=fontsize, ha="left", va="bottom")
    return min(0.6, inches / h_in)


def footer_inches(text: str | None, fig_width_in: float, fontsize: float = 6.0, width: int | None = None) -> tuple[str, float]:
    """The footer's lines (:func:`footer_lines`) for a figure ``fig_width_in`` wide and their height in inches
    (size the figure with it before :func:`add_footer`).

    Returns:
        ``(lines, inches)``; ``("", 0.0)`` without a footer.
    """
    if not text:
        return "", 0.0
    chars = int(width) if width else max(20, min(FOOTER_WIDTH, int(float(fig_width_in) / (0.0085 * fontsize))))
    lines = footer_lines(text, chars)
    return lines, (lines.count("\n") + 1) * FOOTER_LINE_IN * fontsize / 6.0 + 0.06


def _rgba(c) -> tuple:
    try:
        return tuple(round(float(v), 3) for v in mcolors.to_rgba(c))
    except (ValueError, TypeError):
        return (str(c),)


def _style(handle) -> tuple | None:
    """(colour, line style, marker, hatch) of a legend handle (a bar container, line or patch/collection)."""
    from matplotlib.collections import Collection
    from matplotlib.container import BarContainer, ErrorbarContainer
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if isinstance(handle, ErrorbarContainer):
        handle = handle.lines[0]
    if isinstance(handle, BarContainer):
        if not handle.patches:
            return None
        handle = handle.patches[0]
    if isinstance(handle, Line2D):
        return (_rgba(handle.get_color()), str(handle.get_linestyle()), str(handle.get_marker()), None)
    if isinstance(handle, Patch):
        return (_rgba(handle.get_facecolor()), str(handle.get_linestyle()), None, str(handle.get_hatch() or "") or None)
    if isinstance(handle, Collection):
        fc = handle.get_facecolor()
        col = _rgba(fc[0]) if len(fc) else _rgba(handle.get_edgecolor()[0]) if len(handle.get_edgecolor()) else None
        ls = handle.get_linestyle()
        paths = handle.get_paths() if hasattr(handle, "get_paths") else []
        marker = None  # a scatter's marker: the shape of its first path
        if len(paths):
            marker = "path:" + str(np.round(np.asarray(paths[0].vertices, dtype=float), 3).tolist())
        return (col, str(ls[0] if isinstance(ls, list) and ls else ls), marker, handle.get_hatch() or None)
    return None


def series_styles(ax) -> dict[str, tuple]:
    """Legend label → (colour, line style, marker, hatch) of every labelled series of ``ax``."""
    out = {}
    for handle, label in zip(*ax.get_legend_handles_labels()):
        st = _style(handle)
        if st is not None:
            out.setdefault(label, st)
    return out


def layout_problems(fig, tolerance_px: float = 1.0) -> list[str]:
    """What keeps a reader from reading ``fig`` (Agg renderer; empty list: none).

    * every visible text of the figure (title, suptitle, footer, axis labels, tick labels,
      annotations) and every legend must lie inside the canvas: its window extent within the
      figure's bbox (± ``tolerance_px``);
    * the labelled series of one axes must differ in colour, line style, marker or hatch.

    Args:
        fig: a matplotlib figure.
        tolerance_px: slack of the canvas test in pixels.

    Returns:
        One sentence per problem, naming the artist.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    problems = []

    def outside(artist, what):
        try:
            e = artist.get_window_extent(renderer)
        except (RuntimeError, TypeError, ValueError):
            return
        if e.width == 0 and e.height == 0:
            return
        if (e.x0 < box.x0 - tolerance_px or e.y0 < box.y0 - tolerance_px or e.x1 > box.x1 + tolerance_px
                or e.y1 > box.y1 + tolerance_px):
            problems.append(f"{what} lies outside the canvas: extent ({e.x0:.0f}, {e.y0:.0f})–({e.x1:.0f}, {e.y1:.0f}) "
                            f"vs figure ({box.x0:.0f}, {box.y0:.0f})–({box.x1:.0f}, {box.y1:.0f})")

    def text_ok(t):
        return t.get_visible() and str(t.get_text()).strip() != ""

    for t in fig.texts:
        if text_ok(t):
            outside(t, f"figure text {t.get_text()[:40]!r}")
    if getattr(fig, "_suptitle", None) is not None and text_ok(fig._suptitle):
        outside(fig._suptitle, f"suptitle {fig._suptitle.get_text()[:40]!r}")
    for i, leg in enumerate(fig.legends):
        if leg.get_visible():
            outside(leg, f"figure legend {i}")
    for k, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        name = ax.get_title() or f"axes {k}"
        for t in [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]:
            if text_ok(t):
                outside(t, f"{name!r}: text {t.get_text()[:40]!r}")
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                loc = tick.get_loc()
                if loc is None or not (lo - 1e-12 * abs(hi - lo) <= loc <= hi + 1e-12 * abs(hi - lo)):
                    continue
                for t in (tick.label1, tick.label2):
                    if text_ok(t):
                        outside(t, f"{name!r}: tick label {t.get_text()[:20]!r}")
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            outside(leg, f"{name!r}: legend")
        seen: dict[tuple, str] = {}
        for label, st in series_styles(ax).items():
            if label.startswith("_"):
                continue
            if st in seen:
                problems.append(f"{name!r}: series {seen[st]!r} and {label!r} look alike (colour, line style, marker, hatch = {st})")
            else:
                seen[st] = label
    return problems


def write_figure_outputs(fig, table, outputs) -> None:
    """The three files of a figure target (:func:`ppaudit.io.write_figure_outputs`: PDF, PNG, CSV),
    after the readability check of issue #34 §5 when the environment variable
    ``PPAUDIT_CHECK_FIGURES`` is set.

    Args:
        fig: the matplotlib figure.
        table: the plotted numbers (a DataFrame).
        outputs: a rule's ``snakemake.output`` (or a mapping with ``pdf``, ``png`` and ``csv``).

    Raises:
        ValueError: with ``PPAUDIT_CHECK_FIGURES`` set, a figure with a text or legend outside its
            canvas or two look-alike series in one axes (:func:`layout_problems`); nothing is written.
    """
    import os

    from ..io import write_figure_outputs as write

    if os.environ.get("PPAUDIT_CHECK_FIGURES"):
        problems = layout_problems(fig)
        if problems:
            png = outputs["png"] if isinstance(outputs, dict) else getattr(outputs, "png")
            raise ValueError(f"figure {png} is not readable: " + "; ".join(problems))
    write(fig, table, outputs)
