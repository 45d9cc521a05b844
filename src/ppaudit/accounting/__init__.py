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

from .confident_gnmax import (
    confident_gnmax_log_pr_answered,
    confident_gnmax_rdp,
    confident_gnmax_threshold_rdp,
)
from .conversion import rdp_to_dp
from .gnmax import gnmax_log_q, gnmax_rdp_data_dependent, gnmax_rdp_data_independent
from .pld import exact_epsilon, exact_privacy_loss_distribution
from .private_knn import (
    KNN_SENSITIVITY,
    knn_noise_multiplier,
    private_knn_epsilon,
    private_knn_rdp,
    subsampled_gaussian_rdp,
)
from .worst_case import (
    WorstCaseRDP,
    gnmax_rdp_worst_case,
    worst_case_epsilon,
    worst_case_epsilon_table,
)

__all__ = [
    "exact_epsilon",
    "exact_privacy_loss_distribution",
    "gnmax_rdp_data_independent",
    "gnmax_log_q",
    "gnmax_rdp_data_dependent",
    "rdp_to_dp",
    "confident_gnmax_log_pr_answered",
    "confident_gnmax_threshold_rdp",
    "confident_gnmax_rdp",
    "KNN_SENSITIVITY",
    "knn_noise_multiplier",
    "subsampled_gaussian_rdp",
    "private_knn_rdp",
    "private_knn_epsilon",
    "WorstCaseRDP",
    "gnmax_rdp_worst_case",
    "worst_case_epsilon",
    "worst_case_epsilon_table",
]
