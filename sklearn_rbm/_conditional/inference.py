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
import scipy.sparse as sp
from scipy.special import expit

from .._core.likelihood_mixin import resolve_score_method
from .._core.utils import (
    as_real_array,
    check_chains_memory,
    check_sample_weight,
    kernel_array,
    validate_held_out,
)
from .._partition.ais import log_partition_ais_of
from .._partition.exact import MAX_EXACT_UNITS
from . import bp_kernels
from .exact import (
    bethe_log_partition_rows,
    check_enumerable_rows,
    exact_log_partition_rows,
    exact_marginals_rows,
)

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
            check_enumerable_rows(W)
            visible, hidden, _, _ = exact_marginals_rows(W, B1, B2)
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


def log_unnormalised(W, B1, B2, V):
    """``log p~(v | x) = b1^T v + sum_j softplus(W_j v + b2_j)`` of each row,
    minus the free energy of the outputs ``V`` given each input."""
    return (V * B1).sum(axis=1) + np.logaddexp(0.0, V @ W.T + B2).sum(axis=1)


def conditional_ceiling(W, B1, B2, Y):
    """An upper bound on the mean ``log p(y | x)`` of the rows, free of ``Z``.

    ``log p(y | x) <= log p~(y | x) - log p~(v | x)`` for any outputs ``v``
    (``Z(x) >= p~(v | x)``); the candidates need no inference: ``y`` itself,
    all off, all on, and the logistic decoding ``1[b1 > 0]``.
    """
    candidates = (Y, np.zeros_like(Y), np.ones_like(Y), (B1 > 0).astype(np.float64))
    scores = [log_unnormalised(W, B1, B2, V) for V in candidates]
    return float(np.mean(scores[0] - np.max(scores, axis=0)))


def log_partition_rows(W, B1, B2, method, *, ais_n_chains, ais_betas, ais_seed):
    """``log Z(x)`` of each row's RBM by ``method`` ('exact', 'bethe', 'ais')."""
    if W.shape[0] == 0:
        return np.logaddexp(0.0, B1).sum(axis=1)
    if method == "exact":
        return exact_log_partition_rows(W, B1, B2)
    if method == "bethe":
        return bethe_log_partition_rows(W, B1, B2, 100, 1e-6, 0.0)
    # AIS from the row's own coupling-free model, with one stream fixed at fit
    # time so that a row's score does not depend on the other rows.
    check_chains_memory(ais_n_chains, sum(W.shape), "ais_n_chains")
    return np.array(
        [
            log_partition_ais_of(
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


def _as_float_targets(Y, name):
    """``Y`` (dense or sparse) as a float64 array, 2-D for a 1-D ``Y``;
    complex or non-numeric values are refused with ``name``."""
    Y = as_real_array(Y.toarray() if sp.issparse(Y) else Y, name)
    Y = Y.astype(np.float64)
    return Y.reshape(-1, 1) if Y.ndim == 1 else Y


def binary_targets(Y, name="Y"):
    """``Y`` as a C-contiguous 2-D float64 array of 0/1 targets.

    The outputs are predicted jointly by dense kernels, so a sparse ``Y`` (a
    multi-label indicator matrix, say) is densified once; a 1-D ``Y`` is one
    output.
    """
    Y = _as_float_targets(Y, name)
    check_binary_targets(Y, name)
    return np.ascontiguousarray(Y)


def check_targets_for(X, Y, n_outputs, names=("X", "Y")):
    """``Y`` as a 2-D float array of binary targets, one row per row of ``X``;
    ``names`` are what the error messages call the two arrays."""
    Y = _as_float_targets(Y, names[1])
    if Y.shape != (X.shape[0], n_outputs):
        raise ValueError(
            f"{names[1]} must have shape ({X.shape[0]}, {n_outputs}) for this "
            f"{names[0]} and model; got {Y.shape}."
        )
    return binary_targets(Y, names[1])


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
    X_val = validate_held_out(
        estimator, X_val, dtype=[np.float64, np.float32], accept_sparse="csr"
    )
    X_val = X_val.astype(np.float64, copy=False)
    return X_val, check_targets_for(X_val, Y_val, n_outputs, ("X_val", "Y_val"))


class ConditionalLikelihoodMixin:
    """``conditional_log_likelihood`` and ``score`` of a conditional RBM: the
    conditional counterpart of ``LikelihoodMixin``, with ``log Z(x)`` by
    enumeration, Bethe or AIS for each row (``score_method``)."""

    def conditional_log_likelihood(self, X, Y):
        """Conditional log-likelihood ``log p(y | x)`` of each row.

        ``log p(y | x) = -F(y | x) - log Z(x)`` with the free energy
        ``F(y | x) = -b1^T y - sum_j softplus(W_j y + b2_j)`` in closed form
        and ``log Z(x)`` by ``score_method``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input features, one row per sample.
        Y : array-like of shape (n_samples, n_outputs) or (n_samples,)
            Binary outputs.

        Returns
        -------
        log_likelihood : ndarray of shape (n_samples,)
            ``log p(y | x)`` of each row, in nats.
        """
        X = self._validate_query(X)
        Y = check_targets_for(X, Y, self.n_outputs_)
        B1, B2 = self._biases(X)
        W = kernel_array(self.components_)
        log_p_tilde = log_unnormalised(W, B1, B2, Y)
        method = resolve_score_method(
            self.score_method, min(W.shape), approximate="bethe", limit=MAX_EXACT_UNITS
        )
        return log_p_tilde - log_partition_rows(
            W, B1, B2, method, ais_n_chains=self.ais_n_chains,
            ais_betas=self.ais_betas, ais_seed=self._ais_seed,
        )  # fmt: skip

    def score(self, X, y, sample_weight=None):
        """Mean conditional log-likelihood ``log p(y | x)`` (not R²).

        This overrides ``RegressorMixin.score`` on purpose: for binary
        outputs the likelihood is the natural criterion, and it is what
        ``GridSearchCV`` maximises by default.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input features, one row per sample.
        y : array-like of shape (n_samples, n_outputs) or (n_samples,)
            Binary outputs.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the mean: finite, non-negative, with a
            positive sum.

        Returns
        -------
        log_likelihood : float
            Mean (weighted by ``sample_weight``) of ``log p(y | x)`` over the
            rows, in nats.
        """
        log_likelihood = self.conditional_log_likelihood(X, y)
        weights = check_sample_weight(sample_weight, log_likelihood.shape[0])
        return float(np.average(log_likelihood, weights=weights))
