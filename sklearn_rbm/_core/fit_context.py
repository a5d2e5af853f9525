"""All or nothing: a ``fit`` (or ``partial_fit``) that raises leaves the
estimator as it was before the call.

Every estimator's training methods are decorated with :func:`fit_context`,
scikit-learn's ``_fit_context`` (parameter validation) plus this guarantee,
so it holds by construction rather than estimator by estimator: an error in
the middle of a fit (bad data found late, an allocation refused, a kernel
that failed) can no longer leave ``n_features_in_`` of the new data beside
the parameters of the old fit, or a half-initialised model.

One error keeps the new state on purpose: :class:`DivergenceError`, raised
after the training loop restored the parameters of its last good epoch (the
message says so). Even then, a state that is not finite is rolled back.
"""

import copy
import functools

import numpy as np

from .divergence import DivergenceError
from .sklearn_compat import _fit_context


def _fitted_state(estimator):
    """A deep copy of everything a fit may change: the attributes that are
    not hyperparameters."""
    parameters = estimator.get_params(deep=False)
    return copy.deepcopy(
        {
            name: value
            for name, value in vars(estimator).items()
            if name not in parameters
        }
    )


def _restore(estimator, state):
    parameters = estimator.get_params(deep=False)
    for name in [name for name in vars(estimator) if name not in parameters]:
        delattr(estimator, name)
    vars(estimator).update(state)


def _finite(estimator):
    """Whether every floating array the estimator holds is finite."""
    return all(
        np.all(np.isfinite(value))
        for value in vars(estimator).values()
        if isinstance(value, np.ndarray) and value.dtype.kind == "f"
    )


def fit_context(*, prefer_skip_nested_validation):
    """Decorator of ``fit`` and ``partial_fit``: validate the hyperparameters
    (scikit-learn's ``_fit_context``) and undo the call's changes if it
    raises (see the module docstring)."""

    def decorator(fit_method):
        validated = _fit_context(
            prefer_skip_nested_validation=prefer_skip_nested_validation
        )(fit_method)

        @functools.wraps(fit_method)
        def wrapper(estimator, *args, **kwargs):
            before = _fitted_state(estimator)
            try:
                return validated(estimator, *args, **kwargs)
            except DivergenceError:
                if not _finite(estimator):
                    _restore(estimator, before)
                raise
            except BaseException:
                _restore(estimator, before)
                raise

        return wrapper

    return decorator
