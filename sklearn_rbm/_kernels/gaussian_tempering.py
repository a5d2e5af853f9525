"""Parallel tempering for the Gaussian-Bernoulli RBM: tempered conditionals,
replica swaps and the tempered negative phase of the 'pt' and 'cpt' solvers.

Replica ``t`` samples the model on the path of the Gaussian AIS,
``p_t(v, h) ∝ N_A(v)^(1 - beta_t) exp(-beta_t E(v, h))``, ``N_A`` the
independent Gaussians with the training data's means ``m`` and standard
deviations ``s_A`` (the binary PT's base-rate tempering, in its Gaussian
form). Every tempered model is normalisable: given ``h`` each ``v_i`` is
Gaussian with precision ``(1 - beta) / s_A_i^2 + beta / sigma_i^2 > 0`` and
``h`` takes finitely many values. Scaling the whole energy instead would leave
``v`` unbounded at ``beta = 0``. The hidden conditional is the binary PT's,
``p_t(h_j = 1 | v) = sigmoid(beta_t (c_j + W_j s))`` with ``s = v / sigma^2``,
so its draws reuse ``tempering.tempered_sample_``.

Swaps are accepted by the Metropolis rule on the tempered marginals
``log p*_t(v) = -sum_i (v_i - m_i)^2 / (2 s_A_i^2) + beta_t q(v) + sum_j
softplus(beta_t (c_j + W_j s))`` with ``q(v) = sum_i (v_i - m_i)^2 / (2
s_A_i^2) - (v_i - b_i)^2 / (2 sigma_i^2)``: the log ratio is the binary one
with ``q`` in place of the linear visible term, so ``tempering.swap_log_ratio``
computes it from ``q`` as a one-element "visible vector" with unit bias.

States are stacked as in ``tempering.py`` (replica ``t`` in rows ``t *
n_chains`` to ``(t + 1) * n_chains``) and kept scaled, ``s = v / sigma^2``, as
in ``gaussian.py``. Rows at ``beta = 1`` are drawn with the arithmetic and
random numbers of ``gaussian.sample_scaled_visible``, so one temperature is
``gaussian.gaussian_gibbs_chain`` bit for bit.
"""

import numpy as np

from ._jit import jit
from .normal import standard_normal
from .random import new_key, uniform
from .tempering import _swap_rows_, swap_log_ratio, tempered_sample_, tempered_sigmoid_
from .vecmath import jit as vector_jit


@jit
def path_visible_conditional(inv_var, base_mean, base_precision, beta):
    """``p_beta(v_i | h) = N(base_part_i + coupled_part_i (b_i + (W^T h)_i),
    std_i^2)`` on the path ``N_A^(1 - beta) exp(-beta E)``: the
    precision-weighted mean of the base model's and the RBM's, at the summed
    precision (float64)."""
    precision = (1.0 - beta) * base_precision + beta * inv_var
    base_part = (1.0 - beta) * base_precision * base_mean / precision
    coupled_part = beta * inv_var / precision
    return base_part, coupled_part, 1.0 / np.sqrt(precision)


@vector_jit
def _tempered_scaled_sample_(
    pre, bias, inv_sigma, inv_var, base_part, coupled_part, std, betas, n_chains,
    radius_key, angle_key,
):  # fmt: skip
    """In place: ``pre[r] = s`` drawn from ``p_t(s | h)`` of row ``r``'s
    replica, ``pre`` holding ``H W``; the conditional of replica ``t`` is row
    ``t`` of ``base_part, coupled_part, std``. ``beta = 1`` rows use
    ``gaussian._add_bias_sample_scaled_``'s arithmetic."""
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        t = r // n_chains
        if betas[t] == 1.0:
            for i in range(n_cols):
                z = standard_normal(radius_key, angle_key, r * n_cols + i)
                scale = inv_sigma[i]
                pre[r, i] = (pre[r, i] + bias[i]) * scale * scale + z * scale
        else:
            for i in range(n_cols):
                z = standard_normal(radius_key, angle_key, r * n_cols + i)
                v = (
                    base_part[t, i]
                    + coupled_part[t, i] * (bias[i] + pre[r, i])
                    + std[t, i] * z
                )
                pre[r, i] = v * inv_var[i]


@jit
def tempered_conditionals(variance, base_mean, base_precision, betas, dtype_of):
    """The visible conditionals of every replica, one row per temperature of
    ``betas``, in the dtype of ``dtype_of``."""
    inv_var = 1.0 / variance.astype(np.float64)
    shape = (betas.shape[0], variance.shape[0])
    base_part, coupled_part, std = np.empty(shape), np.empty(shape), np.empty(shape)
    for t in range(betas.shape[0]):
        base_part[t], coupled_part[t], std[t] = path_visible_conditional(
            inv_var, base_mean, base_precision, betas[t]
        )
    dtype = dtype_of.dtype
    return base_part.astype(dtype), coupled_part.astype(dtype), std.astype(dtype)


@vector_jit
def _path_quadratic(S, b, variance, base_mean, base_precision):
    """``q(v)`` of the module docstring for each row of ``S = V / sigma^2``,
    as an ``(n_rows, 1)`` float64 array."""
    n_rows, n_cols = S.shape
    out = np.zeros((n_rows, 1))
    for r in range(n_rows):
        total = 0.0
        for i in range(n_cols):
            var = np.float64(variance[i])
            v = np.float64(S[r, i]) * var
            to_base, to_model = v - base_mean[i], v - np.float64(b[i])
            total += 0.5 * (
                to_base * to_base * base_precision[i] - to_model * to_model / var
            )
        out[r, 0] = total
    return out


@jit
def gaussian_swap_replicas_(S, A, Q, c, betas, n_chains, rng, accepted):
    """One round of neighbour swaps, in place, as ``tempering.swap_replicas_``:
    even pairs first, then odd ones, chain ``k`` of replica ``t`` against
    chain ``k`` of replica ``t + 1``. ``S`` holds the scaled visible states,
    ``A = S W^T`` and ``Q`` (float64, one column) their ``q(v)``; all three
    move with the states. ``accepted[t]`` counts the swaps of pair
    ``(t, t + 1)``."""
    n_temperatures = betas.shape[0]
    key = new_key(rng)
    scratch = np.empty(c.shape[0])
    unit = np.ones(1)
    for parity in range(2):
        for t in range(parity, n_temperatures - 1, 2):
            for k in range(n_chains):
                r, s = t * n_chains + k, (t + 1) * n_chains + k
                log_ratio = swap_log_ratio(
                    Q[r], A[r], Q[s], A[s], unit, c, betas[t], betas[t + 1], scratch
                )
                u = uniform(key, t * n_chains + k)
                if log_ratio >= 0.0 or u < np.exp(log_ratio):
                    _swap_rows_(S, r, s)
                    _swap_rows_(A, r, s)
                    _swap_rows_(Q, r, s)
                    accepted[t] += 1


@jit
def _tempered_scaled_visible(H, W, b, inv_sigma, inv_var, conditionals, native, n,
                             rng):  # fmt: skip
    S = np.dot(H, W)
    base_part, coupled_part, std = conditionals
    _tempered_scaled_sample_(
        S, b, inv_sigma, inv_var, base_part, coupled_part, std, native, n,
        new_key(rng), new_key(rng),
    )  # fmt: skip
    return S


@jit
def gaussian_tempering_round(
    H, W, b, c, variance, inv_sigma, base_mean, base_precision, betas, n_chains,
    n_sweeps, rng, accepted,
):  # fmt: skip
    """``n_sweeps`` block-Gibbs sweeps of every replica, then one swap round.

    ``H`` holds the stacked hidden states (read only), ``variance`` and
    ``inv_sigma`` are ``sigma^2`` and ``1 / sigma`` in ``W``'s dtype,
    ``base_mean`` and ``base_precision`` the base model's (float64) and
    ``betas`` the ladder (float64, ``betas[0] = 1``). Returns the scaled
    visible states after the swaps and ``p_t(h = 1 | v)`` at them, each row
    under its (new) replica's temperature, as ``tempering.tempering_round``.
    """
    native = betas.astype(W.dtype)
    inv_var = inv_sigma * inv_sigma
    betas = native.astype(np.float64)  # as the conditionals run (float32 too)
    conditionals = tempered_conditionals(variance, base_mean, base_precision, betas, W)
    no_base = np.zeros(W.shape[0], dtype=W.dtype)
    S = _tempered_scaled_visible(
        H, W, b, inv_sigma, inv_var, conditionals, native, n_chains, rng
    )
    for _ in range(n_sweeps - 1):
        H = np.dot(S, W.T)
        tempered_sample_(H, c, no_base, native, n_chains, rng)
        S = _tempered_scaled_visible(
            H, W, b, inv_sigma, inv_var, conditionals, native, n_chains, rng
        )
    A = np.dot(S, W.T)
    if betas.shape[0] > 1:
        Q = _path_quadratic(S, b, variance, base_mean, base_precision)
        gaussian_swap_replicas_(S, A, Q, c, betas, n_chains, rng, accepted)
    tempered_sigmoid_(A, c, native, n_chains)
    return S, A
