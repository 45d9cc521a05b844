"""A search result as one self-contained HTML page: :func:`search_report_html` (``SearchResult.to_html``).

The page a researcher keeps beside a bug report (CONVENTIONS item 24): the verdict, the claim,
the confidence, the seed, the ppaudit version, the command, the timings and draws; the witness
(pair, output set, the two probabilities with their Clopper–Pearson intervals); a figure of the
two output distributions of the witness pair with the witness set shaded and a figure of the two
probabilities with their intervals; the table of every pair tried.

Self-contained: no script, no stylesheet or font from the network, the figures are inline SVG
written here (no plotting library, so the lean core install can write it). The distributions are
drawn from the first certification draws of the witness pair kept by the search
(``SearchResult.samples``, at most ``_KEEP`` per side): integer or real 1-D outputs as a
histogram over the output, vector outputs of a classifier witness as the histogram of the
classifier's score, other outputs (strings, tuples) as the frequencies of the most common values.
A bin is shaded when most of its drawn outputs lie in the witness set ``O`` (exactly ``O`` for
counted integer outputs, whose bins are single values).
"""

from __future__ import annotations

import html
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["search_report_html"]

_KEEP = 5000  # certification outputs per side kept for the figure
_C0, _C1, _SHADE = "#1f77b4", "#d95f02", "#f2e394"  # dataset, neighbour, the witness set O


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _bins(o0: np.ndarray, o1: np.ndarray, oset):
    """``(labels, f0, f1, in_O, xlabel)``: the fractions of each side's sample per bin, and the bins in ``O``."""
    both = np.concatenate([o0, o1]) if len(o0) and len(o1) else (o0 if len(o0) else o1)
    in0, in1 = oset.contains(o0), oset.contains(o1)
    inside = np.concatenate([in0, in1])
    numeric = both.dtype.kind in "iubf"
    if oset.kind == "threshold" and (both.ndim > 1 or not numeric):
        spec, clf = oset._spec, oset.classifier
        x = spec.score(clf, spec.featurize(both)) if clf is not None else None
        if x is None:
            return None
        xlabel = f"classifier score P(neighbour | output) ({spec.name()})"
        numeric, both = True, np.asarray(x, dtype=np.float64)
    elif numeric and both.ndim == 1:
        xlabel = "output"
    else:
        keys = [repr(tuple(v) if isinstance(v, (list, np.ndarray)) else v) for v in both.tolist()]
        uniq, inv, cnt = np.unique(np.array(keys, dtype=object).astype(str), return_inverse=True, return_counts=True)
        top = np.argsort(-cnt, kind="stable")[:30]
        n0 = len(o0)
        labels, f0, f1, ino = [], [], [], []
        for u in sorted(top.tolist(), key=lambda j: uniq[j]):
            m = inv == u
            labels.append(uniq[u])
            f0.append(m[:n0].sum() / max(n0, 1))
            f1.append(m[n0:].sum() / max(len(o1), 1))
            ino.append(bool(inside[m].mean() >= 0.5))
        return labels, np.array(f0), np.array(f1), ino, "output (the 30 most frequent values)"
    n0 = len(o0)
    vals = both.astype(np.float64)
    distinct = np.unique(vals)
    if both.dtype.kind in "iub" and distinct.size <= 40:
        edges = None
        labels = [f"{v:g}" for v in distinct]
        idx = np.searchsorted(distinct, vals)
        nb = distinct.size
    else:
        lo, hi = float(vals.min()), float(vals.max())
        hi = hi if hi > lo else lo + 1.0
        edges = np.linspace(lo, hi, 31)
        idx = np.clip(np.searchsorted(edges, vals, side="right") - 1, 0, 29)
        labels = [f"{edges[j]:.3g}" for j in range(30)]
        nb = 30
    f0 = np.bincount(idx[:n0], minlength=nb) / max(n0, 1)
    f1 = np.bincount(idx[n0:], minlength=nb) / max(len(o1), 1)
    tot = np.bincount(idx, minlength=nb)
    ins = np.bincount(idx, weights=inside.astype(float), minlength=nb)
    ino = [bool(tot[j] and ins[j] / tot[j] >= 0.5) for j in range(nb)]
    return labels, f0, f1, ino, xlabel


def _svg_hist(labels, f0, f1, ino, xlabel) -> str:
    w, h, left, bottom, top = 760, 300, 56, 58, 28
    pw, ph = w - left - 12, h - bottom - top
    n = len(labels)
    ymax = max(float(np.max(f0)), float(np.max(f1)), 1e-12) * 1.1
    bw = pw / max(n, 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
             f'role="img" aria-label="distributions of the two outputs" id="fig-distributions">',
             f'<rect x="0" y="0" width="{w}" height="{h}" fill="white"/>']
    for j in range(n):
        if ino[j]:
            parts.append(f'<rect x="{left + j * bw:.1f}" y="{top}" width="{bw:.1f}" height="{ph}" fill="{_SHADE}"/>')
    for j in range(n):
        for k, (f, c) in enumerate(((f0, _C0), (f1, _C1))):
            bh = ph * float(f[j]) / ymax
            parts.append(f'<rect x="{left + j * bw + 1 + k * (bw - 2) / 2:.1f}" y="{top + ph - bh:.1f}" '
                         f'width="{max((bw - 2) / 2, 0.5):.1f}" height="{bh:.1f}" fill="{c}"/>')
    parts.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="black"/>')
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="black"/>')
    for q in (0.0, 0.5, 1.0):
        y = top + ph - ph * q / 1.1
        parts.append(f'<text x="{left - 4}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{ymax * q / 1.1:.2g}</text>')
    step = max(1, int(math.ceil(n / 12)))
    for j in range(0, n, step):
        parts.append(f'<text x="{left + (j + 0.5) * bw:.1f}" y="{top + ph + 14}" font-size="10" '
                     f'text-anchor="middle">{_e(labels[j][:12])}</text>')
    parts.append(f'<text x="{left + pw / 2}" y="{h - 22}" font-size="12" text-anchor="middle">{_e(xlabel)}</text>')
    parts.append(f'<text x="14" y="{top + ph / 2}" font-size="12" text-anchor="middle" '
                 f'transform="rotate(-90 14 {top + ph / 2})">share of draws</text>')
    lx = left + 8
    for label, c in (("M(dataset)", _C0), ("M(neighbour)", _C1), ("witness set O", _SHADE)):
        parts.append(f'<rect x="{lx}" y="8" width="12" height="12" fill="{c}" stroke="#888"/>'
                     f'<text x="{lx + 16}" y="18" font-size="12">{_e(label)}</text>')
        lx += 130
    parts.append("</svg>")
    return "".join(parts)


def _svg_probs(w) -> str:
    width, height, left = 760, 110, 150
    pw = width - left - 20
    rows = [("P(M(dataset) in O)", w.p0, w.p0_interval, _C0), ("P(M(neighbour) in O)", w.p1, w.p1_interval, _C1)]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             'role="img" aria-label="the two probabilities with their intervals" id="fig-probabilities">',
             f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>']
    for k, (label, p, (lo, hi), c) in enumerate(rows):
        y = 24 + 34 * k
        x = lambda v: left + pw * float(v)  # noqa: E731
        parts.append(f'<text x="{left - 8}" y="{y + 4}" font-size="12" text-anchor="end">{_e(label)}</text>')
        parts.append(f'<line x1="{x(lo):.1f}" y1="{y}" x2="{x(hi):.1f}" y2="{y}" stroke="{c}" stroke-width="3"/>')
        parts.append(f'<line x1="{x(lo):.1f}" y1="{y - 6}" x2="{x(lo):.1f}" y2="{y + 6}" stroke="{c}" stroke-width="2"/>')
        parts.append(f'<line x1="{x(hi):.1f}" y1="{y - 6}" x2="{x(hi):.1f}" y2="{y + 6}" stroke="{c}" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(p):.1f}" cy="{y}" r="4" fill="{c}"/>')
        parts.append(f'<text x="{min(x(hi) + 8, width - 150):.1f}" y="{y - 8}" font-size="11">{p:.4g} '
                     f'[{lo:.4g}, {hi:.4g}]</text>')
    ya = 24 + 34 * 2 - 6
    parts.append(f'<line x1="{left}" y1="{ya}" x2="{left + pw}" y2="{ya}" stroke="black"/>')
    for v in (0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<text x="{left + pw * v:.1f}" y="{ya + 14}" font-size="10" text-anchor="middle">{v:g}</text>')
    parts.append("</svg>")
    return "".join(parts)


def search_report_html(result, path=None, *, command: str | None = None) -> str:
    """Write ``result`` (a :class:`~ppaudit.blackbox.SearchResult`) as one self-contained HTML page.

    Args:
        result: the search result.
        path: file to write (``None``: only return the text).
        command: the command that ran the search (the CLI passes its own argv); default
            ``"search_mechanism(...)"`` from the Python API.

    Returns:
        The HTML text.
    """
    from .. import __version__

    r, w = result, result.witness
    a = r.audit
    claim = "none" if r.claim is None else r.claim.describe()
    cls = {"violation": "violation", "consistent": "consistent"}.get(r.verdict, "noclaim")
    summary = r.summary()
    sample = getattr(r, "samples", {}).get(w.pair)
    figure = ('<p id="fig-distributions-missing">No output sample of the witness pair was kept, so the '
              'distributions are not drawn.</p>')
    if sample is not None:
        binned = _bins(sample[0], sample[1], w.output_set)
        if binned is not None:
            figure = _svg_hist(*binned)
            figure += (f'<p class="note">From the first {len(sample[0]):,} certification draws per side of the '
                       "witness pair; a bin is shaded when most of its draws lie in O.</p>")
    frame = r.to_frame()
    cols = [c for c in ("pair", "dataset", "neighbour", "pilot_rank", "pilot_score", "output_set", "certified",
                        "certification_trials", "p0", "p0_low", "p0_high", "p1", "p1_low", "p1_high",
                        "rdp_lower_bound", "rdp_order", "epsilon_lower_bound", "excess", "verdict", "witness")
            if c in frame]
    table = frame[cols].to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}", classes="pairs",
                                border=0, escape=True)
    b = getattr(r, "budget", None)
    elapsed = getattr(b, "finished", None)
    facts = [
        ("verdict", r.verdict), ("claim", claim),
        ("confidence", f"{r.confidence:g} for the whole search"
         + ("" if r.claim is not None else " (each bound on its own)")),
        ("seed", "none given (fresh entropy)" if getattr(r, "seed", None) is None else r.seed),
        ("ppaudit version", __version__), ("python", f"{platform.python_version()} on {sys.platform}"),
        ("command", command or "search_mechanism(...) (Python API)"),
        ("time", "not recorded" if elapsed is None else f"{elapsed:.3g} s"),
        ("draws", f"{r.total_draws:,} in all: {len(r.pairs)} pairs x {r.pilot_trials:,} pilot draws per side; "
                  f"{r.certified} certified x up to {r.certification_trials:,} fresh draws per side"),
        ("outputs", r.outputs), ("written", time.strftime("%Y-%m-%d %H:%M:%S %Z")),
    ]
    if b is not None and b.notes:
        facts.append(("budget", "; ".join(b.notes)))
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in facts)
    bounds = (f"epsilon &ge; {a.epsilon_lower_bound:.4g} at delta = {a.delta:g}; "
              f"RDP &ge; {float(np.max(a.rdp_lower_bound)):.4g} (largest over the orders)")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ppaudit search: {_e(r.verdict)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222; }}
h1 {{ font-size: 1.5em; }} .verdict {{ padding: .3em .6em; border-radius: 4px; }}
.violation {{ background: #f8d0d0; }} .consistent {{ background: #d4ecd4; }} .noclaim {{ background: #e4e4e4; }}
table.facts th {{ text-align: left; padding-right: 1em; vertical-align: top; }}
table.pairs {{ border-collapse: collapse; font-size: .85em; }}
table.pairs td, table.pairs th {{ border: 1px solid #ccc; padding: 2px 5px; }}
pre {{ background: #f6f6f6; padding: .6em; overflow-x: auto; }} .note {{ color: #555; font-size: .9em; }}
</style></head><body>
<h1>ppaudit search: <span id="verdict" class="verdict {cls}">{_e(r.verdict)}</span></h1>
<table class="facts">{rows}</table>
<h2>Witness</h2>
<p>Pair #{w.pair}: dataset <code>{_e(_short(w.dataset))}</code> vs neighbour <code>{_e(_short(w.neighbour))}</code></p>
<p>Output set O: {_e(w.output_set.description)}</p>
<p>P(M(dataset) &isin; O) = {w.p0:.4g} [{w.p0_interval[0]:.4g}, {w.p0_interval[1]:.4g}],
P(M(neighbour) &isin; O) = {w.p1:.4g} [{w.p1_interval[0]:.4g}, {w.p1_interval[1]:.4g}]
({w.interval_confidence:.4g} Clopper&ndash;Pearson intervals, {w.trials:,} fresh draws per side).</p>
<p>Certified: {bounds}.</p>
<h3>The two output distributions</h3>
{figure}
<h3>The two probabilities and their intervals</h3>
{_svg_probs(w)}
<h2>Summary</h2>
<pre>{_e(summary)}</pre>
<h2>Every pair tried</h2>
{table}
</body></html>
"""
    if path is not None:
        Path(path).write_text(page, encoding="utf-8")
    return page


def _short(x, limit: int = 200) -> str:
    if isinstance(x, np.ndarray):
        x = x.tolist()
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."
