"""The solvers of :class:`ConditionalRBMRegressor` (Ping & Ihler, AISTATS 2017).

Each solver is one step function, named in the table ``SOLVERS`` (the shape
of ``_core/solvers.py``): it takes the fit's :class:`TrainingState` (never
the estimator) and a mini-batch ``(X, V)`` of inputs and binary outputs,
forms each row's RBM biases ``B1 = b^v + W^{vx} x`` and ``B2 = b^h + W^{hx}
x``, estimates the model expectations of the gradient (the negative phase)
by calling its kernel directly, and ascends by :func:`ascend`.
Message-passing solvers learn only from the rows on which inference
converged (Ping & Ihler 2017, Sec. 4.1).

The gradient (:func:`gradient`) is that of the conditional log-likelihood,
Ping & Ihler (2017) Eq. (5) and Appendix A, with the model expectations
``E[v]``, ``E[h]``, ``E[h v^T]`` supplied by the solver; for the max-margin
solvers it is minus the gradient of the loss (their Eq. (7)).
"""

from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy.special import expit
from sklearn.utils.validation import check_is_fitted

from .._core.solvers import Solver
from . import bp_kernels
from .kernels import conditional_gibbs_chain
from .start import residuals_times, row_biases


@dataclass
class TrainingState:
    """What the steps of one fit read and update, made by the estimator when
    the fit starts.

    Attributes
    ----------
    parameters : tuple of ndarray
        ``(W^{vh}, W^{vx}, W^{hx}, b^v, b^h)`` in standardised coordinates,
        updated in place.
    learning_rate, n_gibbs_steps, chain_start, inference_tol, inference_damping
        The estimator's settings.
    chain_rs, kernel_rng
        The streams of the chains' starts and of the kernels' draws.
    max_iter : int
        This epoch's inference iterations (Ping & Ihler's schedule).
    n_rows_used, n_skipped_batches : int
        Rows that entered a gradient this epoch; batches with none, this fit.
    """

    parameters: tuple
    learning_rate: float
    n_gibbs_steps: int
    chain_start: str
    inference_tol: float
    inference_damping: float
    chain_rs: np.random.RandomState
    kernel_rng: np.ndarray
    max_iter: int = 0
    n_rows_used: int = 0
    n_skipped_batches: int = 0

    @property
    def W(self):
        """The coupling ``W^{vh}`` of hidden and output units."""
        return self.parameters[0]


def gradient(W, X, V, B2, visible, hidden, pairwise=None, latent_map=False):
    """Ascent direction of the parameters ``(W^{vh}, W^{vx}, W^{hx}, b^v, b^h)``.

    ``visible``, ``hidden`` are the model expectations ``E[v]``, ``E[h]`` of
    each row and ``pairwise`` the sum over rows of ``E[h v^T]`` (``None``:
    it factorises as ``hidden^T visible``). The positive hidden statistics are
    ``mu = sigmoid(W v + B2)`` (Ping & Ihler's ``mu^n``), or its maximiser
    ``1[W v + B2 > 0]`` with ``latent_map`` (LSSVM). Gradients are averaged
    over the rows.
    """
    pre = V @ W.T + B2
    H_data = (pre > 0.0).astype(np.float64) if latent_map else expit(pre)
    if pairwise is None:
        pairwise = hidden.T @ visible
    n_rows = X.shape[0]
    dV = V - visible
    dH = H_data - hidden
    return (
        (H_data.T @ V - pairwise) / n_rows,
        residuals_times(dV, X) / n_rows,
        residuals_times(dH, X) / n_rows,
        dV.mean(axis=0),
        dH.mean(axis=0),
    )


def ascend(
    state, X, V, B2, visible, hidden, pairwise=None, rows=None, latent_map=False
):
    """One gradient step of the ``state``'s parameters from the rows ``rows``
    (``None``: all).

    ``visible`` and ``hidden`` cover every row of the batch; ``pairwise`` is
    already summed over the selected rows. A batch with no usable row is
    skipped and counted in ``state.n_skipped_batches``.
    """
    if rows is not None:
        if not rows.any():
            state.n_skipped_batches += 1
            return
        X, V, B2 = X[rows], V[rows], B2[rows]
        visible, hidden = visible[rows], hidden[rows]
    step = gradient(state.W, X, V, B2, visible, hidden, pairwise, latent_map)
    for parameter, direction in zip(state.parameters, step, strict=True):
        parameter += state.learning_rate * direction
    state.n_rows_used += X.shape[0]


def _converged_rows(converged):
    """``None`` when every row converged, else the boolean mask."""
    converged = np.asarray(converged, dtype=bool)
    return None if converged.all() else converged


def _message_passing(state, code, B1, B2, pairwise=False):
    """BP (``code``) on every row, with the fit's iteration settings."""
    return bp_kernels.belief_propagation(
        state.W, B1, B2, code, state.max_iter,
        float(state.inference_tol), float(state.inference_damping), pairwise,
    )  # fmt: skip


# ------------------------------------------------------------------ steps
def logistic_step(state, batch):
    """No hidden units: logistic regression per output, exact expectations."""
    X, V = batch
    B1, B2 = row_biases(state.parameters, X)
    ascend(state, X, V, B2, expit(B1), np.zeros((X.shape[0], 0)))


def cd_step(state, batch):
    """CD-k: Gibbs chains of each ``x``'s RBM, from random or data states.

    Ping & Ihler (2017, Sec. 4.1) find data-started chains poor for CRBMs,
    whose conditionals are peaked and multi-modal; random starts are the
    default (``chain_start``).
    """
    X, V = batch
    B1, B2 = row_biases(state.parameters, X)
    if state.chain_start == "random":
        start = (state.chain_rs.random_sample(V.shape) < 0.5).astype(np.float64)
    else:
        start = V
    V_neg, H_neg = conditional_gibbs_chain(
        start, state.W, B1, B2, state.n_gibbs_steps, False, state.kernel_rng
    )
    ascend(state, X, V, B2, V_neg, H_neg)


def percloss_step(state, batch):
    """CD-PercLoss (Mnih, Larochelle & Hinton 2011): the perceptron loss
    ``F(v^n | x) - min_v F(v | x)``.

    Its gradient contrasts the data with the minimiser of the free energy,
    approximated by a CD-like stochastic search: a Gibbs chain started from
    a draw of the logistic-regression part ``sigmoid(b1)`` (as Ping & Ihler
    2017, Sec. 2, describe it), keeping the visited state of lowest free
    energy. (Measured on noisy digits: starting at the thresholded
    ``1[b1 > 0]`` instead trains far worse under mean-field decoding.)
    """
    X, V = batch
    B1, B2 = row_biases(state.parameters, X)
    start = (state.chain_rs.random_sample(V.shape) < expit(B1)).astype(np.float64)
    V_neg, H_neg = conditional_gibbs_chain(
        start, state.W, B1, B2, state.n_gibbs_steps, True, state.kernel_rng
    )
    ascend(state, X, V, B2, V_neg, H_neg)


def mf_step(state, batch):
    """MLE-MF: mean-field beliefs in place of the model expectations."""
    X, V = batch
    B1, B2 = row_biases(state.parameters, X)
    tau_v, tau_h, _, _, converged = bp_kernels.mean_field(
        state.W, B1, B2, state.max_iter,
        float(state.inference_tol), float(state.inference_damping), False,
    )  # fmt: skip
    ascend(state, X, V, B2, tau_v, tau_h, rows=_converged_rows(converged))


def bp_step(state, batch):
    """MLE-BP: sum-product beliefs, with the pairwise beliefs ``Gamma`` of
    Ping & Ihler (2017) Eq. (18) for ``E[h v^T]``."""
    X, V = batch
    B1, B2 = row_biases(state.parameters, X)
    tau_v, tau_h, gamma, _, converged = _message_passing(
        state, bp_kernels.SUM_PRODUCT, B1, B2, pairwise=True
    )
    rows = _converged_rows(converged)
    pairwise = (gamma if rows is None else gamma[rows]).sum(axis=0)
    ascend(state, X, V, B2, tau_v, tau_h, pairwise, rows=rows)


def mssvm_step(state, batch):
    """MSSVM (Ping & Ihler 2017, Eq. (7)): loss-augmented marginal MAP by
    mixed-product BP.

    The Hamming loss adds ``1 - 2 v^n_i`` to ``b1_i`` (up to a constant).
    Given the decoding ``v_hat``, the hidden beliefs of converged mixed
    product are exactly ``p(h | v_hat, x)`` (their Eq. (15) clamps the
    visible units), so the expectation of Eq. (7) is formed from ``v_hat``.
    """
    X, V = batch
    B1, B2 = row_biases(state.parameters, X)
    tau_v, _, _, _, converged = _message_passing(
        state, bp_kernels.MIXED_PRODUCT, B1 + (1.0 - 2.0 * V), B2
    )
    v_hat = (tau_v > 0.5).astype(np.float64)
    h_mean = expit(v_hat @ state.W.T + B2)
    ascend(state, X, V, B2, v_hat, h_mean, rows=_converged_rows(converged))


def lssvm_step(state, batch):
    """LSSVM (Yu & Joachims 2009): loss-augmented joint MAP by max-product BP,
    with the latent hidden units of the data also maximised."""
    X, V = batch
    B1, B2 = row_biases(state.parameters, X)
    tau_v, tau_h, _, _, converged = _message_passing(
        state, bp_kernels.MAX_PRODUCT, B1 + (1.0 - 2.0 * V), B2
    )
    v_hat = (tau_v > 0.5).astype(np.float64)
    h_hat = (tau_h > 0.5).astype(np.float64)
    ascend(
        state, X, V, B2, v_hat, h_hat, rows=_converged_rows(converged), latent_map=True
    )


def copy_warm_start(init, parameters, n_features, n_outputs):
    """Start every solver from a fitted model ``init``: copy its output part
    and its first hidden units into ``parameters`` (``W^{vh}, W^{vx}, W^{hx},
    b^v, b^h``, in place); the other hidden units keep their start."""
    check_is_fitted(init, "coef_")
    if init.coef_.shape != (n_outputs, n_features):
        raise ValueError(
            f"init was fitted with {init.coef_.shape[1]} features and "
            f"{init.coef_.shape[0]} outputs, but the data have {n_features} "
            f"and {n_outputs}; a warm start needs the same inputs and outputs."
        )
    W, Wvx, Whx, b, c = parameters
    Wvx[...], b[...] = init.coef_, init.intercept_
    shared = min(W.shape[0], init.components_.shape[0])
    W[:shared] = init.components_[:shared]
    Whx[:shared] = init.hidden_coef_[:shared]
    c[:shared] = init.intercept_hidden_[:shared]


def _stepper(step):
    """``make_step`` of a solver whose step needs no settings of its own."""

    def make_step(state, settings=None):
        return partial(step, state)

    return make_step


@dataclass(frozen=True)
class ConditionalSolver(Solver):
    """What a solver name means: its step, and the inference that queries a
    model it trained (``inference='auto'``; Ping & Ihler 2017 find that
    predicting with the inference used in training works best)."""

    prediction: str
    uses_message_passing: bool


def _solver(step, prediction, uses_message_passing):
    return ConditionalSolver(_stepper(step), prediction, uses_message_passing)


SOLVERS = {
    "cd": _solver(cd_step, prediction="mf", uses_message_passing=False),
    "cd-percloss": _solver(percloss_step, prediction="mf", uses_message_passing=False),
    "mf": _solver(mf_step, prediction="mf", uses_message_passing=True),
    "bp": _solver(bp_step, prediction="bp", uses_message_passing=True),
    "mssvm": _solver(mssvm_step, prediction="mixed", uses_message_passing=True),
    "lssvm": _solver(lssvm_step, prediction="max", uses_message_passing=True),
}
#: No hidden units (``n_components=0``): logistic regression per output.
LOGISTIC = _solver(logistic_step, prediction="mf", uses_message_passing=False)
