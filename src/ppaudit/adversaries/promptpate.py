"""PromptPATE adversaries (Chadha et al. 2024, §5.3, App. D.2): the canary prompts of Nat-AdvQ, Pois-AdvQ and the four Pois-NatQ variants.

Defined in :mod:`ppaudit.mechanisms.promptpate.canaries` (the mechanism's LLM stage answers
them, and ``mechanisms`` sits below ``adversaries``); this module keeps the import path.
"""

from __future__ import annotations

from ..mechanisms.promptpate.canaries import (
    ADVERSARIES,
    POIS_NATQ_VARIANTS,
    confident_query,
    most_voted_other_label,
    nat_advq_prompts,
    pois_advq_prompts,
    pois_natq_prompts,
    unconfident_query,
    wrong_label_mapping,
)

__all__ = [
    "ADVERSARIES",
    "POIS_NATQ_VARIANTS",
    "most_voted_other_label",
    "confident_query",
    "unconfident_query",
    "wrong_label_mapping",
    "nat_advq_prompts",
    "pois_advq_prompts",
    "pois_natq_prompts",
]
