"""Categorical (Potts) units: each of ``L`` columns takes one of ``q`` states.

A row of data is ``L`` integer codes ``v_i`` in ``0 .. q - 1`` (the amino
acids of an aligned protein sequence, ratings, one-hot encoded tabular
features). Its sufficient statistics are the one-hot codes: ``L * q``
columns, column ``i * q + a`` being 1 when ``v_i = a``. The weights are
stored as ``W`` of shape ``(n_hidden, L * q)`` (``W.reshape(n_hidden, L,
q)[j, i, a]`` couples hidden unit ``j`` to state ``a`` of site ``i``) and
the fields as ``b`` of length ``L * q``, so the trainer's matrix products
are the same as for Bernoulli units: ``S W^T`` and ``H W`` on one-hot
statistics. The energy is ``E(v, h) = -sum_i b_{i, v_i} - sum_j h_j (c_j +
sum_i W_{j, i, v_i})`` and ``p(v_i = a | h) = softmax_a(b_{i a} + (h W)_{i
a})``, site by site (Salakhutdinov, Mnih & Hinton 2007; Tubiana, Cocco &
Monasson 2019).

**Gauge.** Adding a constant per site and hidden unit to ``W[j, i, :]``
changes the energy by a multiple of ``h_j`` that the hidden bias absorbs,
and adding a constant to ``b[i, :]`` changes only ``Z``: these directions
are flat, and the fit drifts along them. After every epoch the layer fixes
the zero-sum gauge, ``sum_a W[j, i, a] = 0`` and ``sum_a b[i, a] = 0``
(the gauge of Tubiana et al. and jertubiana/PGM), moving the hidden bias so
that the model is unchanged (the fix of DsysDML/rbms issue 27: PCD on
PF00072 trained worse until the gauge was fixed on all parameters).

**Centring.** The offset of the visible statistics is the (weighted) mean
one-hot code, ``mu[i * q + a]`` = the frequency of state ``a`` at site
``i``; a centred fit (``'cg'``, ``'csdcp'``, ``'cpt'``) works with ``s -
mu``, as Melchior, Fischer & Wiskott (2016) define it for any sufficient
statistic. Since ``sum_a mu_{i a} = 1``, centring commutes with the gauge
fix: the centred hidden bias does not move when ``W`` is made zero-sum.

**Base model.** Annealing and tempering start from the independent-site
model: ``b_{i a} = log f_{i a}``, the (weighted) frequencies of the
training data mixed with ``PSEUDOCOUNT`` of the uniform distribution, also
the initial fields of a fit. Reverse annealing (the lower end of
``log_likelihood_bounds``) ends in the same model fitted to the RBM's own
state frequencies, those of the forward AIS chains.

**Regularisers** (Tubiana et al. 2019): ``l2_fields / 2 * ||b||^2`` and the
``L1^2`` penalty ``l1b / (2 L q) * sum_j (sum_{i a} |W_{j i a}|)^2``,
whose gradient ``l1b * mean_{i a} |W_{j i a}| * sign(W_{j i a})`` grows
with the weights of the unit, so it pushes towards sparse weights while
letting each unit keep a similar total weight.

The sampler is one fused pass per site: add the field, take the softmax
with the branch-free exponential of ``vecmath.py``, draw the state from one
counter-based uniform and write the one-hot code in place.
"""

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from ..._core.divergence import blamed_settings, diagnose, likelihood_ceiling
from ..._core.utils import kernel_array
from ..._numerics.jit import jit, vector_jit
from ..._numerics.random import new_key, offset_key, uniform
from ..._numerics.steps import column_sum
from ..._numerics.vecmath import exp_nonpositive
from ..._partition.annealing import AnnealingPath
from ..._potts.data import check_codes as check_state_codes
from . import base
from .base import Layer, implements, linear_step_
from .bernoulli import implements_linear_path, path_inputs
from .relu import BernoulliHidden
from .site_states import PADDED_FIELD, decode_one_hot, encode_one_hot, state_mask

#: The weight of the uniform distribution mixed into the site frequencies of
#: the independent-site model (no state has probability zero).
PSEUDOCOUNT = 1e-3

#: The smallest exponent of the softmax: ``exp_nonpositive`` is exact down to
#: about -708, and padded states (``site_states.py``) sit far below it.
_EXP_FLOOR = -700.0


class CategoricalUnits(NamedTuple):
    """The kernel units of a categorical layer: the fields ``bias`` (``L *
    q``, centred during training), their velocity (empty outside training),
    the number of states ``q`` and the penalties ``l2_fields`` and ``l1b``
    (zero outside training)."""

    bias: np.ndarray
    velocity: np.ndarray
    n_states: int
    l2_fields: float
    l1b: float


# ------------------------------------------------------------------ kernels
@jit
def _softmax_site_(pre, r, start, q):
    """In place: the softmax of ``pre[r, start:start + q]``; returns the sum
    of the exponentials before normalising (1 after it)."""
    top = pre[r, start]
    for a in range(1, q):
        top = max(top, pre[r, start + a])
    total = 0.0
    for a in range(q):
        e = exp_nonpositive(max(np.float64(pre[r, start + a] - top), _EXP_FLOOR))
        pre[r, start + a] = e
        total += e
    return total


@vector_jit
def _exponentials_(row, bias, beta, rest, base, q, tops):
    """In place: ``row[k] = exp(x_k - max of x over k's site)`` with ``x = beta
    (row + bias) + rest base`` (``base`` unused when ``rest`` is 0): the
    unnormalised site-wise softmax of one row, in three passes, the first
    and last of which vectorise (``tops``, scratch as long as ``row``, holds
    each column's site maximum)."""
    n_cols = row.shape[0]
    if rest == 0.0:
        for k in range(n_cols):
            row[k] = beta * (row[k] + bias[k])
    else:
        for k in range(n_cols):
            row[k] = beta * (row[k] + bias[k]) + rest * base[k]
    for start in range(0, n_cols, q):
        top = row[start]
        for a in range(1, q):
            top = max(top, row[start + a])
        for a in range(q):
            tops[start + a] = top
    for k in range(n_cols):
        row[k] = exp_nonpositive(max(row[k] - tops[k], _EXP_FLOOR))


@jit
def _draw_row_(row, q, key, counter):
    """In place: the unnormalised probabilities ``row`` (site by site)
    become the one-hot codes of one state drawn per site; the uniform of site
    ``i`` is position ``counter + i`` of the stream ``key``."""
    for i in range(row.shape[0] // q):
        start = i * q
        total = 0.0
        for a in range(q):
            total += row[start + a]
        target = uniform(key, counter + i) * total
        chosen = q - 1
        running = 0.0
        for a in range(q):
            running += row[start + a]
            if target < running:
                chosen = a
                break
        for a in range(q):
            row[start + a] = 0.0
        row[start + chosen] = 1.0


@jit
def add_bias_sample_keyed_(pre, bias, q, key):
    """In place: row ``r`` of ``pre`` (the inputs ``H W``) becomes the one-hot
    codes of states drawn from ``softmax(pre[r, site] + bias[site])`` at each
    site; the uniform of site ``i`` of row ``r`` is position ``r * L + i`` of
    the counter-based stream ``key`` (RAISE keys each data row's chains)."""
    n_rows, n_cols = pre.shape
    n_sites = n_cols // q
    tops = np.empty(n_cols, dtype=pre.dtype)
    for r in range(n_rows):
        _exponentials_(pre[r], bias, 1.0, 0.0, bias, q, tops)
        _draw_row_(pre[r], q, key, r * n_sites)


@jit
def add_bias_sample_(pre, bias, q, rng):
    """:func:`add_bias_sample_keyed_` from a fresh stream of ``rng``."""
    add_bias_sample_keyed_(pre, bias, q, new_key(rng))


@jit
def add_bias_softmax_(pre, bias, q):
    """In place: ``pre[r, site] = softmax(pre[r, site] + bias[site])``."""
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        for k in range(n_cols):
            pre[r, k] += bias[k]
        for i in range(n_cols // q):
            total = _softmax_site_(pre, r, i * q, q)
            for a in range(q):
                pre[r, i * q + a] /= total


@jit
def tempered_sample_(pre, bias, base_bias, betas, n_chains, q, rng):
    """In place: :func:`add_bias_sample_` at ``beta (pre + bias) + (1 -
    beta) base_bias``, ``beta`` the inverse temperature of the row's replica."""
    key = new_key(rng)
    n_rows, n_cols = pre.shape
    n_sites = n_cols // q
    tops = np.empty(n_cols, dtype=pre.dtype)
    for r in range(n_rows):
        beta = betas[r // n_chains]
        _exponentials_(pre[r], bias, beta, 1.0 - beta, base_bias, q, tops)
        _draw_row_(pre[r], q, key, r * n_sites)


@jit
def tempered_softmax_(pre, bias, betas, n_chains, q):
    """In place: ``softmax(beta (pre + bias))`` site by site."""
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        beta = betas[r // n_chains]
        for k in range(n_cols):
            pre[r, k] = beta * (pre[r, k] + bias[k])
        for i in range(n_cols // q):
            total = _softmax_site_(pre, r, i * q, q)
            for a in range(q):
                pre[r, i * q + a] /= total


@jit
def one_hot(codes, q, out):
    """In place: ``out`` (zeros, ``(n, L * q)``) gets the one-hot codes of the
    integer-valued ``codes`` ``(n, L)``; returns ``out``."""
    n_rows, n_sites = codes.shape
    for r in range(n_rows):
        for i in range(n_sites):
            out[r, i * q + np.int64(codes[r, i])] = 1.0
    return out


@jit
def gather_input(codes, WT, q):
    """``one_hot(codes) W^T`` by gathers: row ``r`` is the sum over sites of
    the rows ``i * q + codes[r, i]`` of ``WT = W^T`` (``(L * q, n_hidden)``,
    C-contiguous), float64 accumulation in ``WT``'s dtype."""
    n_rows, n_sites = codes.shape
    n_hidden = WT.shape[1]
    out = np.zeros((n_rows, n_hidden), dtype=WT.dtype)
    for r in range(n_rows):
        for i in range(n_sites):
            row = i * q + np.int64(codes[r, i])
            for j in range(n_hidden):
                out[r, j] += WT[row, j]
    return out


@jit
def one_hot_columns(S, q):
    """The column of the 1 at each site of one-hot rows ``S``: ``(n, L)``
    int64, ``i * q + v_i``."""
    n_rows, n_cols = S.shape
    n_sites = n_cols // q
    out = np.empty((n_rows, n_sites), dtype=np.int64)
    for r in range(n_rows):
        for i in range(n_sites):
            column = i * q
            for a in range(q):
                if S[r, i * q + a] != 0.0:
                    column = i * q + a
                    break
            out[r, i] = column
    return out


@jit
def gather_rows(columns, W):
    """``S W^T`` for one-hot rows given by their ``columns`` (``(n, L)``):
    ``out[r, j] = sum_i W[j, columns[r, i]]``, in ``W``'s dtype."""
    n_rows, n_sites = columns.shape
    n_hidden = W.shape[0]
    out = np.empty((n_rows, n_hidden), dtype=W.dtype)
    for r in range(n_rows):
        for j in range(n_hidden):
            total = 0.0
            for i in range(n_sites):
                total += W[j, columns[r, i]]
            out[r, j] = total
    return out


@jit
def scatter_outer_(alpha, H, columns, mu, is_centred, beta, out):
    """In place: ``out = beta out + alpha H^T (S - mu)`` for one-hot rows
    ``S`` given by their ``columns``: a scatter-add of ``alpha H[r, j]`` into
    the row's columns, then the rank-one offset term when centred."""
    n_rows, n_sites = columns.shape
    n_hidden, n_cols = out.shape
    if beta == 0.0:
        out[...] = 0.0
    elif beta != 1.0:
        out *= beta
    for j in range(n_hidden):
        row = out[j]
        for r in range(n_rows):
            h = alpha * H[r, j]
            for i in range(n_sites):
                row[columns[r, i]] += h
    if is_centred:
        for j in range(n_hidden):
            total = 0.0
            for r in range(n_rows):
                total += H[r, j]
            total *= alpha
            for k in range(n_cols):
                out[j, k] -= total * mu[k]


@jit
def _penalty_step_(W, b, field, rate, l2_fields, l1b):
    """The steps of the penalties: ``b -= rate l2_fields field`` (``field``
    the uncentred fields; the centred ``b`` moves by the same amount) and
    ``W_j -= rate l1b mean(|W_j|) sign(W_j)`` for each hidden unit ``j``."""
    if l2_fields > 0.0:
        for k in range(b.shape[0]):
            b[k] -= rate * l2_fields * field[k]
    if l1b > 0.0:
        n_hidden, n_cols = W.shape
        for j in range(n_hidden):
            total = 0.0
            for k in range(n_cols):
                total += abs(W[j, k])
            shrink = rate * l1b * total / n_cols
            for k in range(n_cols):
                if W[j, k] > 0.0:
                    W[j, k] -= shrink
                elif W[j, k] < 0.0:
                    W[j, k] += shrink


# -------------------------------------------------------------------- hooks
@implements(base.context, CategoricalUnits)
def _context(units, W):
    return None


@implements(base.mean_, CategoricalUnits)
def _mean(units, ctx, inputs, field):
    add_bias_softmax_(inputs, field, units.n_states)
    return inputs


@implements(base.sample_, CategoricalUnits)
def _sample(units, ctx, inputs, field, rng):
    add_bias_sample_(inputs, field, units.n_states, rng)
    return inputs


@implements(base.sample_keyed_, CategoricalUnits)
def _sample_keyed(units, ctx, inputs, field, key):
    add_bias_sample_keyed_(inputs, field, units.n_states, key)
    return inputs


@implements(base.tempered_sample_, CategoricalUnits)
def _tempered_sample(units, ctx, tempered, inputs, field, betas, n_chains, rng):
    tempered_sample_(inputs, field, tempered, betas, n_chains, units.n_states, rng)
    return inputs


@implements(base.tempered_mean_, CategoricalUnits)
def _tempered_mean(units, ctx, inputs, field, betas, n_chains):
    tempered_softmax_(inputs, field, betas, n_chains, units.n_states)
    return inputs


@implements(base.statistics, CategoricalUnits)
def _statistics(units, ctx, V):
    q = units.n_states
    return one_hot(V, q, np.zeros((V.shape[0], V.shape[1] * q), dtype=V.dtype))


@implements(base.input_to_hidden, CategoricalUnits)
def _input_to_hidden(units, ctx, S, W):
    # A gather of the weights of the states present: 0.53 ms against 0.81 ms
    # for the one-hot product (100 rows x 53 sites x 21 states, 100 hidden
    # units, one thread).
    return gather_rows(one_hot_columns(S, units.n_states), W)


@implements(base.input_from_hidden, CategoricalUnits)
def _input_from_hidden(units, H, W):
    return np.dot(H, W)


@implements(base.column_sums, CategoricalUnits)
def _column_sums(units, S):
    return column_sum(S)


@implements(base.data_outer_, CategoricalUnits)
def _data_outer(units, ctx, alpha, H, V, S, mu, is_centred, beta, out):
    # A scatter-add: 0.39 ms against 0.69 ms for the product (same shapes).
    columns = one_hot_columns(S, units.n_states)
    scatter_outer_(alpha, H, columns, mu, is_centred, beta, out)


@implements(base.chain_outer_, CategoricalUnits)
def _chain_outer(units, ctx, alpha, H, S, mu, is_centred, beta, out):
    columns = one_hot_columns(S, units.n_states)
    scatter_outer_(alpha, H, columns, mu, is_centred, beta, out)


implements(base.step_metric, CategoricalUnits)(base.euclidean_metric)


@implements(base.visible_step_, CategoricalUnits)
def _visible_step(units, ctx, W, velocity, field, terms, data, chain, centring,
                  rates):  # fmt: skip
    result = linear_step_(units, ctx, W, velocity, field, terms, data, chain,
                          centring, rates)  # fmt: skip
    _penalty_step_(W, units.bias, field, rates[0], units.l2_fields, units.l1b)
    return result


def _path_sample(units, path, A, W, beta, rng, first_row):
    V, visible_bias = path_inputs(units, path, A, W, beta)
    V *= beta
    key = offset_key(new_key(rng), first_row * (V.shape[1] // units.n_states))
    add_bias_sample_keyed_(V, visible_bias, units.n_states, key)
    return V


implements_linear_path(CategoricalUnits, _path_sample)


def units_of(bias, n_states, dtype=None):
    """Categorical units with ``bias`` (as a kernel array), ``n_states``
    states per site, no velocity and no penalty."""
    bias = kernel_array(bias, bias.dtype if dtype is None else dtype)
    return CategoricalUnits(bias, np.empty(0, bias.dtype), int(n_states), 0.0, 0.0)


# --------------------------------------------------------- plain functions
def codes_one_hot(codes, n_states, dtype=np.float64):
    """The one-hot statistics ``(n, L * q)`` of integer codes ``(n, L)``."""
    codes = np.ascontiguousarray(codes)
    out = np.zeros((codes.shape[0], codes.shape[1] * n_states), dtype=dtype)
    return one_hot(codes, int(n_states), out)


def one_hot_codes(S, n_states):
    """The integer codes of one-hot statistics (the inverse of
    :func:`codes_one_hot`)."""
    n_rows = S.shape[0]
    return np.argmax(S.reshape(n_rows, -1, n_states), axis=2)


def hidden_input_of(codes, W, n_states):
    """``one_hot(codes) W^T`` by gathers, in the dtype of ``W``."""
    WT = np.ascontiguousarray(W.T)
    return gather_input(np.ascontiguousarray(codes), WT, int(n_states))


def site_terms(codes, b, n_states):
    """``sum_i b[i * q + codes[:, i]]`` of each row, float64."""
    codes = np.asarray(codes, dtype=np.int64)
    index = np.arange(codes.shape[1]) * n_states + codes
    return np.asarray(b, np.float64)[index].sum(axis=1)


def free_energy_of(codes, W, b, c, n_states, hidden=None):
    """``F(v) = -sum_i b_{i v_i} - sum_j Gamma(c_j + sum_i W_{j i v_i})``,
    float64; ``Gamma`` the cumulant of the ``hidden`` layer (``softplus`` of
    Bernoulli units, the default)."""
    A = hidden_input_of(codes, np.asarray(W, np.float64), n_states)
    A += np.asarray(c, np.float64)
    cumulant = np.logaddexp(0.0, A) if hidden is None else hidden.cumulant(A)
    return -site_terms(codes, b, n_states) - cumulant.sum(axis=1)


def log_partition_by_visible_states(W, b, c, n_states, hidden, chunk=4096,
                                    site_states=None):  # fmt: skip
    """Exact ``log Z`` by enumerating the ``prod_i q_i`` visible states
    (hidden units of any type, their cumulants in closed form); ``q_i`` is
    ``site_states[i]``, or ``n_states`` for every site."""
    n_sites = W.shape[1] // n_states
    if site_states is None:
        site_states = np.full(n_sites, n_states)
    site_states = np.asarray(site_states, dtype=np.int64)
    total = int(np.prod(site_states))
    parts = []
    # Mixed radix: the last site varies fastest.
    powers = np.concatenate((np.cumprod(site_states[:0:-1])[::-1], [1]))
    for start in range(0, total, chunk):
        index = np.arange(start, min(start + chunk, total))
        codes = (index[:, None] // powers) % site_states
        parts.append(-free_energy_of(codes, W, b, c, n_states, hidden))
    return float(logsumexp(np.concatenate(parts)))


def log_partition_exact_of(W, b, c, n_states, chunk=4096):
    """Exact ``log Z`` of a categorical-Bernoulli RBM by enumerating the
    hidden states: ``log Z = logsumexp_h [c . h + sum_i logsumexp_a (b + h
    W)_{i a}]``, in chunks of ``chunk`` hidden states."""
    W, b, c = (np.asarray(x, np.float64) for x in (W, b, c))
    n_hidden, n_cols = W.shape
    n_sites = n_cols // n_states
    bits = np.arange(n_hidden)
    parts = []
    for start in range(0, 2**n_hidden, chunk):
        index = np.arange(start, min(start + chunk, 2**n_hidden))
        H = ((index[:, None] >> bits) & 1).astype(np.float64)
        fields = (H @ W + b).reshape(-1, n_sites, n_states)
        parts.append(H @ c + logsumexp(fields, axis=2).sum(axis=1))
    return float(logsumexp(np.concatenate(parts)))


def site_frequencies(codes, n_states, weights=None):
    """The (weighted) frequencies ``(L, q)`` of the states at each site: the
    mean one-hot code."""
    codes = np.asarray(codes, dtype=np.int64)
    n_rows, n_sites = codes.shape
    weights = np.ones(n_rows) if weights is None else np.asarray(weights, np.float64)
    counts = np.zeros((n_sites, n_states))
    for i in range(n_sites):
        counts[i] = np.bincount(codes[:, i], weights=weights, minlength=n_states)
    return counts / weights.sum()


def independent_site_fields(codes, n_states, weights=None, pseudocount=PSEUDOCOUNT,
                            site_states=None):  # fmt: skip
    """The log-probabilities ``(L, q)`` of the independent-site model fitted
    to ``codes``: the (weighted) site frequencies mixed with ``pseudocount``
    of the uniform distribution over each site's ``site_states[i]`` states
    (all ``n_states`` when None)."""
    frequencies = site_frequencies(codes, n_states, weights)
    return site_fields_of(frequencies, pseudocount, site_states)


def site_fields_of(frequencies, pseudocount=PSEUDOCOUNT, site_states=None):
    """The log-probabilities of the site ``frequencies`` ``(L, q)`` mixed
    with ``pseudocount`` of the uniform distribution over each site's
    ``site_states[i]`` states (all ``q`` when None; the padded states get
    ``PADDED_FIELD``)."""
    n_states = frequencies.shape[1]
    if site_states is None:
        return np.log((1.0 - pseudocount) * frequencies + pseudocount / n_states)
    uniform = 1.0 / np.asarray(site_states, np.float64)[:, None]
    mixed = (1.0 - pseudocount) * frequencies + pseudocount * uniform
    mask = state_mask(site_states, n_states)
    return np.where(mask, np.log(np.where(mask, mixed, 1.0)), PADDED_FIELD)


def annealing_path(W, b, c, n_states, hidden, site_fields, site_states=None):
    """The :class:`~sklearn_rbm._partition.annealing.AnnealingPath` of the
    categorical RBM ``(W, b, c)`` with ``hidden`` units (their estimator side,
    ``relu.py``) from the independent-site model of log-probabilities
    ``site_fields`` ``(L, q)``: rows are integer codes, annealed as their
    one-hot codes; the base model refits to the chains' weighted state
    frequencies (never to the padded states of columns with fewer than ``q``
    states, ``site_states``)."""
    W = kernel_array(W, W.dtype)
    n_hidden = W.shape[0]

    def base_of(fields):
        # The base model: the independent-site model times the hidden units'
        # potentials at zero input (their log Z is Gamma(0) each).
        log_z = float(
            logsumexp(fields, axis=1).sum() + n_hidden * hidden.cumulant_at_zero()
        )
        return kernel_array(fields.ravel(), W.dtype), log_z

    def fit_base(states, weights):
        frequencies = weights @ states.astype(np.float64)
        frequencies = frequencies.reshape(-1, n_states)
        return base_of(site_fields_of(frequencies, site_states=site_states))

    return AnnealingPath(
        units_of(b, n_states, W.dtype), hidden.units_of(kernel_array(c, W.dtype)),
        W, *base_of(np.asarray(site_fields, np.float64)),
        lambda X: free_energy_of(X, W, b, c, n_states, hidden), fit_base,
        lambda X: codes_one_hot(X, n_states, W.dtype),
    )  # fmt: skip


# ------------------------------------------------------- the estimator side
class CategoricalLayer(Layer):
    """Categorical visible units, as the estimators see them.

    Made from the number of states (the estimator's ``n_states_``: one
    ``q`` for every column, or an array of one per column, the sites then
    padded to the largest, ``site_states.py``) and whether the data come
    one-hot (``one_hot``: :meth:`check_values` decodes them); the layer
    works on integer codes ``(n_samples, L)``. The base model is the
    independent-site model, fitted as ``site_fields_`` (``(L, q)``
    log-probabilities, with the fit's sample weights), also the initial
    fields; the centring offset is the weighted mean one-hot code. ``log
    Z`` is exact by enumerating the hidden units, or AIS from the base model.
    The penalties are read from the model's ``l2_fields`` and ``l1b``.
    """

    base_attributes = ("site_fields_",)

    def __init__(self, n_states, hidden=None, one_hot=False):
        if np.ndim(n_states):
            self.site_states = np.asarray(n_states, dtype=np.int64)
            self.n_states = int(self.site_states.max())
        else:
            self.site_states = None
            self.n_states = int(n_states)
        self.hidden = BernoulliHidden() if hidden is None else hidden
        self.one_hot = one_hot

    def states_of_sites(self, n_sites):
        """The number of states of each of ``n_sites`` sites."""
        if self.site_states is None:
            return np.full(n_sites, self.n_states, dtype=np.int64)
        return self.site_states

    def padded_mask(self, n_sites):
        """``(L, q)`` bool mask of the real states, or None when no site is
        padded."""
        states = self.states_of_sites(n_sites)
        if np.all(states == self.n_states):
            return None
        return state_mask(states, self.n_states)

    # ------------------------------------------------------------- data
    def check_values(self, X, what="X"):
        """Integer codes: ``X`` checked, or decoded from one-hot rows."""
        if self.one_hot:
            n_sites = X.shape[1] // self.n_states
            X = decode_one_hot(X, self.states_of_sites(n_sites), what)
        limit = self.n_states if self.site_states is None else self.site_states
        return check_codes(X, limit, what)

    def n_columns(self, model, n_features):
        return n_features * self.n_states

    # ------------------------------------------------------- the fit's start
    def fit_base(self, model, X):
        weights = getattr(model, "_fit_weights", None)
        model.site_fields_ = independent_site_fields(
            X, self.n_states, weights, site_states=self.site_states
        )

    def initial_bias(self, model, X, dtype):
        return model.site_fields_.ravel().astype(dtype)

    def initial_offset(self, model, X, dtype):
        weights = getattr(model, "_fit_weights", None)
        return site_frequencies(X, self.n_states, weights).ravel().astype(dtype)

    def units(self, model, bias, velocities):
        return CategoricalUnits(
            bias, velocities[0], int(self.n_states), float(model.l2_fields),
            float(model.l1b),
        )  # fmt: skip

    def end_epoch(self, model):
        """Fix the zero-sum gauge of the training state (see the module
        docstring): ``W`` and the fields lose their means over the states of
        each site, the centred hidden bias gains what the model needs to stay
        the same, and the velocities are projected alike."""
        q = self.n_states
        W = model.components_
        n_hidden = W.shape[0]
        W3 = W.reshape(n_hidden, -1, q)
        mask = self.padded_mask(W3.shape[1])
        means = _site_means(W3, mask)
        W3 -= means
        site_mass = model.offset_visible_.reshape(-1, q).sum(axis=1)
        shift = (means[:, :, 0] * (1.0 - site_mass)).sum(axis=1)
        model._centred_hidden_bias += shift.astype(W.dtype)
        b = model._centred_visible_bias.reshape(-1, q)
        b -= _site_means(b, mask)
        velocities = [v.reshape(-1, W3.shape[1], q) for v in model._velocity[::2]]
        for per_site in velocities:
            per_site -= _site_means(per_site, mask)
        if mask is not None:
            # The padded states back in place (the field penalty moves them).
            W3[:, ~mask] = 0.0
            b[~mask] = PADDED_FIELD
            for per_site in velocities:
                per_site[:, ~mask] = 0.0

    def zero_sum(self, W3):
        """A copy of the weights ``W3`` (``(n_hidden, L, q)``) in the zero-sum
        gauge over each site's real states, the padded ones 0."""
        mask = self.padded_mask(W3.shape[1])
        W3 = W3 - _site_means(W3, mask)
        if mask is not None:
            W3[:, ~mask] = 0.0
        return W3

    # ---------------------------------------------------------- queries
    def hidden_input(self, model, X):
        W = model.components_.astype(X.dtype, copy=False)
        return hidden_input_of(X, W, self.n_states)

    def free_energy(self, model, X):
        return free_energy_of(X, *_parameters(model), self.n_states, self.hidden)

    def sample_start(self, model, rs, n_rows):
        probabilities = np.exp(model.site_fields_)
        cumulative = np.cumsum(probabilities, axis=1)
        cumulative /= cumulative[:, -1:]
        u = rs.random_sample((n_rows, probabilities.shape[0], 1))
        codes = (u >= cumulative[None, :, :]).sum(axis=2)
        codes = np.minimum(codes, self.states_of_sites(codes.shape[1]) - 1)
        return codes.astype(model.components_.dtype)

    def sampling_units(self, model, dtype):
        q = self.n_states
        units = units_of(model.intercept_visible_, q, dtype)
        site_states = self.states_of_sites(model.site_fields_.shape[0])

        def from_statistics(S):
            codes = one_hot_codes(S, q)
            return encode_one_hot(codes, site_states, dtype) if self.one_hot else codes

        return units, None, lambda V: codes_one_hot(V, q, dtype), from_statistics

    def tempering_base(self, model, dtype):
        return model.site_fields_.ravel().astype(dtype)

    # ------------------------------------------------------- likelihood
    def enumerated_units(self, model):
        # Bernoulli hidden units are enumerated (2^n states); continuous ones
        # are integrated in closed form and the q^L visible states enumerated.
        if self.hidden.enumerable:
            return model.components_.shape[0]
        n_sites = model.components_.shape[1] // self.n_states
        return int(np.ceil(np.log2(self.states_of_sites(n_sites)).sum()))

    def exact_log_partition(self, model):
        if self.hidden.enumerable:
            return log_partition_exact_of(*_parameters(model), self.n_states)
        return log_partition_by_visible_states(
            *_parameters(model), self.n_states, self.hidden,
            site_states=self.site_states,
        )  # fmt: skip

    def annealing_path(self, model):
        return annealing_path(
            *_parameters(model), self.n_states, self.hidden, model.site_fields_,
            self.site_states,
        )  # fmt: skip

    def log_unnormalised(self, model, X):
        return -self.free_energy(model, X)

    # ------------------------------------------------------- divergence
    def divergence_advice(self, model):
        names, settings = blamed_settings(
            model, ("learning_rate", "momentum"),
            if_changed=("weight_decay", "l2_fields", "l1b"),
        )  # fmt: skip
        smaller = " or ".join(name for name in names if name != "momentum")
        advice = " and less momentum" if model.momentum > 0 else ""
        return f"with {settings}. Use a smaller {smaller}{advice}."

    def divergence_baseline(self, model, rows):
        # The exact mean log-likelihood under the independent-site model.
        return float(site_terms(rows, model.site_fields_.ravel(), self.n_states).mean())

    def diagnose(self, model, rows, baseline, parameters):
        ceiling = likelihood_ceiling(-self.free_energy(model, rows))
        return diagnose(
            ceiling, baseline, rows.shape[1], *parameters,
            reference="the independent-site model",
        )  # fmt: skip


def check_codes(X, n_states, what="X"):
    """``X`` (already a finite float array) if it holds integer codes in ``0
    .. n_states - 1`` (``None``: any number of states up to the limit), else
    a ValueError naming ``what`` and the fix (``_potts/data.check_codes``)."""
    if sp.issparse(X):
        raise ValueError(
            f"{what} must be a dense array of integer codes (n_samples, n_sites); "
            "got a sparse matrix. Pass the codes as a numpy array."
        )
    X = np.asarray(X)
    if X.size == 0:
        return X
    return check_state_codes(X, what, n_states, dtype=X.dtype)


def _site_means(X3, mask):
    """The mean of ``X3`` (``(..., L, q)``) over each site's real states
    (all ``q`` when ``mask`` is None), keeping the last axis."""
    if mask is None:
        return X3.mean(axis=-1, keepdims=True)
    counts = mask.sum(axis=1)[:, None]
    return np.where(mask, X3, 0.0).sum(axis=-1, keepdims=True) / counts


def _parameters(model):
    return model.components_, model.intercept_visible_, model.intercept_hidden_
