"""Theoretical privacy accounting: what a mechanism *claims*, to set beside an audit.

* :mod:`.gnmax` — data-independent and data-dependent RDP of the Gaussian noisy argmax
  (Papernot et al. 2018).
* :mod:`.private_knn` — subsampled-Gaussian RDP of Private-kNN (dp-accounting).
* :mod:`.conversion` — RDP → (ε, δ) (Balle et al. 2020, Thm 20; Mironov 2017).
"""

from .conversion import rdp_to_dp
from .gnmax import gnmax_log_q, gnmax_rdp_data_dependent, gnmax_rdp_data_independent
from .private_knn import (
    KNN_SENSITIVITY,
    knn_noise_multiplier,
    private_knn_epsilon,
    private_knn_rdp,
    subsampled_gaussian_rdp,
)

__all__ = [
    "gnmax_rdp_data_independent",
    "gnmax_log_q",
    "gnmax_rdp_data_dependent",
    "rdp_to_dp",
    "KNN_SENSITIVITY",
    "knn_noise_multiplier",
    "subsampled_gaussian_rdp",
    "private_knn_rdp",
    "private_knn_epsilon",
]
