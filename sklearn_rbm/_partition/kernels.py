"""Reverse annealing (RAISE) of binary RBMs: per-example log-likelihoods.

Orientation ``(n_hidden, n_visible)``; log-weights are float64 whatever the
dtype of ``W``. The path is forward AIS's (``_partition/annealing.py`` with
the Bernoulli layer's hooks), run backwards.
"""

import numpy as np

from .._numerics.blas import gemm_
from .._numerics.jit import jit
from .._numerics.random import uniform
from .._rbm.layers.bernoulli import add_bias_sample_keyed_, anneal_, linear_terms
from .._rbm.layers.bernoulli import annealed_visible_bias_ as _annealed_visible_bias_

_TWO_POW_53 = 9007199254740992.0


@jit
def _ais_weights_and_hidden_(log_w, A, V, c, bias_shift, beta, beta_prev, key, sample):
    """One temperature of the base-rate path for the chains ``V`` (hidden
    inputs ``A = V W^T``): :func:`~sklearn_rbm._rbm.layers.bernoulli.anneal_`
    with the visible part ``V . bias_shift``."""
    anneal_(log_w, A, linear_terms(V, bias_shift), c, beta, beta_prev, key, sample)


@jit
def _step_key(key, step):
    """The key of sampling step ``step`` in the stream ``key``: two of the
    stream's uniforms make a fresh 64-bit key, as ``new_key`` makes one from
    two Generator draws."""
    high = np.uint64(uniform(key, 2 * step) * _TWO_POW_53)
    low = np.uint64(uniform(key, 2 * step + 1) * _TWO_POW_53)
    return (high << np.uint64(11)) ^ low


@jit
def raise_log_weights(V_data, W, b, c, base_bias, betas, n_chains, keys):
    """Reverse annealing from each data row down to the base-rate model.

    RAISE, Burda, Grosse & Salakhutdinov (2015), Algorithm 1, on the path of
    :func:`ais_log_weights` (``0 = beta_0 < ... < beta_K = 1``). Every row
    ``v`` of ``V_data`` starts ``n_chains`` chains at ``v_K = v``; for
    ``k = K, ..., 1`` a chain makes the Gibbs transition that leaves
    ``p_{beta_k}`` invariant (``h ~ p_{beta_k}(h | v)``, then
    ``v ~ p_{beta_k}(v | h)``), giving ``v_{k-1}``, and adds
    ``log p*_{beta_{k-1}}(v_{k-1}) - log p*_{beta_k}(v_{k-1})``. Returned, of
    shape ``(n_examples, n_chains)`` and float64, is that sum; the caller adds
    ``log p*_1(v) - log Z_0`` (the free energy and the base model) to get the
    log importance weight.

    All ``n_examples * n_chains`` chains advance together: per temperature
    one GEMM ``V W^T`` (the weight increment at ``beta_{k-1}``, ``beta_k``
    and the hidden draw at ``beta_{k-1}`` share it, as in forward AIS) and one
    GEMM ``beta_{k-1} H W`` for the visible draw. The path (the increment and
    the conditionals of ``p_beta``) is that of forward AIS, in
    ``_ais_weights_and_hidden_`` and ``_annealed_visible_bias_``; this
    function only runs it backwards and keeps the books.

    Random numbers are keyed per example: ``keys[e]`` (uint64) is the stream
    of row ``e``, and sampling step ``s`` of its chains uses the key
    ``_step_key(keys[e], s)`` with the counter ``chain * n_units + unit``. So
    a row's chains draw the same numbers whichever rows share the call.
    """
    n_examples, n_visible = V_data.shape
    n_hidden = W.shape[0]
    V = np.empty((n_examples * n_chains, n_visible), dtype=W.dtype)
    for e in range(n_examples):
        for r in range(e * n_chains, (e + 1) * n_chains):
            V[r] = V_data[e]
    A = np.empty((n_examples * n_chains, n_hidden), dtype=W.dtype)
    log_w = np.zeros(n_examples * n_chains)
    bias_shift = (b - base_bias).astype(np.float64)
    visible_bias = np.empty(n_visible, dtype=W.dtype)
    top = betas.shape[0] - 1
    for k in range(top, -1, -1):
        # The state is v_k (the data at the top, else the draw of the
        # transition at beta_{k+1}): add log p*_k(v_k) - log p*_{k+1}(v_k),
        # then start the transition at beta_k with h ~ p_k(h | v_k). At the
        # top beta_above = beta = 1 and the increment is exactly zero.
        beta, beta_above = betas[k], betas[min(k + 1, top)]
        gemm_(1.0, V, W.T, 0.0, A)
        step = 2 * (top - k)
        for e in range(n_examples):
            rows = slice(e * n_chains, (e + 1) * n_chains)
            _ais_weights_and_hidden_(
                log_w[rows], A[rows], V[rows], c, bias_shift, beta, beta_above,
                _step_key(keys[e], step), k > 0,
            )  # fmt: skip
        if k == 0:
            break
        # A holds h ~ p_beta(h | v_k); V becomes v ~ p_beta(v | h).
        gemm_(beta, A, W, 0.0, V)
        _annealed_visible_bias_(visible_bias, base_bias, b, beta)
        for e in range(n_examples):
            add_bias_sample_keyed_(
                V[e * n_chains : (e + 1) * n_chains],
                visible_bias,
                _step_key(keys[e], step + 1),
            )
    return log_w.reshape((n_examples, n_chains))
