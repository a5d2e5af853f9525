"""Bernoulli units: binary states with ``p(x = 1 | inputs) = sigmoid(inputs + b)``.

The kernels are one fused element-wise pass each (sigmoid and draw together,
no temporaries but a scratch row of inputs) between the matrix products of
the trainer; the sigmoid is the branch-free one of ``vecmath.py`` and the
loops use ``vector_jit``, so they compile to SIMD code: about 2 ns per
sigmoid-and-draw instead of 11 with libm's scalar ``exp``, which took a
float64 PCD-1 epoch of a 784 x 500 RBM from about 1.5 to 1.1-1.3 times the
cost of its matrix products alone. A float64 draw mostly needs no exact
sigmoid at all (``vecmath.draw_bernoulli_row_``).

Random numbers come from a ``numpy.random.Generator`` passed in by the caller:
each sampled matrix takes one key from it and its elements are counter-based
draws (``random.py``), cheap and independent of the order in which elements
are visited. The loops are serial on purpose: they run between BLAS calls,
and OpenBLAS threads spin-wait after each call, so numba threads started
there fight them for the cores (measured: AIS on a 784 x 500 RBM took 17 ms
per temperature with parallel element-wise loops, 3.9 ms serial). Measured
again on the shared two-core machine (2026-11-28, the AIS stages in
``prange`` over blocks of four chains, bit for bit the serial results): 10
times the two products' time against 1.26 serial with two BLAS threads, 5
against 1.12 with one BLAS thread and two numba threads (numba's OpenMP
threads spin-wait, and a region started while the other core is busy waits
for a time slice); with ``OMP_WAIT_POLICY=passive``, 1.25-1.27 against
1.22-1.23. Giving each thread its own chains for the whole run (one region)
would change the results: OpenBLAS's rows of a product depend on how many
rows share the call.
Measured once more (2026-11-29): after each parallel region numba's OpenMP
worker keeps spinning for 2-5 ms of CPU (``GOMP_SPINCOUNT``), longer than a
matrix product at two threads, so it takes half a core from OpenBLAS's own
worker in the product that follows. Splitting the products themselves into
blocks, one per numba thread with a one-thread BLAS (one pool for
everything), changes their float64 bits with the block sizes (so the blocks
would have to be fixed, whatever the thread count) and costs CPU at one
thread: 15 % (float64) and 31 % (float32) more for 100 chains in two blocks
of rows, 11 % and 6 % in two blocks of units (two calls, each packing its
operands again, and a copy).

Statistics are the states themselves, the cumulant of a unit is
``softplus``, and the base model of annealing and tempering is the
base-rate model: independent units with the training data's means
(Salakhutdinov & Murray 2008). The estimator side is :class:`BernoulliLayer`.
"""

from typing import NamedTuple

import numpy as np
from numba import types
from numba.extending import overload
from numba.np.numpy_support import as_dtype
from scipy.special import expit, logit
from sklearn.utils.extmath import safe_sparse_dot

from ..._core.divergence import (
    base_rate_log_likelihood,
    diagnose,
    likelihood_ceiling,
    softplus_row_sums,
)
from ..._core.numba_compat import inline_overload
from ..._core.utils import (
    as_real_array,
    check_unit_interval,
    kernel_array,
    warn_if_not_binary,
)
from ..._numerics.blas import gemm_, kernel_dot
from ..._numerics.jit import jit, vector_jit
from ..._numerics.random import new_key, offset_key, step_key, uniform
from ..._numerics.steps import add_, row_sums
from ..._numerics.vecmath import (
    NEAR_STEP,
    draw_bernoulli_row_,
    exp_minus_abs,
    log1p_near,
    log_positive,
    near_gap_log_argument,
    sigmoid_native,
    softplus_gap,
)
from ..._partition.annealing import AnnealingPath, ais_betas, run_ais
from ..._partition.exact import _check_rbm, _free_energy, log_partition_exact
from . import base
from .base import Layer, centred, gemm_outer_, implements, linear_step_


class BernoulliUnits(NamedTuple):
    """The kernel units of a Bernoulli layer: its bias (centred during
    training) and the bias's velocity (empty outside training)."""

    bias: np.ndarray
    velocity: np.ndarray


# ------------------------------------------------------------------ kernels
@vector_jit
def add_bias_sigmoid_(pre, bias):
    """In place: ``pre[r, j] = sigmoid(pre[r, j] + bias[j])``."""
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        for j in range(n_cols):
            pre[r, j] = sigmoid_native(pre[r, j] + bias[j])


def input_row(n, *arrays):
    """An empty row of ``n`` inputs in the dtype that arithmetic on the
    elements of ``arrays`` gives (float32 for float32 arrays): a scratch row
    keeps the inputs' bits for :func:`draw_bernoulli_row_`."""
    return np.empty(n, np.result_type(*arrays))


@overload(input_row)
def _input_row(n, *arrays):
    dtype = np.result_type(*(as_dtype(array.dtype) for array in arrays))
    return lambda n, *arrays: np.empty(n, dtype)


@vector_jit
def add_bias_sample_keyed_(pre, bias, key, scale=None):
    """In place: ``pre[r, j] = 1`` with probability ``sigmoid(pre[r, j] + bias[j])``,
    drawing the uniform of entry ``(r, j)`` from the counter-based stream
    ``key`` (so a caller that keys each row's stream, as RAISE does per data
    row, gets draws that do not depend on the rows beside it).

    Each row is drawn by
    :func:`~sklearn_rbm._numerics.vecmath.draw_bernoulli_row_`: float64
    comparisons ``u < sigmoid(x)`` are decided from a cheap ``exp`` where
    that provably gives the same answer, with the exact sigmoid for the few
    entries left (the same bits, 0.13 instead of 0.17 ms per 100 x 784
    draw); float32 ones compare with the float32 sigmoid at once.

    With ``scale``, ``pre`` is first scaled in place, as ``pre *= scale``
    would (each product rounded to the dtype of ``pre``), in the same pass:
    the annealing path draws at ``beta (A W) + b_beta`` without a pass of its
    own over the visible inputs (about 0.03 ms of a 3.5 ms AIS temperature
    of a 784 x 500 RBM). ``None`` compiles the scaling out.
    """
    n_rows, n_cols = pre.shape
    x, scaling = input_row(n_cols, pre, bias), (bias, scale)
    for r in range(n_rows):
        draw_bernoulli_row_(pre[r], x, key, r * n_cols, _scaled_input, scaling)


@vector_jit(inline="always")
def _scaled_input(row, j, scaling):
    bias, scale = scaling
    row[j] = scaled(row[j], scale)
    return row[j] + bias[j]


def scaled(value, scale):
    """``value * scale``, or ``value`` itself when ``scale`` is None (the
    product compiled out)."""
    return value if scale is None else value * scale


@inline_overload(scaled)
def _scaled(value, scale):
    if isinstance(scale, types.NoneType):
        return lambda value, scale: value
    return lambda value, scale: value * scale


@jit(inline="always")
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


@jit(inline="always")
def sample_bernoulli(probabilities, rng):
    """A binary matrix with ``P(out[r, j] = 1) = probabilities[r, j]``."""
    out = np.empty_like(probabilities)
    _sample_bernoulli_keyed(probabilities, new_key(rng), out)
    return out


@vector_jit
def _tempered_sample_keyed(pre, bias, base, betas, rests, n_chains, key):
    n_rows, n_cols = pre.shape
    x = input_row(n_cols, pre, bias, base, betas)
    for r in range(n_rows):
        tempering = (bias, base, betas[r // n_chains], rests[r // n_chains])
        draw_bernoulli_row_(pre[r], x, key, r * n_cols, _tempered_input, tempering)


@vector_jit(inline="always")
def _tempered_input(row, j, tempering):
    bias, base, beta, rest = tempering
    return beta * (row[j] + bias[j]) + rest * base[j]


@jit(inline="always")
def tempered_sample_(pre, bias, base, betas, n_chains, rng):
    """In place: ``pre[r, j] = 1`` with probability
    ``sigmoid(beta (pre[r, j] + bias[j]) + (1 - beta) base[j])``, ``beta`` the
    inverse temperature of row ``r``'s replica (``betas`` in the dtype of
    ``pre``). With ``beta = 1`` this is exactly :func:`add_bias_sample_`."""
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


@vector_jit
def anneal_(log_w, A, visible_terms, c, beta, beta_prev, key, sample):
    """One temperature of annealing for Bernoulli hidden units: add each
    chain's log-weight increment and, with ``sample``, replace ``A`` by draws
    of ``h ~ p_beta(h | v)``.

    ``A`` holds the hidden inputs ``W s`` and ``visible_terms`` the visible
    part of ``d log p*_beta(v) / d beta`` of each chain. The increment of
    chain ``r`` is ``log p*_beta(v_r) - log p*_beta_prev(v_r) = (beta -
    beta_prev) visible_terms[r] + sum_j softplus(beta a_j) -
    softplus(beta_prev a_j)`` with ``a = A[r] + c``, each difference computed
    without cancellation; ``exp(-beta |a_j|)`` also gives ``sigmoid(beta
    a_j)`` for the draw. Either direction of the path: reverse annealing
    passes ``beta < beta_prev``.

    A row whose steps ``|(beta - beta_prev) a_j|`` are all at most
    ``NEAR_STEP`` (any schedule of a thousand temperatures or more, unless
    the inputs reach the hundreds) takes the operations of
    :func:`~sklearn_rbm._numerics.vecmath.softplus_gap_near`, which reuses
    the draw's ``exp`` and ``1 / (1 + e)``; other rows take those of
    :func:`~sklearn_rbm._numerics.vecmath.softplus_gap`. The draws are the
    same either way (0.36 -> 0.25 ms per 100 x 500 temperature, one thread).

    A row goes through short loops, one per stage (inputs, each exponential,
    each logarithm, the draws), instead of one loop doing all: an element's
    stages form a chain of about 200 dependent operations, too long for the
    processor to overlap the next elements' work with it, while a stage alone
    overlaps (0.52 -> 0.43 ms per 100 x 500 temperature, one thread).
    """
    n_chains, n_hidden = A.shape
    step = beta - beta_prev
    scratch = np.empty((4, n_hidden))
    a, e_now, s, e_prev = scratch[0], scratch[1], scratch[2], scratch[3]
    # Rows go by blocks of four (the block row_sums adds at once), so the
    # scratch stays four rows whatever the number of chains (RAISE anneals
    # thousands at once).
    terms = np.empty((4, n_hidden))
    for r in range(n_chains):
        gaps = terms[r % 4]
        n_far = 0  # an integer count vectorises; a float max would not
        for j in range(n_hidden):
            a[j] = A[r, j] + c[j]
            n_far += 1 if abs(step * a[j]) > NEAR_STEP else 0
        for j in range(n_hidden):
            e_now[j] = exp_minus_abs(beta * a[j])
        for j in range(n_hidden):
            s[j] = 1.0 / (1.0 + e_now[j])
        if n_far == 0:
            y = e_prev
            for j in range(n_hidden):
                y[j] = near_gap_log_argument(a[j], e_now[j], s[j], step)
            for j in range(n_hidden):
                gaps[j] = step * max(a[j], 0.0) - log1p_near(y[j])
        else:
            _far_gaps(gaps, a, e_now, e_prev, step, beta_prev)
        if sample:
            for j in range(n_hidden):
                p = s[j] if a[j] >= 0.0 else e_now[j] * s[j]
                A[r, j] = 1.0 if uniform(key, r * n_hidden + j) < p else 0.0
        if r % 4 == 3 or r == n_chains - 1:
            block = slice(r - r % 4, r + 1)
            add_(
                log_w[block],
                row_sums(terms[: r % 4 + 1], None, step * visible_terms[block]),
            )


@vector_jit(inline="always")
def _far_gaps(gaps, a, e_now, e_prev, step, beta_prev):
    """``gaps[j] = softplus(beta a_j) - softplus(beta_prev a_j)`` by the
    operations of ``softplus_gap``, so with its bits."""
    for j in range(a.shape[0]):
        e_prev[j] = exp_minus_abs(beta_prev * a[j])
    for j in range(a.shape[0]):
        gaps[j] = log_positive(1.0 + e_now[j])
    for j in range(a.shape[0]):
        gaps[j] = step * max(a[j], 0.0) + (gaps[j] - log_positive(1.0 + e_prev[j]))


@jit
def linear_terms(V, shift):
    """``V[r] . shift`` for each row, float64: the visible part of
    ``d log p*_beta(v) / d beta`` on the base-rate path (``shift = b - b_A``)."""
    return row_sums(V, shift, np.zeros(V.shape[0]))


@vector_jit
def annealed_visible_bias_(out, base_bias, b, beta):
    """In place: ``out = (1 - beta) base_bias + beta b``, the visible biases of
    ``p_beta`` (its couplings and hidden biases are ``beta W`` and ``beta c``)."""
    for i in range(out.shape[0]):
        out[i] = (1.0 - beta) * base_bias[i] + beta * b[i]


# -------------------------------------------------------------------- hooks
@implements(base.context, BernoulliUnits)
def _context(units, W):
    return None


@implements(base.mean_, BernoulliUnits)
def _mean(units, ctx, inputs, field):
    add_bias_sigmoid_(inputs, field)
    return inputs


@implements(base.sample_, BernoulliUnits)
def _sample(units, ctx, inputs, field, rng):
    add_bias_sample_(inputs, field, rng)
    return inputs


@implements(base.sample_keyed_, BernoulliUnits)
def _sample_keyed(units, ctx, inputs, field, key):
    add_bias_sample_keyed_(inputs, field, key)
    return inputs


@implements(base.tempered_sample_, BernoulliUnits)
def _tempered_sample(units, ctx, tempered, inputs, field, betas, n_chains, rng):
    # ``tempered`` is the base model's bias (zeros for a hidden layer).
    tempered_sample_(inputs, field, tempered, betas, n_chains, rng)
    return inputs


@implements(base.tempered_mean_, BernoulliUnits)
def _tempered_mean(units, ctx, inputs, field, betas, n_chains):
    tempered_sigmoid_(inputs, field, betas, n_chains)
    return inputs


@implements(base.cumulant_gap, BernoulliUnits)
def _cumulant_gap(units, j, a, beta, beta_next):
    return softplus_gap(a, beta, beta_next)


@implements(base.anneal_, BernoulliUnits)
def _anneal(units, log_w, inputs, visible_terms, field, beta, beta_prev, key, sample,
            first_row):  # fmt: skip
    key = offset_key(key, first_row * inputs.shape[1])
    anneal_(log_w, inputs, visible_terms, field, beta, beta_prev, key, sample)


@implements(base.statistics, BernoulliUnits)
def _statistics(units, ctx, V):
    return V


base.implements_dense_rows(BernoulliUnits)


@implements(base.data_outer_, BernoulliUnits)
def _data_outer(units, ctx, alpha, H, V, S, mu, is_centred, beta, out):
    gemm_outer_(alpha, H, centred(V, mu, is_centred), beta, out)


@implements(base.chain_outer_, BernoulliUnits)
def _chain_outer(units, ctx, alpha, H, S, mu, is_centred, beta, out):
    gemm_outer_(alpha, H, centred(S, mu, is_centred), beta, out)


implements(base.step_metric, BernoulliUnits)(base.euclidean_metric)


@implements(base.visible_step_, BernoulliUnits)
def _visible_step(units, ctx, W, velocity, field, terms, data, chain, centring,
                  rates):  # fmt: skip
    return linear_step_(units, ctx, W, velocity, field, terms, data, chain,
                        centring, rates)  # fmt: skip


def implements_linear_path(units, path_sample):
    """Register for the visible units ``units`` the tempering and annealing
    hooks of a layer whose energy is linear in its statistics, ``-b . s``,
    and whose base model is a bias of the same shape (Bernoulli units, and
    categorical units through their one-hot statistics):
    ``log p*_beta(v) = base . s + beta (b - base) . s + hidden terms``.
    ``path_sample`` is the layer's draw on the path (``base.path_sample``),
    from :func:`path_inputs`: its keys must give each row the counters a
    call on every chain would."""
    implements(base.tempered_context, units)(_base_bias_context)
    implements(base.swap_terms, units)(_linear_swap_terms)
    implements(base.path_context, units)(_linear_path_context)
    implements(base.path_statistics, units)(_linear_path_statistics)
    implements(base.path_start, units)(_linear_path_start)
    implements(base.path_sample, units)(path_sample)
    implements(base.path_sample_keyed_, units)(_linear_path_sample_keyed)


def _base_bias_context(units, ctx, base_bias, betas, W):
    return base_bias


def _linear_swap_terms(units, ctx, tempered, S, field):
    return S, field.astype(np.float64) - tempered.astype(np.float64), False


def _linear_path_context(units, base_bias, W):
    shift = (units.bias - base_bias).astype(np.float64)
    return base_bias, shift, np.empty(W.shape[1], dtype=W.dtype)


def _linear_path_statistics(units, path, V):
    return V, linear_terms(V, path[1])


def _linear_path_start(units, path, n_chains, W, rng):
    V = np.zeros((n_chains, W.shape[1]), dtype=W.dtype)
    return base.sample_(units, base.context(units, W), V, path[0], rng)


@jit
def path_inputs(units, path, A, W, beta):
    """``(A W, b_beta)``: the visible inputs of the path's draw at ``beta``
    before their scaling by ``beta``, and the annealed visible bias."""
    base_bias, _, visible_bias = path
    annealed_visible_bias_(visible_bias, base_bias, units.bias, beta)
    return np.dot(A, W), visible_bias


def _bernoulli_path_sample(units, path, A, W, beta, rng, first_row):
    # The scaling by beta goes into the draw's pass, one pass less over the
    # visible inputs; one uniform a unit.
    V, visible_bias = path_inputs(units, path, A, W, beta)
    key = offset_key(new_key(rng), first_row * V.shape[1])
    add_bias_sample_keyed_(V, visible_bias, key, beta)
    return V


def _linear_path_sample_keyed(units, path, A, W, beta, V, keys, step, n_chains):
    base_bias, _, visible_bias = path
    gemm_(beta, A, W, 0.0, V)
    annealed_visible_bias_(visible_bias, base_bias, units.bias, beta)
    ctx = base.context(units, W)
    for e in range(keys.shape[0]):
        chains = V[e * n_chains : (e + 1) * n_chains]
        base.sample_keyed_(units, ctx, chains, visible_bias, step_key(keys[e], step))


implements_linear_path(BernoulliUnits, _bernoulli_path_sample)


def units_of(bias, dtype=None):
    """Bernoulli units with ``bias`` (as a kernel array) and no velocity."""
    bias = kernel_array(bias, bias.dtype if dtype is None else dtype)
    return BernoulliUnits(bias, np.empty(0, bias.dtype))


# ------------------------------------------------------- the base-rate model
def base_rate_bias(X, clip=1e-3):
    """Visible biases of the base-rate model: ``logit`` of the clipped data
    mean (unchecked; the public face is ``likelihood.base_rate_bias``)."""
    mean = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
    return logit(np.clip(mean, clip, 1.0 - clip))


def check_base_rate(base_rate, W):
    """The base model's visible biases in the dtype of ``W`` (zeros for None)."""
    n_visible = W.shape[1]
    if base_rate is None:
        return np.zeros(n_visible, dtype=W.dtype)
    base = np.ascontiguousarray(as_real_array(base_rate, "base_rate"), dtype=W.dtype)
    if base.shape != (n_visible,) or not np.all(np.isfinite(base)):
        raise ValueError(
            f"base_rate must be a finite vector of length {n_visible} "
            f"(one bias per visible unit), got shape {base.shape}."
        )
    return base


def base_log_partition(base, W):
    """``log Z_0`` of the base model: independent visible units with biases
    ``base`` and ``n_hidden`` disconnected hidden units."""
    return float(
        np.logaddexp(0.0, base.astype(np.float64)).sum() + W.shape[0] * np.log(2.0)
    )


def annealing_path(W, b, c, base):
    """The :class:`~sklearn_rbm._partition.annealing.AnnealingPath` of the
    binary RBM ``(W, b, c)`` (checked) from the base-rate model of visible
    biases ``base``; its base model refits as ``logit`` of the chains'
    weighted mean."""
    W, base = kernel_array(W, W.dtype), kernel_array(base, W.dtype)

    def fit_base(states, weights):
        mean = (weights @ states.astype(np.float64))[None, :]
        fitted = base_rate_bias(mean).astype(W.dtype)
        return fitted, base_log_partition(fitted, W)

    return AnnealingPath(
        units_of(b, W.dtype), units_of(c, W.dtype), W, base,
        base_log_partition(base, W), lambda X: _free_energy(X, W, b, c), fit_base,
    )  # fmt: skip


def log_partition_ais_of(W, b, c, base_rate=None, n_chains=100, betas=None,
                         random_state=None, return_states=False):  # fmt: skip
    """``likelihood.log_partition_ais`` without its parameter validation."""
    W, b, c = _check_rbm(W, b, c)
    path = annealing_path(W, b, c, check_base_rate(base_rate, W))
    return run_ais(
        path, ais_betas(1000 if betas is None else betas), n_chains, random_state,
        return_states,
    )  # fmt: skip


# ------------------------------------------------------- the estimator side
class BernoulliLayer(Layer):
    """Bernoulli visible units, as the estimators see them.

    The data are binary, or grey levels in [0, 1] read as probabilities (as
    scikit-learn's ``BernoulliRBM`` reads them); the base model is the
    base-rate model, fitted as ``base_rate_bias_`` (``logit`` of the clipped
    data mean), which is also the initial visible bias (Upadhya & Sastry
    2017). ``log Z`` is exact by enumerating the smaller layer, or AIS from
    the base-rate model.
    """

    base_attributes = ("base_rate_bias_",)

    def check_values(self, X, what="X"):
        return check_unit_interval(X, what)

    def fit_base(self, model, X):
        model.base_rate_bias_ = base_rate_bias(X)

    def initial_bias(self, model, X, dtype):
        return model.base_rate_bias_.astype(dtype)

    def initial_offset(self, model, X, dtype):
        return np.asarray(X.mean(axis=0), dtype=dtype).ravel()

    def units(self, model, bias, velocities):
        return BernoulliUnits(bias, velocities[0])

    def hidden_input(self, model, X):
        W = model.components_.astype(X.dtype, copy=False)
        return safe_sparse_dot(X, W.T, dense_output=True)

    def free_energy(self, model, X):
        return _free_energy(X, *_parameters(model))

    def log_unnormalised(self, model, X):
        # A likelihood is a probability of binary vectors: grey levels are
        # scored by the same formula, with a warning that it is no likelihood.
        warn_if_not_binary(X)
        return -self.free_energy(model, X)

    def sample_start(self, model, rs, n_rows):
        start_probability = expit(model.base_rate_bias_)
        V = rs.random_sample((n_rows, start_probability.size))
        return (V < start_probability).astype(model.components_.dtype)

    def sampling_units(self, model, dtype):
        units = units_of(model.intercept_visible_, dtype)
        return units, None, _identity, _identity

    def tempering_base(self, model, dtype):
        return model.base_rate_bias_.astype(dtype)

    def enumerated_units(self, model):
        return min(model.components_.shape)

    def exact_log_partition(self, model):
        return log_partition_exact(*_parameters(model))

    def annealing_path(self, model):
        W, b, c = _check_rbm(*_parameters(model))
        return annealing_path(W, b, c, check_base_rate(model.base_rate_bias_, W))

    def divergence_baseline(self, model, rows):
        return base_rate_log_likelihood(rows, expit(model.base_rate_bias_))

    def diagnose(self, model, rows, baseline, parameters):
        # Z >= max p~: the rows' mean log-likelihood is at most their ceiling.
        ceiling = likelihood_ceiling(_check_log_unnormalised(rows, *_parameters(model)))
        return diagnose(ceiling, baseline, rows.shape[1], *parameters)


def _check_log_unnormalised(X, W, b, c):
    """``-F(v)`` of the rows ``X`` for the check of every epoch: the free
    energy with the vectorised ``softplus_row_sums`` (within a few ulps of
    :func:`_free_energy`'s ``logaddexp``, which takes a scalar path: 2.7
    against 0.5 ms for 250 x 500), so that the check stays about 1 % of a
    PCD-1 epoch of a 784 x 500 RBM at two threads."""
    visible_term = np.asarray(kernel_dot(X, np.asarray(b)), dtype=np.float64).ravel()
    return visible_term + softplus_row_sums(kernel_dot(X, np.asarray(W).T) + c)


def _parameters(model):
    return model.components_, model.intercept_visible_, model.intercept_hidden_


def _identity(X):
    return X
