"""Sphinx configuration of pdeval's documentation (``make docs`` builds it into docs/_build/html)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the working tree's pdeval, not an installed copy
sys.path.insert(0, str(HERE / "_ext"))

import pdeval  # noqa: E402
from pdeval_api import sync_notebooks, write_api_page  # noqa: E402

write_api_page(HERE)  # api/index.rst from pdeval.__all__, before autosummary reads the sources
sync_notebooks(HERE)  # notebooks/*.ipynb with their committed outputs, never executed here

project = "pdeval"
author = "the pdeval authors"
copyright = "the pdeval authors"
release = version = pdeval.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",  # MyST markdown pages and the executed notebooks (brings myst_parser)
]

root_doc = "index"
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "**.ipynb_checkpoints",
]
templates_path = ["_templates"]

# notebooks are shown with the outputs they were committed with: never executed here
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# the notebooks step from a title to ### sections; that is their layout, not an error
suppress_warnings = ["myst.header"]

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": False}
autodoc_typehints = "signature"  # the types in the signature; numpydoc sections give the rest
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "furo"
html_title = f"pdeval {release}"
html_static_path: list[str] = []
