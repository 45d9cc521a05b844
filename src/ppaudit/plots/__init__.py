"""Plotting: one function per figure family. Every function returns the figure and
takes the tidy table it plots, so the CSV written beside a figure holds every number."""
