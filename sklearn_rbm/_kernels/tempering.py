"""Parallel tempering for binary RBMs: tempered Gibbs sweeps, replica swaps,
the mini-batch update of the 'pt' solvers and a tempered sampler.

Replica ``t`` samples the tempered RBM
``p_t(v, h) ∝ exp(beta_t (h^T W v + b^T v + c^T h) + (1 - beta_t) a^T v)``,
``1 = beta_0 > beta_1 > ... > beta_{T-1} > 0`` (Desjardins, Courville, Bengio,
Vincent & Delalleau 2010; Cho, Raiko & Ilin 2010). The visible vector ``a``
says where the ladder leads: zeros scale the whole energy by ``beta`` (the
uniform distribution at ``beta = 0``), the base-rate biases interpolate
towards the base-rate model as AIS does. The conditionals are
``p_t(h_j = 1 | v) = sigmoid(beta_t (W_j v + c_j))`` and
``p_t(v_i = 1 | h) = sigmoid(beta_t (W^T h + b)_i + (1 - beta_t) a_i)``.

The chains of all replicas are stacked in one matrix, replica ``t`` in rows
``t * n_chains`` to ``(t + 1) * n_chains``, so a sweep of every replica is one
matrix product per layer, as a Gibbs step of PCD is. Chain ``k`` of replica
``t`` swaps only with chain ``k`` of replicas ``t - 1`` and ``t + 1``: each
``k`` is an independent tempering system.

Swaps exchange the visible states of neighbours and are accepted by the
Metropolis rule on the tempered *marginals* ``p_t(v)``, whose log is
``a^T v + beta_t (b - a)^T v + sum_j softplus(beta_t (W_j v + c_j))`` up to a
constant. This is not ``-beta_t F(v)`` with the free energy ``F`` of the RBM:
the hidden units are summed out after tempering, so ``softplus(beta x)`` and
not ``beta softplus(x)``. The hidden states are redrawn from the new
replica's conditional after the swaps, which makes the visible chain of each
replica (and with it the Rao-Blackwellised statistics ``p(h | v)`` of the
``beta = 1`` replica) exact. Summing ``h`` out before the swap accepts more
swaps than exchanging joint states ``(v, h)`` by their energies, and costs no
extra matrix product: ``V W^T`` is needed anyway for the next sweep.
"""

import numpy as np

from ._jit import jit
from .gibbs import (
    _bias_step_,
    _centred,
    _column_sum,
    _weight_step_,
    hidden_probabilities,
    move_offsets_,
    sample_bernoulli,
)
from .random import new_key, uniform
from .vecmath import exp_minus_abs, log_positive, sigmoid_native
from .vecmath import jit as vector_jit


@vector_jit
def _tempered_sample_keyed(pre, bias, base, betas, rests, n_chains, key):
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        beta, rest = betas[r // n_chains], rests[r // n_chains]
        for j in range(n_cols):
            u = uniform(key, r * n_cols + j)
            x = beta * (pre[r, j] + bias[j]) + rest * base[j]
            pre[r, j] = 1.0 if u < sigmoid_native(x) else 0.0


@jit
def tempered_sample_(pre, bias, base, betas, n_chains, rng):
    """In place: ``pre[r, j] = 1`` with probability
    ``sigmoid(beta (pre[r, j] + bias[j]) + (1 - beta) base[j])``, ``beta`` the
    inverse temperature of row ``r``'s replica (``betas`` in the dtype of
    ``pre``). With ``beta = 1`` this is exactly ``gibbs.add_bias_sample_``."""
    rests = np.ones_like(betas) - betas
    _tempered_sample_keyed(pre, bias, base, betas, rests, n_chains, new_key(rng))


@vector_jit
def tempered_sigmoid_(pre, bias, betas, n_chains):
    """In place: ``pre[r, j] = sigmoid(beta (pre[r, j] + bias[j]))``."""
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        beta = betas[r // n_chains]
        for j in range(n_cols):
            pre[r, j] = sigmoid_native(beta * (pre[r, j] + bias[j]))


@jit(inline="always")
def _softplus_gap(x, beta, beta_next):
    """``softplus(beta x) - softplus(beta_next x)`` without cancellation, as
    ``(beta - beta_next) max(x, 0) + log(1 + e^{-beta|x|})
    - log(1 + e^{-beta_next|x|})`` (the trick of the AIS weight increments)."""
    return (beta - beta_next) * max(x, 0.0) + (
        log_positive(1.0 + exp_minus_abs(beta * x))
        - log_positive(1.0 + exp_minus_abs(beta_next * x))
    )


@vector_jit
def swap_log_ratio(v, a, v_next, a_next, bias_shift, c, beta, beta_next, scratch):
    """Log Metropolis ratio of swapping ``v`` (at ``beta``) and ``v_next`` (at
    ``beta_next``): ``log [p_beta(v_next) p_next(v)] - log [p_beta(v) p_next(v_next)]``.

    ``a = W v`` and ``a_next = W v_next`` (hidden pre-activations without
    bias), ``bias_shift = b - base``. The ratio is
    ``(beta - beta_next) bias_shift^T (v_next - v) + sum_j g(a_next_j + c_j) -
    g(a_j + c_j)`` with ``g(x) = softplus(beta x) - softplus(beta_next x)``;
    float64 whatever the dtype of the states. ``scratch`` (float64, one entry
    per hidden unit) keeps the loop over ``j`` free of a reduction so that it
    vectorises.
    """
    linear = 0.0
    for i in range(v.shape[0]):
        linear += bias_shift[i] * (np.float64(v_next[i]) - np.float64(v[i]))
    for j in range(c.shape[0]):
        x_next = np.float64(a_next[j]) + np.float64(c[j])
        x = np.float64(a[j]) + np.float64(c[j])
        scratch[j] = _softplus_gap(x_next, beta, beta_next) - _softplus_gap(
            x, beta, beta_next
        )
    total = (beta - beta_next) * linear
    for j in range(c.shape[0]):
        total += scratch[j]
    return total


@jit
def _swap_rows_(X, r, s):
    for i in range(X.shape[1]):
        X[r, i], X[s, i] = X[s, i], X[r, i]


@jit
def swap_replicas_(V, A, bias_shift, c, betas, n_chains, rng, accepted):
    """One round of neighbour swaps, in place on the stacked states.

    ``V`` holds the visible states, ``A = V W^T`` their hidden pre-activations
    (rows move with their states); ``betas`` are float64. The even pairs
    ``(0, 1), (2, 3), ...`` are proposed first, then the odd pairs: the pairs
    of one half are disjoint, so every neighbour pair gets one proposal per
    round and a state can move one rung per half. ``accepted[t]`` counts the
    accepted swaps of pair ``(t, t + 1)``.
    """
    n_temperatures = betas.shape[0]
    key = new_key(rng)
    scratch = np.empty(c.shape[0])
    for parity in range(2):
        for t in range(parity, n_temperatures - 1, 2):
            for k in range(n_chains):
                r, s = t * n_chains + k, (t + 1) * n_chains + k
                log_ratio = swap_log_ratio(
                    V[r], A[r], V[s], A[s], bias_shift, c, betas[t], betas[t + 1],
                    scratch,
                )  # fmt: skip
                u = uniform(key, t * n_chains + k)
                if log_ratio >= 0.0 or u < np.exp(log_ratio):
                    _swap_rows_(V, r, s)
                    _swap_rows_(A, r, s)
                    accepted[t] += 1


@jit
def tempering_round(H, W, b, c, base, betas, n_chains, n_sweeps, rng, accepted):
    """``n_sweeps`` block-Gibbs sweeps of every replica, then one swap round.

    ``H`` holds the stacked hidden states (read only). A sweep draws
    ``v ~ p_t(v | h)`` and, except after the last, ``h ~ p_t(h | v)``, as
    ``gibbs.gibbs_chain`` does. Returns the visible states after the swaps and
    ``p_t(h = 1 | v)`` at them, each row under its (new) replica's
    temperature: the ``beta = 1`` rows are the negative statistics, and a draw
    from all rows continues the chains. With one temperature this is
    ``gibbs.gibbs_chain`` bit for bit (no swap, no extra random draw).
    """
    native = betas.astype(W.dtype)  # the tempered conditionals in W's dtype
    no_base = np.zeros(W.shape[0], dtype=W.dtype)
    V = np.dot(H, W)
    tempered_sample_(V, b, base, native, n_chains, rng)
    for _ in range(n_sweeps - 1):
        H = np.dot(V, W.T)
        tempered_sample_(H, c, no_base, native, n_chains, rng)
        V = np.dot(H, W)
        tempered_sample_(V, b, base, native, n_chains, rng)
    A = np.dot(V, W.T)
    if betas.shape[0] > 1:
        # Swap with the betas the conditionals used (float32-rounded in float32).
        bias_shift = b.astype(np.float64) - base.astype(np.float64)
        swap_replicas_(
            V, A, bias_shift, c, native.astype(np.float64), n_chains, rng, accepted
        )
    tempered_sigmoid_(A, c, native, n_chains)
    return V, A


@jit
def pt_minibatch_update(
    V, W, b, c, mu, lam, nu_mu, nu_lam, replica_h, betas, base, n_gibbs,
    learning_rate, momentum, weight_decay, vel_W, vel_b, vel_c, accepted, rng,
):  # fmt: skip
    """One mini-batch update of (centred) PCD with a parallel-tempering
    negative phase: the 'pt' and 'cpt' solvers.

    The replicas continue from their hidden states ``replica_h`` (stacked,
    ``n_chains`` rows per temperature of ``betas``, float64, ``betas[0] = 1``),
    make ``n_gibbs`` sweeps each and one swap round
    (:func:`tempering_round`); the ``beta = 1`` replica's visible states and
    ``p(h | v)`` are the negative statistics of the gradient step, which is
    that of ``gibbs.dcp_minibatch_update`` with one inner iteration (centred
    when the offsets ``mu, lam`` move, as the centred gradient of Melchior,
    Fischer & Wiskott 2016). Finally every replica's hidden state is redrawn
    from its conditional. With a single temperature this is the persistent
    update of ``dcp_minibatch_update`` bit for bit.

    ``W, b, c, mu, lam, replica_h, vel_*`` are updated in place and
    ``accepted[t]`` counts the swaps of pair ``(t, t + 1)``; ``V`` and
    ``base`` (the tempering's base-model visible biases, in ``W``'s dtype) are
    only read.
    """
    moving_offsets = nu_mu > 0.0 or nu_lam > 0.0
    centred = moving_offsets or np.any(mu != 0.0) or np.any(lam != 0.0)
    b_eff = b - np.dot(lam, W) if centred else b
    c_eff = c - np.dot(W, mu) if centred else c
    H_data = hidden_probabilities(V, W, c_eff)
    n_data, n_chains = V.shape[0], replica_h.shape[0] // betas.shape[0]
    sum_V_data, sum_H_data = _column_sum(V), _column_sum(H_data)
    mu_batch = (sum_V_data / n_data).astype(W.dtype)
    lam_batch = (sum_H_data / n_data).astype(W.dtype)
    V_all, H_all = tempering_round(
        replica_h, W, b_eff, c_eff, base, betas, n_chains, n_gibbs, rng, accepted
    )
    V_chain, H_chain = V_all[:n_chains], H_all[:n_chains]
    if moving_offsets:
        move_offsets_(W, b, c, mu, lam, mu_batch, lam_batch, nu_mu, nu_lam)
    H_pos, V_pos = _centred(H_data, lam, centred), _centred(V, mu, centred)
    _weight_step_(
        W, vel_W, W, False, H_pos, V_pos,  # no stored data term (W is not read)
        _centred(H_chain, lam, centred), _centred(V_chain, mu, centred),
        n_data, n_chains, learning_rate, momentum, weight_decay,
    )  # fmt: skip
    step = (1.0 / n_data, 1.0 / n_chains, learning_rate, momentum)
    _bias_step_(b, sum_V_data, _column_sum(V_chain), *step, vel_b)
    _bias_step_(c, sum_H_data, _column_sum(H_chain), *step, vel_c)
    replica_h[:] = sample_bernoulli(H_all, rng)


@jit
def pt_sample(V, W, b, c, base, betas, n_rounds, rng, accepted):
    """``n_rounds`` rounds of one sweep per replica and one swap round, from
    the stacked visible states ``V`` (read only); returns the final stacked
    visible states (the ``beta = 1`` chains are the first ``V.shape[0] / T``
    rows). ``accepted`` counts the swaps per pair, as in :func:`swap_replicas_`.
    """
    n_chains = V.shape[0] // betas.shape[0]
    native = betas.astype(W.dtype)
    H = np.dot(V, W.T)
    tempered_sample_(H, c, np.zeros(W.shape[0], dtype=W.dtype), native, n_chains, rng)
    for _ in range(n_rounds):
        V, P = tempering_round(H, W, b, c, base, betas, n_chains, 1, rng, accepted)
        H = sample_bernoulli(P, rng)
    return V
