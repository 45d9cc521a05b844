"""Helpers of the Snakemake workflow that deserve a test (the ``.smk`` files only call them).

* :mod:`ppaudit.workflow.registry` — ``workflow/figures.yaml``, the table of every figure and
  table target: parsing, validation, the files of each target and the ``report()`` metadata
  of each producing rule's outputs.
* :mod:`ppaudit.workflow.config_checks` — the config checks JSON Schema cannot express
  (cross-key checks, one function per stage) and the generic accessor behind ``get_config``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30); tests/unit/test_public_api.py
# checks this table against the modules' __all__.
_EXPORTS = {
    "registry": (
        "OutputSpec", "Registry", "Target", "load_registry", "parse_registry",
    ),
    "config_checks": (
        "apply_audit_defaults", "check_config", "config_value",
    ),
}

_, __getattr__, __dir__ = attach(__name__, _EXPORTS)
__all__ = [
    "OutputSpec", "Registry", "Target", "apply_audit_defaults", "check_config", "config_value",
    "load_registry", "parse_registry",
]

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .config_checks import apply_audit_defaults, check_config, config_value
    from .registry import OutputSpec, Registry, Target, load_registry, parse_registry
