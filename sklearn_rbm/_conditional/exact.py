"""Enumeration and the Bethe approximation for batches of binary RBMs that
share ``W`` (one row of biases per model): the arithmetic behind the public
:mod:`sklearn_rbm.inference` functions and the conditional RBM's queries
(``_conditional/inference.py``). Arrays in are checked float64, biases always
batched; validation is the public module's.
"""

from typing import NamedTuple

import numpy as np
from scipy.special import expit, logsumexp, xlogy

from .._partition.enumeration import log_partition_enumerate
from .._partition.exact import MAX_EXACT_UNITS, check_enumerable
from . import bp_kernels

# States per chunk of the vectorised enumeration in exact_marginals.
_CHUNK = 4096


class ExactMarginals(NamedTuple):
    """Exact marginals, batched like the biases.

    What :func:`sklearn_rbm.inference.exact_marginals` returns: a named
    tuple; its fields are read back as attributes of the same names.

    Parameters
    ----------
    visible : ndarray of shape (n_samples, n_visible) or (n_visible,)
        ``p(v_i = 1)``.
    hidden : ndarray of shape (n_samples, n_hidden) or (n_hidden,)
        ``p(h_j = 1)``.
    pairwise : ndarray of shape (n_samples, n_hidden, n_visible) or \
(n_hidden, n_visible)
        ``p(h_j = 1, v_i = 1) = E[h v^T]``.
    log_partition : ndarray of shape (n_samples,) or float
        ``log Z``.
    """

    visible: np.ndarray
    hidden: np.ndarray
    pairwise: np.ndarray
    log_partition: np.ndarray | float


def check_enumerable_rows(W):
    # One enumeration per model of the batch: the per-row limit.
    check_enumerable(
        min(W.shape),
        f"Exact inference on a model with {W.shape[1]} visible and "
        f"{W.shape[0]} hidden units",
        limit=MAX_EXACT_UNITS,
        instead="belief_propagation or mean_field",
    )


def _states(n_units, start, stop):
    """Binary states ``start..stop-1`` of ``n_units`` units, one per row."""
    codes = np.arange(start, stop)[:, None]
    return ((codes >> np.arange(n_units)) & 1).astype(np.float64)


def _enumerate_marginals(W, summed_bias, enumerated_bias):
    """Marginals with layer ``s`` (rows of ``W``) enumerated and ``t`` summed out.

    ``log p(s) = a^T s + sum_i softplus(b_i + (W^T s)_i) - log Z`` and
    ``E[t | s] = sigmoid(b + W^T s)``; returns ``E[t]``, ``E[s]``,
    ``E[s t^T]`` and ``log Z``.
    """
    n_enum, n_sum = W.shape
    n_states = 2**n_enum
    # Two passes over chunks of states, the second recomputing each chunk's
    # conditionals: only the 2 ** k log-weights are held at once (2 ** 20
    # states of a 784-unit layer would otherwise take gigabytes).
    log_weights = np.empty(n_states)
    for start in range(0, n_states, _CHUNK):
        S = _states(n_enum, start, min(start + _CHUNK, n_states))
        pre = S @ W + summed_bias
        log_weights[start : start + S.shape[0]] = S @ enumerated_bias + np.logaddexp(
            0.0, pre
        ).sum(axis=1)
    log_z = logsumexp(log_weights)
    mean_t, mean_s, mean_st = np.zeros(n_sum), np.zeros(n_enum), np.zeros(W.shape)
    for start in range(0, n_states, _CHUNK):
        S = _states(n_enum, start, min(start + _CHUNK, n_states))
        T = expit(S @ W + summed_bias)
        p = np.exp(log_weights[start : start + S.shape[0]] - log_z)
        mean_t += p @ T
        mean_s += p @ S
        mean_st += (S * p[:, None]).T @ T
    return mean_t, mean_s, mean_st, log_z


def exact_marginals_rows(W, B1, B2):
    """Exact marginals and ``log Z`` of each row's model (an ``ExactMarginals``
    of batched arrays)."""
    n_samples = B1.shape[0]
    visible, hidden = np.empty(B1.shape), np.empty(B2.shape)
    pairwise, log_z = np.empty((n_samples,) + W.shape), np.empty(n_samples)
    for s in range(n_samples):
        if W.shape[0] <= W.shape[1]:  # enumerate the hidden layer
            visible[s], hidden[s], pairwise[s], log_z[s] = _enumerate_marginals(
                W, B1[s], B2[s]
            )
        else:
            hidden[s], visible[s], vh, log_z[s] = _enumerate_marginals(
                np.ascontiguousarray(W.T), B2[s], B1[s]
            )
            pairwise[s] = vh.T
    return ExactMarginals(visible, hidden, pairwise, log_z)


def exact_log_partition_rows(W, B1, B2):
    """Exact ``log Z`` of each row's model, by Gray-code enumeration."""
    if W.shape[0] <= W.shape[1]:
        log_z = [log_partition_enumerate(W, b, c) for b, c in zip(B1, B2, strict=True)]
    else:
        WT = np.ascontiguousarray(W.T)
        log_z = [log_partition_enumerate(WT, c, b) for b, c in zip(B1, B2, strict=True)]
    return np.asarray(log_z, dtype=np.float64)


def _entropy(p):
    """Binary entropy of each probability, 0 at 0 and 1."""
    return -xlogy(p, p) - xlogy(1.0 - p, 1.0 - p)


def bethe_log_partition_rows(W, B1, B2, max_iter, tol, damping):
    """The Bethe approximation of each row's ``log Z`` at its sum-product
    beliefs (see :func:`sklearn_rbm.inference.bethe_log_partition`)."""
    tv, th, both, _, _ = bp_kernels.belief_propagation(
        W, B1, B2, bp_kernels.SUM_PRODUCT, max_iter, tol, damping, True
    )
    n_hidden, n_visible = W.shape
    tv3, th3 = tv[:, None, :], th[:, :, None]
    # The four edge probabilities from the free beliefs (Sec. 5.2); clipped at
    # 0 against rounding in the differences.
    edge = [both, tv3 - both, th3 - both, 1.0 - tv3 - th3 + both]
    edge_entropy = sum(-xlogy(p, p) for p in (np.clip(q, 0.0, 1.0) for q in edge))
    energy = (W * both).sum(axis=(1, 2)) + (B1 * tv).sum(axis=1) + (B2 * th).sum(1)
    entropy = (
        edge_entropy.sum(axis=(1, 2))
        - (n_hidden - 1) * _entropy(tv).sum(axis=1)
        - (n_visible - 1) * _entropy(th).sum(axis=1)
    )
    return energy + entropy
