"""Theoretical privacy accounting: what a mechanism *claims*, to set beside an audit.

* :mod:`.gnmax` — data-independent and data-dependent RDP of the Gaussian noisy argmax
  (Papernot et al. 2018).
* :mod:`.confident_gnmax` — expected data-dependent RDP of Confident-GNMax (threshold check
  + Pr[answered] · GNMax; Papernot et al. 2018).
* :mod:`ppaudit.accounting.private_knn` — subsampled-Gaussian RDP of Private-kNN (dp-accounting).
* :mod:`.worst_case` — worst-case exact RDP of the Gaussian noisy argmax over all
  neighbouring histograms (Chadha et al. 2024, §7 future work) with a certified bound.
* :mod:`.conversion` — RDP → (ε, δ) (Balle et al. 2020, Thm 20; Mironov 2017).
* :mod:`.pld` — exact ε of a discrete mechanism from its two output pmfs, composed with
  dp-accounting's privacy-loss distribution (the tight reference beside Thm 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30); tests/unit/test_public_api.py
# checks this table against the modules' __all__.
_EXPORTS = {
    "confident_gnmax": (
        "confident_gnmax_log_pr_answered", "confident_gnmax_threshold_rdp", "confident_gnmax_rdp",
    ),
    "conversion": (
        "rdp_to_dp",
    ),
    "gnmax": (
        "gnmax_rdp_data_independent", "gnmax_log_q", "gnmax_rdp_data_dependent",
    ),
    "pld": (
        "exact_epsilon", "exact_privacy_loss_distribution", "composed_exact_epsilon",
    ),
    "private_knn": (
        "KNN_SENSITIVITY", "knn_noise_multiplier", "subsampled_gaussian_rdp", "private_knn_rdp",
        "private_knn_epsilon",
    ),
    "worst_case": (
        "WorstCaseRDP", "canonical_pairs", "count_canonical_pairs", "gnmax_rdp_worst_case",
        "worst_case_epsilon", "worst_case_epsilon_table",
    ),
}

__all__, __getattr__, __dir__ = attach(__name__, _EXPORTS)

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .confident_gnmax import *  # noqa: F403
    from .conversion import *  # noqa: F403
    from .gnmax import *  # noqa: F403
    from .pld import *  # noqa: F403
    from .private_knn import *  # noqa: F403
    from .worst_case import *  # noqa: F403
    from . import confident_gnmax, conversion, gnmax, pld, private_knn, worst_case
