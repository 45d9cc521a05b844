"""Adversaries of the private-prediction audits (Chadha et al. 2024, §4.1): crafters of
canaries / queries and the distinguishers they imply, one module per mechanism family.

* :mod:`ppaudit.adversaries.pate_capc` — Nat-AdvQ, Pois-AdvQ, Pois-NatQ for PATE and CaPC (§5.1–5.2).
* :mod:`ppaudit.adversaries.private_knn` — the same adversaries for Private-kNN (§5.3, App. D.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30). The names are these modules'
# own __all__ (read from their source on first use: ppaudit._lazy.attach_modules), in this order.
__getattr__, __dir__ = attach_modules(__name__, ("pate_capc", "private_knn"))

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .pate_capc import *  # noqa: F403
    from .private_knn import *  # noqa: F403
    from . import pate_capc, private_knn
