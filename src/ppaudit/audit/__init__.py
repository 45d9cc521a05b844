"""Audits: lower bounds on a mechanism's privacy loss from its sampled outputs.

* :mod:`.bounds` — RDP lower bounds from two output-count vectors (2-cut Clopper–Pearson,
  k-cut, bootstrap) and the (ε, δ) audit of Eq. (1) (Chadha et al. 2024, §4.2, App. B).
* :mod:`.composition` — order-wise composition over queries.
"""

from .bounds import (
    TwoCutAudit,
    dp_epsilon_lower_bound,
    k_cut_bootstrap_lower_bound,
    k_cut_lower_bound,
    split_counts,
    two_cut_bootstrap_lower_bound,
    two_cut_bound_from_intervals,
    two_cut_lower_bound,
)
from .composition import compose_rdp

__all__ = [
    "TwoCutAudit",
    "two_cut_bound_from_intervals",
    "two_cut_lower_bound",
    "k_cut_lower_bound",
    "two_cut_bootstrap_lower_bound",
    "k_cut_bootstrap_lower_bound",
    "dp_epsilon_lower_bound",
    "compose_rdp",
    "split_counts",
]
