"""Adversaries of the private-prediction audits (Chadha et al. 2024, §4.1): crafters of
canaries / queries and the distinguishers they imply, one module per mechanism family.

* :mod:`.pate_capc` — Nat-AdvQ, Pois-AdvQ, Pois-NatQ for PATE and CaPC (§5.1–5.2).
* :mod:`.private_knn` — the same adversaries for Private-kNN (§5.3, App. D.1).
"""

from .pate_capc import (
    ADVERSARIES,
    CraftedCanaries,
    choose_capc_party,
    craft,
    craft_nat_advq,
    craft_pois_advq,
    craft_pois_natq,
    poison_label,
    pooled_vote_counts,
    sample_query_indices,
    second_most_common_label,
)
from .private_knn import (
    KNN_ADVERSARIES,
    KnnCrafted,
    KnnSetup,
    craft_knn,
    craft_knn_advq,
    craft_knn_pois_natq,
    embedding_candidates,
    knn_setup,
    load_crafted,
    load_setup,
    save_crafted,
    save_setup,
)

__all__ = [
    "ADVERSARIES",
    "CraftedCanaries",
    "pooled_vote_counts",
    "second_most_common_label",
    "poison_label",
    "craft_nat_advq",
    "craft_pois_advq",
    "craft_pois_natq",
    "craft",
    "choose_capc_party",
    "sample_query_indices",
    "KNN_ADVERSARIES",
    "KnnSetup",
    "knn_setup",
    "save_setup",
    "load_setup",
    "KnnCrafted",
    "save_crafted",
    "load_crafted",
    "craft_knn_advq",
    "embedding_candidates",
    "craft_knn_pois_natq",
    "craft_knn",
]
