"""Reverse annealing (RAISE) of Gaussian-Bernoulli RBMs: per-example
log-densities, on the annealing path of the Gaussian layer
(``_rbm/layers/gaussian.py``) run backwards."""

import numpy as np

from .._numerics.blas import gemm_
from .._numerics.jit import jit
from .._partition.kernels import _step_key
from .layers.bernoulli import anneal_ as path_log_ratio_and_hidden_
from .layers.gaussian import (
    _path_sample_visible_,
    _path_scaled_state,
    path_visible_conditional,
)


@jit
def raise_log_weights(
    V_data, W, b, c, sigma, base_mean, base_sigma, betas, n_chains, keys
):
    """Reverse annealing from each data row down to the independent Gaussians.

    RAISE, Burda, Grosse & Salakhutdinov (2015), Algorithm 1, on the path of
    :func:`ais_log_weights`, as the binary RBM's ``partition.raise_log_weights``
    runs its own path backwards: every row ``v`` of ``V_data`` starts
    ``n_chains`` chains at ``v_K = v``; for ``k = K, ..., 1`` a chain draws
    ``h ~ p_{beta_k}(h | v_k)`` and ``v_{k-1} ~ p_{beta_k}(v | h)`` and adds
    ``log p*_{beta_{k-1}}(v_{k-1}) - log p*_{beta_k}(v_{k-1})``. Returned, of
    shape ``(n_examples, n_chains)`` and float64, is that sum; the caller adds
    ``log p*_1(v) - log Z_0`` (minus the free energy, minus the base model's
    ``log Z``).

    Random numbers are keyed per example as in the binary kernel: sampling
    step ``s`` of row ``e`` uses ``_step_key(keys[e], s)`` (three steps per
    temperature: the hidden draw, then the two keys of the normal draws).
    """
    n_examples, n_visible = V_data.shape
    inv_var = 1.0 / (sigma.astype(np.float64) ** 2)
    base_precision = 1.0 / (base_sigma.astype(np.float64) ** 2)
    base_mean = base_mean.astype(np.float64)
    V = np.empty((n_examples * n_chains, n_visible), dtype=W.dtype)
    for e in range(n_examples):
        for r in range(e * n_chains, (e + 1) * n_chains):
            V[r] = V_data[e]
    log_w = np.zeros(n_examples * n_chains)
    top = betas.shape[0] - 1
    for k in range(top, -1, -1):
        # The state is v_k: add log p*_k(v_k) - log p*_{k+1}(v_k) (zero at the
        # top), then start the transition at beta_k with h ~ p_k(h | v_k).
        beta, beta_above = betas[k], betas[min(k + 1, top)]
        S, quadratic = _path_scaled_state(V, b, inv_var, base_mean, base_precision)
        A = np.dot(S, W.T)
        step = 3 * (top - k)
        for e in range(n_examples):
            rows = slice(e * n_chains, (e + 1) * n_chains)
            path_log_ratio_and_hidden_(
                log_w[rows], A[rows], quadratic[rows], c, beta, beta_above,
                _step_key(keys[e], step), k > 0,
            )  # fmt: skip
        if k == 0:
            break
        # A holds h ~ p_k(h | v_k); V becomes v_{k-1} ~ p_k(v | h).
        gemm_(1.0, A, W, 0.0, V)
        base_part, coupled_part, std = path_visible_conditional(
            inv_var, base_mean, base_precision, beta
        )
        for e in range(n_examples):
            _path_sample_visible_(
                V[e * n_chains : (e + 1) * n_chains], b, base_part, coupled_part,
                std, _step_key(keys[e], step + 1), _step_key(keys[e], step + 2),
            )  # fmt: skip
    return log_w.reshape((n_examples, n_chains))
