"""ppaudit — auditing private prediction and label differential privacy.

Modules (import what you need; nothing heavy is imported here):

* :mod:`ppaudit.noisy_argmax` — exact output distribution of Gaussian noisy argmax.
* :mod:`ppaudit.divergence` — Rényi divergence, 2-cut, k-cut, exact RDP of noisy argmax.
* :mod:`ppaudit.accounting` — data-independent / data-dependent GNMax RDP, RDP → DP.
* :mod:`ppaudit.intervals` — Clopper–Pearson and simultaneous multinomial intervals.
* :mod:`ppaudit.audit` — RDP and (ε, δ) audits from Monte Carlo counts, composition.
* :mod:`ppaudit.montecarlo` — seeded, chunked noisy-argmax sampling; exact-count mode.
"""

from . import accounting, audit, divergence, intervals, montecarlo, noisy_argmax
from .accounting import gnmax_rdp_data_dependent, gnmax_rdp_data_independent, rdp_to_dp
from .audit import compose_rdp, k_cut_lower_bound, two_cut_lower_bound
from .divergence import exact_rdp, renyi_divergence
from .noisy_argmax import class_probabilities, log_class_probabilities

__version__ = "0.1.0"

__all__ = [
    "accounting",
    "audit",
    "divergence",
    "intervals",
    "montecarlo",
    "noisy_argmax",
    "class_probabilities",
    "log_class_probabilities",
    "renyi_divergence",
    "exact_rdp",
    "gnmax_rdp_data_independent",
    "gnmax_rdp_data_dependent",
    "rdp_to_dp",
    "two_cut_lower_bound",
    "k_cut_lower_bound",
    "compose_rdp",
]
