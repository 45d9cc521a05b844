"""Driver of the black-box benchmark (target ``blackbox_benchmark``): the mechanisms of StatDP's and
DP-Sniper's evaluations through :func:`ppaudit.blackbox.search_mechanism`, beside the peers'
published values (:mod:`.benchmark`).

Every public name of the module is re-exported here (lazily).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30). The names are the module's
# own __all__ (read from its source on first use: ppaudit._lazy.attach_modules).
__getattr__, __dir__ = attach_modules(__name__, ("benchmark",))

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .benchmark import *  # noqa: F403
    from . import benchmark
