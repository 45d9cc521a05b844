"""PromptPATE adversaries (Chadha et al. 2024, §5.3, App. D.2): the canary prompts of Nat-AdvQ, Pois-AdvQ and the four Pois-NatQ variants.

Defined in :mod:`ppaudit.mechanisms.promptpate.canaries` (the mechanism's LLM stage answers
them, and ``mechanisms`` sits below ``adversaries``); this module keeps the import path.
"""

from __future__ import annotations

from ..mechanisms.promptpate import canaries as _canaries
from ..mechanisms.promptpate.canaries import *  # noqa: F403

__all__ = list(_canaries.__all__)
