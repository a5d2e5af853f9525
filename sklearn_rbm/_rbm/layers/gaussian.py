"""Gaussian units: real states with ``p(v | inputs) = N(b + inputs, sigma^2)``.

The energy of Cho, Ilin & Raiko (2011) is
``E(v, h) = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - sum_ij W_ji h_j v_i / sigma_i^2
- c^T h``. In the *scaled* state ``s = v / sigma^2`` it reads
``-E = -sum_i v_i^2 / (2 sigma_i^2) + s^T b + h^T W s + c^T h - const(theta)``:
the binary RBM's energy in ``s``, plus a term of ``v`` alone and a constant
that cancels between the data and the model. So the statistics of a Gaussian
layer are ``s``: ``p(h | v)`` is the binary RBM's conditional at ``s``, the
gradients of ``W``, ``b`` and ``c`` are the binary RBM's with ``s`` in place
of ``v``, and the centring of Melchior, Fischer & Wiskott (2016) carries over
with offsets ``mu`` of ``s``. Chains keep their visible state in ``s``; the
input from the other layer is ``inputs = W^T h`` and ``s = (b + inputs) / sigma^2 +
z / sigma`` with ``z ~ N(0, 1)``, so the same sampler serves a Gaussian
hidden layer.

What is new against Bernoulli units: drawing ``s``; steps of ``W`` and ``b``
scaled by ``sigma^2`` per visible unit (:func:`step_metric`: the gradient in
``s`` carries a factor ``1 / sigma_i^2``, so a plain step on a feature with a
small ``sigma`` is orders of magnitude too large and training diverges; the
Fisher information of a Gaussian mean is ``1 / sigma^2``, so the scaled step
is the natural-gradient step for the means ``b + W^T h``; it moves them in the
units of ``v``, and rescaling a feature rescales its fitted parameters and
nothing else); and the step of the log variances ``z = log sigma^2`` (a
parameterisation that keeps ``sigma`` positive, as Cho et al. advise), whose
energy derivative ``-dE/dz_i = v_i^2 / (2 sigma_i^2) - s_i b_i - s_i (W^T
h)_i`` involves the weights: with learned variances the layer's parameters
enter the coupling, so the layer brings its own step (:func:`learned_step_`).

The base model of annealing and tempering is independent Gaussians with the
training data's means and standard deviations, ``N_A``: the path
``N_A(v)^(1 - beta) exp(-beta E(v, h))`` keeps every conditional Gaussian or
Bernoulli and every tempered model normalisable (given ``h`` each ``v_i`` is
Gaussian with precision ``(1 - beta) / s_A_i^2 + beta / sigma_i^2 > 0``, and
``h`` takes finitely many values); scaling the whole energy instead would
leave ``v`` unbounded at ``beta = 0``.

Two kinds of kernel units: :class:`GaussianUnits`, a fitted layer (its bias
and ``sigma``), and :class:`GaussianTraining`, the layer during a fit (``z``,
the velocities, the step's rates and scratch). The estimator side is
:class:`GaussianLayer`. Orientation and dtypes as for Bernoulli units.
"""

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.sparsefuncs import mean_variance_axis

from ..._core.divergence import blamed_settings, diagnose, softplus_row_sums
from ..._core.utils import (
    as_real_array,
    check_magnitude,
    kernel_array,
    largest_magnitude,
    smallest_scale,
    warn,
    warn_if_outlying,
)
from ..._fvbm.kernels import log_partition_exact as _spin_log_partition
from ..._numerics.blas import gemm_, kernel_dot
from ..._numerics.jit import jit, vector_jit
from ..._numerics.normal import standard_normal
from ..._numerics.random import new_key, offset_key, step_key
from ..._numerics.steps import add_, bias_step_, copy_
from ..._partition.annealing import AnnealingPath, ais_betas, run_ais
from ..._partition.exact import _check_rbm, check_enumerable, check_rows
from . import base
from .base import Layer, centred, gemm_outer_, implements, linear_step_
from .bernoulli import units_of as bernoulli_units_of

#: A learned sigma this many times the training data's standard deviation (or
#: its floor) means training diverged.
MAX_SIGMA_RATIO = 100.0


class GaussianUnits(NamedTuple):
    """The kernel units of a fitted Gaussian layer: its bias ``b`` and
    standard deviations ``sigma``."""

    bias: np.ndarray
    sigma: np.ndarray


class GaussianTraining(NamedTuple):
    """The kernel units of a Gaussian layer during a fit.

    ``bias`` is the centred ``b``, ``log_var`` the log variances ``z``, each
    with its velocity; ``log_var_rate`` is the step size of ``z`` (0 when
    ``sigma`` is fixed) and ``log_var_floor`` its floor; ``model_term``
    (shaped like ``W``, or empty when ``sigma`` is fixed) and ``data_energy``
    (float64, one per visible unit: the data part of ``-dE/dz``, taken once
    per mini-batch) are scratch.
    """

    bias: np.ndarray
    velocity: np.ndarray
    log_var: np.ndarray
    log_var_velocity: np.ndarray
    log_var_rate: float
    log_var_floor: float
    model_term: np.ndarray
    data_energy: np.ndarray


_ANY = (GaussianUnits, GaussianTraining)


# ------------------------------------------------------------------ kernels
@vector_jit
def _add_bias_sample_scaled_(pre, bias, inv_sigma, radius_key, angle_key):
    """In place: ``pre[r, i] = s`` drawn from ``p(s | h)``, where ``pre`` holds
    ``H W``: ``s = (pre + b_i) / sigma_i^2 + z / sigma_i`` with ``z ~ N(0, 1)``."""
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        for i in range(n_cols):
            z = standard_normal(radius_key, angle_key, r * n_cols + i)
            scale = inv_sigma[i]
            pre[r, i] = (pre[r, i] + bias[i]) * scale * scale + z * scale


@jit
def _scaled_means_(pre, bias, inv_sigma):
    """In place: ``pre[r, i] = (pre[r, i] + b_i) / sigma_i^2``, the mean of ``s``."""
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        for i in range(n_cols):
            scale = inv_sigma[i]
            pre[r, i] = (pre[r, i] + bias[i]) * scale * scale


@jit
def _variances(log_var, dtype_of):
    """``(sigma^2, 1 / sigma)`` from ``z = log sigma^2``, in the dtype of
    ``dtype_of`` (a Python float in numba promotes a float32 array)."""
    return np.exp(log_var).astype(dtype_of.dtype), np.exp(-0.5 * log_var).astype(
        dtype_of.dtype
    )


@jit
def _model_variances(sigma, dtype_of):
    """``(sigma^2, 1 / sigma)`` of a fitted layer, in the dtype of ``dtype_of``."""
    sigma = sigma.astype(np.float64)
    return (sigma * sigma).astype(dtype_of.dtype), (1.0 / sigma).astype(dtype_of.dtype)


@jit
def _quadratic_sums(S, b, variance):
    """``sum_r s_ri^2 sigma_i^2 / 2 - s_ri b_i`` for each column ``i`` (float64):
    the part of ``-dE/dz_i`` that involves no hidden unit."""
    out = np.zeros(S.shape[1])
    for r in range(S.shape[0]):
        for i in range(S.shape[1]):
            s = np.float64(S[r, i])
            out[i] += 0.5 * s * s * variance[i] - s * b[i]
    return out


@jit
def _offset_corrections(W, lam, mu, sum_s, sum_h, n_rows, centred):
    """What turns ``sum_j W_ji product_ji``, with ``product = (H - lam)^T (S -
    mu)``, into ``sum_r s_ri (W^T h_r)_i``: expanding the product,
    ``H^T S = product + lam sum_s^T + sum_h mu^T - n lam mu^T``, three vector
    terms instead of a matrix product (zero when uncentred)."""
    if not centred:
        return np.zeros(W.shape[1])
    lam_W = np.dot(lam, W).astype(np.float64)
    sum_h_W = np.dot(sum_h.astype(W.dtype), W).astype(np.float64)
    mu64 = mu.astype(np.float64)
    return sum_s * lam_W + mu64 * sum_h_W - n_rows * mu64 * lam_W


@vector_jit
def _scaled_weight_step_(
    W, velocity, data_term, model_term, data_scale, model_scale, column_scale,
    rate, momentum, decay, data_dots, model_dots, with_data_dots,
):  # fmt: skip
    """In place: ``W += velocity`` with ``velocity = momentum * velocity + rate *
    (column_scale * (data_scale * data_term - model_scale * model_term) - decay
    * W)``, ``column_scale`` one factor per visible unit: the weight step of
    ``gibbs._weight_step_`` when both products are already computed.

    The same pass adds ``sum_j W_ji model_term_ji`` (``W`` before the step) to
    ``model_dots`` and, with ``with_data_dots``, ``sum_j W_ji data_term_ji`` to
    ``data_dots``: the hidden parts of the log-variance gradient, read while
    the weights are in cache.
    """
    n_hidden, n_visible = W.shape
    for j in range(n_hidden):
        for i in range(n_visible):
            w, data, model = W[j, i], data_term[j, i], model_term[j, i]
            model_dots[i] += w * model
            if with_data_dots:
                data_dots[i] += w * data
            step = rate * (
                column_scale[i] * (data_scale * data - model_scale * model) - decay * w
            )
            if momentum > 0.0:
                step += momentum * velocity[j, i]
                velocity[j, i] = step
            W[j, i] = w + step


@jit
def _log_variance_step_(log_var, gradient, rate, momentum, velocity, floor):
    """In place: ``z += velocity`` with ``velocity = momentum * velocity + rate *
    gradient``, then ``z = max(z, floor)`` (the documented floor on sigma)."""
    for i in range(log_var.size):
        step = rate * gradient[i]
        if momentum > 0.0:
            step += momentum * velocity[i]
            velocity[i] = step
        log_var[i] = max(log_var[i] + step, floor)


@jit(inline="always")
def learned_step_(units, ctx, W, velocity, field, terms, data, chain, centring,
                  rates):  # fmt: skip
    """The step of ``W``, ``b`` and ``z = log sigma^2`` when ``sigma`` is learned.

    The hidden part of ``-dE/dz``, ``sum_r s_ri (W^T h_r)_i``, is ``sum_j
    W_ji (H^T S)_ji``: it comes from the products the weight step needs
    anyway, so learning ``sigma`` costs no extra matrix product. Both products
    go to the scratch arrays ``data_term`` and ``units.model_term``, and one
    pass over them steps the weights and sums them against ``W``
    (:func:`_scaled_weight_step_`). As for the other parameters, S-DCP takes
    the data part once per mini-batch (the first inner iteration, at the
    mini-batch's parameters). Returns the new variances and the chains'
    scaled states, which keep their ``v`` while ``sigma`` moves. Arguments as
    for :func:`~sklearn_rbm._rbm.layers.base.linear_step_`.
    """
    data_term, _, first = terms
    V, S, H_pos, sum_S_data, sum_H_data = data
    S_chain, H_neg, sum_S_chain, sum_H_chain, n_chains = chain
    mu, lam, is_centred = centring
    learning_rate, momentum, weight_decay = rates
    variance = ctx[0]
    n_data = V.shape[0]
    if first:
        gemm_(1.0, H_pos.T, centred(S, mu, is_centred), 0.0, data_term)
        data_energy = _quadratic_sums(S, field, variance)
        data_energy -= _offset_corrections(
            W, lam, mu, sum_S_data, sum_H_data, n_data, is_centred
        )
        copy_(units.data_energy, data_energy)
    gemm_(1.0, H_neg.T, centred(S_chain, mu, is_centred), 0.0, units.model_term)
    model_energy_z = _quadratic_sums(S_chain, field, variance)
    model_energy_z -= _offset_corrections(
        W, lam, mu, sum_S_chain, sum_H_chain, n_chains, is_centred
    )
    data_dots, model_dots = np.zeros(V.shape[1]), np.zeros(V.shape[1])
    _scaled_weight_step_(
        W, velocity, data_term, units.model_term, 1.0 / n_data, 1.0 / n_chains,
        variance, learning_rate, momentum, weight_decay, data_dots, model_dots,
        first,
    )  # fmt: skip
    if first:
        add_(units.data_energy, -data_dots)
    model_energy_z -= model_dots
    bias_step_(
        units.bias, sum_S_data * variance, sum_S_chain * variance, 1.0 / n_data,
        1.0 / n_chains, learning_rate, momentum, units.velocity,
    )  # fmt: skip
    gradient = units.data_energy / n_data - model_energy_z / n_chains
    _log_variance_step_(
        units.log_var, gradient, units.log_var_rate, momentum,
        units.log_var_velocity, units.log_var_floor,
    )  # fmt: skip
    # The chain keeps its v; its scaled state follows the new sigma.
    new_variance, inv_sigma = _variances(units.log_var, W)
    return (new_variance, inv_sigma), S_chain * (variance / new_variance)


# ---------------------------------------------- the annealing and tempering path
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
def _path_sample_visible_(
    pre, bias, base_part, coupled_part, std, radius_key, angle_key
):
    """In place: ``pre[r, i] = v`` drawn from ``p_beta(v | h)`` where ``pre``
    holds ``H W``: ``v = base_part_i + coupled_part_i (b_i + pre) + std_i z``."""
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        for i in range(n_cols):
            z = standard_normal(radius_key, angle_key, r * n_cols + i)
            pre[r, i] = (
                base_part[i] + coupled_part[i] * (bias[i] + pre[r, i]) + std[i] * z
            )


@jit(inline="always")
def path_sample_visible(H, W, b, inv_var, base_mean, base_precision, beta, rng,
                        first_row):  # fmt: skip
    """``v ~ p_beta(v | h)`` for every row of ``H`` on the annealing path.

    ``p_beta(v, h) ∝ N_A(v)^(1 - beta) exp(-beta E(v, h))`` with ``N_A`` the
    base model of independent Gaussians: given ``h`` each ``v_i`` is Gaussian
    with precision ``(1 - beta) / s_i^2 + beta / sigma_i^2`` and the
    precision-weighted mean of ``m_i`` and ``b_i + (W^T h)_i``; at ``beta = 0``
    it is an exact draw from the base model. Row ``r`` draws what row
    ``first_row + r`` of a call on every chain would.
    """
    base_part, coupled_part, std = path_visible_conditional(
        inv_var, base_mean, base_precision, beta
    )
    V = np.dot(H, W)
    counter = first_row * V.shape[1]
    radius_key = offset_key(new_key(rng), counter)
    angle_key = offset_key(new_key(rng), counter)
    _path_sample_visible_(V, b, base_part, coupled_part, std, radius_key, angle_key)
    return V


@vector_jit
def _path_scaled_state(V, b, inv_var, base_mean, base_precision):
    """``S = V / sigma^2`` (a new array) and, per chain, the visible part of
    ``d log p*_beta(v) / d beta``: ``sum_i (v_i - m_i)^2 / (2 s_i^2) -
    (v_i - b_i)^2 / (2 sigma_i^2)`` (float64)."""
    n_rows, n_cols = V.shape
    S = np.empty_like(V)
    quadratic = np.zeros(n_rows)
    terms = np.empty(n_cols)
    for r in range(n_rows):
        for i in range(n_cols):
            v = np.float64(V[r, i])
            S[r, i] = V[r, i] * inv_var[i]
            to_base, to_model = v - base_mean[i], v - b[i]
            terms[i] = 0.5 * (
                to_base * to_base * base_precision[i] - to_model * to_model * inv_var[i]
            )
        total = 0.0
        for i in range(n_cols):
            total += terms[i]
        quadratic[r] = total
    return S, quadratic


@jit(inline="always")
def tempered_conditionals(variance, base_mean, base_precision, betas, dtype_of):
    """The visible conditionals of every replica, one row per temperature of
    ``betas``, in the dtype of ``dtype_of``."""
    inv_var = 1.0 / variance.astype(np.float64)
    shape = (betas.shape[0], variance.shape[0])
    base_part, coupled_part, std = np.empty(shape), np.empty(shape), np.empty(shape)
    for t in range(betas.shape[0]):
        base, coupled, deviation = path_visible_conditional(
            inv_var, base_mean, base_precision, betas[t]
        )
        copy_(base_part[t], base)
        copy_(coupled_part[t], coupled)
        copy_(std[t], deviation)
    dtype = dtype_of.dtype
    return base_part.astype(dtype), coupled_part.astype(dtype), std.astype(dtype)


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


# -------------------------------------------------------------------- hooks
@implements(base.context, GaussianUnits)
def _context(units, W):
    return _model_variances(units.sigma, W)


@implements(base.context, GaussianTraining)
def _training_context(units, W):
    return _variances(units.log_var, W)


@implements(base.mean_, _ANY)
def _mean(units, ctx, inputs, field):
    _scaled_means_(inputs, field, ctx[1])
    return inputs


@implements(base.sample_, _ANY)
def _sample(units, ctx, inputs, field, rng):
    _add_bias_sample_scaled_(inputs, field, ctx[1], new_key(rng), new_key(rng))
    return inputs


@implements(base.tempered_sample_, _ANY)
def _tempered_sample(units, ctx, tempered, inputs, field, betas, n_chains, rng):
    (base_part, coupled_part, std), inv_var = tempered[0], tempered[1]
    _tempered_scaled_sample_(
        inputs, field, ctx[1], inv_var, base_part, coupled_part, std, betas, n_chains,
        new_key(rng), new_key(rng),
    )  # fmt: skip
    return inputs


@implements(base.statistics, _ANY)
def _statistics(units, ctx, V):
    inv_sigma = ctx[1]
    return V * (inv_sigma * inv_sigma)  # a new array: V is only read


base.implements_dense_rows(_ANY)


@implements(base.data_outer_, _ANY)
def _data_outer(units, ctx, alpha, H, V, S, mu, is_centred, beta, out):
    # Operands in the units of v, (s - mu) sigma^2: the scaled step.
    gemm_outer_(alpha, H, centred(V, mu * ctx[0], is_centred), beta, out)


@implements(base.chain_outer_, _ANY)
def _chain_outer(units, ctx, alpha, H, S, mu, is_centred, beta, out):
    gemm_outer_(alpha, H, centred(S, mu, is_centred) * ctx[0], beta, out)


@implements(base.step_metric, _ANY)
def _step_metric(units, ctx, gradient):
    return gradient * ctx[0]


@implements(base.visible_step_, GaussianTraining)
def _visible_step(units, ctx, W, velocity, field, terms, data, chain, centring,
                  rates):  # fmt: skip
    if units.log_var_rate > 0.0:
        return learned_step_(units, ctx, W, velocity, field, terms, data, chain,
                             centring, rates)  # fmt: skip
    return linear_step_(units, ctx, W, velocity, field, terms, data, chain,
                        centring, rates)  # fmt: skip


@implements(base.tempered_context, _ANY)
def _tempered_context(units, ctx, base_model, betas, W):
    variance, inv_sigma = ctx
    base_mean, base_precision = base_model
    conditionals = tempered_conditionals(variance, base_mean, base_precision, betas, W)
    return conditionals, inv_sigma * inv_sigma, base_mean, base_precision


@implements(base.swap_terms, _ANY)
def _swap_terms(units, ctx, tempered, S, field):
    # log p*_t(v) = -|v - m|^2 / (2 s_A^2) + beta_t q(v) + hidden terms: the
    # binary ratio with q in place of the linear visible term.
    Q = _path_quadratic(S, field, ctx[0], tempered[2], tempered[3])
    return Q, np.ones(1), True


@implements(base.path_context, GaussianUnits)
def _path_context(units, base_model, W):
    base_mean, base_sigma = base_model
    inv_var = 1.0 / (units.sigma.astype(np.float64) ** 2)
    base_precision = 1.0 / (base_sigma.astype(np.float64) ** 2)
    return inv_var, base_mean.astype(np.float64), base_precision


@implements(base.path_start, GaussianUnits)
def _path_start(units, path, n_chains, W, rng):
    H = np.zeros((n_chains, W.shape[0]), dtype=W.dtype)
    inv_var, base_mean, base_precision = path  # numba inlines no *path call
    return path_sample_visible(H, W, units.bias, inv_var, base_mean, base_precision,
                               0.0, rng, 0)  # fmt: skip


@implements(base.path_statistics, GaussianUnits)
def _path_statistics(units, path, V):
    return _path_scaled_state(V, units.bias, *path)


@implements(base.path_sample, GaussianUnits)
def _path_sample(units, path, A, W, beta, rng, first_row):
    inv_var, base_mean, base_precision = path
    return path_sample_visible(A, W, units.bias, inv_var, base_mean, base_precision,
                               beta, rng, first_row)  # fmt: skip


@implements(base.path_sample_keyed_, GaussianUnits)
def _path_sample_keyed(units, path, A, W, beta, V, keys, step, n_chains):
    inv_var, base_mean, base_precision = path
    gemm_(1.0, A, W, 0.0, V)
    base_part, coupled_part, std = path_visible_conditional(
        inv_var, base_mean, base_precision, beta
    )
    for e in range(keys.shape[0]):
        _path_sample_visible_(
            V[e * n_chains : (e + 1) * n_chains], units.bias, base_part,
            coupled_part, std, step_key(keys[e], step), step_key(keys[e], step + 1),
        )  # fmt: skip


# ------------------------------------------------ the model in closed form
def check_gaussian_rbm(components, intercept_visible, intercept_hidden, sigma):
    """``(W, b, c, sigma)`` as contiguous arrays of one floating dtype, with
    ``sigma`` broadcast to one positive, finite value per visible unit, and
    ``W`` and ``b`` small enough in units of ``sigma`` for the energy to be
    finite."""
    W, b, c = _check_rbm(components, intercept_visible, intercept_hidden)
    sigma = check_scales(sigma, W.shape[1], "sigma", W.dtype)
    for name, values in (("components", W), ("intercept_visible", b)):
        check_in_sigmas(values, name, sigma, W.shape)
    return W, b, c, sigma


def check_in_sigmas(values, name, sigma, shape):
    """Refuse values (data or parameters) so large in units of ``sigma`` that
    the Gaussian energy of an RBM of ``shape`` (n_hidden, n_visible)
    overflows float64: its squares and its products with the weights, summed
    over the units, must stay finite."""
    values = values.data if sp.issparse(values) else np.asarray(values)
    if values.size == 0:
        return
    limit = largest_magnitude(np.float64, 4 * shape[1] * (shape[0] + 1))
    with np.errstate(over="ignore"):
        largest = float(np.max(np.abs(values)) / np.min(sigma))
    if not largest <= limit:
        raise ValueError(
            f"{name} holds a value of {largest:.3g} standard deviations (sigma); "
            f"beyond {limit:.3g} the Gaussian energy overflows float64. "
            "Standardise the data (StandardScaler), or check the parameters."
        )


def check_gaussian_rows(X, sigma, shape, name="X"):
    """Rows of real data for a Gaussian-Bernoulli RBM of ``shape`` (n_hidden,
    n_visible) with standard deviations ``sigma``: finite, of the right
    width, not so large that the energy overflows; errors name ``name``."""
    X = check_rows(X, shape[1], name)
    check_in_sigmas(X, name, sigma, shape)
    return X


def check_scales(values, n_visible, name, dtype):
    """A positive, finite scalar or vector of ``n_visible`` values, as a
    contiguous vector of ``dtype`` (standard deviations of visible units),
    between :func:`smallest_scale` (below, ``1 / sigma**2`` overflows with
    the data) and the square root of the largest float."""
    values = as_real_array(values, name).astype(dtype)
    if values.ndim == 0:
        values = np.full(n_visible, values, dtype=dtype)
    if values.shape != (n_visible,):
        raise ValueError(
            f"{name} must be a positive float or have shape ({n_visible},) (one "
            f"value per visible unit), got shape {values.shape}."
        )
    bad = ~(np.isfinite(values) & (values > 0))
    if np.any(bad):
        raise ValueError(
            f"{name} must be positive and finite; feature "
            f"{int(np.flatnonzero(bad)[0])} has {name}={float(values[bad][0])!r}. "
            "Standard deviations are positive: standardise the data or floor "
            "them."
        )
    low, high = smallest_scale(dtype), largest_magnitude(dtype, 1)
    outside = np.flatnonzero((values < low) | (values > high))
    if outside.size:
        raise ValueError(
            f"{name} must lie in [{low:.2g}, {high:.2g}] in {np.dtype(dtype).name} "
            f"(1 / {name}**2 and {name}**2 must stay finite); feature "
            f"{outside[0]} has {name}={float(values[outside[0]]):.3g}. Standardise "
            "the data (StandardScaler): standard deviations near 1 are then right."
        )
    return np.ascontiguousarray(values)


def free_energy_of(X, components, intercept_visible, intercept_hidden, sigma):
    """``likelihood.gaussian_free_energy`` without its parameter validation."""
    W, b, c, sigma = check_gaussian_rbm(
        components, intercept_visible, intercept_hidden, sigma
    )
    inv_var = 1.0 / sigma.astype(np.float64) ** 2
    scaled_W = np.ascontiguousarray(W * inv_var)
    # numpy would cast dense float32 rows to float64 for this product too; the
    # kernels' BLAS computes it (kernel_dot: the fit's per-epoch check).
    dense = X if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    pre = kernel_dot(dense, scaled_W.T) + c
    hidden_term = np.logaddexp(0.0, np.asarray(pre, dtype=np.float64)).sum(axis=1)
    if sp.issparse(X):
        # sum_i (v_i - b_i)^2 / (2 sigma_i^2) expanded: sparse rows stay sparse.
        squares = np.asarray(X.multiply(X) @ (0.5 * inv_var)).ravel()
        cross = np.asarray(X @ (b * inv_var)).ravel()
        visible_term = squares - cross + 0.5 * np.sum(b * b * inv_var)
    else:
        # Row sums of an element-wise product: each row's value depends on
        # that row only (a matrix-vector product's rounding may not).
        deviation = np.asarray(X, dtype=np.float64) - b
        visible_term = 0.5 * np.sum(deviation * deviation * inv_var, axis=1)
    return visible_term - hidden_term


def log_partition_exact_of(components, intercept_visible, intercept_hidden, sigma):
    """``likelihood.gaussian_log_partition_exact``: the visible integral is
    Gaussian and the hidden layer, summed over ``v``, a fully visible
    Boltzmann machine enumerated in Gray-code order."""
    W, b, c, sigma = check_gaussian_rbm(
        components, intercept_visible, intercept_hidden, sigma
    )
    n_hidden, n_visible = W.shape
    check_enumerable(
        n_hidden,
        f"The exact log Z of a Gaussian-Bernoulli RBM with {n_hidden} hidden units",
        instead="gaussian_log_partition_ais (score_method='ais')",
    )
    W, b, c = (a.astype(np.float64) for a in (W, b, c))
    sigma = sigma.astype(np.float64)
    scaled = W / sigma
    coupling = scaled @ scaled.T
    # h_j^2 = h_j: the diagonal of the coupling joins the linear term.
    linear = c + W @ (b / sigma**2) + 0.5 * np.diag(coupling)
    np.fill_diagonal(coupling, 0.0)
    # h = (x + 1) / 2 with spins x in {-1, 1}: the same sum as an FVBM's
    # logsumexp_x (x^T M x / 2 + f^T x), plus a constant.
    spin_coupling = np.ascontiguousarray(coupling / 4.0)
    spin_field = linear / 2.0 + coupling.sum(axis=1) / 4.0
    constant = linear.sum() / 2.0 + coupling.sum() / 8.0
    gaussian_integral = np.sum(np.log(np.sqrt(2.0 * np.pi) * sigma))
    return float(
        gaussian_integral + constant + _spin_log_partition(spin_coupling, spin_field)
    )


def check_gaussian_base(base_mean, base_sigma, b, sigma):
    """The AIS base model's means and standard deviations, as contiguous
    vectors in the dtype of ``b``; ``None`` takes the RBM's ``b`` and
    ``sigma``."""
    n_visible = b.shape[0]
    if base_mean is not None:
        base_mean = as_real_array(base_mean, "base_mean").astype(b.dtype)
    base_mean = b if base_mean is None else base_mean
    if base_mean.shape != (n_visible,) or not np.all(np.isfinite(base_mean)):
        raise ValueError(
            f"base_mean must be a finite vector of length {n_visible} (one mean "
            f"per visible unit), got shape {base_mean.shape}."
        )
    base_sigma = check_scales(
        sigma if base_sigma is None else base_sigma, n_visible, "base_sigma", b.dtype
    )
    check_in_sigmas(base_mean, "base_mean", base_sigma, (0, n_visible))
    return np.ascontiguousarray(base_mean), base_sigma


def base_log_partition(base_sigma, n_hidden):
    """``log Z_A`` of the base model: independent Gaussians (unnormalised)
    and ``n_hidden`` disconnected hidden units."""
    return float(
        np.sum(np.log(np.sqrt(2.0 * np.pi) * base_sigma.astype(np.float64)))
        + n_hidden * np.log(2.0)
    )


def annealing_path(W, b, c, sigma, base_mean, base_sigma):
    """The :class:`~sklearn_rbm._partition.annealing.AnnealingPath` of the
    Gaussian-Bernoulli RBM ``(W, b, c, sigma)`` (checked) from independent
    Gaussians of means ``base_mean`` and deviations ``base_sigma``; its base
    model refits to the chains' weighted means and deviations."""
    W, b, c, sigma, base_mean, base_sigma = (
        kernel_array(a, W.dtype) for a in (W, b, c, sigma, base_mean, base_sigma)
    )

    def fit_base(states, weights):
        # An RBM's visible marginal is at least as wide as its conditional,
        # of deviation sigma.
        states = states.astype(np.float64)
        mean = weights @ states
        deviation = np.sqrt(weights @ (states - mean) ** 2)
        fitted_sigma = np.maximum(deviation, sigma).astype(W.dtype)
        fitted = (mean.astype(W.dtype), fitted_sigma)
        return fitted, base_log_partition(fitted_sigma, W.shape[0])

    return AnnealingPath(
        GaussianUnits(b, sigma), bernoulli_units_of(c), W, (base_mean, base_sigma),
        base_log_partition(base_sigma, W.shape[0]),
        lambda X: free_energy_of(X, W, b, c, sigma), fit_base, binary=False,
    )  # fmt: skip


def log_partition_ais_of(components, intercept_visible, intercept_hidden, sigma,
                         base_mean=None, base_sigma=None, n_chains=100, betas=None,
                         random_state=None, return_states=False):  # fmt: skip
    """``likelihood.gaussian_log_partition_ais`` without its parameter validation."""
    W, b, c, sigma = check_gaussian_rbm(
        components, intercept_visible, intercept_hidden, sigma
    )
    base_mean, base_sigma = check_gaussian_base(base_mean, base_sigma, b, sigma)
    return run_ais(
        annealing_path(W, b, c, sigma, base_mean, base_sigma),
        ais_betas(1000 if betas is None else betas), n_chains, random_state,
        return_states,
    )  # fmt: skip


def log_density_ceiling(X, W, b, c, sigma, n_probes=100):
    """An upper bound on the mean log-density of the dense rows ``X``
    (float64 parameters), computable without ``log Z``.

    ``Z = prod_i sqrt(2 pi) sigma_i * sum_h exp(q(h))`` with ``q(h) = c^T h +
    sum_i ((b_i + (W^T h)_i)^2 - b_i^2) / (2 sigma_i^2)``, so any hidden
    states bound ``log Z`` from below: here ``h = 0`` and the most probable
    hidden states of the first ``n_probes`` rows. (The binary RBM's ceiling in
    ``_core/divergence.py`` uses ``Z >= max p~``, which a density does not satisfy.)
    """
    inv_var = 1.0 / sigma**2
    # Once per epoch: the products go through the kernels' BLAS (kernel_dot),
    # so numpy's own thread pool stays asleep.
    with np.errstate(over="ignore", invalid="ignore"):
        pre = kernel_dot(X, np.ascontiguousarray(W * inv_var).T) + c
        deviation = X - b
        log_p = softplus_row_sums(pre) - 0.5 * np.sum(
            deviation * deviation * inv_var, axis=1
        )
        H = (pre[:n_probes] > 0).astype(np.float64)
        means = b + kernel_dot(H, W)
        q = kernel_dot(H, c) + 0.5 * kernel_dot(means**2 - b**2, inv_var)
    log_z_lower = np.sum(np.log(np.sqrt(2.0 * np.pi) * sigma)) + max(
        0.0, float(np.max(q))
    )
    return float(np.mean(log_p) - log_z_lower)


def column_moments(X):
    """Mean and variance of each column of ``X`` (dense or sparse), float64."""
    if sp.issparse(X):
        mean, variance = mean_variance_axis(X.tocsr(), axis=0)
        return np.asarray(mean, np.float64), np.asarray(variance, np.float64)
    X = np.asarray(X, dtype=np.float64)
    return X.mean(axis=0), X.var(axis=0)


# ------------------------------------------------------- the estimator side
class GaussianLayer(Layer):
    """Gaussian visible units, as the estimators see them.

    Made from the estimator's ``sigma`` (``'learn'``, or fixed standard
    deviations) and ``min_sigma`` (the floor of learned ones). The base model
    is independent Gaussians with the training data's means and standard
    deviations (floored), fitted as ``base_mean_`` and ``base_sigma_``; they
    are also the initial ``b`` and learned ``sigma``. The layer's own trained
    array is ``_log_variance`` (``z = log sigma^2``), published as
    ``sigma_``. ``log Z`` is exact by enumerating the hidden layer (the
    visible integral is Gaussian), or AIS from the base model.
    """

    base_attributes = ("base_mean_", "base_sigma_")
    state_attributes = ("_log_variance",)

    def __init__(self, sigma="learn", min_sigma=0.01):
        self.sigma = sigma
        self.min_sigma = min_sigma

    @property
    def learns_sigma(self):
        return isinstance(self.sigma, str)

    def fixed_sigma(self, n_features, dtype):
        """The fixed ``sigma`` as one positive value per feature."""
        return check_scales(self.sigma, n_features, "sigma", dtype)

    def start_sigma(self, model, dtype):
        """``sigma`` of the model every fit starts from: the data's, or the
        fixed one."""
        if self.learns_sigma:
            return model.base_sigma_.astype(dtype)
        return self.fixed_sigma(model.base_sigma_.size, dtype)

    def initial_sigma(self, model, dtype):
        """``sigma`` at the start of this fit: :meth:`start_sigma`, or a
        learned one continues from the warm start ``init``'s ``sigma_``."""
        init = getattr(model, "init", None)
        if init is not None and self.learns_sigma and hasattr(init, "sigma_"):
            return check_scales(init.sigma_, model.base_sigma_.size, "init.sigma_",
                                dtype)  # fmt: skip
        return self.start_sigma(model, dtype)

    # ------------------------------------------------------------- data
    def check_values(self, X, what="X"):
        # Values whose squares overflow cannot be a Gaussian's.
        check_magnitude(
            X, what, X.shape[1], f"Standardise {what} (StandardScaler) first."
        )
        return X

    # ------------------------------------------------------- the fit's start
    def fit_base(self, model, X):
        check_scales(self.min_sigma, 1, "min_sigma", X.dtype)
        # The column variances sum squares over the rows; a value far out of
        # its column's scale (a sentinel such as 1e150 among standardised
        # data) would leave a model of nothing else.
        fix = "Standardise X first (StandardScaler) and look for corrupted values."
        check_magnitude(X, "X", X.shape[0] * X.shape[1], fix)
        warn_if_outlying(X, fix=fix)
        mean, variance = column_moments(X)
        model.base_mean_ = mean
        model.base_sigma_ = np.maximum(np.sqrt(variance), self.min_sigma)

    def check_new_rows(self, model, X):
        # A batch may be one row: its outliers are judged by the base model.
        warn_if_outlying(
            X, fix="Standardise X as the training data were and look for "
            "corrupted values.", reference=(model.base_mean_, model.base_sigma_),
        )  # fmt: skip

    def initial_bias(self, model, X, dtype):
        return model.base_mean_.astype(dtype)

    def initial_offset(self, model, X, dtype):
        # The data's mean of the statistics v / sigma^2 at the start.
        sigma = self.initial_sigma(model, dtype)
        return (model.base_mean_ / sigma**2).astype(dtype)

    def start_training(self, model, X, dtype, init):
        sigma = self.initial_sigma(model, dtype)
        model._log_variance = (2.0 * np.log(sigma)).astype(dtype)

    def publish(self, model):
        if self.learns_sigma:
            model.sigma_ = np.exp(0.5 * model._log_variance)
        else:
            W = model.components_
            model.sigma_ = self.fixed_sigma(W.shape[1], W.dtype)

    def velocities(self, model, bias):
        return np.zeros_like(bias), np.zeros_like(bias)

    def units(self, model, bias, velocities):
        W = model.components_
        learning = self.learns_sigma
        rate = model.learning_rate * model.sigma_learning_rate_factor
        return GaussianTraining(
            bias, velocities[0], model._log_variance, velocities[1],
            float(rate) if learning else 0.0, float(2.0 * np.log(self.min_sigma)),
            np.empty_like(W) if learning else np.empty((0, 0), W.dtype),
            np.zeros(W.shape[1]),
        )  # fmt: skip

    # ---------------------------------------------------------- queries
    def hidden_input(self, model, X):
        scaled_W = (model.components_ / model.sigma_**2).astype(X.dtype)
        return safe_sparse_dot(X, scaled_W.T, dense_output=True)

    def free_energy(self, model, X):
        return free_energy_of(X, *_parameters(model))

    def sample_start(self, model, rs, n_rows):
        noise = rs.standard_normal((n_rows, model.base_mean_.size))
        V = model.base_mean_ + model.base_sigma_ * noise
        return V.astype(model.components_.dtype)

    def sampling_units(self, model, dtype):
        variance = (model.sigma_**2).astype(dtype)
        units = GaussianUnits(
            model.intercept_visible_.astype(dtype), model.sigma_.astype(dtype)
        )
        ctx = (variance, (1.0 / model.sigma_).astype(dtype))
        return units, ctx, lambda V: V / variance, lambda S: S * variance

    def tempering_base(self, model, dtype):
        base_precision = 1.0 / np.asarray(model.base_sigma_, np.float64) ** 2
        return np.asarray(model.base_mean_, np.float64), base_precision

    # ------------------------------------------------------- likelihood
    def enumerated_units(self, model):
        return model.components_.shape[0]

    def exact_log_partition(self, model):
        return log_partition_exact_of(*_parameters(model))

    def annealing_path(self, model):
        W, b, c, sigma = check_gaussian_rbm(*_parameters(model))
        base = check_gaussian_base(model.base_mean_, model.base_sigma_, b, sigma)
        return annealing_path(W, b, c, sigma, *base)

    # ------------------------------------------------------- divergence
    def checked_rows(self, rows):
        rows = rows.toarray() if sp.issparse(rows) else np.asarray(rows)
        return rows.astype(np.float64)

    def divergence_baseline(self, model, rows):
        # The exact mean log-density under the model every fit starts from:
        # independent Gaussians with the data's means and the starting sigma.
        sigma = self.start_sigma(model, np.float64)
        z = (rows - model.base_mean_) / sigma
        return float(
            -np.sum(np.log(np.sqrt(2.0 * np.pi) * sigma))
            - 0.5 * np.mean(np.sum(z * z, axis=1))
        )

    def diagnose(self, model, rows, baseline, parameters):
        # A ceiling on the rows' mean log-density far below the independent
        # Gaussians' is a model certainly worse than where it started
        # (collapsed variances, runaway weights).
        fitted = tuple(np.asarray(p, np.float64) for p in _parameters(model))
        if not all(np.all(np.isfinite(p)) for p in fitted):
            return diagnose(np.nan, baseline, 0, *parameters)
        return diagnose(
            log_density_ceiling(rows, *fitted), baseline, rows.shape[1], *parameters,
            reference="the independent Gaussians the fit started from",
        )  # fmt: skip

    def divergence(self, model):
        if not self.learns_sigma:
            return None
        # A sigma far wider than the data is no fit: each such feature costs
        # at least log(ratio) nats. The floor bounds the other direction.
        ratio = model.sigma_ / model.base_sigma_
        exploded = np.flatnonzero(ratio > MAX_SIGMA_RATIO)
        if exploded.size == 0:
            return None
        i = int(exploded[0])
        return (
            f"the variances exploded: sigma of feature {i} grew to "
            f"{model.sigma_[i]:.3g}, more than {MAX_SIGMA_RATIO:g} times its "
            f"training standard deviation {model.base_sigma_[i]:.3g} "
            f"({exploded.size} feature(s) in all), with learning_rate="
            f"{model.learning_rate:g} and sigma_learning_rate_factor="
            f"{model.sigma_learning_rate_factor:g}. Use a smaller learning_rate, "
            "more Gibbs steps, or a fixed sigma."
        )

    def divergence_advice(self, model):
        names, settings = blamed_settings(
            model, if_changed=("momentum", "weight_decay", "sigma_learning_rate_factor")
        )
        advice = (
            f"with {settings}. Use a smaller {' or '.join(names)}, check that X is "
            "standardised, or fix sigma."
        )
        # A constant feature's density is a spike of width min_sigma, which
        # any weight on it wrecks: standardising does not help, dropping does.
        constant = np.flatnonzero(self._constant(model))
        if constant.size:
            advice += (
                f" {constant.size} of the {model.n_features_in_} "
                f"features of X are constant (first: {constant[:5].tolist()}): "
                "drop them first (sklearn.feature_selection.VarianceThreshold)."
            )
        return advice

    def _constant(self, model):
        """Which features the training data hold constant: their standard
        deviation is at the floor."""
        return model.base_sigma_ <= self.min_sigma

    def after_fit(self, model):
        if not self.learns_sigma:
            return
        # Constant features start at the floor; the learned sigma may leave it.
        at_floor = np.flatnonzero(
            (model.sigma_ <= self.min_sigma * (1 + 1e-6)) | self._constant(model)
        )
        if at_floor.size:
            warn(
                f"sigma of {at_floor.size} feature(s) (first: {at_floor[:5].tolist()}) "
                f"is at its floor min_sigma={self.min_sigma:g}: those features are "
                "constant, or their variance collapsed onto discrete values. "
                "Their log-density depends on the floor. Drop constant features "
                "(VarianceThreshold), add uniform noise to discrete data, or fix "
                "sigma."
            )


def _parameters(model):
    return (
        model.components_, model.intercept_visible_, model.intercept_hidden_,
        model.sigma_,
    )  # fmt: skip
