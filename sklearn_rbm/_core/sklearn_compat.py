"""Every private scikit-learn name the package uses, in one place.

scikit-learn's parameter-constraint machinery (``Interval``, ``StrOptions``,
``validate_params``) and the ``_fit_context`` decorator that runs it are the
way every scikit-learn estimator validates its hyperparameters, but they live
in private modules. Importing them here, and nowhere else, means that a
scikit-learn release which moves them breaks this one module, with a message
that says which version to install, instead of every estimator at import time.
(imbalanced-learn's ``utils/_sklearn_compat.py`` does the same.)

The test suite's hooks into ``sklearn.utils.estimator_checks`` internals are
here too (:func:`estimator_check_domain`), for the same reason.
"""

import contextlib
import functools
import re

import sklearn

#: Oldest scikit-learn this package supports (``validate_data``, tags as
#: dataclasses, ``expected_failed_checks``).
MIN_SKLEARN_VERSION = (1, 6)


def _version_tuple(version):
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


SKLEARN_VERSION = _version_tuple(sklearn.__version__)
if SKLEARN_VERSION < MIN_SKLEARN_VERSION:  # pragma: no cover - install guard
    raise ImportError(
        f"sklearn_rbm needs scikit-learn >= "
        f"{'.'.join(map(str, MIN_SKLEARN_VERSION))}, found {sklearn.__version__}. "
        "Upgrade it: pip install --upgrade scikit-learn"
    )

try:
    from sklearn.utils._param_validation import (
        HasMethods,
        Interval,
        InvalidParameterError,
        StrOptions,
        validate_params,
    )
except ImportError as error:  # pragma: no cover - depends on the release
    raise ImportError(
        "sklearn_rbm uses scikit-learn's parameter validation "
        "(sklearn.utils._param_validation), which scikit-learn "
        f"{sklearn.__version__} no longer provides. Install a scikit-learn "
        "release this version of sklearn_rbm was tested with (see "
        "pyproject.toml), or upgrade sklearn_rbm."
    ) from error

try:
    from sklearn.base import _fit_context
except ImportError:  # pragma: no cover - depends on the release

    def _fit_context(*, prefer_skip_nested_validation):
        """Stand-in for scikit-learn's ``_fit_context``: validate the
        hyperparameters, then fit (without the nested-validation switch)."""

        def decorator(fit_method):
            @functools.wraps(fit_method)
            def wrapper(estimator, *args, **kwargs):
                estimator._validate_params()
                return fit_method(estimator, *args, **kwargs)

            return wrapper

        return decorator


@contextlib.contextmanager
def estimator_check_domain(map_X=None, map_y=None):
    """Run scikit-learn's estimator checks with their random data mapped into
    an estimator's domain (tests only).

    The checks pass their data through ``_enforce_estimator_tags_X`` and
    ``_enforce_estimator_tags_y``, which know the tags for positive or
    categorical data but none for "binary only". ``map_X(estimator, X,
    X_test=None)`` and ``map_y(estimator, y)`` replace them while the context
    is active. If a scikit-learn release drops these hooks, the checks run on
    their raw data and the expected failures in ``tests/test_common.py`` say
    which ones then fail.
    """
    from sklearn.utils import estimator_checks

    replaced = {}
    for name, new in (
        ("_enforce_estimator_tags_X", map_X),
        ("_enforce_estimator_tags_y", map_y),
    ):
        if new is not None and hasattr(estimator_checks, name):
            replaced[name] = getattr(estimator_checks, name)
            setattr(estimator_checks, name, new)
    try:
        yield
    finally:
        for name, original in replaced.items():
            setattr(estimator_checks, name, original)


__all__ = [
    "MIN_SKLEARN_VERSION",
    "SKLEARN_VERSION",
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "_fit_context",
    "estimator_check_domain",
    "validate_params",
]
