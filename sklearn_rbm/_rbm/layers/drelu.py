"""Double-ReLU (dReLU) hidden units with a trained potential (Tubiana, Cocco &
Monasson 2019), and the table of the hidden unit types by name.

A dReLU unit has the potential ``U(h) = gamma_p h_+^2 / 2 + theta_p h_+ +
gamma_m h_-^2 / 2 + theta_m h_-`` (``h_+ = max(h, 0)``, ``h_- = min(h,
0)``) and the input ``a = c + sum_i W_{i v_i}``; its cumulant, moments and
sampler are the scalar functions of ``relu.py``. Unlike the other hidden
units its potential is trained: the four parameters of every unit are the
rows of one ``(4, n_hidden)`` float64 array ``potential`` (``gamma_p,
gamma_m, theta_p, theta_m``), beside the hidden bias ``c`` that every hidden
layer has. The log-likelihood gradient of a potential parameter is minus
the data mean plus the model mean of its sufficient statistic, as for any
exponential family (Tubiana et al. 2019; jertubiana/PGM):
``d log p(v) / d gamma_p = -E[h_+^2 / 2 | v] + <h_+^2 / 2>_model`` and
``d log p(v) / d theta_p = -E[h_+ | v] + <h_+>_model`` (likewise on the
negative side). The trainer's kernel takes the data means once per
mini-batch and the model means at the chains' final states, as it does for
the weights (:func:`~sklearn_rbm._rbm.layers.base.potential_statistics`).

Two directions of the parameters leave ``p(v)`` unchanged. ``(c + t,
theta_p + t, theta_m + t)``: the gradient has no component along it (its
three terms cancel), so gradient steps do not drift along it. And the scale
``(W, c, theta, gamma) -> (s W, s c, s theta, s^2 gamma)`` (``h -> h / s``),
along which the curvatures can drift: they are kept at or above
:data:`MIN_GAMMA`, where a unit's conditional is still well defined and its
moments well conditioned.

Tempering and annealing scale the units' input and keep their potential, as
for ReLU units (``relu.py``).
"""

import numpy as np

from ..._core.utils import kernel_array
from ..._numerics.jit import jit
from ..._numerics.steps import bias_step_
from . import base
from .base import implements
from .relu import (
    BernoulliHidden,
    DReLUUnits,
    GaussianHidden,
    ReLUHidden,
    drelu_cumulant,
    drelu_moments,
    drelu_sample,
    drelu_sides,
    unit_draw,
    unit_mean,
)

#: The floor of the curvatures ``gamma_p`` and ``gamma_m`` during training.
MIN_GAMMA = 0.05

#: The fitted attributes of the potential, in the order of its rows.
POTENTIAL_ATTRIBUTES = ("gamma_plus_", "gamma_minus_", "theta_plus_", "theta_minus_")


# ------------------------------------------------------------------ kernels
@jit
def drelu_rows(A, potential, what):
    """Of each total input ``A[r, j]`` (float64 result): the cumulant
    (``what`` 0), the mean (1) or the variance (2) of unit ``j``."""
    n_rows, n_cols = A.shape
    out = np.empty((n_rows, n_cols))
    for r in range(n_rows):
        for j in range(n_cols):
            a = np.float64(A[r, j])
            gp, gm = potential[0, j], potential[1, j]
            tp, tm = potential[2, j], potential[3, j]
            if what == 0:
                out[r, j] = drelu_cumulant(a, gp, gm, tp, tm)
            else:
                moments = drelu_moments(a, gp, gm, tp, tm)
                out[r, j] = moments[0] if what == 1 else moments[1]
    return out


@jit
def _add_row_statistics_(out, a, potential, j, weight):
    """``out[:, j] += weight * (E[h_+^2 / 2], E[h_-^2 / 2], E[h_+], E[h_-])``
    at the total input ``a`` of unit ``j``."""
    p_plus, mean_p, var_p, mean_m, var_m = drelu_sides(
        a, potential[0, j], potential[1, j], potential[2, j], potential[3, j]
    )
    p_minus = 1.0 - p_plus
    out[0, j] += weight * 0.5 * p_plus * (var_p + mean_p * mean_p)
    out[1, j] += weight * 0.5 * p_minus * (var_m + mean_m * mean_m)
    out[2, j] += weight * p_plus * mean_p
    out[3, j] += weight * p_minus * mean_m


@jit
def drelu_statistics(A, field, potential, weights):
    """float64 ``(4, n_hidden)``: the sums over the rows ``r`` (times
    ``weights[r]``, or 1 when ``weights`` is empty) of the conditional means
    of the potential's sufficient statistics ``h_+^2 / 2, h_-^2 / 2, h_+,
    h_-`` at the inputs ``A[r] + field``."""
    n_rows, n_hidden = A.shape
    out = np.zeros((4, n_hidden))
    for r in range(n_rows):
        weight = 1.0 if weights.shape[0] == 0 else np.float64(weights[r])
        if weight == 0.0:
            continue
        for j in range(n_hidden):
            a = np.float64(A[r, j]) + np.float64(field[j])
            _add_row_statistics_(out, a, potential, j, weight)
    return out


# -------------------------------------------------------------------- hooks
# (mean_, sample_, the tempered draws and anneal_ are the ReLU family's,
# ``relu.py``, over the two below.)
@jit
def _parameters(units, j):
    P = units.potential
    return P[0, j], P[1, j], P[2, j], P[3, j]


@implements(unit_mean, DReLUUnits)
def _unit_mean(units, j, a):
    return drelu_moments(a, *_parameters(units, j))[0]


@implements(unit_draw, DReLUUnits)
def _unit_draw(units, j, a, key, counter):
    return drelu_sample(a, *_parameters(units, j), key, counter)


@implements(base.cumulant_gap, DReLUUnits)
def _cumulant_gap(units, j, a, beta, beta_next):
    parameters = _parameters(units, j)
    return drelu_cumulant(beta * a, *parameters) - drelu_cumulant(
        beta_next * a, *parameters
    )


@implements(base.potential_statistics, DReLUUnits)
def _potential_statistics(units, visible, ctx, S, W, field, weights):
    A = base.input_to_hidden(visible, ctx, S, W)
    return drelu_statistics(A, field, units.potential, weights)


@implements(base.potential_step_, DReLUUnits)
def _potential_step(units, data, chain, scale_data, scale_chain, rate, momentum):
    # Gradient ascent: the model's means minus the data's (the statistics
    # enter the energy with a plus sign).
    P, velocity = units.potential, units.potential_velocity
    for k in range(4):
        bias_step_(P[k], chain[k], data[k], scale_chain, scale_data, rate, momentum,
                   velocity[k])  # fmt: skip
    for k in range(2):
        for j in range(P.shape[1]):
            P[k, j] = max(P[k, j], units.min_gamma)


# ------------------------------------------------------- the estimator side
def potential_of(model):
    """The fitted potential of ``model`` as a float64 ``(4, n_hidden)``
    array (rows ``gamma_plus_, gamma_minus_, theta_plus_, theta_minus_``)."""
    return np.array([getattr(model, name) for name in POTENTIAL_ATTRIBUTES],
                    dtype=np.float64)  # fmt: skip


class DReLUHidden(BernoulliHidden):
    """dReLU hidden units, as the estimators see them: unbound (``potential``
    None) to start a fit, or bound to a fitted potential by :meth:`bind`.

    The training state is ``model._hidden_potential`` (``(4, n_hidden)``
    float64) with its velocity; the fitted attributes ``gamma_plus_``,
    ``gamma_minus_``, ``theta_plus_`` and ``theta_minus_`` are its rows. A
    fresh fit starts from ``gamma = 1`` and ``theta = 0`` on both sides: a
    Gaussian unit of unit precision, whose mean at zero input (0) is the
    initial centring offset.
    """

    name = "drelu"
    enumerable = False
    initial_offset = 0.0
    state_attributes = ("_hidden_potential",)
    fitted_attributes = (
        *POTENTIAL_ATTRIBUTES,
        "_hidden_potential",
        "_hidden_potential_velocity",
    )

    def __init__(self, potential=None):
        self.potential = potential

    def bind(self, model):
        if not hasattr(model, POTENTIAL_ATTRIBUTES[0]):
            return self
        return DReLUHidden(potential_of(model))

    def start_training(self, model, dtype, init):
        n_hidden = model._n_hidden  # resolved by the trainer
        if init is not None and hasattr(init, POTENTIAL_ATTRIBUTES[0]):
            potential = potential_of(init)  # a copy; its width checked with W
        else:
            potential = np.zeros((4, n_hidden))
            potential[:2] = 1.0
        model._hidden_potential = potential
        model._hidden_potential_velocity = np.zeros_like(potential)

    def publish(self, model):
        for name, row in zip(POTENTIAL_ATTRIBUTES, model._hidden_potential,
                             strict=True):  # fmt: skip
            setattr(model, name, row.copy())

    def training_units(self, model, bias, velocity):
        return DReLUUnits(bias, velocity, model._hidden_potential,
                          model._hidden_potential_velocity, MIN_GAMMA)  # fmt: skip

    def units_of(self, bias, velocity=None):
        velocity = np.empty(0, bias.dtype) if velocity is None else velocity
        potential = kernel_array(self.potential, np.float64)
        return DReLUUnits(bias, velocity, potential, np.zeros_like(potential),
                          MIN_GAMMA)  # fmt: skip

    def _rows(self, A, what):
        A = np.asarray(A, np.float64)
        values = drelu_rows(np.ascontiguousarray(A.reshape(-1, A.shape[-1])),
                            self.potential, what)  # fmt: skip
        return values.reshape(A.shape)

    def mean(self, A):
        A[...] = self._rows(A, 1)
        return A

    def cumulant(self, A):
        return self._rows(A, 0)

    def cumulant_at_zero(self):
        """The mean of the units' ``Gamma_j(0)`` (times the number of units:
        ``log Z`` of the annealing's base model over ``h``)."""
        return float(self._rows(np.zeros(self.potential.shape[1]), 0).mean())

    def variance(self, A):
        return self._rows(A, 2)


#: The hidden unit types of ``CategoricalRBM(hidden_unit=...)``, by name.
HIDDEN_UNITS = {
    layer.name: layer
    for layer in (BernoulliHidden(), GaussianHidden(), ReLUHidden(), DReLUHidden())
}
