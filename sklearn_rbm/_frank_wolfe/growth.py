"""The growth of a :class:`FrankWolfeRBM`: Frank-Wolfe steps that each add
one hidden unit (Ping, Liu & Ihler, "Learning Infinite RBMs with Frank-Wolfe",
NIPS 2016, Algorithm 1), and the held-out choice of the size.

:class:`Growth` holds the state of one ``fit`` (data, persistent chains, the
units so far, the visible bias after every step) and returns a
:class:`GrowthResult`; the estimator installs it. The sub-problem's
element-wise pass is in ``_frank_wolfe/kernels.py``.
"""

import time
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize, minimize_scalar
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.extmath import safe_sparse_dot

from .._core.divergence import diagnose, likelihood_ceiling
from .._core.engine import EarlyStopping, History, progress_line
from .._core.utils import kernel_rng, warn
from .._partition.exact import MAX_EXACT_UNITS, log_partition_exact
from .._rbm.base import parameters_of
from .._rbm.kernels import gibbs_sample
from .._rbm.layers.bernoulli import units_of
from .kernels import signed_softplus_sum_, softplus_rows

# A unit must lower the sub-problem objective below its value 0 at w = 0 by
# more than rounding (L-BFGS near w = 0 returns values like -1e-15).
_MIN_IMPROVEMENT = 1e-10
# Largest fraction of non-zero training values for which the sub-problem
# keeps its rows as a CSR matrix.
_SPARSE_DENSITY = 0.25
# Backtracking of a unit whose insertion lowered the estimated likelihood:
# at most this many retries, each shrinking the unit by this factor.
_MAX_BACKTRACKS = 3
_BACKTRACK_FACTOR = 0.25
# A unit that still lowers the estimated likelihood after the backtracking is
# not inserted; growth stops after this many such steps in a row.
_MAX_REJECTED_STEPS = 3
# Scale of the random starting points of the sub-problem: small, so that
# L-BFGS starts where the objective is near its value 0 at w = 0 and the
# restarts differ only in the direction they leave it.
_START_SCALE = 0.01
# The columns of ``history_`` (one entry per inserted unit) and those that a
# progress line shows.
_HISTORY_NAMES = (
    "n_components",
    "objective",
    "scale",
    "training_gain",
    "free_energy_gap",
    "validation_gain",
    "validation_log_likelihood",
    "seconds",
)
_REPORTED = (
    "objective",
    "training_gain",
    "free_energy_gap",
    "validation_gain",
    "validation_log_likelihood",
)


class GrowthResult(NamedTuple):
    """What a growth produced: every unit reached, in order, and the visible
    bias after every step, from which the model of any size on the path is
    formed; the size selected on held-out data; the history; and, when the
    visible-bias steps diverged, the error message (the path then ends at
    the unit before)."""

    components: np.ndarray
    hidden_bias: np.ndarray
    visible_biases: np.ndarray
    initial_size: int
    selected: int
    history: dict
    n_steps: int
    divergence: str | None


class _Diverged(Exception):
    """The visible-bias steps of a unit diverged (message: what to do)."""


# Early stopping counts a held-out evaluation as an improvement when it beats
# the best one by more than the estimator's ``tol`` and by more than this
# fraction of the improvement since the start. Frank-Wolfe's gains shrink
# steadily (binarised digits: about 0.1 nats a unit at 10 units, 0.008 at
# 100) and their total depends on the data (0.2 nats on 16 pixels drawn from
# a 4-unit RBM, 2.5-3 on digits, tens on MNIST), so no fixed threshold both
# stops on digits and lets MNIST grow. With ``tol=0`` alone digits grew to
# 100 units; with this rule they stop at 56-65 and keep 46-55, 0.2-0.4 nats
# below 100 units in half the time (random states 0-3; bench_defaults.py).
_RELATIVE_TOL = 0.05


class _ShrinkingGainStopping(EarlyStopping):
    """:class:`EarlyStopping` whose threshold is ``max(tol, _RELATIVE_TOL *
    (best - reference))``, ``reference`` being the criterion's value for the
    starting model."""

    def __init__(self, tol, patience, reference):
        super().__init__(tol, patience)
        self.absolute_tol, self.reference = tol, reference

    def improves(self, value):
        if self.best_value is not None:
            gained = max(self.best_value - self.reference, 0.0)
            self.tol = max(self.absolute_tol, _RELATIVE_TOL * gained)
        return super().improves(value)


def _held_out_rule(rbm, initial_size, reference):
    """Early stopping on the held-out criterion, with the estimator's ``tol``
    and patience; ``reference`` is the criterion of the starting model. The
    cumulative-gain criterion is a change from the initial model, so a warm
    start's own size competes at 0; a fit from scratch keeps at least one
    unit."""
    stopper = _ShrinkingGainStopping(rbm.tol, rbm.n_iter_no_change, reference)
    if initial_size > 0 and rbm.score_every is None:
        stopper.best_value, stopper.best_index = 0.0, initial_size
    return stopper


class Growth:
    """The state of one ``fit``: data, chains, units so far and the history.

    It reads the estimator's hyperparameters and writes nothing into it:
    :meth:`run` returns a :class:`GrowthResult`. ``X_train`` is dense
    float64; ``score_model(W, b, c)`` gives the held-out log-likelihood of a
    model (for ``score_every``); the estimator's random streams for scoring
    and sampling are drawn from ``rs`` before, the growth's own after.
    """

    def __init__(self, rbm, X_train, X_val, rs, *, base_rate, score_model):
        self.rbm, self.rs = rbm, rs
        self.base_rate, self.score_model = base_rate, score_model
        self.clock = time.perf_counter()
        n_train, n_visible = X_train.shape
        n_chains = rbm.n_samples_per_step
        # The sub-problem's rows, fixed data on top and the chain states below,
        # each with the constant 1 of the hidden bias: refilling the bottom
        # block is all a step changes, so the data are copied once per fit.
        self.rows = np.ones((n_train + n_chains, n_visible + 1))
        self.rows[:n_train, :n_visible] = X_train
        self.coef = np.concatenate(
            [np.full(n_train, -1.0 / n_train), np.full(n_chains, 1.0 / n_chains)]
        )
        self.n_train = n_train
        # Binary images are mostly zeros (13% ones on MNIST): there a CSR
        # matrix-vector product reads a fifth of the memory of the dense one
        # (measured: the first 8 units on 3,000 MNIST images in 3.0 s instead
        # of 4.1 s).
        data_rows = self.rows[:n_train]
        sparse = np.count_nonzero(data_rows) <= _SPARSE_DENSITY * data_rows.size
        self.data_csr = sp.csr_matrix(data_rows) if sparse else None
        self.data_mean = X_train.mean(axis=0)
        self.X_val = X_val
        self._initialise(X_train)

    # -------------------------------------------------------- initialisation
    def _initialise(self, X_train):
        rbm, rs = self.rbm, self.rs
        n_visible = X_train.shape[1]
        self.kernel_rng = kernel_rng(rs)
        if rbm.init is None:
            W = np.zeros((0, n_visible))
            c = np.zeros(0)
            b = self.base_rate.copy()
        else:
            W, b, c = parameters_of(
                rbm.init, n_visible, np.float64, purpose="growing an RBM"
            )
        if W.shape[0] >= rbm.max_components:
            raise ValueError(
                f"init already has {W.shape[0]} hidden units and "
                f"max_components={rbm.max_components}; growing it needs "
                f"max_components > {W.shape[0]}."
            )
        self.W, self.b, self.c = W, b, c
        # Chains start as exact samples of the base-rate model; under a
        # warm start they first burn in under the initial model.
        start = rs.random_sample((rbm.n_samples_per_step, n_visible))
        self.chains = (start < expit(self.base_rate)).astype(np.float64)
        self.initial_size = W.shape[0]
        # Running sums of each row's softplus terms: the free energies of
        # training and held-out rows update in O(rows x features) per unit.
        self.train_softplus = self._softplus_of_units(self.rows[: self.n_train])
        self.val_softplus = (
            None if self.X_val is None else self._softplus_of_units(self.X_val)
        )
        self.biases = [b.copy()]  # b after each step, to publish any size
        # Exact at the start (when enumerable), then advanced by each step's
        # estimated gain; None when the start cannot be enumerated.
        self.estimated_train_log_likelihood = self._exact_train_log_likelihood()
        self.history = History(names=_HISTORY_NAMES)
        self.cumulative_gain = 0.0  # of the held-out log-likelihood, estimated
        self.last_gap = None if self.X_val is None else self._free_energy_gap()

    def _exact_train_log_likelihood(self):
        """Mean training log-likelihood of the starting model, when its
        ``log Z`` can be enumerated (always without ``init``), else None.

        It anchors the running estimate that ``_bounded_gain`` checks."""
        if min(self.W.shape) > MAX_EXACT_UNITS:
            return None
        log_z = log_partition_exact(self.W, self.b, self.c)
        return float(self._train_log_densities().mean() - log_z)

    def _train_log_densities(self):
        """Unnormalised log-probability ``b.v + sum_k softplus(w_k.v~)`` of
        every training row under the current model."""
        n_visible = self.W.shape[1]
        return self.rows[: self.n_train, :n_visible] @ self.b + self.train_softplus

    def _softplus_of_units(self, X):
        pre = safe_sparse_dot(X[:, : self.W.shape[1]], self.W.T, dense_output=True)
        return np.logaddexp(0.0, pre + self.c).sum(axis=1)

    # ------------------------------------------------------------ the loop
    def run(self):
        """Grow until ``max_components``, convergence, rejection or early
        stopping; the path of models and the selected size."""
        rbm = self.rbm
        stopper = _held_out_rule(rbm, self.initial_size, self._reference_criterion())
        t, n_rejected, divergence = self.initial_size + 1, 0, None
        while t <= rbm.max_components:
            try:
                record = self.step(t)
            except _Diverged as error:
                divergence = str(error)
                break
            if record is None:
                if rbm.verbose:
                    print(
                        f"[{type(rbm).__name__}] unit {t}: no unit improves the "
                        "objective; Frank-Wolfe has converged."
                    )
                break
            if record is _REJECTED:
                n_rejected += 1
                if n_rejected == _MAX_REJECTED_STEPS:
                    _warn_rejected(t, rbm.alpha)
                    break
                continue
            n_rejected = 0
            self.history.append(record)
            if rbm.verbose:
                figures = {k: v for k, v in record.items() if k in _REPORTED}
                print(
                    progress_line(
                        rbm, "unit", t, rbm.max_components, record["seconds"], figures
                    )
                )
            if self.X_val is not None and self._stops(stopper, record):
                if rbm.verbose:
                    print(
                        f"[{type(rbm).__name__}] early stopping: no held-out "
                        f"improvement for {rbm.n_iter_no_change} evaluations; "
                        f"keeping {stopper.best_index} units."
                    )
                break
            t += 1
        size = self.W.shape[0]
        if divergence is not None:
            selected = size - 1  # the model before the unit whose bias steps diverged
        elif self.X_val is None or stopper.best_index is None:
            selected = size
        else:
            selected = stopper.best_index
        return GrowthResult(
            self.W, self.c, np.array(self.biases), self.initial_size, selected,
            self.history.as_dict(), self.history.length, divergence,
        )  # fmt: skip

    def _reference_criterion(self):
        """The held-out criterion of the starting model: 0 for the cumulative
        gain, its held-out log-likelihood with ``score_every``."""
        if self.X_val is None or self.rbm.score_every is None:
            return 0.0
        return self.score_model(self.W.copy(), self.b.copy(), self.c.copy())

    def _stops(self, stopper, record):
        """Feed the held-out criterion; True when growing should stop."""
        rbm = self.rbm
        if rbm.score_every is not None:
            value = record["validation_log_likelihood"]
            if np.isnan(value):
                return False
        else:
            self.cumulative_gain += record["validation_gain"]
            value = self.cumulative_gain
        stop = stopper.update(value, record["n_components"])
        return rbm.early_stopping and stop

    def step(self, t):
        """One Frank-Wolfe step (Ping, Liu & Ihler 2016, Algorithm 1): its
        record; ``None`` when no unit improves the sub-problem; ``_REJECTED``
        when the unit lowered the estimated likelihood at every scale tried
        (nothing is inserted)."""
        rbm = self.rbm
        self._advance_chains(rbm.n_gibbs_steps)
        n_visible = self.W.shape[1]
        self.rows[self.n_train :, :n_visible] = self.chains
        w, objective = self._solve_subproblem(t)
        if w is None:
            return None
        w, scale = self._scale_unit(w)
        # The literal update of Ping, Liu & Ihler ('one') inserts the unit
        # whatever follows;
        # without bias steps the chains never see the new model, so there is
        # no estimate to act on.
        checked = rbm.unit_scale == "line-search" and rbm.n_bias_steps > 0
        for _ in range(_MAX_BACKTRACKS + 1 if checked else 1):
            saved = self._state()
            self._insert(scale * w)
            self._update_visible_bias(t)
            gain = self._bounded_gain(self._training_gain(scale * w, saved["b"]))
            if gain >= 0.0 or not checked:
                break
            # The likelihood fell: the unit covers a region the old chains
            # never reached. Undo it, and retry it shrunk.
            self._restore(saved)
            scale *= _BACKTRACK_FACTOR
        else:
            return _REJECTED
        if self.estimated_train_log_likelihood is not None:
            self.estimated_train_log_likelihood += gain
        return self._record(t, objective, scale, gain)

    def _state(self):
        names = ("W", "c", "b", "chains", "train_softplus", "val_softplus")
        state = {name: getattr(self, name) for name in names}
        return {k: (None if v is None else v.copy()) for k, v in state.items()}

    def _restore(self, state):
        for name, value in state.items():
            setattr(self, name, value)
        self.biases.pop()

    def _advance_chains(self, n_steps):
        if self.W.shape[0] == 0:
            # No unit: the model is independent and its samples are exact.
            p = expit(self.b)
            u = self.rs.random_sample(self.chains.shape)
            self.chains = (u < p).astype(np.float64)
            return
        hidden = units_of(self.c)
        self.chains = gibbs_sample(
            units_of(self.b), None, hidden, self.chains, self.W, hidden.bias, n_steps,
            self.kernel_rng,
        )  # fmt: skip

    # ------------------------------------------------------ the sub-problem
    def _solve_subproblem(self, t):
        """Best of ``n_restarts`` L-BFGS runs on the sub-problem (Ping, Liu &
        Ihler's Eq. (9)); ``(None, value)`` if
        none improves on ``w = 0``."""
        rbm = self.rbm
        rows = self.rows
        if self.data_csr is not None:
            samples = sp.csr_matrix(rows[self.n_train :])
            rows = sp.vstack([self.data_csr, samples], format="csr")
        problem = _SubProblem(rows, self.coef, float(rbm.alpha))
        starts = self.rs.normal(0.0, _START_SCALE, (rbm.n_restarts, self.rows.shape[1]))
        return _best_unit(problem, starts, rbm.lbfgs_max_iter, rbm.lbfgs_tol, t)

    def _scale_unit(self, w):
        """The unit to insert, ``s w``, and its scale ``s``.

        ``unit_scale='one'`` inserts ``w`` (``s = 1``: Ping, Liu & Ihler's
        ``alpha_t = t``). ``'line-search'`` maximises the estimated change of
        the mean training log-likelihood,
        ``g(s) = mean_n softplus(s w.v~_n) - log E_p[exp(softplus(s w.v~))]``
        (the new partition function is ``Z E_p[1 + exp(s w.v~)]``), over
        ``s`` in [0, 1]. The expectation is taken over chain states advanced
        ``n_gibbs_steps`` further, not over the sub-problem's own samples:
        ``w`` was fitted to have low activations on those, and on them ``g``
        overstated the gain of large units by tens of nats (MNIST, 1,000
        images), so that they were inserted whole and the likelihood fell.
        """
        n_visible = self.W.shape[1]
        data_pre = self.rows[: self.n_train] @ w
        scale = 1.0
        if self.rbm.unit_scale == "line-search":
            self._advance_chains(self.rbm.n_gibbs_steps)
            chain_pre = self.chains @ w[:n_visible] + w[n_visible]

            def loss(s):
                data_term = softplus_rows(s * data_pre).mean()
                return _log_mean_exp(softplus_rows(s * chain_pre)) - data_term

            result = minimize_scalar(
                loss, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-3}
            )
            scale = float(result.x) if result.fun < loss(1.0) else 1.0
        return w, scale

    def _training_gain(self, w, b_before):
        """Estimated change of the mean training log-likelihood over the step.

        The unnormalised log-density rises by
        ``u(v) = softplus(w.v~) + (b_t - b_{t-1}).v``. The training mean of
        ``u`` is exact; ``log Z_t / Z_{t-1} = -log E_new[exp(-u)]`` is
        estimated on the chain states after the bias steps, samples of the new
        model. This direction has bounded weights (``u`` is at least the bias
        term) and uses samples that ``w`` was not fitted to; the forward
        estimate on the sub-problem's own samples is biased upwards by that
        fit (it overstated the gain several times over on digits).
        """
        n_visible = self.W.shape[1]
        delta_b = self.b - b_before
        new_pre = self.chains @ w[:n_visible] + w[n_visible]
        u_new = softplus_rows(new_pre) + self.chains @ delta_b
        train_rows = self.rows[: self.n_train, :n_visible]
        u_train = self.new_train_softplus + train_rows @ delta_b
        return float(u_train.mean() + _log_mean_exp(-u_new))

    def _bounded_gain(self, gain):
        """``gain`` capped by what the training data allow.

        ``Z >= max_n exp(log p~(v_n))``, so the mean training log-likelihood
        is at most ``mean_n log p~(v_n) - max_n log p~(v_n)``, exactly
        computable. The sample estimate of ``log Z_t / Z_{t-1}`` misses the
        mass of a unit whose active region no chain reaches (a large unit
        with small ``alpha``: measured on 300 MNIST images with
        ``alpha=0.001``, an estimated gain of +2,034 nats for a unit that
        lowered the exact likelihood by 4,980). Such a unit makes the
        training rows' log-densities very unequal, and the bound catches it;
        for ordinary units it is tens of nats away from binding (MNIST, 1,000
        images: about -70 against likelihoods below -140).
        """
        if self.estimated_train_log_likelihood is None:
            return gain
        log_density = self._train_log_densities()
        ceiling = log_density.mean() - log_density.max()
        return min(gain, ceiling - self.estimated_train_log_likelihood)

    # ------------------------------------------------------------- updates
    def _insert(self, w):
        n_visible = self.W.shape[1]
        self.new_train_softplus = softplus_rows(self.rows[: self.n_train] @ w)
        self.W = np.vstack([self.W, w[None, :n_visible]])
        self.c = np.append(self.c, w[n_visible])
        self.train_softplus += self.new_train_softplus
        if self.X_val is not None:
            pre = safe_sparse_dot(self.X_val, w[:n_visible], dense_output=True)
            self.val_softplus += np.logaddexp(0.0, np.ravel(pre) + w[n_visible])

    def _update_visible_bias(self, t):
        """Ping, Liu & Ihler's Eq. (10), ``b += eta (mean(data) -
        mean(chains))``, with one Gibbs step of the chains before each
        gradient step.

        The steps diverged when they alone pushed the training likelihood's
        ceiling (``_core/divergence.py``) more than a nat per pixel below where it
        was before them: that is the step size, not the unit (a poor unit is
        the line search's business).
        """
        rbm = self.rbm
        eta = float(rbm.visible_learning_rate)
        before = likelihood_ceiling(self._train_log_densities())
        for _ in range(rbm.n_bias_steps):
            self._advance_chains(1)
            self.b += eta * (self.data_mean - self.chains.mean(axis=0))
        problem = diagnose(
            likelihood_ceiling(self._train_log_densities()), before,
            self.W.shape[1], self.b, reference="the model before these bias steps",
        )  # fmt: skip
        if problem is not None:
            raise _Diverged(
                f"Training diverged at unit {t}: {problem}, with "
                f"visible_learning_rate={rbm.visible_learning_rate:g}. Use a "
                "smaller visible_learning_rate. The parameters before this unit "
                "were kept."
            )
        self.biases.append(self.b.copy())

    # ---------------------------------------------------------- monitoring
    def _record(self, t, objective, scale, gain):
        rbm = self.rbm
        gap = val_gain = np.nan
        if self.X_val is not None:
            gap = self._free_energy_gap()
            val_gain = gain - (gap - self.last_gap)
            self.last_gap = gap
        log_likelihood = np.nan
        if (
            self.X_val is not None
            and rbm.score_every is not None
            and (t - self.initial_size) % rbm.score_every == 0
        ):
            log_likelihood = self.score_model(
                self.W[:t].copy(),
                self.biases[t - self.initial_size].copy(),
                self.c[:t].copy(),
            )
        now = time.perf_counter()
        seconds, self.clock = now - self.clock, now
        return {
            "n_components": t,
            "objective": objective,
            "scale": scale,
            "training_gain": gain,
            "free_energy_gap": gap,
            "validation_gain": val_gain,
            "validation_log_likelihood": log_likelihood,
            "seconds": seconds,
        }

    def _free_energy_gap(self):
        """Mean held-out minus mean training free energy (``log Z`` cancels)."""
        val_mean = np.asarray(self.X_val.mean(axis=0)).ravel()
        train = -self.b @ self.data_mean - self.train_softplus.mean()
        val = -self.b @ val_mean - self.val_softplus.mean()
        return float(val - train)


class _SubProblem:
    """The sub-problem (Ping, Liu & Ihler's Eq. (9)) on fixed rows: value and
    gradient for scipy's L-BFGS.

    ``f(w) = alpha/2 |w|^2 + sum_r coef_r softplus(rows_r . w)`` and
    ``grad f = alpha w + rows^T (coef * sigmoid(rows . w))``: two
    matrix-vector products (BLAS, or scipy's CSR kernels for sparse rows)
    around one compiled element-wise pass.
    """

    def __init__(self, rows, coef, alpha):
        self.rows, self.coef, self.alpha = rows, coef, alpha
        # Row-major transpose: the second product then reads rows in order.
        self.rows_t = rows.T.tocsr() if sp.issparse(rows) else rows.T

    def __call__(self, w):
        pre = np.asarray(self.rows @ w, dtype=np.float64)
        value = signed_softplus_sum_(pre, self.coef)  # pre now holds the weights
        gradient = self.rows_t @ pre
        gradient += self.alpha * w
        return value + 0.5 * self.alpha * float(w @ w), gradient


def _best_unit(problem, starts, lbfgs_max_iter, tol, t):
    """L-BFGS on ``problem`` from each start; the best point and its value,
    or ``(None, value)`` when no run lowers the objective below its value 0
    at ``w = 0`` (then no unit improves the linearised likelihood)."""
    best = None
    for w0 in starts:
        result = minimize(
            problem, w0, jac=True, method="L-BFGS-B",
            options={"maxiter": lbfgs_max_iter, "gtol": tol},
        )  # fmt: skip
        if not result.success:
            warn(
                f"L-BFGS did not converge on the sub-problem of unit {t} "
                f"({result.message}); lbfgs_max_iter={lbfgs_max_iter}. The unit "
                "is inserted only if it improves the objective (value < 0). "
                "Increase lbfgs_max_iter or alpha.",
                ConvergenceWarning,
            )
        if best is None or result.fun < best.fun:
            best = result
    if not np.isfinite(best.fun) or best.fun > -_MIN_IMPROVEMENT:
        return None, float(best.fun)
    return best.x, float(best.fun)


_REJECTED = object()  # what ``step`` returns for a unit it did not insert


def _warn_rejected(t, alpha):
    warn(
        f"FrankWolfeRBM stopped growing at {t - 1} hidden units: at "
        f"{_MAX_REJECTED_STEPS} steps in a row the sub-problem's unit lowered "
        "the estimated training log-likelihood even when shrunk to "
        f"{_BACKTRACK_FACTOR**_MAX_BACKTRACKS:g} of its size, so none was "
        f"inserted. Its units are too large for these data at alpha={alpha:g}; "
        "a larger alpha gives smaller ones.",
        ConvergenceWarning,
    )


def _log_mean_exp(x):
    shift = x.max()
    return shift + np.log(np.mean(np.exp(x - shift)))
