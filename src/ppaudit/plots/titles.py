"""Title texts of the figures (no matplotlib: the Snakefile builds titles at parse time, and a
Snakemake process should not pay for pyplot's import, ~0.45 s on each run and dry run; issue 35)."""

from __future__ import annotations

import math


def compact_number(x: float) -> str:
    """A count as written in a title: ``100000000 -> "10^8"``, ``12345 -> "12345"``, ``2.0 -> "2"``.

    Args:
        x: a finite number (a power of ten ≥ 1000 is written as ``10^k``).

    Returns:
        The text.

    Raises:
        ValueError: if ``x`` is not finite.
    """
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"x must be finite, got {x!r}")
    if x >= 1000 and x == 10 ** round(math.log10(x)):
        return f"10^{round(math.log10(x))}"
    return f"{x:g}"


def synthetic_title(figure: str, pair: dict, settings: dict) -> str:
    """Axes title of a synthetic-pair figure (Chadha et al. 2024, Fig. 2 §4.2 and Fig. 6 App. B).

    Args:
        figure: the figure's label, e.g. ``"Fig. 2"``.
        pair: the pair's config (``chadha2024.synthetic.<fig>``): ``h_s``, ``h_s_prime``, ``sigma``.
        settings: the Monte Carlo settings (``chadha2024.synthetic``): ``trials``, ``mode``,
            ``confidence``.

    Returns:
        Two lines: the histograms, then σ, the trials T per histogram, the sampling mode and
        the confidence.

    Raises:
        ValueError: if the two histograms differ in length.
    """
    h_s, h_sp = list(pair["h_s"]), list(pair["h_s_prime"])
    if len(h_s) != len(h_sp):
        raise ValueError(f"h_s has {len(h_s)} classes but h_s_prime has {len(h_sp)}")
    hist = lambda h: "[" + ", ".join(f"{v:g}" for v in h) + "]"  # noqa: E731
    return (
        f"{figure}: noisy argmax, "
        f"$H_S$ = {hist(h_s)} vs $H_{{S'}}$ = {hist(h_sp)}\n"
        f"σ = {pair['sigma']:g}, T = ${compact_number(settings['trials'])}$ trials per histogram "
        f"({settings['mode']} mode), {settings['confidence']:g} confidence"
    )
