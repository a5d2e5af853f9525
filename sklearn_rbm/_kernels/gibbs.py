"""Conditionals, block Gibbs sampling and the mini-batch update of every
``DCPBernoulliRBM`` solver.

Orientation follows scikit-learn's BernoulliRBM: ``W`` has shape
``(n_hidden, n_visible)``, visible bias ``b``, hidden bias ``c``; data and chain
states are row-major ``(n_rows, n_units)`` matrices so each conditional is one
GEMM (``np.dot`` goes to BLAS) followed by one fused element-wise pass
(sigmoid and Bernoulli draw together, no temporaries). The sigmoid is the
branch-free one of ``vecmath.py`` and the element-wise kernels use its ``jit``
(numpy error model), so these loops compile to SIMD code: about 2 ns per
sigmoid-and-draw instead of 11 with libm's scalar ``exp``, which took a
float64 PCD-1 epoch of a 784 x 500 RBM from about 1.5 to 1.1-1.3 times the
cost of its matrix products alone.

Random numbers come from a ``numpy.random.Generator`` passed in by the caller:
each sampled matrix takes one key from it and its elements are counter-based
draws (``random.py``), cheap and independent of the order in which elements
are visited. The element-wise loops are serial on purpose: they run between
BLAS calls, and OpenBLAS threads spin-wait after each call, so numba threads
started there fight them for the two cores (measured: AIS on a 784 x 500 RBM
took 17 ms per temperature with parallel element-wise loops, 3.9 ms serial).
"""

import numpy as np

from ._jit import jit
from .blas import gemm_
from .random import new_key, uniform
from .vecmath import jit as vector_jit
from .vecmath import sigmoid_native


@vector_jit
def add_bias_sigmoid_(pre, bias):
    """In place: ``pre[r, j] = sigmoid(pre[r, j] + bias[j])``."""
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        for j in range(n_cols):
            pre[r, j] = sigmoid_native(pre[r, j] + bias[j])


@vector_jit
def add_bias_sample_keyed_(pre, bias, key):
    """In place: ``pre[r, j] = 1`` with probability ``sigmoid(pre[r, j] + bias[j])``,
    drawing the uniform of entry ``(r, j)`` from the counter-based stream
    ``key`` (so a caller that keys each row's stream, as RAISE does per data
    row, gets draws that do not depend on the rows beside it)."""
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        for j in range(n_cols):
            u = uniform(key, r * n_cols + j)
            pre[r, j] = 1.0 if u < sigmoid_native(pre[r, j] + bias[j]) else 0.0


@jit
def add_bias_sample_(pre, bias, rng):
    """In place: ``pre[r, j] = 1`` with probability ``sigmoid(pre[r, j] + bias[j])``."""
    add_bias_sample_keyed_(pre, bias, new_key(rng))


@vector_jit
def _sample_bernoulli_keyed(probabilities, key, out):
    n_rows, n_cols = probabilities.shape
    for r in range(n_rows):
        for j in range(n_cols):
            u = uniform(key, r * n_cols + j)
            out[r, j] = 1.0 if u < probabilities[r, j] else 0.0


@jit
def sample_bernoulli(probabilities, rng):
    """A binary matrix with ``P(out[r, j] = 1) = probabilities[r, j]``."""
    out = np.empty_like(probabilities)
    _sample_bernoulli_keyed(probabilities, new_key(rng), out)
    return out


@jit
def hidden_probabilities(V, W, c):
    """``p(h = 1 | v)`` for every row of ``V``."""
    H = np.dot(V, W.T)
    add_bias_sigmoid_(H, c)
    return H


@jit
def sample_visible(H, W, b, rng):
    """A draw of ``v ~ p(v | h)`` for every row of ``H``."""
    V = np.dot(H, W)
    add_bias_sample_(V, b, rng)
    return V


@jit
def sample_hidden(V, W, c, rng):
    """A draw of ``h ~ p(h | v)`` for every row of ``V``."""
    H = np.dot(V, W.T)
    add_bias_sample_(H, c, rng)
    return H


@jit
def gibbs_chain(H, W, b, c, n_steps, rng):
    """Run ``n_steps`` block-Gibbs steps from the hidden state ``H``.

    One step draws ``v ~ p(v|h)`` then, except after the last step, ``h ~ p(h|v)``.
    Returns the final visible sample and ``p(h = 1 | v)`` at it (the
    Rao-Blackwellised hidden statistics the gradients use).
    """
    V = sample_visible(H, W, b, rng)
    for _ in range(n_steps - 1):
        V = sample_visible(sample_hidden(V, W, c, rng), W, b, rng)
    return V, hidden_probabilities(V, W, c)


@jit
def _column_sum(X):
    out = np.zeros(X.shape[1])
    for r in range(X.shape[0]):
        for j in range(X.shape[1]):
            out[j] += X[r, j]
    return out


@jit
def _centred(X, offset, centred):
    """``X - offset`` (a new array) when centred, else ``X`` itself."""
    return X - offset if centred else X


@vector_jit
def _scale_add_(alpha, X, beta, out):
    """In place: ``out = alpha * X + beta * out``."""
    x, o = X.reshape(-1), out.reshape(-1)
    for k in range(o.size):
        o[k] = alpha * x[k] + beta * o[k]


@jit
def _weight_step_(
    W, velocity, data_term, use_data_term, H_data, V_data, H_model, V_model,
    n_data, n_chains, learning_rate, momentum, decay,
):  # fmt: skip
    """In place, the weight step ``W += velocity`` with
    ``velocity = momentum * velocity + learning_rate * (H_data^T V_data / n_data
    - H_model^T V_model / n_chains - decay * W)``.

    Without momentum the step goes straight into ``W`` by two accumulating
    GEMMs (``gemm``'s ``beta`` carries the decay), so it costs no pass over the
    weights of its own; with momentum it goes into ``velocity``, then ``W``.
    The (possibly centred) operands are passed in; with ``use_data_term``,
    ``data_term`` holds ``H_data^T V_data`` already computed (the inner
    iterations of S-DCP reuse the data term of their mini-batch).
    """
    rate = learning_rate
    if momentum > 0.0:
        _scale_add_(-rate * decay, W, momentum, velocity)
        target, beta = velocity, 1.0
    else:
        target, beta = W, 1.0 - rate * decay
    if use_data_term:
        _scale_add_(rate / n_data, data_term, beta, target)
    else:
        gemm_(rate / n_data, H_data.T, V_data, beta, target)
    gemm_(-rate / n_chains, H_model.T, V_model, 1.0, target)
    if momentum > 0.0:
        W += velocity


@jit
def _bias_step_(theta, positive, negative, scale_pos, scale_neg, rate, momentum, vel):
    """In place: ``theta += vel`` with ``vel = momentum * vel + rate *
    (scale_pos * positive - scale_neg * negative)`` (the bias terms are short)."""
    for k in range(theta.size):
        step = rate * (scale_pos * positive[k] - scale_neg * negative[k])
        if momentum > 0.0:
            step += momentum * vel[k]
            vel[k] = step
        theta[k] += step


@jit
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
def dcp_minibatch_update(
    V,
    W,
    b,
    c,
    mu,
    lam,
    nu_mu,
    nu_lam,
    chain_h,
    persistent,
    n_inner,
    n_gibbs,
    learning_rate,
    momentum,
    weight_decay,
    vel_W,
    vel_b,
    vel_c,
    data_term,
    rng,
):
    """One mini-batch update of centred S-DCP; every solver is a special case.

    This is Algorithm 4 of Upadhya & Sastry (2017) (CS-DCP) written once:

    * ``mu = lam = 0`` and ``nu_mu = nu_lam = 0`` give the uncentred energy,
      so the same code is S-DCP (their Algorithm 3);
    * ``n_inner = 1`` gives CD-K (``n_gibbs = K``) and the centred gradient of
      Melchior et al. (2016) when centred;
    * ``persistent = True`` starts the chain from ``chain_h`` (hidden samples
      kept between mini-batches, as scikit-learn's BernoulliRBM does) instead
      of from the data: PCD.

    The centred parameters ``(W, b, c)`` with offsets ``(mu, lam)`` define
    ``p(h=1|v) = sigmoid(W(v - mu) + c)`` and ``p(v=1|h) = sigmoid(W^T(h - lam) + b)``;
    sampling uses the equivalent uncentred biases ``c - W mu`` and
    ``b - W^T lam``. Inner iteration ``l`` runs ``n_gibbs`` Gibbs steps under the
    current inner parameters from the chain left by iteration ``l - 1``, and
    steps along ``grad g(theta_t) - grad f(theta_l)`` where the data term
    ``grad g`` is computed once per mini-batch (first inner iteration, after
    the offsets moved, as in Algorithm 4). Each inner step is a plain gradient
    step on the convex surrogate, as their Algorithm 2 and text describe:
    Algorithm 3 as printed sets the increment to zero once, outside the inner
    loop, so each inner step would apply the running sum of all previous
    ones (a prototype of that literal reading did worse on shifting bar).

    Arrays ``W, b, c, mu, lam, chain_h, vel_*`` are updated in place; ``V`` is
    only read. ``data_term``, shaped like ``W``, is scratch space allocated once
    by the caller for all mini-batches (an array allocated and freed by every
    update made glibc return its pages to the system and fault them back in):
    the S-DCP solvers keep the data term ``H_data^T V`` there for their later
    inner iterations; CD and PCD never touch it. A CD-1 / PCD-1 update costs
    five GEMMs and, without momentum, no other pass over the weights (see
    ``_weight_step_``).
    """
    moving_offsets = nu_mu > 0.0 or nu_lam > 0.0
    centred = moving_offsets or np.any(mu != 0.0) or np.any(lam != 0.0)
    b_eff = b - np.dot(lam, W) if centred else b
    c_eff = c - np.dot(W, mu) if centred else c
    H_data = hidden_probabilities(V, W, c_eff)
    n_data, n_chains = V.shape[0], chain_h.shape[0] if persistent else V.shape[0]
    sum_V_data, sum_H_data = _column_sum(V), _column_sum(H_data)
    mu_batch = (sum_V_data / n_data).astype(W.dtype)
    lam_batch = (sum_H_data / n_data).astype(W.dtype)
    if persistent:
        H_start = chain_h
    else:
        H_start = sample_bernoulli(H_data, rng)
    V_chain = V  # replaced by the first inner iteration; never written to
    keep_data_term = n_inner > 1
    for inner in range(n_inner):
        if inner > 0:
            # The chain continues from its visible state under the new parameters.
            H_start = sample_hidden(V_chain, W, c_eff, rng)
        V_chain, H_chain = gibbs_chain(H_start, W, b_eff, c_eff, n_gibbs, rng)

        if moving_offsets:
            move_offsets_(W, b, c, mu, lam, mu_batch, lam_batch, nu_mu, nu_lam)
        if inner == 0:
            # The data term, with the offsets of the first inner iteration.
            H_pos, V_pos = _centred(H_data, lam, centred), _centred(V, mu, centred)
            if keep_data_term:
                gemm_(1.0, H_pos.T, V_pos, 0.0, data_term)
        _weight_step_(
            W, vel_W, data_term, keep_data_term, H_pos, V_pos,
            _centred(H_chain, lam, centred), _centred(V_chain, mu, centred),
            n_data, n_chains, learning_rate, momentum, weight_decay,
        )  # fmt: skip
        step = (1.0 / n_data, 1.0 / n_chains, learning_rate, momentum)
        _bias_step_(b, sum_V_data, _column_sum(V_chain), *step, vel_b)
        _bias_step_(c, sum_H_data, _column_sum(H_chain), *step, vel_c)
        if centred:
            b_eff = b - np.dot(lam, W)
            c_eff = c - np.dot(W, mu)

    if persistent:
        chain_h[:] = sample_bernoulli(H_chain, rng)


@jit
def gibbs_sample_visible(V, W, b, c, n_steps, rng):
    """``n_steps`` full Gibbs steps ``v -> h -> v`` from each row of ``V``."""
    for _ in range(n_steps):
        V = sample_visible(sample_hidden(V, W, c, rng), W, b, rng)
    return V
