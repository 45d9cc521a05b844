"""Drivers of Wang et al. 2022 ("In Differential Privacy, There is Truth").

* :mod:`.reconstruction` — the histogram-reconstruction attack on PATE's answers (§2, §4, App. E)
  and its findings.
* :mod:`.adult` — the PhD-detection attack on UCI Adult (§2, App. E).
* :mod:`.caching` — the answer-caching defence (§5), also against Chadha et al. 2024's AdvQ
  audits on the PATE / CaPC vote models.

Every public name of these modules is re-exported here (lazily), so
``from ppaudit.experiments.wang2022 import sigma_findings`` works as it did when this was one module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30). The names are these modules'
# own __all__ (read from their source on first use: ppaudit._lazy.attach_modules), in this order.
__getattr__, __dir__ = attach_modules(__name__, ("reconstruction", "adult", "caching"))

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .reconstruction import *  # noqa: F403
    from .adult import *  # noqa: F403
    from .caching import *  # noqa: F403
    from . import adult, caching, reconstruction
