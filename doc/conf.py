"""Sphinx configuration of the sklearn_rbm documentation."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

import sklearn_rbm  # noqa: E402

project = "sklearn_rbm"
author = "The sklearn_rbm developers"
copyright = "2026, The sklearn_rbm developers"
version = release = sklearn_rbm.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

autosummary_generate = True
autodoc_default_options = {"members": True}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
templates_path = ["_templates"]
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "**.zip"]
html_theme = "pydata_sphinx_theme"
html_static_path = ["_static"]
html_title = "sklearn_rbm"

intersphinx_mapping = {}  # no network at build time: plain references only

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "within_subsection_order": "FileNameSortKey",
    "remove_config_comments": True,
}
