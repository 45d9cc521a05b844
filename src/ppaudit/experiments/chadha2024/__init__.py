"""Drivers of Chadha et al. 2024 ("Auditing private prediction"): one module per family of figures.

* :mod:`.synthetic` — the noisy argmax on a fixed synthetic histogram pair (Figs. 2 and 6).
* :mod:`.private_prediction` — the PATE / CaPC / PromptPATE audit stage: vote models, crafted
  canaries, per-query and transcript audits (§4–5).
* :mod:`.pate_capc_findings` — the paper's PATE / CaPC findings checked on the numbers, the AdvQ
  candidate selection, the stand-in teachers' regime.
* :mod:`.pate_capc_joint` — the joint audit of the Pois-NatQ queries of one training draw.
* :mod:`.repeated_query` — issue 13's repeated-query example through the stage's code.
* :mod:`.promptpate` — the PromptPATE findings (§5.3–5.4).
* :mod:`.private_knn` — the Private-kNN stage (§6, App. D.3), with its names
  (:mod:`.private_knn_names`), audits (:mod:`.private_knn_audit`) and findings
  (:mod:`.private_knn_findings`).

Every public name of these modules is re-exported here (lazily).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30). The names are these modules'
# own __all__ (read from their source on first use: ppaudit._lazy.attach_modules), in this order;
# private_knn re-exports the names of private_knn_names / _audit / _findings, which come after it
# so that a name resolves to the module that defines it.
__getattr__, __dir__ = attach_modules(
    __name__,
    (
        "synthetic", "private_prediction", "pate_capc_findings", "pate_capc_joint", "repeated_query",
        "promptpate", "private_knn", "private_knn_names", "private_knn_audit", "private_knn_findings",
    ),
)

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .synthetic import *  # noqa: F403
    from .private_prediction import *  # noqa: F403
    from .pate_capc_findings import *  # noqa: F403
    from .pate_capc_joint import *  # noqa: F403
    from .repeated_query import *  # noqa: F403
    from .promptpate import *  # noqa: F403
    from .private_knn import *  # noqa: F403
    from .private_knn_names import *  # noqa: F403
    from .private_knn_audit import *  # noqa: F403
    from .private_knn_findings import *  # noqa: F403
    from . import (
        pate_capc_findings, pate_capc_joint, private_knn, private_knn_audit, private_knn_findings, private_knn_names,
        private_prediction, promptpate, repeated_query, synthetic,
    )
