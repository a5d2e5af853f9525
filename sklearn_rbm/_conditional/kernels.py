"""Gibbs chains of conditional RBMs: one RBM per row, sharing ``W``.

A conditional RBM (Ping & Ihler, AISTATS 2017, Sec. 3.2) given the input
``x_r`` is an RBM with its own biases ``B1[r] = b^v + W^{vx} x_r`` and
``B2[r] = b^h + W^{hx} x_r``. The chains of a mini-batch therefore run
together, one row each, with a *matrix* of biases instead of the shared
vector of :mod:`gibbs`; the random draws are the same counter-based ones
(``random.py``), so results do not depend on the order of the element loops.

Orientation as everywhere: ``W`` is ``(n_hidden, n_visible)``, states are
row-major ``(n_rows, n_units)``.
"""

import numpy as np

from .._numerics.jit import jit, vector_jit
from .._numerics.random import new_key
from .._numerics.vecmath import draw_bernoulli_row_, sigmoid, softplus


@vector_jit
def _add_bias_sample_rows_(pre, bias, key):
    """In place: ``pre[r, j] = 1`` w.p. ``sigmoid(pre[r, j] + bias[r, j])``
    (the float64 sigmoid whatever the dtype: the inputs row is float64)."""
    n_rows, n_cols = pre.shape
    x = np.empty(n_cols)
    for r in range(n_rows):
        draw_bernoulli_row_(pre[r], x, key, r * n_cols, _row_biased_input, bias[r])


@vector_jit(inline="always")
def _row_biased_input(row, j, bias):
    return row[j] + bias[j]


@jit
def _free_energies(V, pre_hidden, B1, B2, out):
    """``out[r] = -B1[r] . V[r] - sum_j softplus(pre_hidden[r, j] + B2[r, j])``."""
    n_rows, n_visible = V.shape
    for r in range(n_rows):
        energy = 0.0
        for i in range(n_visible):
            energy -= B1[r, i] * V[r, i]
        for j in range(pre_hidden.shape[1]):
            energy -= softplus(pre_hidden[r, j] + B2[r, j])
        out[r] = energy


@jit
def conditional_gibbs_chain(V, W, B1, B2, n_steps, keep_lowest_free_energy, rng):
    """Run ``n_steps`` block-Gibbs steps ``v -> h -> v`` from the rows of ``V``.

    Parameters
    ----------
    V : float64 array (n_rows, n_visible)
        Start states (not modified).
    W : float64 array (n_hidden, n_visible)
    B1, B2 : float64 arrays (n_rows, n_visible), (n_rows, n_hidden)
        The per-row visible and hidden biases.
    n_steps : int
    keep_lowest_free_energy : bool
        False: return the last state of each chain (CD-k). True: return the
        state of lowest free energy ``F(v | x)`` visited by each chain, the
        start included: the stochastic search of CD-PercLoss (Mnih, Yap &
        Hinton 2011) for ``argmin_v F(v | x)``.
    rng : numpy.random.Generator

    Returns
    -------
    V_out : array (n_rows, n_visible)
        The chosen visible states.
    H_out : array (n_rows, n_hidden)
        ``p(h = 1 | v, x)`` at them (Rao-Blackwellised hidden statistics).
    """
    n_rows = V.shape[0]
    WT = np.ascontiguousarray(W.T)
    current = V.copy()
    best = V.copy()
    best_pre = np.dot(current, WT)
    best_energy = np.empty(n_rows)
    energy = np.empty(n_rows)
    _free_energies(current, best_pre, B1, B2, best_energy)
    for _ in range(n_steps):
        hidden = np.dot(current, WT)
        _add_bias_sample_rows_(hidden, B2, new_key(rng))
        current = np.dot(hidden, W)
        _add_bias_sample_rows_(current, B1, new_key(rng))
        if keep_lowest_free_energy:
            pre = np.dot(current, WT)
            _free_energies(current, pre, B1, B2, energy)
            for r in range(n_rows):
                if energy[r] < best_energy[r]:
                    # Element by element: numba's row assignment from an array
                    # compiles its string formatting (seconds per process).
                    best_energy[r] = energy[r]
                    for i in range(best.shape[1]):
                        best[r, i] = current[r, i]
                    for j in range(best_pre.shape[1]):
                        best_pre[r, j] = pre[r, j]
    if not keep_lowest_free_energy:
        best = current
        best_pre = np.dot(current, WT)
    for r in range(n_rows):
        for j in range(best_pre.shape[1]):
            best_pre[r, j] = sigmoid(best_pre[r, j] + B2[r, j])
    return best, best_pre
