"""RDP → (ε, δ) conversion of an RDP *upper* bound.

Chadha et al. 2024, Thm 1 = Balle et al. 2020, Thm 20, minimised over the orders; the
classic ``ε = ε_α + log(1/δ)/(α−1)`` (Mironov 2017, Prop. 3) on request. Both turn an RDP
*upper* bound into an ε upper bound; applied to an RDP lower bound they give the paper's
"ε-scale" plot of the audit, which is not a valid ε lower bound.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import as_orders, check_probability

__all__ = ["rdp_to_dp"]


def rdp_to_dp(rdp, orders, delta, method: str = "balle2020", return_order: bool = False):
    """Convert an RDP curve to ``(ε, δ)``-DP, minimised over the orders.

    ``method="balle2020"`` (default): Chadha et al. 2024, Thm 1 (Balle et al. 2020, Thm 20)
    ``ε = ε_α + log((α−1)/α) − (log δ + log α)/(α − 1)``.
    ``method="classic"``: ``ε = ε_α + log(1/δ)/(α − 1)`` (Mironov 2017, Prop. 3).
    The result is clipped at 0. Orders equal to ``inf`` are ignored.

    Args:
        rdp: RDP values, last axis aligned with ``orders`` (may be batched).
        orders: orders α > 1.
        delta: target δ in (0, 1).
        method: ``"balle2020"`` or ``"classic"``.
        return_order: also return the minimising order.

    Returns:
        ε (array of ``rdp.shape[:-1]``, a float for 1-D input), and optionally the order.
    """
    a = as_orders(orders)
    d = check_probability(delta, "delta")
    r = np.asarray(rdp, dtype=np.float64)
    if r.shape[-1:] != a.shape:
        raise ValueError(f"rdp must have one value per order on its last axis: {r.shape} vs {a.size} orders")
    if np.any(np.isnan(r)) or np.any(r < 0):
        raise ValueError(f"rdp values must be >= 0, got {r[np.isnan(r) | (r < 0)][:5]}")
    finite = np.isfinite(a)
    af, rf = a[finite], r[..., finite]
    if method == "balle2020":
        eps = rf + np.log1p(-1.0 / af) - (math.log(d) + np.log(af)) / (af - 1.0)
    elif method == "classic":
        eps = rf + math.log(1.0 / d) / (af - 1.0)
    else:
        raise ValueError(f"method must be 'balle2020' or 'classic', got {method!r}")
    idx = np.argmin(eps, axis=-1)
    best = np.maximum(np.take_along_axis(eps, idx[..., None], axis=-1)[..., 0], 0.0)
    best_order = af[idx]
    if best.ndim == 0:
        best, best_order = float(best), float(best_order)
    return (best, best_order) if return_order else best
