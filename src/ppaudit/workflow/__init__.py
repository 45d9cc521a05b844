"""Helpers of the Snakemake workflow that deserve a test (the ``.smk`` files only call them).

* :mod:`ppaudit.workflow.registry` — ``workflow/figures.yaml``, the table of every figure and
  table target: parsing, validation, the files of each target and the ``report()`` metadata
  of each producing rule's outputs.
"""

from .registry import OutputSpec, Registry, Target, load_registry, parse_registry

__all__ = ["OutputSpec", "Registry", "Target", "load_registry", "parse_registry"]
