"""The solver table of the binary RBM family: what each ``solver`` name
means, as flags on one compiled mini-batch update, and the step that calls
it.

:func:`sklearn_rbm._kernels.gibbs.dcp_minibatch_update` runs CD-K, PCD, the
centred gradient, S-DCP and centred S-DCP (Upadhya & Sastry 2017, Algorithms
1-3; Melchior, Fischer & Wiskott 2016); the tempered solvers call
:func:`sklearn_rbm._kernels.tempering.pt_minibatch_update`. A step is made
once per fit by ``make_step(estimator, settings)`` and called by the training
engine once per mini-batch. ``GaussianBernoulliRBM``'s table
(``GAUSSIAN_SOLVERS``) has the same flags with the Gaussian step, which runs
:func:`sklearn_rbm._kernels.gaussian.gaussian_minibatch_update`.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ._kernels.gaussian import gaussian_minibatch_update
from ._kernels.gibbs import dcp_minibatch_update
from ._kernels.tempering import pt_minibatch_update
from ._tempering import tempering_base
from ._utils import warn


def dcp_step(rbm, settings):
    """The mini-batch step of the five DCP solvers: one call of the unified
    kernel, with the flags of ``settings`` and the estimator's state arrays
    (updated in place)."""
    W = rbm.components_
    b, c = rbm._centred_visible_bias, rbm._centred_hidden_bias
    mu, lam = rbm.offset_visible_, rbm.offset_hidden_
    vel_W, vel_b, vel_c = rbm._velocity
    data_term = np.empty_like(W)  # kernel scratch, once per fit
    rates = (float(rbm.learning_rate), float(rbm.momentum), float(rbm.weight_decay))

    def step(batch):
        dcp_minibatch_update(
            dense_batch(batch[0]), W, b, c, mu, lam, settings.nu_mu, settings.nu_lam,
            rbm._chain_hidden, settings.spec.persistent, settings.n_inner,
            rbm.n_gibbs_steps, *rates, vel_W, vel_b, vel_c, data_term,
            rbm._kernel_rng,
        )  # fmt: skip

    return step


def _pt_step(rbm, settings):
    """The mini-batch step of the tempered solvers: one call of
    ``pt_minibatch_update`` on the replicas of every temperature, counting
    the swap rounds for ``history_``."""
    W = rbm.components_
    b, c = rbm._centred_visible_bias, rbm._centred_hidden_bias
    mu, lam = rbm.offset_visible_, rbm.offset_hidden_
    vel_W, vel_b, vel_c = rbm._velocity
    base = tempering_base(rbm, W.dtype)
    monitor = rbm._swap_monitor
    rates = (float(rbm.learning_rate), float(rbm.momentum), float(rbm.weight_decay))

    def step(batch):
        pt_minibatch_update(
            dense_batch(batch[0]), W, b, c, mu, lam, settings.nu_mu, settings.nu_lam,
            rbm._chain_hidden, rbm.betas_, base, rbm.n_gibbs_steps, *rates,
            vel_W, vel_b, vel_c, monitor.accepted, rbm._kernel_rng,
        )  # fmt: skip
        monitor.rounds += 1

    return step


@dataclass(frozen=True)
class _Solver:
    """Everything a solver name means: its flags and the step that runs it."""

    centred: bool  # offsets mu, lambda move with the data (Melchior et al. 2016)
    persistent: bool  # chains persist across mini-batches (Tieleman 2008)
    inner_steps: bool  # several convex-surrogate steps per mini-batch (S-DCP)
    tempered: bool = False  # replicas at several temperatures swap states (PT)
    make_step: Callable = dcp_step  # (estimator, settings) -> step(batch)


SOLVERS = {
    "cd": _Solver(centred=False, persistent=False, inner_steps=False),
    "pcd": _Solver(centred=False, persistent=True, inner_steps=False),
    "cg": _Solver(centred=True, persistent=False, inner_steps=False),
    "sdcp": _Solver(centred=False, persistent=False, inner_steps=True),
    "csdcp": _Solver(centred=True, persistent=False, inner_steps=True),
    # Parallel tempering (Desjardins et al. 2010; Cho, Raiko & Ilin 2010):
    # PCD whose chains are the beta = 1 replicas of a tempering system.
    "pt": _Solver(
        centred=False, persistent=True, inner_steps=False, tempered=True,
        make_step=_pt_step,
    ),
    "cpt": _Solver(
        centred=True, persistent=True, inner_steps=False, tempered=True,
        make_step=_pt_step,
    ),
}  # fmt: skip
TEMPERING_SETTINGS = ("n_temperatures", "min_beta", "beta_ladder")

# Upadhya & Sastry (2017) use d = 3 inner steps (K' = 4) on their small data
# sets, and sliding factors nu_mu = nu_lambda = 0.01 for the offsets.
_DEFAULT_INNER_STEPS = 3
_DEFAULT_CENTERING_RATE = 0.01


class _Settings(NamedTuple):
    """A solver with its hyperparameters resolved for one fit."""

    spec: "_Solver"
    n_inner: int
    nu_mu: float
    nu_lam: float


def resolve_solver(estimator, solvers):
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
    if not spec.tempered:
        # Estimators without tempered solvers have no tempering settings.
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
    return _Settings(spec, n_inner, nu_mu, nu_lam)


def _default(value, default):
    return default if value is None else value


def dense_batch(batch):
    """A mini-batch as a C-contiguous dense array (sparse batches are densified)."""
    if sp.issparse(batch):
        return batch.toarray()
    return np.ascontiguousarray(batch)


def gaussian_step(rbm, settings):
    """The mini-batch step of every solver: one call of the Gaussian kernel
    with the flags of ``settings`` and the estimator's state arrays (updated
    in place)."""
    W = rbm.components_
    b, c = rbm._centred_visible_bias, rbm._centred_hidden_bias
    mu, lam = rbm.offset_visible_, rbm.offset_hidden_
    vel_W, vel_b, vel_c, vel_z = rbm._velocity
    learn_sigma = rbm._learns_sigma()
    # Kernel scratch, once per fit: the model product only when sigma learns.
    data_term = np.empty_like(W)
    model_term = np.empty_like(W) if learn_sigma else np.empty((0, 0), W.dtype)
    log_var_rate = rbm.learning_rate * rbm.sigma_learning_rate_factor
    tempering, accepted = None, np.zeros(0, dtype=np.int64)
    if settings.spec.tempered:
        # The ladder leads to the Gaussian AIS's base model (gaussian_tempering).
        base_precision = 1.0 / np.asarray(rbm.base_sigma_, np.float64) ** 2
        tempering = (rbm.betas_, np.asarray(rbm.base_mean_, np.float64), base_precision)
        accepted = rbm._swap_monitor.accepted
    rates = (
        float(rbm.learning_rate),
        float(log_var_rate) if learn_sigma else 0.0,
        float(2.0 * np.log(rbm.min_sigma)),
        float(rbm.momentum),
        float(rbm.weight_decay),
    )

    def step(batch):
        gaussian_minibatch_update(
            dense_batch(batch[0]), W, b, c, rbm._log_variance, mu, lam,
            settings.nu_mu, settings.nu_lam, rbm._chain_hidden,
            settings.spec.persistent, settings.n_inner, rbm.n_gibbs_steps,
            *rates, vel_W, vel_b, vel_c, vel_z, data_term, model_term,
            tempering, accepted, rbm._kernel_rng,
        )  # fmt: skip
        if tempering is not None:
            rbm._swap_monitor.rounds += 1

    return step


# The solvers of DCPBernoulliRBM, same flags, with the Gaussian update as
# their step: it runs the DCP family and, for the tempered solvers ('pt',
# 'cpt'), the tempered negative phase. A solver with another kind of step
# needs a Gaussian entry of its own here.
GAUSSIAN_SOLVERS = {
    name: replace(spec, make_step=gaussian_step)
    for name, spec in SOLVERS.items()
    if spec.make_step is dcp_step or spec.tempered
}
