"""Figure: the worst-case (tight data-independent) RDP of the Gaussian noisy argmax against
the data-independent bound α/σ² (Chadha et al. 2024, §7 future work; target
``chadha_worstcase``). matplotlib is imported inside the function: plots are not part of
the lean core.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["plot_gnmax_worst_case"]

_RDP_COLUMNS = {"setting", "order", "rdp_worst_case", "rdp_upper", "data_independent"}
_EPS_COLUMNS = {"setting", "num_queries", "epsilon_worst_case", "epsilon_upper", "epsilon_data_independent"}


def plot_gnmax_worst_case(rdp_table: pd.DataFrame, epsilon_table: pd.DataFrame, delta: float):
    """Three panels: RDP vs α, its ratio to α/σ², and ε at δ vs the number of queries.

    Args:
        rdp_table: rows of :meth:`ppaudit.accounting.WorstCaseRDP.to_frame` with a
            ``setting`` column (one curve per setting).
        epsilon_table: :func:`ppaudit.accounting.worst_case_epsilon_table` of the same
            settings.
        delta: the δ of ``epsilon_table`` (for the axis label).

    Returns:
        ``(figure, table)``: the matplotlib figure and the long table of every plotted
        number (columns ``panel``, ``setting``, ``x``, ``curve``, ``y``).

    Raises:
        ValueError: if a table lacks a column or is empty.
    """
    for name, table, cols in (("rdp_table", rdp_table, _RDP_COLUMNS), ("epsilon_table", epsilon_table, _EPS_COLUMNS)):
        missing = cols - set(table.columns)
        if missing:
            raise ValueError(f"{name} lacks the columns {sorted(missing)}")
        if table.empty:
            raise ValueError(f"{name} is empty")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = list(dict.fromkeys(rdp_table["setting"]))
    colours = plt.get_cmap("tab10")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), constrained_layout=True)
    rows = []
    for i, setting in enumerate(settings):
        colour = colours(i % 10)
        part = rdp_table[rdp_table["setting"] == setting].sort_values("order")
        x = part["order"].to_numpy()
        worst, upper, di = (part[c].to_numpy() for c in ("rdp_worst_case", "rdp_upper", "data_independent"))
        axes[0].loglog(x, worst, color=colour, marker="o", ms=3, label=setting)
        axes[0].loglog(x, di, color=colour, linestyle=":", linewidth=1)
        axes[1].semilogx(x, worst / di, color=colour, marker="o", ms=3, label=setting)
        axes[1].semilogx(x, upper / di, color=colour, linestyle="--", linewidth=0.8)
        for curve, y in (("worst_case", worst), ("upper", upper), ("data_independent", di)):
            rows += [{"panel": "rdp", "setting": setting, "x": a, "curve": curve, "y": v} for a, v in zip(x, y)]
        rows += [{"panel": "ratio", "setting": setting, "x": a, "curve": "worst_case/data_independent", "y": v} for a, v in zip(x, worst / di)]
        rows += [{"panel": "ratio", "setting": setting, "x": a, "curve": "upper/data_independent", "y": v} for a, v in zip(x, upper / di)]
        eps = epsilon_table[epsilon_table["setting"] == setting].sort_values("num_queries")
        n = eps["num_queries"].to_numpy(dtype=float)
        axes[2].loglog(n, eps["epsilon_worst_case"], color=colour, marker="o", ms=3, label=setting)
        axes[2].loglog(n, eps["epsilon_data_independent"], color=colour, linestyle=":", linewidth=1)
        for curve in ("worst_case", "upper", "data_independent"):
            rows += [
                {"panel": "epsilon", "setting": setting, "x": q, "curve": curve, "y": v}
                for q, v in zip(n, eps[f"epsilon_{curve}"])
            ]
    axes[0].set(xlabel="Rényi order α", ylabel="RDP ε(α)", title="worst case (solid) vs α/σ² (dotted)")
    axes[1].axhline(1.0, color="0.4", linestyle=":", linewidth=1, label="α/σ² (data-independent)")
    axes[1].axhline(2.0 / np.pi, color="0.6", linestyle="-.", linewidth=1, label="2/π")
    axes[1].set(
        xlabel="Rényi order α",
        ylabel="worst case / (α/σ²)",
        title="ratio to α/σ² (dashed: certified bound)",
        ylim=(0.0, 1.05),
    )
    axes[2].set(
        xlabel="number of queries T",
        ylabel=f"ε at δ = {delta:g}",
        title="T queries: worst case (solid) vs α/σ² (dotted)",
    )
    axes[1].legend(fontsize=7, loc="lower right")
    axes[0].legend(fontsize=7, loc="upper left")
    return fig, pd.DataFrame(rows)
