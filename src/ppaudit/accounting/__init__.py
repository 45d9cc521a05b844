"""Theoretical privacy accounting: what a mechanism *claims*, to set beside an audit.

* :mod:`.gnmax` — data-independent and data-dependent RDP of the Gaussian noisy argmax
  (Papernot et al. 2018).
* :mod:`.confident_gnmax` — expected data-dependent RDP of Confident-GNMax (threshold check
  + Pr[answered] · GNMax; Papernot et al. 2018).
* :mod:`.private_knn` — subsampled-Gaussian RDP of Private-kNN (dp-accounting).
* :mod:`.worst_case` — worst-case exact RDP of the Gaussian noisy argmax over all
  neighbouring histograms (Chadha et al. 2024, §7 future work) with a certified bound.
* :mod:`.conversion` — RDP → (ε, δ) (Balle et al. 2020, Thm 20; Mironov 2017).
* :mod:`.pld` — exact ε of a discrete mechanism from its two output pmfs, composed with
  dp-accounting's privacy-loss distribution (the tight reference beside Thm 1).
"""

from .confident_gnmax import *  # noqa: F403 (its __all__ is the public API re-exported here)
from .conversion import *  # noqa: F403 (its __all__ is the public API re-exported here)
from .gnmax import *  # noqa: F403 (its __all__ is the public API re-exported here)
from .pld import *  # noqa: F403 (its __all__ is the public API re-exported here)
from .private_knn import *  # noqa: F403 (its __all__ is the public API re-exported here)
from .worst_case import *  # noqa: F403 (its __all__ is the public API re-exported here)
from . import confident_gnmax, conversion, gnmax, pld, private_knn, worst_case

__all__ = [*confident_gnmax.__all__, *conversion.__all__, *gnmax.__all__, *pld.__all__, *private_knn.__all__, *worst_case.__all__]
