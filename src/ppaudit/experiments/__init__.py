"""Experiment drivers: one function per family of figures, called by the workflow scripts."""
