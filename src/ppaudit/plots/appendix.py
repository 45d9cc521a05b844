"""The appendix figures of Chadha et al. 2024 (App. E.1–E.4, Figs. 7–31): one entry point.

PATE and CaPC (Figs. 7–16), PromptPATE (Figs. 17–24) and Private-kNN (Figs. 25–31) draw the
same figure — ε bars per dataset beside the composed RDP against the order on one dataset —
from their audit summaries. They differ only in which rows of the summary they select (the
adversary, the case and, for PromptPATE's Pois-NatQ, the prompt variant), which bars they
draw (Private-kNN has no data-dependent theory) and the line of settings under the RDP
panel's title. :func:`appendix_figure` takes those as arguments and calls
:func:`ppaudit.plots.pate_capc.appendix_panels` (the numbers) and
:func:`ppaudit.plots.pate_capc.plot_appendix_figure` (the drawing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from .pate_capc import appendix_panels, plot_appendix_figure

__all__ = ["appendix_figure", "setting_line"]

# Symbols of the settings printed under the RDP panel's title (Chadha et al. 2024, §4–5).
_SETTING_SYMBOLS = {"num_teachers": "k", "num_queries": "n_Q", "sigma": "σ"}


def setting_line(setting: Mapping[str, object] | None) -> str:
    """The settings line of an appendix figure, e.g. ``"gemma3-270m, k = 6, n_Q = 5, σ = 1"``.

    Args:
        setting: ``model`` (printed as is) and any of ``num_teachers`` (k), ``num_queries``
            (n_Q), ``sigma`` (σ); other keys are not printed. ``None`` or empty: no line.

    Returns:
        The line, ``""`` when there is nothing to print.
    """
    if not setting:
        return ""
    parts = [str(setting["model"])] if "model" in setting else []
    parts += [f"{sym} = {setting[key]}" for key, sym in _SETTING_SYMBOLS.items() if key in setting]
    return ", ".join(parts)


def appendix_figure(
    summary: pd.DataFrame,
    rdp: pd.DataFrame,
    *,
    adversary: str,
    case: str,
    panel_dataset: str,
    title: str,
    variant: str | None = None,
    columns: Sequence[str] | None = None,
    setting: Mapping[str, object] | None = None,
    floor: float | None = None,
):
    """One appendix figure of Chadha et al. 2024 (App. E, Figs. 7–31) and the numbers it plots.

    Args:
        summary: an algorithm's audit summaries (columns adversary, case, dataset, column,
            epsilon, candidate, and ``variant`` when ``variant`` is given), every dataset.
        rdp: composed RDP per candidate of ``panel_dataset`` and ``adversary`` (columns
            candidate, order, the bar columns, and ``variant`` when ``variant`` is given).
        adversary: the adversary drawn (e.g. ``"nat-advq"``, ``"pois-natq-test"``).
        case: ``"worst"`` or ``"average"`` (over the candidates, §4.2).
        panel_dataset: the dataset of the RDP-vs-order panel.
        title: the figure's title.
        variant: PromptPATE's Pois-NatQ prompt variant (``"-"`` for its AdvQ rows): only rows
            of ``summary`` and ``rdp`` with this ``variant`` are drawn; ``None``: no filter.
        columns: the summary columns drawn as bars (default: those of
            :func:`~ppaudit.plots.pate_capc.appendix_panels`; Private-kNN has no
            data-dependent theory).
        setting: settings printed under the RDP panel's title (:func:`setting_line`).
        floor: ε of an all-zero RDP curve (a dotted line).

    Returns:
        ``(fig, plotted)``: the matplotlib figure and the long table of every plotted number
        (panel, dataset, bar, order, value), as :func:`~ppaudit.plots.pate_capc.appendix_panels`.

    Raises:
        ValueError: no summary row of this adversary, case (and variant); a ``variant`` given
            for tables without a ``variant`` column; and as ``appendix_panels``.
    """
    if variant is not None:
        for name, table in (("summary", summary), ("rdp", rdp)):
            if "variant" not in table.columns:
                raise ValueError(f"variant {variant!r} given but the {name} table has no variant column")
        summary = summary[summary["variant"] == variant]
        rdp = rdp[rdp["variant"] == variant]
    rows = summary[(summary["adversary"] == adversary) & (summary["case"] == case)]
    if rows.empty:
        which = f"adversary {adversary!r}" + (f", variant {variant!r}" if variant is not None else "")
        raise ValueError(f"no {case}-case summary rows for {which}")
    extra = {} if columns is None else {"columns": tuple(columns)}
    bars, curve, which, plotted = appendix_panels(rows, rdp, case, panel_dataset, **extra)
    subtitle = f"composed RDP on {panel_dataset}, {which}"
    line = setting_line(setting)
    if line:
        subtitle += f"\n{line}"
    fig = plot_appendix_figure(bars, curve, title, subtitle, floor=floor)
    return fig, plotted
