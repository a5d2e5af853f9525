"""How a fit knows it diverged: by what the step size did to the model, not by
how large its parameters are.

For any states ``s``, ``Z >= sum_s p~(s) >= max_s p~(s)``, so the mean
log-likelihood of rows ``v_1 .. v_n`` is at most their *ceiling*
``mean_n log p~(v_n) - max_n log p~(v_n)``, computable without ``log Z``. The
base-rate model (independent units with the data's means) is where every fit
starts, and its log-likelihood is exact. A model whose ceiling lies more than
one nat per unit below the base-rate model's log-likelihood is certainly
worse than independent units by that much: no healthy fit gets there, and a
step size that is too large gets there in an epoch (measured on bars &
stripes, digits and MNIST with every DCP solver: healthy fits keep their
ceiling above the base rate; learning rates of 50 or more, or momentum 0.999
at rate 5, put it hundreds to millions of nats below, with exact
log-likelihoods 2 to 10^5 times worse than independent pixels).
"""

import inspect

import numpy as np

from .._numerics.blas import kernel_dot

#: How far, in nats per unit, the ceiling may fall below the base-rate model.
MARGIN_PER_UNIT = 1.0
#: Rows of the training data the check looks at, once per epoch: enough for a
#: collapse of hundreds of nats to show, few enough to cost about 1% of a
#: PCD-1 epoch on the 5,000-image MNIST subset (1,000 rows cost 4%).
N_CHECKED_ROWS = 250


def base_rate_log_likelihood(X, mean):
    """Exact mean log-likelihood of binary rows ``X`` under independent units
    with probabilities ``mean`` (clipped away from 0 and 1)."""
    p = np.clip(np.asarray(mean, dtype=np.float64), 1e-3, 1.0 - 1e-3)
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    return float(np.mean(kernel_dot(X, np.log(p)) + kernel_dot(1.0 - X, np.log1p(-p))))


def softplus_row_sums(pre):
    """``log(1 + exp(pre)).sum(axis=1)`` (float64) in four vectorised passes,
    for the checks: about six times faster than ``np.logaddexp(0, pre)``
    (0.08 against 0.50 ms for 178 x 128), which takes a scalar path per
    element, and within a few ulps of it, not bit for bit."""
    pre = np.asarray(pre, dtype=np.float64)
    out = np.abs(pre)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.log1p(out, out=out)
    out += np.maximum(pre, 0.0)
    return out.sum(axis=1)


def likelihood_ceiling(log_unnormalised):
    """``mean - max`` of the rows' unnormalised log-probabilities: an upper
    bound on their mean log-likelihood (``Z >= max p~``)."""
    return float(np.mean(log_unnormalised) - np.max(log_unnormalised))


def diagnose(
    ceiling, baseline, n_units, *parameters,
    reference="independent units with the data's means",
):  # fmt: skip
    """What went wrong, as the middle of a sentence, or None.

    ``ceiling`` is an upper bound on the model's mean log-likelihood of the
    checked rows (:func:`likelihood_ceiling`, or a conditional model's
    per-row bound), ``baseline`` the mean log-likelihood of the ``reference``
    model on them (by default the base-rate model), ``n_units`` the number of
    units modelled, ``parameters`` the model's arrays.
    """
    finite = np.isfinite(ceiling) and all(np.all(np.isfinite(p)) for p in parameters)
    if not finite:
        return "the parameters became non-finite"
    if ceiling < baseline - MARGIN_PER_UNIT * n_units:
        return (
            f"the training log-likelihood fell to at most {ceiling:.4g} nats per "
            f"sample, far below the {baseline:.4g} of {reference}"
        )
    return None


class DivergenceError(FloatingPointError):
    """A fit diverged and stopped at its last good state.

    Raised by the training loops after they restored the parameters of the
    last good epoch (or unit): the estimator is left fitted with that state,
    finite and usable, as the message says. Every other error of a fit leaves
    the estimator as it was before the call (:mod:`sklearn_rbm._core.fit_context`).
    """

    #: The estimator keeps the last good state (read by ``fit_context``).
    kept_state = True


def blamed_settings(estimator, always=("learning_rate",), if_changed=()):
    """The step-size settings a diverged fit names: ``always`` ones, and the
    ones in ``if_changed`` the user set away from their defaults (a weight
    decay of 1e300 is as much to blame as the learning rate).

    Returns the names and their description, e.g. ``(['learning_rate',
    'weight_decay'], 'learning_rate=0.1 and weight_decay=1e+300')``.
    """
    defaults = inspect.signature(type(estimator).__init__).parameters
    names = list(always) + [
        name
        for name in if_changed
        if getattr(estimator, name) != defaults[name].default
    ]
    parts = [f"{name}={getattr(estimator, name):g}" for name in names]
    described = (
        parts[-1] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    )
    return names, described
