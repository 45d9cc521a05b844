"""Adversaries of the private-prediction audits (Chadha et al. 2024, §4.1): crafters of
canaries / queries and the distinguishers they imply, one module per mechanism family.

* :mod:`.pate_capc` — Nat-AdvQ, Pois-AdvQ, Pois-NatQ for PATE and CaPC (§5.1–5.2).
* :mod:`.private_knn` — the same adversaries for Private-kNN (§5.3, App. D.1).
"""

from .pate_capc import *  # noqa: F403 (its __all__ is the public API re-exported here)
from .private_knn import *  # noqa: F403 (its __all__ is the public API re-exported here)
from . import pate_capc, private_knn

__all__ = [*pate_capc.__all__, *private_knn.__all__]
