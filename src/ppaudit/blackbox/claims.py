"""Privacy claims a mechanism makes, in the forms an audit can test.

A :class:`Claim` is what the mechanism's author says it satisfies: an RDP curve, ρ-zCDP,
(ε, δ)-DP or μ-GDP. Two *implied upper bounds* are derived from it, and only those are
compared with lower bounds (every conversion below turns an upper bound into an upper
bound; none turns a lower bound into anything):

* :meth:`Claim.rdp_curve` — an upper bound on the RDP at any order:

  - RDP curve ``(α_j, ε_j)``: RDP is non-decreasing in α (van Erven & Harremoës 2014,
    Thm 3), so at α the claim implies ``min{ε_j : α_j ≥ α}`` (``inf`` above the largest
    claimed order);
  - ρ-zCDP: ``ρα`` (Bun & Steinke 2016, Def. 1.1);
  - μ-GDP: ``αμ²/2``: μ-GDP means the pair is a post-processing of
    ``(N(0, 1), N(μ, 1))`` (Dong et al. 2020, Prop. 2.5 / Blackwell), and the Rényi
    divergence obeys data processing;
  - (ε, 0)-DP: ``min(ε, αε²/2)`` (Bun & Steinke 2016, Prop. 3.3, and ``D_α ≤ D_∞``);
  - (ε, δ)-DP with δ > 0: no RDP bound (``inf``).

* :meth:`Claim.epsilon_at` — an upper bound on ε at a given δ:

  - (ε, δ_c)-DP: ε for every ``δ ≥ δ_c`` (``inf`` below);
  - μ-GDP: the exact ``ε(δ)`` of Dong et al. 2020, Cor. 2.13;
  - ρ-zCDP and RDP curves: the RDP → (ε, δ) conversion of Balle et al. 2020, Thm 20
    (Chadha et al. 2024, Thm 1), minimised over orders — valid because it is applied to
    the *claimed upper bound*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_orders

__all__ = ["Claim", "ZCDP_CONVERSION_ORDERS"]

#: Orders on which a zCDP claim ``ρα`` is converted to ε at δ (Balle et al. 2020, Thm 20).
ZCDP_CONVERSION_ORDERS = np.concatenate([1.0 + np.geomspace(1e-3, 1.0, 60), np.geomspace(2.0, 1e5, 300)])

_KINDS = ("rdp", "zcdp", "dp", "gdp")


def _nonneg(value, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number >= 0, got {value!r}") from None
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


@dataclass(frozen=True)
class Claim:
    """A privacy claim. Build it with :meth:`rdp`, :meth:`zcdp`, :meth:`dp` or :meth:`gdp`.

    Attributes:
        kind: ``"rdp"``, ``"zcdp"``, ``"dp"`` or ``"gdp"``.
        orders, rdp_values: the claimed RDP curve (kind ``"rdp"``).
        rho: ρ of a zCDP claim.
        epsilon, delta: an (ε, δ)-DP claim.
        mu: μ of a GDP claim.
    """

    kind: str
    orders: tuple = ()
    rdp_values: tuple = ()
    rho: float | None = None
    epsilon: float | None = None
    delta: float | None = None
    mu: float | None = None

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"claim kind must be one of {_KINDS}, got {self.kind!r}")

    # -- constructors ---------------------------------------------------------------
    @classmethod
    def rdp(cls, orders, epsilons) -> "Claim":
        """``(α, ε(α))``-RDP at the given orders (Mironov 2017, Def. 4).

        Raises:
            ValueError: if an order is ≤ 1, an ε is negative, or the lengths differ.
        """
        a = as_orders(orders)
        e = np.atleast_1d(np.asarray(epsilons, dtype=np.float64))
        if e.shape != a.shape:
            raise ValueError(f"epsilons must have one value per order, got {e.size} values for {a.size} orders")
        if np.any(~np.isfinite(e) & ~np.isposinf(e)) or np.any(e < 0):
            raise ValueError(f"RDP epsilons must be >= 0, got {e}")
        return cls("rdp", orders=tuple(a.tolist()), rdp_values=tuple(e.tolist()))

    @classmethod
    def zcdp(cls, rho) -> "Claim":
        """ρ-zCDP: ``D_α ≤ ρα`` for all α > 1 (Bun & Steinke 2016)."""
        return cls("zcdp", rho=_nonneg(rho, "rho"))

    @classmethod
    def dp(cls, epsilon, delta: float = 0.0) -> "Claim":
        """(ε, δ)-DP (Dwork et al. 2006)."""
        d = _nonneg(delta, "delta")
        if d >= 1:
            raise ValueError(f"delta must be in [0, 1), got {delta!r}")
        return cls("dp", epsilon=_nonneg(epsilon, "epsilon"), delta=d)

    @classmethod
    def gdp(cls, mu) -> "Claim":
        """μ-GDP (Dong et al. 2020, Def. 2.7)."""
        return cls("gdp", mu=_nonneg(mu, "mu"))

    # -- implied upper bounds ---------------------------------------------------------
    def rdp_curve(self, orders) -> np.ndarray:
        """Upper bound on the RDP at ``orders`` implied by the claim (``inf`` where none).

        Args:
            orders: orders α > 1.

        Returns:
            ``(len(orders),)`` array.
        """
        a = as_orders(orders)
        if self.kind == "zcdp":
            return self.rho * a
        if self.kind == "gdp":
            return 0.5 * self.mu * self.mu * a
        if self.kind == "dp":
            if self.delta > 0:
                return np.full(a.shape, np.inf)
            e = self.epsilon
            return np.minimum(e, 0.5 * e * e * a)
        co = np.asarray(self.orders)
        cv = np.asarray(self.rdp_values)
        out = np.full(a.shape, np.inf)
        for j, alpha in enumerate(a):
            ok = co >= alpha
            if np.any(ok):
                out[j] = cv[ok].min()
        return out

    def epsilon_at(self, delta: float) -> float:
        """Upper bound on ε at ``delta`` implied by the claim (``inf`` where none).

        Args:
            delta: δ in (0, 1) (δ = 0 allowed for (ε, 0)-DP claims).

        Returns:
            ε ≥ 0 or ``inf``.
        """
        d = float(delta)
        if not (0.0 <= d < 1.0):
            raise ValueError(f"delta must be in [0, 1), got {delta!r}")
        if self.kind == "dp":
            return self.epsilon if d >= self.delta else math.inf
        if d == 0.0:
            return math.inf
        if self.kind == "gdp":
            from ..attacks.one_run import gdp_epsilon

            return float(gdp_epsilon(self.mu, d))
        from ..accounting import rdp_to_dp

        if self.kind == "zcdp":
            return float(rdp_to_dp(self.rho * ZCDP_CONVERSION_ORDERS, ZCDP_CONVERSION_ORDERS, d))
        cv = np.asarray(self.rdp_values)
        fin = np.isfinite(cv)
        if not np.any(fin):
            return math.inf
        return float(rdp_to_dp(cv[fin], np.asarray(self.orders)[fin], d))

    def describe(self) -> str:
        """A one-line human description, e.g. ``"0.5-zCDP"``."""
        if self.kind == "zcdp":
            return f"{self.rho:g}-zCDP"
        if self.kind == "gdp":
            return f"{self.mu:g}-GDP"
        if self.kind == "dp":
            return f"({self.epsilon:g}, {self.delta:g})-DP"
        pts = ", ".join(f"{a:g}:{e:.4g}" for a, e in zip(self.orders, self.rdp_values))
        return f"RDP {{{pts}}}"

    def to_dict(self) -> dict:
        """JSON-ready description."""
        out = {"kind": self.kind, "description": self.describe()}
        if self.kind == "rdp":
            out.update(orders=list(self.orders), rdp=list(self.rdp_values))
        for name in ("rho", "epsilon", "delta", "mu"):
            v = getattr(self, name)
            if v is not None:
                out[name] = v
        return out
