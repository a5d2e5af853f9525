"""The solver table of the RBM trainer: what each ``solver`` name means, as
flags on one compiled mini-batch update, and the step that calls it.

:func:`sklearn_rbm._rbm.kernels.minibatch_update_` runs CD-K, PCD, the
centred gradient, S-DCP and centred S-DCP (Upadhya & Sastry 2017,
Algorithms 1-3; Melchior, Fischer & Wiskott 2016) and, with a tempering
system as its negative phase, parallel tempering (Desjardins et al. 2010),
for any pair of layers. A step is made once per fit by ``make_step(state,
settings)`` from the fit's :class:`~sklearn_rbm._rbm.trainer.TrainingState`
(never the estimator) and called by the training engine once per mini-batch.
Each entry owns its tempering hooks (:class:`Tempering` or
:data:`NO_TEMPERING`), so the trainer never asks whether a solver tempers.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .._core.solvers import Solver
from .._core.utils import warn
from .kernels import minibatch_update_
from .tempering import SwapMonitor, ladder_length, temperature_ladder


def dense_batch(batch):
    """A mini-batch as a C-contiguous dense array (sparse batches are densified)."""
    if sp.issparse(batch):
        return batch.toarray()
    return np.ascontiguousarray(batch)


_NO_WEIGHTS = np.empty(0)
_NO_LADDER = np.empty(0)


def rbm_step(state, settings):
    """The mini-batch step of every solver: one call of the compiled update
    with the flags of ``settings`` and the arrays of ``state`` (updated in
    place), then the solver's tempering bookkeeping."""
    tempering = settings.spec.tempering
    centring = (state.mu, state.lam, settings.nu_mu, settings.nu_lam)
    chains = (state.chain_hidden, settings.spec.persistent, tempering.accepted(state))
    schedule = (settings.n_inner, settings.n_gibbs)
    rates = (settings.learning_rate, settings.momentum, settings.weight_decay)
    scratch = (state.velocity, np.empty_like(state.W))  # once per fit
    ladder = tempering.kernel_argument(state)

    def step(batch):
        # ``batch`` is ``(X,)`` or ``(X, sample weights)``; no weights is an
        # empty array (a run-time switch of the kernel).
        weights = batch[1] if len(batch) > 1 else _NO_WEIGHTS
        minibatch_update_(
            dense_batch(batch[0]), state.W, state.visible, state.hidden, centring,
            chains, ladder, schedule, rates, scratch, state.rng, weights,
        )  # fmt: skip
        tempering.after_step(state)

    return step


class _NoTempering:
    """The tempering hooks of the solvers whose chains run at one temperature."""

    def ladder(self, estimator):
        """The inverse temperatures of a fit (``None``: no ladder)."""
        return None

    def chains(self, estimator):
        """``(parameter name, rows)`` of the persistent chains, for the
        memory check and the chains' allocation (known before the ladder is
        built)."""
        return "batch_size", estimator.batch_size

    def start(self, estimator, betas):
        """Set the fitted attributes of the ladder at initialisation."""

    def kernel_argument(self, state):
        """The kernel's ``tempering`` argument: an empty ladder runs plain
        chains (the base model only keeps the argument's type the same)."""
        return _NO_LADDER, state.tempering_base

    def accepted(self, state):
        return np.zeros(0, dtype=np.int64)

    def begin_epoch(self, state):
        """Called before each epoch."""

    def after_step(self, state):
        """Called after each mini-batch step."""

    def figures(self, state, epoch):
        """The tempering figures of an epoch for ``history_``."""
        return {}


class Tempering(_NoTempering):
    """The tempering hooks of 'pt' and 'cpt': the ladder from the
    estimator's ``n_temperatures``, ``min_beta`` and ``beta_ladder``,
    ``batch_size`` chains at every temperature, the swap monitor behind the
    ``swap_acceptance_t`` figures, and the visible layer's base model at
    ``beta = 0``."""

    def ladder(self, estimator):
        return temperature_ladder(
            estimator.n_temperatures, estimator.min_beta, estimator.beta_ladder
        )

    def chains(self, estimator):
        n_temperatures = ladder_length(estimator.n_temperatures, estimator.beta_ladder)
        return "n_temperatures * batch_size", n_temperatures * estimator.batch_size

    def start(self, estimator, betas):
        estimator.betas_ = betas
        estimator._swap_monitor = SwapMonitor(betas, estimator.batch_size)

    def kernel_argument(self, state):
        return state.betas, state.tempering_base

    def accepted(self, state):
        return state.monitor.accepted

    def begin_epoch(self, state):
        state.monitor.start_epoch()

    def after_step(self, state):
        state.monitor.rounds += 1

    def figures(self, state, epoch):
        state.monitor.warn_about_gaps(f"in epoch {epoch}")
        return state.monitor.figures()


NO_TEMPERING = _NoTempering()
TEMPERING = Tempering()


@dataclass(frozen=True)
class RBMSolver(Solver):
    """Everything an RBM solver name means: its flags, its step and its
    tempering hooks."""

    centred: bool = False  # offsets mu, lambda move with the data (Melchior et al.)
    persistent: bool = False  # chains persist across mini-batches (Tieleman 2008)
    inner_steps: bool = False  # several convex-surrogate steps per mini-batch (S-DCP)
    tempering: _NoTempering = NO_TEMPERING  # replicas at several temperatures (PT)
    make_step: Callable = rbm_step  # (state, settings) -> step(batch)


SOLVERS = {
    "cd": RBMSolver(),
    "pcd": RBMSolver(persistent=True),
    "cg": RBMSolver(centred=True),
    "sdcp": RBMSolver(inner_steps=True),
    "csdcp": RBMSolver(centred=True, inner_steps=True),
    # Parallel tempering (Desjardins et al. 2010; Cho, Raiko & Ilin 2010):
    # PCD whose chains are the beta = 1 replicas of a tempering system.
    "pt": RBMSolver(persistent=True, tempering=TEMPERING),
    "cpt": RBMSolver(centred=True, persistent=True, tempering=TEMPERING),
}
TEMPERING_SETTINGS = ("n_temperatures", "min_beta", "beta_ladder")

# Upadhya & Sastry (2017) use d = 3 inner steps (K' = 4) on their small data
# sets, and sliding factors nu_mu = nu_lambda = 0.01 for the offsets.
_DEFAULT_INNER_STEPS = 3
_DEFAULT_CENTERING_RATE = 0.01


class Settings(NamedTuple):
    """A solver with the estimator's hyperparameters resolved for one fit."""

    spec: RBMSolver
    n_inner: int
    n_gibbs: int
    nu_mu: float
    nu_lam: float
    learning_rate: float
    momentum: float
    weight_decay: float


def resolve_solver(estimator, solvers=SOLVERS):
    """The ``estimator``'s solver from the table ``solvers``, with the
    solver-dependent defaults resolved for one fit; warns about settings the
    solver does not use."""
    spec = solvers[estimator.solver]
    unused = []
    if not spec.inner_steps and estimator.n_inner_steps is not None:
        unused.append("n_inner_steps")
    if not spec.centred:
        unused += [
            name
            for name in ("centering_rate_visible", "centering_rate_hidden")
            if getattr(estimator, name) is not None
        ]
    if spec.tempering is NO_TEMPERING:
        unused += [
            name
            for name in TEMPERING_SETTINGS
            if getattr(estimator, name, None) is not None
        ]
    if unused:
        warn(
            f"solver={estimator.solver!r} does not use {', '.join(unused)}; "
            f"{'it is' if len(unused) == 1 else 'they are'} ignored. "
            "n_inner_steps applies to 'sdcp' and 'csdcp', the centering "
            "rates to 'cg', 'csdcp' and 'cpt', n_temperatures, min_beta "
            "and beta_ladder to 'pt' and 'cpt'."
        )
    n_inner = (
        (estimator.n_inner_steps or _DEFAULT_INNER_STEPS) if spec.inner_steps else 1
    )
    if spec.centred:
        nu_mu = _default(estimator.centering_rate_visible, _DEFAULT_CENTERING_RATE)
        nu_lam = _default(estimator.centering_rate_hidden, _DEFAULT_CENTERING_RATE)
    else:
        nu_mu = nu_lam = 0.0
    return Settings(
        spec, n_inner, estimator.n_gibbs_steps, nu_mu, nu_lam,
        float(estimator.learning_rate), float(estimator.momentum),
        float(estimator.weight_decay),
    )  # fmt: skip


def _default(value, default):
    return default if value is None else value
