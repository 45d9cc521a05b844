"""Adversaries of the private-prediction audits (Chadha et al. 2024, §4.1): crafters of
canaries / queries and the distinguishers they imply, one module per mechanism family.

* :mod:`ppaudit.adversaries.pate_capc` — Nat-AdvQ, Pois-AdvQ, Pois-NatQ for PATE and CaPC (§5.1–5.2).
* :mod:`ppaudit.adversaries.private_knn` — the same adversaries for Private-kNN (§5.3, App. D.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30); tests/unit/test_public_api.py
# checks this table against the modules' __all__.
_EXPORTS = {
    "pate_capc": (
        "ADVERSARIES", "CraftedCanaries", "pooled_vote_counts", "second_most_common_label",
        "poison_label", "canary_vote_rates", "craft_nat_advq", "craft_pois_advq", "craft_pois_natq", "craft",
        "choose_capc_party", "sample_query_indices",
    ),
    "private_knn": (
        "KNN_ADVERSARIES", "KnnSetup", "knn_setup", "save_setup", "load_setup", "KnnCrafted",
        "save_crafted", "load_crafted", "craft_knn_advq", "embedding_candidates",
        "craft_knn_pois_natq", "craft_knn",
    ),
}

__all__, __getattr__, __dir__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .pate_capc import *  # noqa: F403
    from .private_knn import *  # noqa: F403
    from . import pate_capc, private_knn
