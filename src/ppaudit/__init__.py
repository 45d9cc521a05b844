"""ppaudit — auditing private prediction and label differential privacy.

Modules (import what you need; nothing heavy is imported here):

* :mod:`ppaudit.noisy_argmax` — exact output distribution of Gaussian noisy argmax.
* :mod:`ppaudit.divergence` — Rényi divergence, 2-cut, k-cut, exact RDP of noisy argmax.
* :mod:`ppaudit.accounting` — data-independent / data-dependent GNMax RDP, RDP → DP.
* :mod:`ppaudit.intervals` — Clopper–Pearson and simultaneous multinomial intervals.
* :mod:`ppaudit.audit` — RDP and (ε, δ) audits from Monte Carlo counts, composition.
* :mod:`ppaudit.montecarlo` — seeded, chunked noisy-argmax sampling; exact-count mode.

The names below (``ppaudit.class_probabilities``, ``ppaudit.accounting``, …) are loaded on
first access (PEP 562 module ``__getattr__``): ``import ppaudit`` itself imports neither
scipy, statsmodels, pandas nor dp_accounting, so a workflow script that only needs
``ppaudit.io`` or ``ppaudit.rng`` does not pay ≈ 1.5 s of start-up for the accountants.
``from ppaudit import rdp_to_dp`` and ``from ppaudit import *`` work as before.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Sub-modules re-exported as attributes of the package (loaded on first access).
_SUBMODULES = ("accounting", "audit", "divergence", "intervals", "montecarlo", "noisy_argmax")

# Public function -> the sub-module that defines (or re-exports) it.
_FUNCTIONS = {
    "class_probabilities": "noisy_argmax",
    "log_class_probabilities": "noisy_argmax",
    "renyi_divergence": "divergence",
    "exact_rdp": "divergence",
    "gnmax_rdp_data_independent": "accounting",
    "gnmax_rdp_data_dependent": "accounting",
    "rdp_to_dp": "accounting",
    "two_cut_lower_bound": "audit",
    "k_cut_lower_bound": "audit",
    "compose_rdp": "audit",
}

__all__ = [
    "accounting",
    "audit",
    "class_probabilities",
    "compose_rdp",
    "divergence",
    "exact_rdp",
    "gnmax_rdp_data_dependent",
    "gnmax_rdp_data_independent",
    "intervals",
    "k_cut_lower_bound",
    "log_class_probabilities",
    "montecarlo",
    "noisy_argmax",
    "rdp_to_dp",
    "renyi_divergence",
    "two_cut_lower_bound",
]

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from . import accounting, audit, divergence, intervals, montecarlo, noisy_argmax
    from .accounting import (
        gnmax_rdp_data_dependent,
        gnmax_rdp_data_independent,
        rdp_to_dp,
    )
    from .audit import compose_rdp, k_cut_lower_bound, two_cut_lower_bound
    from .divergence import exact_rdp, renyi_divergence
    from .noisy_argmax import class_probabilities, log_class_probabilities


def __getattr__(name: str) -> Any:
    """Load a public sub-module or function of the package on first access (PEP 562).

    Args:
        name: the attribute looked up on ``ppaudit``.

    Returns:
        The sub-module ``ppaudit.<name>`` or the function re-exported under ``name``; it is
        cached in the package namespace, so later look-ups do not come here.

    Raises:
        AttributeError: if ``name`` is not a public name of the package.
    """
    if name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    elif name in _FUNCTIONS:
        value = getattr(importlib.import_module(f".{_FUNCTIONS[name]}", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
