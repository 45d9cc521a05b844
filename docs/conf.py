"""Sphinx configuration of ppaudit's documentation site (``make docs``; issue #37 §1).

Sphinx with autodoc + napoleon (Google-style docstrings, as the library writes them), the furo
theme, MyST for the Markdown guides (the README's syntax, so text moves between the two unchanged)
and sphinx-argparse for the command line. ``_ext/ppaudit_docs.py`` generates the API reference
and the figure-registry table. Built with ``-W --keep-going``: any warning fails the build.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE / "_ext"))

project = "ppaudit"
author = "the ppaudit authors"
copyright = "the ppaudit authors, Apache-2.0"
from ppaudit import __version__ as release  # noqa: E402

version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
    "sphinxarg.ext",
    "myst_parser",
    "ppaudit_docs",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
html_theme = "furo"
html_title = "ppaudit"

myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"exclude-members": "__init__, __new__"}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_attr_annotations = True

# Pages include parts of README.md that start below its first heading level.
suppress_warnings = ["myst.header"]
