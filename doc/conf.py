# Authors: The skprivacy developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sphinx configuration of the skprivacy documentation.

Build (warnings are errors, gallery executed)::

    pip install -e ".[docs]"
    sphinx-build -W -b html doc doc/_build/html

Intersphinx (links to scikit-learn, NumPy and SciPy) needs the network to fetch
their inventories, and a failed fetch is an untyped Sphinx warning that ``-W``
turns into an error and ``suppress_warnings`` cannot silence. So the extension
is only loaded when the inventories are reachable: set ``SKPRIVACY_OFFLINE=1``
to skip the (2 s) probe, ``SKPRIVACY_OFFLINE=0`` to require intersphinx (the
build then fails loudly without network). Offline builds are identical except
that references to those projects render as plain text.
"""

import os
import re
import socket
import sys
import warnings

import skprivacy

# Local extensions: the protocol table generated from the method registry.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "sphinxext"))

project = "skprivacy"
author = "The skprivacy developers"
copyright = "The skprivacy developers"  # noqa: A001
release = skprivacy.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "protocol_table",
]

# -- intersphinx: online only (see the module docstring) ----------------------------
intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "scipy": ("https://docs.scipy.org/doc/scipy", None),
    "sklearn": ("https://scikit-learn.org/stable", None),
    "pandas": ("https://pandas.pydata.org/docs", None),
    "matplotlib": ("https://matplotlib.org/stable", None),
    "joblib": ("https://joblib.readthedocs.io/en/stable", None),
}
intersphinx_timeout = 10


def _online():
    flag = os.environ.get("SKPRIVACY_OFFLINE")
    if flag is not None and flag not in ("", "0"):
        return False
    if flag == "0":
        return True
    try:
        with socket.create_connection(("docs.scipy.org", 443), timeout=2):
            return True
    except OSError:
        return False


if _online():
    extensions.append("sphinx.ext.intersphinx")
else:
    print("skprivacy docs: no network, building without intersphinx links")

# -- general -------------------------------------------------------------------------
templates_path = ["_templates"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.md5"]
root_doc = "index"
default_role = "literal"
pygments_style = "sphinx"
nitpicky = False

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

html_theme = "pydata_sphinx_theme"
html_title = f"skprivacy {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
}
html_static_path = []
html_show_sourcelink = False

# -- sphinx-gallery ------------------------------------------------------------------
warnings.filterwarnings(
    "ignore",
    category=UserWarning,
    message="Matplotlib is currently using agg, which is a non-GUI backend",
)

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "doc_module": ("skprivacy",),
    "backreferences_dir": "generated/backreferences",
    "inspect_global_variables": False,
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "remove_config_comments": True,
    "download_all_examples": False,
    "show_memory": False,
    "min_reported_time": 1,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "capture_repr": ("_repr_html_", "__repr__"),
}


# -- docstring fix-ups ------------------------------------------------------------------
# numpydoc renders the type after "name : " as reStructuredText, where a word
# ending in "_" (e.g. "ndarray of shape (n_features_in_,)") is a hyperlink
# reference to a target that does not exist -- an error under -W. Such words in
# parameter/attribute type lines are quoted as literals before numpydoc runs.
_PARAM_LINE = re.compile(r"^(\s*[\w*][\w*, ]* : )(.*)$")
_TRAILING_UNDERSCORE = re.compile(r"(?<![`\w])([A-Za-z]\w*_)(?![`\w])")


def _quote_trailing_underscores(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        m = _PARAM_LINE.match(line)
        if m:
            lines[i] = m.group(1) + _TRAILING_UNDERSCORE.sub(r"``\1``", m.group(2))


def setup(app):
    # Before numpydoc (priority 500) parses the sections.
    app.connect("autodoc-process-docstring", _quote_trailing_underscores, priority=400)
