"""Reverse annealing (RAISE) over any visible layer: per-example
log-likelihoods of RBMs.

Orientation ``(n_hidden, n_visible)``; log-weights are float64 whatever the
dtype of ``W``. The path is forward AIS's (``_partition/annealing.py``), run
backwards through the same layer hooks (``_rbm/layers/base.py``): the visible
layer's ``path_context``, ``path_statistics`` and ``path_sample_keyed_``,
the hidden layer's ``anneal_``. Bernoulli, Gaussian and categorical visible
units share this one kernel; a unit type gets RAISE by supplying those hooks.
"""

import numpy as np

from .._numerics.blas import gemm_
from .._numerics.jit import jit
from .._numerics.random import step_key
from .._numerics.steps import copy_
from .._rbm.layers.base import (
    anneal_,
    path_context,
    path_sample_keyed_,
    path_statistics,
)

#: Keys of one temperature of one data row's chains: the hidden draw and up
#: to two for the visible draw (Gaussian units: radius and angle).
_KEYS_PER_TEMPERATURE = 3


@jit
def raise_log_weights(units, hidden, base, W, V_data, betas, n_chains, keys):
    """Reverse annealing from each data row down to the base model.

    RAISE, Burda, Grosse & Salakhutdinov (2015), Algorithm 1, on the path of
    :func:`~sklearn_rbm._partition.annealing.ais_log_weights` (``0 = beta_0 <
    ... < beta_K = 1``; repeated values are allowed). Every row ``v`` of
    ``V_data`` starts ``n_chains`` chains at ``v_K = v``; for ``k = K, ...,
    1`` a chain makes the Gibbs transition that leaves ``p_{beta_k}``
    invariant (``h ~ p_{beta_k}(h | v)``, then ``v ~ p_{beta_k}(v | h)``),
    giving ``v_{k-1}``, and adds ``log p*_{beta_{k-1}}(v_{k-1}) - log
    p*_{beta_k}(v_{k-1})``. Returned, of shape ``(n_examples, n_chains)`` and
    float64, is that sum; the caller adds ``log p*_1(v) - log Z_0`` (minus the
    free energy, minus the base model's ``log Z``) to get the log importance
    weight.

    ``units`` are the visible layer's kernel units (their bias the model's),
    ``hidden`` the hidden layer's, ``base`` the visible layer's base model in
    kernel form (as forward AIS takes them). All ``n_examples * n_chains``
    chains advance together: per temperature one GEMM ``S W^T`` into a
    buffer (the weight increment at ``beta_{k-1}``, ``beta_k`` and the hidden
    draw at ``beta_{k-1}`` share it, as in forward AIS) and one GEMM ``H W``
    into the chains' visible buffer for the visible draw.

    Random numbers are keyed per example: ``keys[e]`` (uint64) is the stream
    of row ``e``; temperature ``t`` (counted from the top) of its chains uses
    the keys ``step_key(keys[e], 3 t + i)``, ``i < 3``, with the counter
    ``chain * n_units + unit``. So a row's chains draw the same numbers
    whichever rows share the call.
    """
    n_examples, n_visible = V_data.shape
    n_hidden = W.shape[0]
    n_rows = n_examples * n_chains
    path = path_context(units, base, W)
    V = np.empty((n_rows, n_visible), dtype=W.dtype)
    for e in range(n_examples):
        for r in range(e * n_chains, (e + 1) * n_chains):
            copy_(V[r], V_data[e])
    A = np.empty((n_rows, n_hidden), dtype=W.dtype)
    log_w = np.zeros(n_rows)
    top = betas.shape[0] - 1
    for k in range(top, -1, -1):
        # The state is v_k (the data at the top, else the draw of the
        # transition at beta_{k+1}): add log p*_k(v_k) - log p*_{k+1}(v_k),
        # then start the transition at beta_k with h ~ p_k(h | v_k). At the
        # top beta_above = beta = 1 and the increment is exactly zero.
        beta, beta_above = betas[k], betas[min(k + 1, top)]
        S, visible_terms = path_statistics(units, path, V)
        gemm_(1.0, S, W.T, 0.0, A)
        step = _KEYS_PER_TEMPERATURE * (top - k)
        for e in range(n_examples):
            rows = slice(e * n_chains, (e + 1) * n_chains)
            anneal_(
                hidden, log_w[rows], A[rows], visible_terms[rows], hidden.bias,
                beta, beta_above, step_key(keys[e], step), k > 0, 0,
            )  # fmt: skip
        if k == 0:
            break
        # A holds h ~ p_beta(h | v_k); V becomes v_{k-1} ~ p_beta(v | h).
        path_sample_keyed_(units, path, A, W, beta, V, keys, step + 1, n_chains)
    return log_w.reshape((n_examples, n_chains))
