"""Annealed importance sampling (AIS) over any pair of layers: the
temperature schedules, the annealing kernel and the band of its estimate.

AIS (Neal 2001; Salakhutdinov & Murray 2008 for RBMs) anneals chains from a
base model with no couplings, whose ``log Z`` is known, to the RBM through
``p*_beta(v, h) = base(v)^(1 - beta) exp(-beta E(v, h))``. The kernel asks
the visible layer for the path's visible side (``path_*`` hooks of
``_rbm/layers/base.py``: the base model's draws, the visible part of each
weight increment, the visible draws at ``beta``) and the hidden layer for the
rest (``anneal_``: the hidden cumulants' increments fused with the hidden
draws), so a unit type gets AIS by supplying its base model.
"""

import copy
import math
import numbers
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numba
import numpy as np

from .._core.utils import (
    SMALL_PRODUCT,
    as_real_array,
    blas_threads_for,
    check_chains_memory,
    kernel_rng,
    one_blas_thread,
)
from .._numerics.jit import jit
from .._numerics.random import new_key
from .._rbm.layers.base import (
    anneal_,
    context,
    input_to_hidden,
    path_context,
    path_sample,
    path_start,
    path_statistics,
)
from .exact import LogPartition
from .parameters import SCHEDULE_CONSTRAINT  # noqa: F401 (re-exported)

#: The most temperatures an AIS schedule given by its count may have: 700
#: times the longest published schedule (80 MB of inverse temperatures); a
#: count of 10**9 would allocate 8 GB and anneal for days.
MAX_AIS_TEMPERATURES = 10_000_000


def ais_betas(schedule):
    """The inverse temperatures of an AIS run, from a name or a count.

    Parameters
    ----------
    schedule : int, {'linear', 'three-segment'} or array-like
        * an int ``K``: ``K`` temperatures evenly spaced on [0, 1];
        * ``'linear'``: 10,000 evenly spaced temperatures (as in Upadhya
          & Sastry 2017);
        * ``'three-segment'``: 500, 4,000 and 10,000 temperatures evenly spaced
          on [0, 0.5), [0.5, 0.9) and [0.9, 1] (14,500; as in Ping, Liu & Ihler 2016,
          after Salakhutdinov & Murray 2008);
        * an increasing array from 0 to 1.

    Returns
    -------
    betas : ndarray of float64
        The inverse temperatures, increasing from 0 to 1.
    """
    if isinstance(schedule, str):
        if schedule == "linear":
            return np.linspace(0.0, 1.0, 10_000)
        if schedule == "three-segment":
            return np.concatenate(
                [
                    np.linspace(0.0, 0.5, 500, endpoint=False),
                    np.linspace(0.5, 0.9, 4_000, endpoint=False),
                    np.linspace(0.9, 1.0, 10_000),
                ]
            )
        raise ValueError(
            f"Unknown AIS schedule {schedule!r}; use 'linear', 'three-segment', "
            "an int or an array of inverse temperatures."
        )
    if isinstance(schedule, numbers.Integral):
        if schedule < 2:
            raise ValueError(f"AIS needs at least 2 temperatures, got {schedule}.")
        if schedule > MAX_AIS_TEMPERATURES:
            raise ValueError(
                f"An AIS schedule of {schedule} temperatures is beyond the "
                f"{MAX_AIS_TEMPERATURES:,} this package runs (days of annealing "
                "for any model; the published schedules use 10,000 to 14,500). "
                "Use fewer temperatures."
            )
        return np.linspace(0.0, 1.0, int(schedule))
    betas = as_real_array(schedule, "An AIS schedule").astype(np.float64)
    if (
        betas.ndim != 1
        or betas.size < 2
        or not np.all(np.isfinite(betas))
        or betas[0] != 0.0
        or betas[-1] != 1.0
        or np.any(np.diff(betas) <= 0)
    ):
        raise ValueError(
            "An AIS schedule (an array of inverse temperatures) must increase "
            "strictly from 0 to 1, hold at least two values and no NaN; got "
            f"{np.array2string(betas.ravel()[:6], precision=3)}"
            f"{' ...' if betas.size > 6 else ''} (shape {betas.shape})."
        )
    return betas


def check_log_weights(log_w, method):
    if not np.all(np.isfinite(log_w)):
        raise FloatingPointError(
            f"{method} produced non-finite importance weights; the RBM "
            "parameters are too large to anneal (check that the model did not "
            "diverge)."
        )


def ais_band(log_w, log_z_base):
    """``log Z`` and ``log(mean(w) -+ 3 std(w)/sqrt(M))``, computed in log space."""
    n_chains = log_w.shape[0]
    shift = log_w.max()
    w = np.exp(log_w - shift)  # the largest weight is 1: no overflow
    mean = w.mean()
    stderr = w.std() / np.sqrt(n_chains)
    log_z = log_z_base + shift + np.log(mean)
    upper = log_z_base + shift + np.log(mean + 3.0 * stderr)
    low = mean - 3.0 * stderr
    lower = log_z_base + shift + np.log(low) if low > 0.0 else -np.inf
    return float(log_z), float(lower), float(upper)


@jit
def ais_start(units, base, W, n_chains, rng):
    """The visible rows of ``n_chains`` AIS chains at ``beta = 0``: exact
    draws of the base model (``W``'s dtype)."""
    return path_start(units, path_context(units, base, W), n_chains, W, rng)


@jit
def anneal_rows_(units, hidden, base, W, betas, V, log_w, rng, first_row):
    """AIS on the chains whose visible rows at ``beta = 0`` are ``V``: adds
    their log importance weights to ``log_w`` (float64, in place) and
    returns their last visible states (draws at the last temperature below
    1, in ``W``'s dtype: approximate samples of the RBM).

    ``units`` are the visible layer's kernel units (their bias the model's),
    ``hidden`` the hidden layer's (their bias the model's ``c``), ``base``
    the visible layer's base model in kernel form. At each temperature one
    product gives the hidden inputs ``W s``, used both for the weight
    increment and for drawing ``h``; a second product gives the visible
    inputs for drawing ``v``: two matrix products per temperature, the
    element-wise work fused around them.

    ``V`` may be a block of the chains, rows ``first_row, ...`` of them: the
    draws then come from the keys a call on every chain takes from ``rng``,
    at the block's own counters, so any split of the chains into blocks,
    each with its own copy of ``rng``, draws the same numbers (see
    :func:`ais_log_weights`).
    """
    ctx = context(units, W)
    path = path_context(units, base, W)
    n_betas = betas.shape[0]
    for k in range(1, n_betas):
        beta, beta_prev = betas[k], betas[k - 1]
        last = k == n_betas - 1
        S, visible_terms = path_statistics(units, path, V)
        A = input_to_hidden(units, ctx, S, W)
        anneal_(
            hidden, log_w, A, visible_terms, hidden.bias, beta, beta_prev,
            new_key(rng), not last, first_row,
        )  # fmt: skip
        if last:
            break
        # A now holds h ~ p_beta(h | v); draw v ~ p_beta(v | h).
        V = path_sample(units, path, A, W, beta, rng, first_row)
    return V


#: Row blocks of AIS chains start at multiples of this many rows. OpenBLAS
#: computes each row of a product with the same operations whichever block
#: holds it only when the blocks start on its kernels' row unrolling, which
#: depends on the processor (measured here in float64: a split at row 64 of
#: 130 changed bits, splits at multiples of 12 did not; float32 kept its bits
#: at any split). 48 is a multiple of the unrollings of 4 to 24 rows.
CHAIN_BLOCK_ALIGNMENT = 48


def row_blocks(n_items, weights_size, rows_per_item=1):
    """``[(start, stop), ...]``: blocks of ``n_items`` items (AIS chains, or
    the data rows of reverse annealing, ``rows_per_item`` chains each), one
    per numba thread, each run on its own thread with a one-thread BLAS
    (``weights_size``: ``n_hidden * n_visible``); every block starts at a
    multiple of :data:`CHAIN_BLOCK_ALIGNMENT` chains.

    At one thread, or for products too small to share (``SMALL_PRODUCT``),
    every item is in one block, whose products may run on every BLAS thread.
    Otherwise the element-wise work of the annealing (the draws, the softplus
    gaps: about a sixth of a temperature of a 784 x 500 RBM at one thread)
    would run on one core while the products ran on all.
    """
    step = math.lcm(CHAIN_BLOCK_ALIGNMENT, rows_per_item) // rows_per_item
    n_blocks = min(numba.get_num_threads(), n_items // step)
    if n_blocks < 2 or n_items * rows_per_item * weights_size < SMALL_PRODUCT:
        return [(0, n_items)]
    starts = [round(i * n_items / n_blocks / step) * step for i in range(n_blocks)]
    return list(zip(starts, starts[1:] + [n_items], strict=True))


def run_in_blocks(blocks, task, *per_block):
    """``[task(block, *args) for block, *args in zip(blocks, *per_block)]``,
    each block on its own thread with a one-thread BLAS (one block: in this
    thread, with BLAS as it is). The kernels release the GIL."""
    if len(blocks) == 1:
        return [task(blocks[0], *(args[0] for args in per_block))]

    def alone(block, *args):
        # Inside each thread too: an OpenMP BLAS keeps its limit per thread.
        with one_blas_thread():
            return task(block, *args)

    with one_blas_thread(), ThreadPoolExecutor(len(blocks)) as pool:
        return list(pool.map(alone, blocks, *per_block))


def ais_log_weights(path, betas, n_chains, rng):
    """Log importance weights of ``n_chains`` AIS runs on the
    :class:`AnnealingPath` ``path`` (float64) and the chains' last visible
    states (:func:`anneal_rows_`), with the draws of ``rng``.

    The chains run in the blocks of :func:`row_blocks`, each with its own
    copy of ``rng`` (every block takes the same keys from it and draws at its
    own rows' counters). The result does not depend on the blocks: the draws
    are the same, and each row's products are computed by the same
    operations (:data:`CHAIN_BLOCK_ALIGNMENT`).
    """
    W = path.W
    blocks = row_blocks(n_chains, W.size)
    log_w = np.zeros(n_chains)

    def anneal(block, rng):
        first, stop = block
        return anneal_rows_(
            path.units, path.hidden, path.base, W, betas, V[first:stop],
            log_w[first:stop], rng, first,
        )  # fmt: skip

    with blas_threads_for(n_chains * W.size):
        V = ais_start(path.units, path.base, W, n_chains, rng)
        rngs = [rng] if len(blocks) == 1 else [copy.deepcopy(rng) for _ in blocks]
        states = run_in_blocks(blocks, anneal, rngs)
    return log_w, np.concatenate(states) if len(states) > 1 else states[0]


class AnnealingPath(NamedTuple):
    """An RBM and the base model its annealing starts from, as the AIS and
    RAISE kernels take them, with what the likelihood code needs of its
    visible layer besides. Each visible layer makes its own
    (``annealing_path`` in ``_rbm/layers/``); the code that runs AIS, RAISE
    and the bracket of the two (``reverse_ais.py``) never asks which.

    Parameters
    ----------
    units : NamedTuple
        The visible layer's kernel units, their bias the model's.
    hidden : NamedTuple
        The hidden layer's kernel units, their bias the model's ``c``.
    W : ndarray of shape (n_hidden, n_columns)
        The weights, as the kernels take them.
    base : object
        The visible layer's base model in kernel form (``path_context``).
    log_z_base : float
        ``log Z`` of the base model with the hidden units disconnected.
    free_energy : callable
        ``F(v)`` (float64) of checked rows, as the public functions take them.
    fit_base : callable
        ``(states, weights) -> (base, log_z_base)``: the layer's base model
        fitted to chain states weighted by ``weights`` (summing to 1): the
        base of reverse annealing, fitted to the RBM rather than the data.
    statistics : callable or None
        A dense block of checked rows to the rows the kernels anneal (one-hot
        codes of categorical rows); ``None``: the rows themselves.
    binary : bool
        Whether the kernels' rows are 0/1 (their random streams are keyed by
        their bits, else by their float64 values).
    """

    units: Any
    hidden: Any
    W: np.ndarray
    base: Any
    log_z_base: float
    free_energy: Callable
    fit_base: Callable
    statistics: Callable | None = None
    binary: bool = True


def run_ais(path, schedule, n_chains, random_state, return_states=False):
    """``log Z`` by AIS with its band: :func:`ais_log_weights` on the
    :class:`AnnealingPath` ``path``, at the temperatures ``schedule`` (an
    array from :func:`ais_betas`), seeded by ``random_state``. With
    ``return_states``, also the chains' last visible states and their log
    importance weights: weighted, they estimate expectations under the RBM
    (the base model of reverse annealing is fitted to them)."""
    n_hidden, n_visible = path.W.shape
    check_chains_memory(n_chains, n_hidden + n_visible, "n_chains")
    log_w, states = ais_log_weights(path, schedule, n_chains, kernel_rng(random_state))
    check_log_weights(log_w, "AIS")
    estimate = LogPartition(*ais_band(log_w, path.log_z_base), method="ais")
    return (estimate, states, log_w) if return_states else estimate
