"""Drivers of the label-DP audits: the observational paper and Malek et al. 2021.

* :mod:`.data` — the image, tabular and text datasets of the observational paper's tables.
* :mod:`.release` — the label-DP releases (LP-1ST and variants, LP-2ST, ALIBI, AGIBI, PATE) and
  the target model fitted on them.
* :mod:`.models` — reference and target models, their bundles on disk.
* :mod:`.memorization` — the memorisation games of Malek et al. (App. B, Game 3).
* :mod:`.tables` — the observational paper's tables and findings from the audited models.
* :mod:`.malek_tables` — Malek et al.'s Tables 5 and 6.
* :mod:`.synthetic_rr` — randomized response on synthetic data (observational paper, §6.6, App. C).

Every public name of these modules is re-exported here (lazily).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30). The names are these modules'
# own __all__ (read from their source on first use: ppaudit._lazy.attach_modules), in this order.
__getattr__, __dir__ = attach_modules(
    __name__,
    ("data", "release", "models", "memorization", "tables", "malek_tables", "synthetic_rr"),
)

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .data import *  # noqa: F403
    from .release import *  # noqa: F403
    from .models import *  # noqa: F403
    from .memorization import *  # noqa: F403
    from .tables import *  # noqa: F403
    from .malek_tables import *  # noqa: F403
    from .synthetic_rr import *  # noqa: F403
    from . import data, malek_tables, memorization, models, release, synthetic_rr, tables
