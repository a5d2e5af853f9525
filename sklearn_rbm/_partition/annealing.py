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

import numbers
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .._core.utils import (
    as_real_array,
    blas_threads_for,
    check_chains_memory,
    kernel_rng,
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
def ais_log_weights(units, hidden, base, W, betas, n_chains, rng):
    """Log importance weights of ``n_chains`` AIS runs (float64) and the
    chains' last visible states (draws at the last temperature below 1, in
    ``W``'s dtype: approximate samples of the RBM).

    ``units`` are the visible layer's kernel units (their bias the model's),
    ``hidden`` the hidden layer's (their bias the model's ``c``), ``base``
    the visible layer's base model in kernel form. Chains start from exact
    draws of the base model (``beta = 0``). At each temperature one product
    gives the hidden inputs ``W s``, used both for the weight increment and
    for drawing ``h``; a second product gives the visible inputs for drawing
    ``v``: two matrix products per temperature, the element-wise work fused
    around them (serially: see the note on BLAS threads in
    ``_rbm/layers/bernoulli.py``).
    """
    ctx = context(units, W)
    path = path_context(units, base, W)
    V = path_start(units, path, n_chains, W, rng)
    log_w = np.zeros(n_chains)
    n_betas = betas.shape[0]
    for k in range(1, n_betas):
        beta, beta_prev = betas[k], betas[k - 1]
        last = k == n_betas - 1
        S, visible_terms = path_statistics(units, path, V)
        A = input_to_hidden(units, ctx, S, W)
        anneal_(
            hidden, log_w, A, visible_terms, hidden.bias, beta, beta_prev,
            new_key(rng), not last,
        )  # fmt: skip
        if last:
            break
        # A now holds h ~ p_beta(h | v); draw v ~ p_beta(v | h).
        V = path_sample(units, path, A, W, beta, rng)
    return log_w, V


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
    with blas_threads_for(n_chains * n_hidden * n_visible):
        log_w, states = ais_log_weights(
            path.units, path.hidden, path.base, path.W, schedule, n_chains,
            kernel_rng(random_state),
        )  # fmt: skip
    check_log_weights(log_w, "AIS")
    estimate = LogPartition(*ais_band(log_w, path.log_z_base), method="ais")
    return (estimate, states, log_w) if return_states else estimate
