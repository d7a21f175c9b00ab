"""Sphinx configuration of the exactdp documentation (``sphinx-build -W -b html docs out``)."""

from __future__ import annotations

import re

import exactdp

project = "exactdp"
author = "the exactdp developers"
copyright = "the exactdp developers"  # noqa: A001 - Sphinx's name
release = exactdp.__version__  # the one version, from the installed package metadata
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    # MathJax 3 served from the built site (_static/mathjax), shipped by a pip package:
    # the formulas render offline, with no request to a CDN
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinxarg.ext",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext"}
mathjax_path = "mathjax/tex-chtml.js"  # relative to _static: the local copy, never a CDN
root_doc = "index"
exclude_patterns = ["_build"]
html_theme = "furo"
html_title = f"exactdp {release}"
pygments_style = "sphinx"
smartquotes = False  # "--eps" stays two hyphens

# numpydoc: the docstrings are numpydoc; class members are listed by autodoc, not twice
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True}

# myst: allocations/README.md is included as it is (one source for the format)
myst_heading_anchors = 3

# doctest: every >>> example of the pages and of the documented docstrings runs
doctest_global_setup = "from fractions import Fraction"


# Docstrings are plain numpydoc text in which ``|x|`` means an absolute value, never a
# reST substitution: escape such bars (outside literals, roles and tables) so that a
# docstring written in that notation cannot break the ``-W`` build.
_SPAN = re.compile(r"(``.*?``|`[^`]*`)")


def _escape_bars(line: str) -> str:
    stripped = line.strip()
    if stripped == "|" or stripped.startswith(("| ", "+-", "+=")):  # a line block or a grid table
        return line
    parts = _SPAN.split(line)
    return "".join(p if i % 2 else re.sub(r"(?<!\\)\|", r"\\|", p) for i, p in enumerate(parts))


def _process_docstring(app, what, name, obj, options, lines):
    lines[:] = [_escape_bars(ln) for ln in lines]


def setup(app):
    app.connect("autodoc-process-docstring", _process_docstring)
