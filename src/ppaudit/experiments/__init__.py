"""Experiment drivers: one function per family of figures, called by the workflow scripts.

Split by paper (issue 37 §2), each driver next to its family:

* :mod:`ppaudit.experiments.chadha2024` — Chadha et al. 2024 (synthetic pair, PATE / CaPC,
  PromptPATE, Private-kNN, their findings);
* :mod:`ppaudit.experiments.wang2022` — Wang et al. 2022 (reconstruction attack, PhD detection on
  Adult, the answer-caching defence);
* :mod:`ppaudit.experiments.labeldp` — the observational label-DP paper and Malek et al. 2021;
* :mod:`ppaudit.experiments.blackbox` — the black-box benchmark against StatDP and DP-Sniper.

Across the papers: :mod:`ppaudit.experiments.findings_causes` (the ``cause`` of every findings row
of the three papers' findings tables) and :mod:`ppaudit.experiments.paper_comparison` (every
number the papers state beside ours).

The old paths of the modules documented before the split still import (as the moved modules
themselves): ``ppaudit.experiments.synthetic``, ``ppaudit.experiments.blackbox_benchmark`` and
``ppaudit.experiments.repeated_query_example``; ``ppaudit.experiments.wang2022`` is now the
package, which re-exports every public name the former module had.
"""

from ppaudit._lazy import alias_moved_modules

#: Old module path (documented in README.md, docs/ or config/README.md before issue 37's split)
#: → where the module is now, both relative to this package.
MOVED_MODULES = {
    "synthetic": "chadha2024.synthetic",
    "repeated_query_example": "chadha2024.repeated_query",
    "blackbox_benchmark": "blackbox.benchmark",
}

alias_moved_modules(__name__, MOVED_MODULES)
