"""Helpers of the Snakemake workflow that deserve a test (the ``.smk`` files only call them).

* :mod:`ppaudit.workflow.registry` — ``workflow/figures.yaml``, the table of every figure and
  table target: parsing, validation, the files of each target and the ``report()`` metadata
  of each producing rule's outputs.
* :mod:`ppaudit.workflow.config_checks` — the config checks JSON Schema cannot express
  (cross-key checks, one function per stage) and the generic accessor behind ``get_config``.
"""

from .config_checks import apply_audit_defaults, check_config, config_value
from .registry import OutputSpec, Registry, Target, load_registry, parse_registry

__all__ = [
    "OutputSpec",
    "Registry",
    "Target",
    "apply_audit_defaults",
    "check_config",
    "config_value",
    "load_registry",
    "parse_registry",
]
