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

# No network at build time and no local copies of the numpy / scikit-learn
# inventories, so intersphinx has nothing to load: references to those projects
# stay plain text. The extension stays enabled so that a mapping can be added
# where a build has network access.
intersphinx_mapping = {}

# Report every unresolved cross-reference (with -W, a broken link fails the
# build). The only exceptions are objects of other projects, which cannot be
# resolved offline (see intersphinx_mapping above): numpy.ndarray from the type
# hints of the result containers, the scikit-learn classes named in See Also
# sections and in the user guide, and joblib's parallel_config named where an
# n_jobs parameter is documented.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|scipy|sklearn|joblib)(\..+)?"),
]

# SKLEARN_RBM_EXAMPLE_QUICK=1 shrinks the examples (make html-quick); the full
# size is the default. Sphinx-gallery re-runs only the examples whose source
# changed, so the outputs of a quick build would survive into a full one (and
# the reverse): remember the size of the last run and re-run every example
# when it changes.
_QUICK = os.environ.get("SKLEARN_RBM_EXAMPLE_QUICK") == "1"
_EXAMPLE_SIZE = "quick" if _QUICK else "full"
_GALLERY_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "auto_examples")
_SIZE_STAMP = os.path.join(_GALLERY_DIR, ".example_size")


def _last_example_size():
    try:
        with open(_SIZE_STAMP) as stamp:
            return stamp.read().strip()
    except OSError:
        # No stamp: a fresh gallery (nothing to re-run) or one of unknown size.
        return None if os.path.isdir(_GALLERY_DIR) else _EXAMPLE_SIZE


sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "within_subsection_order": "FileNameSortKey",
    "remove_config_comments": True,
    "run_stale_examples": _last_example_size() != _EXAMPLE_SIZE,
}


def _write_example_size(app, exception):
    if exception is None and app.config.sphinx_gallery_conf["plot_gallery"]:
        os.makedirs(_GALLERY_DIR, exist_ok=True)
        with open(_SIZE_STAMP, "w") as stamp:
            stamp.write(_EXAMPLE_SIZE + "\n")


def setup(app):
    app.connect("build-finished", _write_example_size)
