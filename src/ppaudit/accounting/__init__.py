"""Theoretical privacy accounting: what a mechanism *claims*, to set beside an audit.

* :mod:`.gnmax` — data-independent and data-dependent RDP of the Gaussian noisy argmax
  (Papernot et al. 2018).
* :mod:`.confident_gnmax` — expected data-dependent RDP of Confident-GNMax (threshold check
  + Pr[answered] · GNMax; Papernot et al. 2018).
* :mod:`ppaudit.accounting.private_knn` — subsampled-Gaussian RDP of Private-kNN (dp-accounting).
* :mod:`.canonical_histograms` — the canonical neighbouring vote histograms (listed and counted).
* :mod:`.worst_case` — worst-case exact RDP of the Gaussian noisy argmax over all
  neighbouring histograms (Chadha et al. 2024, §7 future work) with a certified bound.
* :mod:`.conversion` — RDP → (ε, δ) (Balle et al. 2020, Thm 20; Mironov 2017).
* :mod:`.pld` — exact ε of a discrete mechanism from its two output pmfs, composed with
  dp-accounting's privacy-loss distribution (the tight reference beside Thm 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30). The names are these modules'
# own __all__ (read from their source on first use: ppaudit._lazy.attach_modules), in this order.
__getattr__, __dir__ = attach_modules(
    __name__,
    (
        "confident_gnmax", "conversion", "gnmax", "pld", "private_knn", "canonical_histograms", "worst_case",
    ),
)

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .confident_gnmax import *  # noqa: F403
    from .conversion import *  # noqa: F403
    from .gnmax import *  # noqa: F403
    from .pld import *  # noqa: F403
    from .private_knn import *  # noqa: F403
    from .canonical_histograms import *  # noqa: F403
    from .worst_case import *  # noqa: F403
    from . import canonical_histograms, confident_gnmax, conversion, gnmax, pld, private_knn, worst_case
