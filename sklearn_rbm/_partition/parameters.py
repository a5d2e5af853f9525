"""The parameters the public likelihood functions share, written once: their
constraints for ``validate_params`` and their descriptions for the
docstrings (as imbalanced-learn writes its shared docstring fragments once).

A docstring names a description by a line ``%(name)s`` of its own, indented
as the description should be; :data:`shared_docstring` fills it in
(:func:`~sklearn_rbm._core.docstrings.fill_doc`).
"""

import numbers

from .._core.docstrings import fill_doc
from .._core.sklearn_compat import Interval, StrOptions

#: What a temperature schedule may be (see :func:`~.annealing.ais_betas`), for
#: ``validate_params`` and ``_parameter_constraints``.
SCHEDULE_CONSTRAINT = [
    Interval(numbers.Integral, 2, None, closed="left"),
    StrOptions({"linear", "three-segment"}),
    "array-like",
]

#: The parameters of a binary RBM, ``(W, b, c)``.
RBM_CONSTRAINTS = {
    "components": ["array-like"],
    "intercept_visible": ["array-like"],
    "intercept_hidden": ["array-like"],
}

#: The standard deviations of Gaussian visible units.
SIGMA_CONSTRAINTS = {
    "sigma": [Interval(numbers.Real, 0, None, closed="neither"), "array-like"],
}

#: The settings of every annealing run: its temperatures and its seed.
ANNEALING_CONSTRAINTS = {
    "betas": [*SCHEDULE_CONSTRAINT, None],
    "random_state": ["random_state"],
}

#: The base model of AIS for Gaussian visible units.
GAUSSIAN_BASE_CONSTRAINTS = {
    "base_mean": ["array-like", None],
    "base_sigma": ["array-like", None],
}


def chains(fewest):
    """The constraint of a number of chains: an int, at least ``fewest``."""
    return [Interval(numbers.Integral, fewest, None, closed="left")]


#: The chains of the bracket: forward AIS needs two for its band, RAISE two
#: per row for its standard error.
BOUNDS_CHAINS = {"n_chains": chains(2), "n_reverse_chains": chains(2)}

#: The descriptions, by name.
DESCRIPTIONS = {
    "rbm": """\
components : array-like of shape (n_hidden, n_visible)
    Weight matrix ``W``.
intercept_visible : array-like of shape (n_visible,)
    Visible biases ``b``.
intercept_hidden : array-like of shape (n_hidden,)
    Hidden biases ``c``.""",
    "sigma": """\
sigma : float or array-like of shape (n_visible,)
    Standard deviations of the visible units, positive.""",
    "schedule": """\
betas : int, {'linear', 'three-segment'}, array-like or None, default=None
    Temperature schedule, see :func:`ais_betas`; ``None`` means 1,000
    evenly spaced temperatures.""",
    "binary_rows": """\
X : {array-like, sparse matrix} of shape (n_samples, n_visible)
    Binary rows to score.""",
    "real_rows": """\
X : {array-like, sparse matrix} of shape (n_samples, n_visible)
    Real-valued rows to score.""",
    "seed": """\
random_state : int, RandomState instance or None, default=None
    Seed of the chains.""",
}

#: Decorator: fills the ``%(name)s`` lines of a docstring from
#: :data:`DESCRIPTIONS`.
shared_docstring = fill_doc(**DESCRIPTIONS)
