"""Queries of a fitted conditional RBM (Ping & Ihler, AISTATS 2017): the
beliefs of the outputs given each input, each row's ``log Z(x)``, and the
checks of binary targets and held-out data.

For an input ``x`` the model is an RBM with per-row biases ``B1`` (outputs)
and ``B2`` (hidden units), so every query is a batch of RBMs sharing ``W``;
these functions take checked float64 arrays and call the kernels directly
(the estimator validates its input once, at its public methods).
"""

from typing import NamedTuple

import numpy as np
from scipy.special import expit

from ._kernels import bp as bp_kernels
from ._utils import validate_held_out
from .inference import (
    _bethe_log_partition,
    _check_enumerable,
    _exact_log_partition,
    _exact_marginals,
)
from .likelihood import log_partition_ais

_BP_PRODUCTS = {
    "bp": bp_kernels.SUM_PRODUCT,
    "mixed": bp_kernels.MIXED_PRODUCT,
    "max": bp_kernels.MAX_PRODUCT,
}
#: The inferences ``predict`` can use.
INFERENCES = ("mf", *_BP_PRODUCTS, "exact")


class Beliefs(NamedTuple):
    """Beliefs of the outputs and hidden units of each row, and whether the
    inference converged there (always, for the exact and no-hidden cases)."""

    visible: np.ndarray
    hidden: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray


def beliefs(W, B1, B2, method, max_iter, tol, damping):
    """Beliefs by ``method`` in ``INFERENCES`` of each row's RBM."""
    n_samples = len(B1)
    if W.shape[0] == 0 or method == "exact":
        if W.shape[0] == 0:  # logistic regression: the outputs are independent
            visible, hidden = expit(B1), B2
        else:
            _check_enumerable(W)
            visible, hidden, _, _ = _exact_marginals(W, B1, B2)
        everywhere = np.ones(n_samples, bool)
        return Beliefs(visible, hidden, np.zeros(n_samples, int), everywhere)
    settings = (max_iter, float(tol), float(damping), False)
    if method == "mf":
        outputs = bp_kernels.mean_field(W, B1, B2, *settings)
    else:
        outputs = bp_kernels.belief_propagation(
            W, B1, B2, _BP_PRODUCTS[method], *settings
        )
    visible, hidden, _, n_iter, converged = outputs
    return Beliefs(visible, hidden, n_iter, converged)


def log_partition_rows(W, B1, B2, method, *, ais_n_chains, ais_betas, ais_seed):
    """``log Z(x)`` of each row's RBM by ``method`` ('exact', 'bethe', 'ais')."""
    if W.shape[0] == 0:
        return np.logaddexp(0.0, B1).sum(axis=1)
    if method == "exact":
        return _exact_log_partition(W, B1, B2)
    if method == "bethe":
        return _bethe_log_partition(W, B1, B2, 100, 1e-6, 0.0)
    # AIS from the row's own coupling-free model, with one stream fixed at fit
    # time so that a row's score does not depend on the other rows.
    return np.array(
        [
            log_partition_ais(
                W,
                b,
                c,
                base_rate=b,
                n_chains=ais_n_chains,
                betas=ais_betas,
                random_state=ais_seed,
            ).log_z
            for b, c in zip(B1, B2, strict=True)
        ]
    )


def check_targets_for(X, Y, n_outputs, names=("X", "Y")):
    """``Y`` as a 2-D float array of binary targets, one row per row of ``X``;
    ``names`` are what the error messages call the two arrays."""
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y.reshape(-1, 1) if Y.ndim == 1 else Y
    if Y.shape != (X.shape[0], n_outputs):
        raise ValueError(
            f"{names[1]} must have shape ({X.shape[0]}, {n_outputs}) for this "
            f"{names[0]} and model; got {Y.shape}."
        )
    check_binary_targets(Y, names[1])
    return np.ascontiguousarray(Y)


def check_binary_targets(Y, name="Y"):
    """Refuse targets other than 0 and 1, showing some of the bad values."""
    bad = (Y != 0) & (Y != 1)
    if bad.any():
        values = np.unique(Y[bad])[:5]
        raise ValueError(
            f"ConditionalRBMRegressor needs binary outputs {name} (0 or 1); "
            f"found the values {values.tolist()}. Binarise {name} first, e.g. "
            f"{name} > 0.5."
        )


def check_held_out(estimator, X_val, Y_val, n_outputs):
    """Held-out ``(X_val, Y_val)`` given to ``fit``, checked like the training
    data (float64), or None when neither is given."""
    if X_val is None and Y_val is None:
        return None
    if X_val is None or Y_val is None:
        given, missing = ("X_val", "Y_val") if Y_val is None else ("Y_val", "X_val")
        raise ValueError(f"{given} was passed to fit without {missing}; pass both.")
    X_val = validate_held_out(estimator, X_val, dtype=[np.float64, np.float32])
    X_val = X_val.astype(np.float64, copy=False)
    return X_val, check_targets_for(X_val, Y_val, n_outputs, ("X_val", "Y_val"))
