"""Gibbs sampling, the mini-batch update of every solver, and annealed
importance sampling (forward and reverse) for the Gaussian-Bernoulli RBM.

The energy of Cho, Ilin & Raiko (2011) is
``E(v, h) = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - sum_ij W_ji h_j v_i / sigma_i^2
- c^T h``. In the *scaled* visible state ``s = v / sigma^2`` it reads
``-E = -sum_i v_i^2 / (2 sigma_i^2) + s^T b + h^T W s + c^T h - const(theta)``:
the binary RBM's energy in ``s``, plus a term of ``v`` alone and a constant
that cancels between the data and the model. So ``p(h | v)`` is the binary
RBM's conditional at ``s``, the gradients of ``W``, ``b`` and ``c`` are the
binary RBM's with ``s`` in place of ``v``, and the centring of Melchior,
Fischer & Wiskott (2016) carries over with offsets ``mu`` of ``s``. The chains
here keep their visible state in ``s`` and reuse the binary kernels'
conditionals, bias and weight steps (``gibbs.py``). What is new: drawing ``s``
from ``p(v | h) = N(b + W^T h, sigma^2)``; steps of ``W`` and ``b`` scaled by
``sigma^2`` per visible unit (see :func:`gaussian_minibatch_update`); and the
step of the log variances ``z = log sigma^2`` (a parameterisation that keeps
``sigma`` positive, as Cho et al. advise), whose energy derivative is
``-dE/dz_i = v_i^2 / (2 sigma_i^2) - s_i b_i - s_i (W^T h)_i``.

Orientation and dtypes as in ``gibbs.py``: ``W`` is ``(n_hidden,
n_visible)``, states are row-major, the matrix products run in the dtype of
``W`` and sums of log-probabilities in float64.
"""

import numpy as np

from ._jit import jit
from .blas import gemm_
from .gaussian_tempering import gaussian_tempering_round, path_visible_conditional
from .gibbs import (
    _bias_step_,
    _centred,
    _column_sum,
    _weight_step_,
    hidden_probabilities,
    move_offsets_,
    sample_bernoulli,
    sample_hidden,
)
from .normal import standard_normal
from .partition import _step_key
from .random import new_key, uniform
from .vecmath import exp_minus_abs, log_positive
from .vecmath import jit as vector_jit

# ---------------------------------------------------------------- sampling


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
def sample_scaled_visible(H, W, b, inv_sigma, rng):
    """A draw of ``s = v / sigma^2`` with ``v ~ p(v | h)`` for every row of ``H``."""
    S = np.dot(H, W)
    _add_bias_sample_scaled_(S, b, inv_sigma, new_key(rng), new_key(rng))
    return S


@jit
def gaussian_gibbs_chain(H, W, b, c, inv_sigma, n_steps, rng):
    """``n_steps`` block-Gibbs steps from the hidden state ``H``, as
    ``gibbs.gibbs_chain``: returns the final scaled visible sample and
    ``p(h = 1 | v)`` at it."""
    S = sample_scaled_visible(H, W, b, inv_sigma, rng)
    for _ in range(n_steps - 1):
        S = sample_scaled_visible(sample_hidden(S, W, c, rng), W, b, inv_sigma, rng)
    return S, hidden_probabilities(S, W, c)


@jit
def gibbs_sample_scaled(S, W, b, c, inv_sigma, n_steps, rng):
    """``n_steps`` full Gibbs steps ``s -> h -> s`` from each row of ``S``."""
    for _ in range(n_steps):
        S = sample_scaled_visible(sample_hidden(S, W, c, rng), W, b, inv_sigma, rng)
    return S


# ---------------------------------------------------- the mini-batch update


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


@jit
def _variances(log_var, dtype_of):
    """``(sigma^2, 1 / sigma)`` from ``z = log sigma^2``, in the dtype of
    ``dtype_of`` (a Python float in numba promotes a float32 array)."""
    return np.exp(log_var).astype(dtype_of.dtype), np.exp(-0.5 * log_var).astype(
        dtype_of.dtype
    )


@jit
def gaussian_minibatch_update(
    V,
    W,
    b,
    c,
    log_var,
    mu,
    lam,
    nu_mu,
    nu_lam,
    chain_h,
    persistent,
    n_inner,
    n_gibbs,
    learning_rate,
    log_var_rate,
    log_var_floor,
    momentum,
    weight_decay,
    vel_W,
    vel_b,
    vel_c,
    vel_z,
    data_term,
    model_term,
    tempering,
    accepted,
    rng,
):
    """One mini-batch update of (centred) S-DCP for Gaussian visible units.

    ``gibbs.dcp_minibatch_update`` on the scaled data ``s = v / sigma^2``
    (see the module docstring): the same flags give CD-K, PCD, the centred
    gradient, S-DCP and CS-DCP (Upadhya & Sastry 2017, Algorithms 3-4), with
    Gaussian visible draws.

    The steps of ``W`` and ``b`` are their gradients times ``sigma_i^2`` per
    visible unit: the gradient in ``s`` carries a factor ``1 / sigma_i^2``, so
    a plain step on a feature with a small ``sigma`` (a nearly constant one,
    say) is orders of magnitude too large and training diverges. The Fisher
    information of a Gaussian mean is ``1 / sigma^2``, so the scaled step is
    the natural-gradient step for the means ``b + W^T h``; it moves them in the
    units of ``v``, and rescaling a feature rescales its fitted parameters
    and nothing else. With a fixed ``sigma`` the scaling is free: the weight
    step is the binary RBM's on operands in the units of ``v``.

    With ``log_var_rate > 0`` each (inner) step also moves ``z = log
    sigma^2`` along ``<-dE/dz>_data - <-dE/dz>_model`` with step
    ``log_var_rate`` and keeps ``z >= log_var_floor``; as for the other
    parameters, S-DCP takes the data part once per mini-batch. The hidden part
    of that gradient, ``sum_r s_ri (W^T h_r)_i``, is ``sum_j W_ji (H^T S)_ji``:
    it comes from the products the weight step needs anyway, so learning
    ``sigma`` costs no extra matrix product. Both products go to the scratch
    arrays ``data_term`` and ``model_term`` (shaped like ``W``), and one pass
    over them steps the weights and sums them against ``W``.

    ``tempering`` is ``None``, or ``(betas, base_mean, base_precision)`` for
    the 'pt' and 'cpt' solvers: the persistent chains ``chain_h`` are then the
    stacked replicas of a tempering system on the ladder ``betas`` (float64,
    ``betas[0] = 1``) towards the independent Gaussians of ``base_mean`` and
    ``base_precision`` (``gaussian_tempering.py``), the ``beta = 1`` replicas
    give the negative statistics, and ``accepted[t]`` counts the swaps of
    pair ``(t, t + 1)``. Parallel tempering of Desjardins, Courville, Bengio,
    Vincent & Delalleau (2010) with ``n_inner = 1`` and ``persistent``.

    ``W, b, c, log_var, mu, lam, chain_h, vel_*`` are updated in place
    (``b``, ``c`` are the centred biases); ``V`` is only read.
    """
    learn_sigma = log_var_rate > 0.0
    variance, inv_sigma = _variances(log_var, W)
    S = V * (inv_sigma * inv_sigma)  # a new array: V is only read
    moving_offsets = nu_mu > 0.0 or nu_lam > 0.0
    centred = moving_offsets or np.any(mu != 0.0) or np.any(lam != 0.0)
    b_eff = b - np.dot(lam, W) if centred else b
    c_eff = c - np.dot(W, mu) if centred else c
    H_data = hidden_probabilities(S, W, c_eff)
    n_data, n_chains = V.shape[0], chain_h.shape[0] if persistent else V.shape[0]
    if tempering is not None:
        n_chains //= tempering[0].shape[0]
    sum_S_data, sum_H_data = _column_sum(S), _column_sum(H_data)
    mu_batch = (sum_S_data / n_data).astype(W.dtype)
    lam_batch = (sum_H_data / n_data).astype(W.dtype)
    H_start = chain_h if persistent else sample_bernoulli(H_data, rng)
    S_chain = S  # replaced by the first inner iteration; never written to
    keep_data_term = n_inner > 1  # S-DCP reuses its data term
    data_energy_z = np.zeros(V.shape[1])
    for inner in range(n_inner):
        if inner > 0:
            H_start = sample_hidden(S_chain, W, c_eff, rng)
        if tempering is None:
            S_chain, H_chain = gaussian_gibbs_chain(
                H_start, W, b_eff, c_eff, inv_sigma, n_gibbs, rng
            )
            H_all = H_chain
        else:
            betas, base_mean, base_precision = tempering
            S_all, H_all = gaussian_tempering_round(
                H_start, W, b_eff, c_eff, variance, inv_sigma, base_mean,
                base_precision, betas, n_chains, n_gibbs, rng, accepted,
            )  # fmt: skip
            S_chain, H_chain = S_all[:n_chains], H_all[:n_chains]
        if moving_offsets:
            move_offsets_(W, b, c, mu, lam, mu_batch, lam_batch, nu_mu, nu_lam)
        if inner == 0:
            # The data term, with the offsets of the first inner iteration.
            H_pos = _centred(H_data, lam, centred)
            if learn_sigma:
                gemm_(1.0, H_pos.T, _centred(S, mu, centred), 0.0, data_term)
                data_energy_z = _quadratic_sums(S, b_eff, variance)
                data_energy_z -= _offset_corrections(
                    W, lam, mu, sum_S_data, sum_H_data, n_data, centred
                )
            else:
                # Operands in the units of v, (s - mu) sigma^2: the scaled step.
                V_pos = _centred(V, mu * variance, centred)
                if keep_data_term:
                    gemm_(1.0, H_pos.T, V_pos, 0.0, data_term)
        H_neg = _centred(H_chain, lam, centred)
        sum_S_chain, sum_H_chain = _column_sum(S_chain), _column_sum(H_chain)
        if learn_sigma:
            gemm_(1.0, H_neg.T, _centred(S_chain, mu, centred), 0.0, model_term)
            model_energy_z = _quadratic_sums(S_chain, b_eff, variance)
            model_energy_z -= _offset_corrections(
                W, lam, mu, sum_S_chain, sum_H_chain, n_chains, centred
            )
            # The data part of -dE/dz is taken at the mini-batch's parameters
            # (the first inner iteration), as for every data term of S-DCP.
            data_dots, model_dots = np.zeros(V.shape[1]), np.zeros(V.shape[1])
            _scaled_weight_step_(
                W, vel_W, data_term, model_term, 1.0 / n_data, 1.0 / n_chains,
                variance, learning_rate, momentum, weight_decay, data_dots,
                model_dots, inner == 0,
            )  # fmt: skip
            if inner == 0:
                data_energy_z -= data_dots
            model_energy_z -= model_dots
        else:
            V_neg = _centred(S_chain, mu, centred) * variance
            _weight_step_(
                W, vel_W, data_term, keep_data_term, H_pos, V_pos, H_neg, V_neg,
                n_data, n_chains, learning_rate, momentum, weight_decay,
            )  # fmt: skip
        step = (1.0 / n_data, 1.0 / n_chains, learning_rate, momentum)
        _bias_step_(b, sum_S_data * variance, sum_S_chain * variance, *step, vel_b)
        _bias_step_(c, sum_H_data, sum_H_chain, *step, vel_c)
        if learn_sigma:
            gradient = data_energy_z / n_data - model_energy_z / n_chains
            _log_variance_step_(
                log_var, gradient, log_var_rate, momentum, vel_z, log_var_floor
            )
            # The chain keeps its v; its scaled state follows the new sigma.
            new_variance, inv_sigma = _variances(log_var, W)
            S_chain = S_chain * (variance / new_variance)
            variance = new_variance
        if centred:
            b_eff = b - np.dot(lam, W)
            c_eff = c - np.dot(W, mu)

    if persistent:
        chain_h[:] = sample_bernoulli(H_all, rng)


# ------------------------------------------- annealed importance sampling


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


@jit
def path_sample_visible(H, W, b, inv_var, base_mean, base_precision, beta, rng):
    """``v ~ p_beta(v | h)`` for every row of ``H`` on the annealing path.

    ``p_beta(v, h) ∝ N_A(v)^(1 - beta) exp(-beta E(v, h))`` with ``N_A`` the
    base model of independent Gaussians: given ``h`` each ``v_i`` is Gaussian
    with precision ``(1 - beta) / s_i^2 + beta / sigma_i^2`` and the
    precision-weighted mean of ``m_i`` and ``b_i + (W^T h)_i``; at ``beta = 0``
    it is an exact draw from the base model.
    """
    base_part, coupled_part, std = path_visible_conditional(
        inv_var, base_mean, base_precision, beta
    )
    V = np.dot(H, W)
    radius_key, angle_key = new_key(rng), new_key(rng)
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


@vector_jit
def path_log_ratio_and_hidden_(log_w, A, quadratic, c, beta, beta_prev, key, sample):
    """Add ``log p*_beta(v) - log p*_beta_prev(v)`` to each chain's ``log_w``;
    optionally replace ``A`` by draws of ``h ~ p_beta(h | v)``.

    ``A`` holds ``S W^T`` and ``quadratic`` the visible part from
    :func:`_path_scaled_state`; the hidden part is ``sum_j softplus(beta a_j) -
    softplus(beta_prev a_j)`` with ``a = c + W s``, computed as
    ``(beta - beta_prev) max(a, 0) + log(1 + e^{-beta|a|}) - log(1 +
    e^{-beta_prev|a|})`` so the difference of two close softplus values loses
    nothing to cancellation (as the binary RBM's AIS kernel does). Either
    direction of the path: reverse annealing passes ``beta < beta_prev``.
    """
    n_chains, n_hidden = A.shape
    step = beta - beta_prev
    terms = np.empty(n_hidden)
    for r in range(n_chains):
        for j in range(n_hidden):
            a = A[r, j] + c[j]
            e = exp_minus_abs(beta * a)
            e_prev = exp_minus_abs(beta_prev * a)
            terms[j] = step * max(a, 0.0) + (
                log_positive(1.0 + e) - log_positive(1.0 + e_prev)
            )
            if sample:
                s = 1.0 / (1.0 + e)
                p = s if a >= 0.0 else e * s
                A[r, j] = 1.0 if uniform(key, r * n_hidden + j) < p else 0.0
        increment = step * quadratic[r]
        for j in range(n_hidden):
            increment += terms[j]
        log_w[r] += increment


@jit
def ais_log_weights(W, b, c, sigma, base_mean, base_sigma, betas, n_chains, rng):
    """Annealed importance sampling from independent Gaussians to the RBM.

    The base model ``N_A`` has means ``base_mean`` and standard deviations
    ``base_sigma`` and disconnected hidden units; the path is
    ``p*_beta(v, h) = N_A(v)^(1 - beta) exp(-beta E(v, h))`` (Neal 2001;
    Salakhutdinov & Murray 2008 for binary RBMs). Chains start from exact
    draws of the base model; each temperature costs two matrix products, one
    for the hidden pre-activations (weight increment and ``h`` draw), one for
    the visible draw. Returns the float64 log importance weights.
    """
    inv_var = 1.0 / (sigma.astype(np.float64) ** 2)
    base_precision = 1.0 / (base_sigma.astype(np.float64) ** 2)
    base_mean = base_mean.astype(np.float64)
    H = np.zeros((n_chains, W.shape[0]), dtype=W.dtype)
    V = path_sample_visible(H, W, b, inv_var, base_mean, base_precision, 0.0, rng)
    log_w = np.zeros(n_chains)
    n_betas = betas.shape[0]
    for k in range(1, n_betas):
        beta, beta_prev = betas[k], betas[k - 1]
        last = k == n_betas - 1
        S, quadratic = _path_scaled_state(V, b, inv_var, base_mean, base_precision)
        A = np.dot(S, W.T)
        path_log_ratio_and_hidden_(
            log_w, A, quadratic, c, beta, beta_prev, new_key(rng), not last
        )
        if last:
            break
        V = path_sample_visible(A, W, b, inv_var, base_mean, base_precision, beta, rng)
    return log_w


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
