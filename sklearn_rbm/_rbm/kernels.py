"""The compiled RBM trainer: block Gibbs chains, parallel tempering and the
mini-batch update of every solver, over a visible and a hidden layer.

Nothing here knows a unit type: the conditionals, statistics and products
are the layers' hooks (``_rbm/layers/base.py``), which numba resolves at
compile time from the layers' kernel units, so each kernel compiles once per
pair of unit types and calls no function it does not inline.

Orientation follows scikit-learn's BernoulliRBM: ``W`` has shape
``(n_hidden, n_columns)``, the visible bias is ``b``, the hidden bias ``c``;
chain states are row-major ``(n_rows, n_units)`` matrices of statistics, so
each conditional is one product followed by one fused element-wise pass.

Parallel tempering (Desjardins, Courville, Bengio, Vincent & Delalleau 2010;
Cho, Raiko & Ilin 2010): replica ``t`` samples the RBM tempered towards the
visible layer's base model, ``p_t(v, h) ∝ base(v)^(1 - beta_t)
exp(-beta_t E(v, h))``, ``1 = beta_0 > beta_1 > ... > beta_{T-1} > 0``. The
chains of all replicas are stacked in one matrix, replica ``t`` in rows ``t *
n_chains`` to ``(t + 1) * n_chains``, so a sweep of every replica is one
product per layer, as a Gibbs step of PCD is. Chain ``k`` of replica ``t``
swaps only with chain ``k`` of replicas ``t - 1`` and ``t + 1``: each ``k`` is
an independent tempering system.

Swaps exchange the visible states of neighbours and are accepted by the
Metropolis rule on the tempered *marginals* ``p_t(v)``, whose log is
``beta_t shift . Q(v) + sum_j Gamma(beta_t (W_j s + c_j))`` plus terms of
the base model alone (``Q``, ``shift``: the visible layer's ``swap_terms``;
``Gamma`` the hidden cumulant): the hidden units are summed out after
tempering, so ``Gamma(beta x)`` and not ``beta Gamma(x)``. The hidden states
are redrawn from the new replica's conditional after the swaps, which makes
the visible chain of each replica (and with it the Rao-Blackwellised
statistics of the ``beta = 1`` replica) exact. Summing ``h`` out before the
swap accepts more swaps than exchanging joint states ``(v, h)`` by their
energies, and costs no extra product: ``S W^T`` is needed anyway for the
next sweep.
"""

import numpy as np

from .._numerics.jit import jit, vector_jit
from .._numerics.random import new_key, uniform
from .._numerics.steps import bias_step_, column_sum
from .layers.base import centred as centred_operand
from .layers.base import (
    column_sums,
    context,
    cumulant_gap,
    input_from_hidden,
    input_to_hidden,
    mean_,
    potential_statistics,
    potential_step_,
    sample_,
    statistics,
    swap_terms,
    tempered_context,
    tempered_mean_,
    tempered_sample_,
    visible_step_,
)

# ------------------------------------------------------------------ chains


@jit(inline="always")
def gibbs_chain(visible, ctx, hidden, hidden_ctx, H, W, b, c, n_steps, rng):
    """``n_steps`` block-Gibbs steps from the hidden state ``H``.

    One step draws ``v ~ p(v | h)`` then, except after the last step,
    ``h ~ p(h | v)``. Returns the final visible statistics, the hidden means
    at them (the Rao-Blackwellised hidden statistics the gradients use) and
    the hidden inputs behind those means (``W s``, without the bias ``c``),
    from which persistent chains draw their next hidden state.
    """
    S = sample_(visible, ctx, input_from_hidden(visible, H, W), b, rng)
    for _ in range(n_steps - 1):
        H = sample_(hidden, hidden_ctx, input_to_hidden(visible, ctx, S, W), c, rng)
        S = sample_(visible, ctx, input_from_hidden(visible, H, W), b, rng)
    A = input_to_hidden(visible, ctx, S, W)
    return S, mean_(hidden, hidden_ctx, A.copy(), c), A


@jit
def gibbs_sample(visible, ctx, hidden, S, W, c, n_steps, rng):
    """``n_steps`` full Gibbs steps ``s -> h -> s`` from each row of the
    visible statistics ``S`` (read only); returns the last statistics."""
    hidden_ctx = context(hidden, W)
    b = visible.bias
    for _ in range(n_steps):
        inputs = input_to_hidden(visible, ctx, S, W)
        H = sample_(hidden, hidden_ctx, inputs, c, rng)
        S = sample_(visible, ctx, input_from_hidden(visible, H, W), b, rng)
    return S


# --------------------------------------------------------------- tempering


@vector_jit
def swap_log_ratio(hidden, q, a, q_next, a_next, shift, c, beta, beta_next, scratch):
    """Log Metropolis ratio of swapping the state at ``beta`` (visible terms
    ``q``, hidden inputs ``a``) with the state at ``beta_next``:
    ``log [p_beta(v_next) p_next(v)] - log [p_beta(v) p_next(v_next)]``.

    The ratio is ``(beta - beta_next) shift . (q_next - q) + sum_j g(a_next_j
    + c_j) - g(a_j + c_j)`` with ``g(x) = Gamma(beta x) - Gamma(beta_next x)``
    the hidden cumulant's gap; float64 whatever the dtype of the states.
    ``scratch`` (float64, two rows of one entry per hidden unit: the gaps at
    ``a_next`` and at ``a``) keeps the loop over ``j`` free of a reduction so
    that it vectorises; one loop serves both rows, so the inlined cumulant is
    compiled once.
    """
    linear = 0.0
    for i in range(q.shape[0]):
        linear += shift[i] * (np.float64(q_next[i]) - np.float64(q[i]))
    for side in range(2):
        inputs = a_next if side == 0 else a
        for j in range(c.shape[0]):
            x = np.float64(inputs[j]) + np.float64(c[j])
            scratch[side, j] = cumulant_gap(hidden, j, x, beta, beta_next)
    total = (beta - beta_next) * linear
    for j in range(c.shape[0]):
        total += scratch[0, j] - scratch[1, j]
    return total


@jit
def swap_rows_(X, r, s):
    """In place: exchange rows ``r`` and ``s`` of ``X``."""
    for i in range(X.shape[1]):
        X[r, i], X[s, i] = X[s, i], X[r, i]


@jit(inline="always")
def swap_replicas_(hidden, S, A, Q, shift, c, betas, n_chains, rng, accepted,
                   own_rows):  # fmt: skip
    """One round of neighbour swaps, in place on the stacked states.

    ``S`` holds the visible statistics, ``A = S W^T`` their hidden inputs and
    ``Q`` their visible swap terms (``S`` itself unless ``own_rows``); rows
    move with their states. ``betas`` are float64. The even pairs ``(0, 1),
    (2, 3), ...`` are proposed first, then the odd pairs: the pairs of one
    half are disjoint, so every neighbour pair gets one proposal per round
    and a state can move one rung per half. ``accepted[t]`` counts the
    accepted swaps of pair ``(t, t + 1)``.
    """
    n_temperatures = betas.shape[0]
    key = new_key(rng)
    scratch = np.empty((2, c.shape[0]))
    for parity in range(2):
        for t in range(parity, n_temperatures - 1, 2):
            for k in range(n_chains):
                r, s = t * n_chains + k, (t + 1) * n_chains + k
                log_ratio = swap_log_ratio(
                    hidden, Q[r], A[r], Q[s], A[s], shift, c, betas[t],
                    betas[t + 1], scratch,
                )  # fmt: skip
                u = uniform(key, t * n_chains + k)
                if log_ratio >= 0.0 or u < np.exp(log_ratio):
                    swap_rows_(S, r, s)
                    swap_rows_(A, r, s)
                    if own_rows:
                        swap_rows_(Q, r, s)
                    accepted[t] += 1


@jit(inline="always")
def tempering_round(visible, ctx, hidden, hidden_ctx, base, H, W, b, c, betas,
                    n_chains, n_sweeps, rng, accepted):  # fmt: skip
    """``n_sweeps`` block-Gibbs sweeps of every replica, then one swap round.

    ``H`` holds the stacked hidden states (read only), ``base`` the visible
    layer's tempering base model, ``betas`` the ladder (float64, ``betas[0] =
    1``). A sweep draws ``v ~ p_t(v | h)`` and, except after the last,
    ``h ~ p_t(h | v)``, as :func:`gibbs_chain` does. Returns the visible
    statistics after the swaps, the hidden means at them, each row under
    its (new) replica's temperature (the ``beta = 1`` rows are the negative
    statistics), and the hidden inputs behind those means, from which
    :func:`draw_tempered_hidden` continues the chains. With one temperature
    this is :func:`gibbs_chain` bit for bit (no swap, no extra random draw).
    The conditionals and the swaps use the betas rounded to ``W``'s dtype.
    """
    native = betas.astype(W.dtype)
    betas = native.astype(np.float64)
    tempered = tempered_context(visible, ctx, base, betas, W)
    no_base = np.zeros(W.shape[0], dtype=W.dtype)  # the hidden base model
    inputs = input_from_hidden(visible, H, W)
    S = tempered_sample_(visible, ctx, tempered, inputs, b, native, n_chains, rng)
    for _ in range(n_sweeps - 1):
        inputs = input_to_hidden(visible, ctx, S, W)
        H = tempered_sample_(hidden, hidden_ctx, no_base, inputs, c, native,
                             n_chains, rng)  # fmt: skip
        inputs = input_from_hidden(visible, H, W)
        S = tempered_sample_(visible, ctx, tempered, inputs, b, native, n_chains, rng)
    A = input_to_hidden(visible, ctx, S, W)
    if betas.shape[0] > 1:
        Q, shift, own_rows = swap_terms(visible, ctx, tempered, S, b)
        swap_replicas_(hidden, S, A, Q, shift, c, betas, n_chains, rng, accepted,
                       own_rows)  # fmt: skip
    return S, tempered_mean_(hidden, hidden_ctx, A.copy(), c, native, n_chains), A


@jit(inline="always")
def draw_tempered_hidden(hidden, hidden_ctx, A, W, c, betas, n_chains, rng):
    """In place: the hidden inputs ``A`` of the stacked replicas (as
    :func:`tempering_round` returns them) become draws of ``h ~ p_t(h | v)``,
    each row at its replica's temperature (``betas`` float64, rounded to
    ``W``'s dtype as the round rounds them). A draw from the inputs rather
    than from the means: a mean fixes its conditional (the unit's conditional
    at the input ``beta a``), but recovering a ReLU or dReLU unit's input
    from its mean takes Newton's method, about 1 us an entry: three quarters
    of a dReLU unit's parallel-tempering update did that."""
    no_base = np.zeros(W.shape[0], dtype=W.dtype)  # the hidden base model
    native = betas.astype(W.dtype)
    return tempered_sample_(hidden, hidden_ctx, no_base, A, c, native, n_chains, rng)


@jit
def pt_sample(visible, ctx, hidden, base, S, W, c, betas, n_rounds, rng, accepted):
    """``n_rounds`` rounds of one sweep per replica and one swap round, from
    the stacked visible statistics ``S`` (read only); returns the final
    stacked statistics (the ``beta = 1`` chains are the first ``S.shape[0] /
    T`` rows). ``accepted`` counts the swaps per pair, as in
    :func:`swap_replicas_`.
    """
    hidden_ctx = context(hidden, W)
    b = visible.bias
    n_chains = S.shape[0] // betas.shape[0]
    inputs = input_to_hidden(visible, ctx, S, W)
    H = draw_tempered_hidden(hidden, hidden_ctx, inputs, W, c, betas, n_chains, rng)
    for _ in range(n_rounds):
        # np.int64(1), not 1: a literal argument would compile a copy of
        # tempering_round of its own (numba specialises on literals).
        S, _, A = tempering_round(visible, ctx, hidden, hidden_ctx, base, H, W,
                                  b, c, betas, n_chains, np.int64(1), rng,
                                  accepted)  # fmt: skip
        H = draw_tempered_hidden(hidden, hidden_ctx, A, W, c, betas, n_chains, rng)
    return S


# ----------------------------------------------------- the mini-batch update


@jit(inline="always")
def move_offsets_(W, b, c, mu, lam, mu_batch, lam_batch, nu_mu, nu_lam):
    """In place: slide the centring offsets towards the mini-batch means and
    re-parameterise the centred biases so that the energy is unchanged
    (Upadhya & Sastry 2017, Algorithm 4; Melchior, Fischer & Wiskott 2016)."""
    b += nu_lam * np.dot(lam_batch - lam, W)
    c += nu_mu * np.dot(W, mu_batch - mu)
    mu *= 1.0 - nu_mu
    mu += nu_mu * mu_batch
    lam *= 1.0 - nu_lam
    lam += nu_lam * lam_batch


@jit
def weighted_column_sum(X, weights):
    """``weights^T X``, float64: the weighted column sums of a mini-batch."""
    out = np.zeros(X.shape[1])
    for r in range(X.shape[0]):
        w = weights[r]
        if w != 0.0:
            for j in range(X.shape[1]):
                out[j] += w * X[r, j]
    return out


@jit
def minibatch_update_(V, W, visible, hidden, centring, chains, tempering, schedule,
                      rates, scratch, rng, weights):  # fmt: skip
    """One mini-batch update of centred S-DCP; every solver is a special case.

    This is Algorithm 4 of Upadhya & Sastry (2017) (CS-DCP) written once, over
    the ``visible`` and ``hidden`` layers' kernel units (their biases are the
    centred ``b`` and ``c``, updated in place with their velocities):

    * ``centring = (mu, lam, nu_mu, nu_lam)``, the offsets and their sliding
      factors: ``mu = lam = 0`` and ``nu_mu = nu_lam = 0`` give the uncentred
      energy, so the same code is S-DCP (their Algorithm 3);
    * ``schedule = (n_inner, n_gibbs)``: ``n_inner = 1`` gives CD-K
      (``n_gibbs = K``), and the centred gradient of Melchior et al. (2016)
      when centred;
    * ``chains = (chain_h, persistent, accepted)``: with ``persistent`` the
      chains start from ``chain_h`` (hidden samples kept between mini-batches,
      as scikit-learn's BernoulliRBM does) instead of from the data: PCD;
    * ``tempering = (betas, base)``: with a ladder ``betas`` (not empty) the
      persistent chains are the stacked replicas of a tempering system on
      that ladder towards the visible layer's base model ``base``, the ``beta
      = 1`` replicas give the negative statistics, and ``accepted[t]`` counts
      the swaps of pair ``(t, t + 1)`` (parallel tempering of Desjardins et
      al. 2010, with ``n_inner = 1``); an empty ``betas`` runs plain chains;
    * ``rates = (learning_rate, momentum, weight_decay)``; ``scratch =
      (velocity of W, data_term)``;
    * ``weights`` is empty (every row weighs 1) or the rows' weights
      (float64, scaled by the caller to mean 1 over the training set): the
      data term and the
      offsets' mini-batch means are then weighted sums over the rows,
      ``sum_r w_r (h_r - lam)(s_r - mu)^T / n``, an unbiased estimate of the
      weighted mean over the training set (sequence weights); the chains
      start from every row alike.

    The ladder and the weights are run-time switches, not compile-time
    ones (``None`` would make numba compile one copy of this kernel per
    combination): every solver of a pair of layers shares one compiled
    update.

    The centred parameters ``(W, b, c)`` with offsets ``(mu, lam)`` define
    ``p(h | v)`` at input ``W(s - mu) + c`` and ``p(v | h)`` at input
    ``W^T(h - lam) + b``; sampling uses the equivalent uncentred biases
    ``c - W mu`` and ``b - W^T lam``. Inner iteration ``l`` runs ``n_gibbs``
    Gibbs steps under the current inner parameters from the chain left by
    iteration ``l - 1``, and steps along ``grad g(theta_t) - grad f(theta_l)``
    where the data term ``grad g`` is computed once per mini-batch (first
    inner iteration, after the offsets moved, as in Algorithm 4). Each inner
    step is a plain gradient step on the convex surrogate, as their Algorithm
    2 and text describe: Algorithm 3 as printed sets the increment to zero
    once, outside the inner loop, so each inner step would apply the running
    sum of all previous ones (a prototype of that literal reading did worse
    on shifting bar).

    ``W``, the layers' arrays, the offsets, ``chain_h`` and the velocities
    are updated in place; ``V`` is only read. ``data_term``, shaped like
    ``W``, is scratch allocated once by the caller for all mini-batches (an
    array allocated and freed by every update made glibc return its pages to
    the system and fault them back in). A CD-1 / PCD-1 update of Bernoulli
    layers costs five matrix products and, without momentum, no other pass
    over the weights (see ``layers/base.weight_step_``).
    """
    mu, lam, nu_mu, nu_lam = centring
    chain_h, persistent, accepted = chains
    n_inner, n_gibbs = schedule
    learning_rate, momentum = rates[0], rates[1]
    velocity, data_term = scratch
    b, c = visible.bias, hidden.bias
    ctx, hidden_ctx = context(visible, W), context(hidden, W)
    S = statistics(visible, ctx, V)
    moving_offsets = nu_mu > 0.0 or nu_lam > 0.0
    centred = moving_offsets or np.any(mu != 0.0) or np.any(lam != 0.0)
    b_eff = b - np.dot(lam, W) if centred else b
    c_eff = c - np.dot(W, mu) if centred else c
    # The data term of the hidden potential's own parameters (dReLU), taken
    # once per mini-batch like the other data terms; empty for other units.
    potential_data = potential_statistics(hidden, visible, ctx, S, W, c_eff, weights)
    A_data = input_to_hidden(visible, ctx, S, W)
    # Chains that start at the data draw from the inputs, kept aside.
    H_data = mean_(hidden, hidden_ctx, A_data if persistent else A_data.copy(), c_eff)
    n_data = V.shape[0]
    n_chains = chain_h.shape[0] if persistent else n_data
    tempered = tempering[0].shape[0] > 0
    if tempered:
        n_chains //= tempering[0].shape[0]
    weighted = weights.shape[0] > 0
    if not weighted:
        sum_S_data, sum_H_data = column_sums(visible, S), column_sum(H_data)
    else:
        sum_S_data = weighted_column_sum(S, weights)
        sum_H_data = weighted_column_sum(H_data, weights)
    mu_batch = (sum_S_data / n_data).astype(W.dtype)
    lam_batch = (sum_H_data / n_data).astype(W.dtype)
    H_start = chain_h if persistent else sample_(hidden, hidden_ctx, A_data, c_eff, rng)
    S_chain = S  # replaced by the first inner iteration; never written to
    keep = n_inner > 1  # S-DCP reuses its data term
    for inner in range(n_inner):
        if inner > 0:
            # The chain continues from its visible state under the new parameters.
            inputs = input_to_hidden(visible, ctx, S_chain, W)
            H_start = sample_(hidden, hidden_ctx, inputs, c_eff, rng)
        if not tempered:
            S_chain, H_chain, A_all = gibbs_chain(
                visible, ctx, hidden, hidden_ctx, H_start, W, b_eff, c_eff,
                n_gibbs, rng,
            )  # fmt: skip
        else:
            S_all, H_all, A_all = tempering_round(
                visible, ctx, hidden, hidden_ctx, tempering[1], H_start, W, b_eff,
                c_eff, tempering[0], n_chains, n_gibbs, rng, accepted,
            )  # fmt: skip
            S_chain, H_chain = S_all[:n_chains], H_all[:n_chains]
        if persistent and inner == n_inner - 1:
            # The chains' next hidden state, drawn at the parameters their
            # last step sampled under (before this update's step; no random
            # draw comes between).
            if tempered:
                drawn = draw_tempered_hidden(
                    hidden, hidden_ctx, A_all, W, c_eff, tempering[0], n_chains, rng
                )
            else:
                drawn = sample_(hidden, hidden_ctx, A_all, c_eff, rng)
        potential_chain = potential_statistics(
            hidden, visible, ctx, S_chain, W, c_eff, np.empty(0)
        )
        if moving_offsets:
            move_offsets_(W, b, c, mu, lam, mu_batch, lam_batch, nu_mu, nu_lam)
        if inner == 0:
            # The data term, with the offsets of the first inner iteration.
            H_pos = centred_operand(H_data, lam, centred)
            if weighted:
                H_pos = H_pos * weights.astype(W.dtype).reshape((n_data, 1))
            data = (V, S, H_pos, sum_S_data, sum_H_data)
        sum_H_chain = column_sum(H_chain)
        chain = (
            S_chain, centred_operand(H_chain, lam, centred),
            column_sums(visible, S_chain), sum_H_chain, n_chains,
        )  # fmt: skip
        ctx, S_chain = visible_step_(
            visible, ctx, W, velocity, b_eff, (data_term, keep, inner == 0), data,
            chain, (mu, lam, centred), rates,
        )  # fmt: skip
        bias_step_(
            c, sum_H_data, sum_H_chain, 1.0 / n_data, 1.0 / n_chains, learning_rate,
            momentum, hidden.velocity,
        )  # fmt: skip
        potential_step_(
            hidden, potential_data, potential_chain, 1.0 / n_data, 1.0 / n_chains,
            learning_rate, momentum,
        )  # fmt: skip
        if centred:
            b_eff = b - np.dot(lam, W)
            c_eff = c - np.dot(W, mu)

    if persistent:
        # Element by element: numba's slice assignment from an array compiles,
        # for its shape-mismatch message, numba's string formatting (seconds
        # of every fresh process's first fit, bench_first_fit.py).
        for r in range(chain_h.shape[0]):
            for j in range(chain_h.shape[1]):
                chain_h[r, j] = drawn[r, j]
