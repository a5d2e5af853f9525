"""GaussianBernoulliRBM: real-valued visible units, binary hidden units, the
DCP family of solvers and the true log-likelihood (a density).

The solver table (``_rbm_solvers.GAUSSIAN_SOLVERS``) is ``DCPBernoulliRBM``'s
with the Gaussian mini-batch update,
:func:`sklearn_rbm._kernels.gaussian.gaussian_minibatch_update`, as its step
(with the tempered negative phase of ``_kernels/gaussian_tempering.py`` for
'pt' and 'cpt'); the epoch loop is the training engine's and the likelihood
the mixin's. This module holds hyperparameters, initialisation and the
engine's hooks; the queries (transform, sampling, scoring) are
``BaseGaussianRBM``'s (``_gaussian_base.py``).
"""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils.sparsefuncs import mean_variance_axis
from sklearn.utils.validation import validate_data

from ._base import check_rbm_memory
from ._dcp import DCPBernoulliRBM
from ._engine import Criterion, EpochTrainingMixin
from ._gaussian_base import FLOAT_DTYPES, BaseGaussianRBM
from ._rbm_solvers import GAUSSIAN_SOLVERS as _SOLVERS
from ._rbm_solvers import resolve_solver
from ._sklearn_compat import Interval, StrOptions, _fit_context
from ._tempering import SwapMonitor, temperature_ladder
from ._utils import (
    blas_threads_for,
    child_seed,
    hold_out,
    kernel_rng,
    validate_held_out,
    warn,
)

__all__ = ["GaussianBernoulliRBM"]

# A learned sigma this many times the training data's standard deviation (or
# its floor) means training diverged.
_MAX_SIGMA_RATIO = 100.0


# The arrays that define the training state (restored after divergence and
# by early stopping); the fitted uncentred parameters are derived from them.
_STATE = (
    "components_",
    "_centred_visible_bias",
    "_centred_hidden_bias",
    "_log_variance",
    "offset_visible_",
    "offset_hidden_",
)


class GaussianBernoulliRBM(EpochTrainingMixin, BaseGaussianRBM):
    """Gaussian-Bernoulli RBM: real-valued data, binary hidden features.

    The energy of Cho, Ilin & Raiko (2011) with a standard deviation
    ``sigma_i`` per feature,
    ``E(v, h) = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - sum_ij W_ji h_j v_i /
    sigma_i^2 - c^T h``, so that ``p(h_j = 1 | v) = sigmoid(c_j + sum_i W_ji
    v_i / sigma_i^2)`` and ``p(v_i | h) = N(b_i + (W^T h)_i, sigma_i^2)``.
    The solvers are those of :class:`DCPBernoulliRBM` (CD-K, PCD, the
    centred gradient, S-DCP and centred S-DCP of Upadhya & Sastry 2017, and
    parallel tempering), with the same hyperparameters. ``sigma`` is learned
    (as ``log sigma^2``, at its own learning rate) or fixed.

    Standardise the data first (``Pipeline([StandardScaler(),
    GaussianBernoulliRBM()])``): the initial weights, the learning rates and
    the floor ``min_sigma`` assume features of unit scale. ``score`` is the
    log *density* in nats, which can be positive.

    Read more in the :ref:`User Guide <gaussian_user_guide>`.

    Parameters
    ----------
    n_components : int, default=256
        Number of hidden units ``n``.
    solver : {'cd', 'pcd', 'cg', 'sdcp', 'csdcp', 'pt', 'cpt'}, default='csdcp'
        Training algorithm, as in :class:`DCPBernoulliRBM`; the tempered
        replicas of 'pt' and 'cpt' anneal towards independent Gaussians with
        the data's means and standard deviations, as AIS does. Prefer the
        centred ones ('cg', 'csdcp', 'cpt'): with many hidden units the others
        drift along the direction where all the weights of a feature grow
        together while its bias compensates, and diverge unless ``learning_rate *
        n_components`` stays below about 1.
    sigma : 'learn', float or array-like of shape (n_features,), default='learn'
        Standard deviations of the visible units: ``'learn'`` starts them at
        the training data's and learns them (the better density model); a
        positive value (or one per feature) fixes them. On standardised data
        ``sigma=1.0`` gave the better features for a classifier (see the
        User Guide).
    learning_rate : float, default=0.01
        Step size of ``W``, ``b`` and ``c``.
    sigma_learning_rate_factor : float, default=0.1
        Step size of ``log sigma^2`` relative to ``learning_rate`` (Cho et
        al. learn the variances more slowly than the weights). Used with
        ``sigma='learn'``.
    min_sigma : float, default=0.01
        Floor of the learned ``sigma``, in the units of ``X``. Constant
        features (whose ``sigma`` would be 0) and features whose variance
        collapses stay at the floor; fit warns when any does.
    batch_size : int, default=100
        Mini-batch size.
    n_iter : int, default=20
        Number of epochs.
    n_gibbs_steps : int, default=1
        Gibbs steps per gradient estimate: ``K`` for 'cd', 'pcd' and 'cg';
        ``K'`` (per inner step) for 'sdcp' and 'csdcp'; sweeps of every
        replica between swap rounds for 'pt' and 'cpt'.
    n_inner_steps : int or None, default=None
        Inner steps ``d`` of 'sdcp' and 'csdcp'; ``None`` means 3.
    centering_rate_visible : float or None, default=None
        Sliding factor of the visible offsets (of ``v / sigma^2``) for 'cg',
        'csdcp' and 'cpt'; ``None`` means 0.01.
    centering_rate_hidden : float or None, default=None
        Sliding factor of the hidden offsets; ``None`` means 0.01.
    n_temperatures : int or None, default=None
        Number of tempered replicas (at least 2) for 'pt' and 'cpt', as in
        :class:`DCPBernoulliRBM`; ``None`` means 4.
    min_beta : float or None, default=None
        Smallest inverse temperature, in (0, 1); ``None`` means 0.5.
    beta_ladder : {'linear', 'geometric'}, array-like or None, default=None
        Spacing of the inverse temperatures, or the temperatures themselves,
        as in :class:`DCPBernoulliRBM`.
    momentum : float, default=0.0
        Momentum of every parameter update.
    weight_decay : float, default=0.0
        L2 penalty on the weights.
    validation_fraction : float or None, default=None
        Fraction of the training data held out for the verbose output and
        early stopping; ``None`` holds out 0.1 with ``early_stopping=True``,
        else nothing. Ignored when ``fit`` is given ``X_val``.
    early_stopping : bool, default=False
        Stop when the held-out log-likelihood has not improved by ``tol`` for
        ``n_iter_no_change`` epochs, and keep the best parameters seen.
    n_iter_no_change : int, default=5
        Patience of early stopping, in epochs.
    tol : float, default=1e-4
        Minimum improvement of the held-out mean log-likelihood.
    score_method : {'auto', 'exact', 'ais'}, default='auto'
        How ``score`` obtains ``log Z``: enumeration of the hidden layer (the
        visible integral is Gaussian), AIS, or exact while the hidden layer
        has at most 20 units.
    ais_n_chains : int, default=100
        AIS chains.
    ais_betas : int, {'linear', 'three-segment'} or array-like, default=1000
        AIS temperatures, as in :class:`DCPBernoulliRBM`.
    verbose : int, default=0
        Print one line per epoch.
    random_state : int, RandomState instance or None, default=None
        Seed of the initial weights, the shuffling, the Gibbs chains and the
        AIS chains. The same value gives bit-identical parameters.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Weight matrix ``W``.
    intercept_visible_ : ndarray of shape (n_features,)
        Visible biases ``b`` (the mean of ``p(v | h = 0)``).
    intercept_hidden_ : ndarray of shape (n_components,)
        Hidden biases ``c``.
    sigma_ : ndarray of shape (n_features,)
        Standard deviations of the visible units.
    offset_visible_ : ndarray of shape (n_features,)
        Centring offsets of ``v / sigma^2`` (zeros for uncentred solvers).
    offset_hidden_ : ndarray of shape (n_components,)
        Centring offsets of ``h`` (zeros for uncentred solvers).
    base_mean_ : ndarray of shape (n_features,)
        Training-data mean: the AIS base model's mean and the start of
        :meth:`sample`.
    base_sigma_ : ndarray of shape (n_features,)
        Training-data standard deviation, floored at ``min_sigma``.
    betas_ : ndarray of shape (n_temperatures,)
        Inverse temperatures of the replicas, ``betas_[0] = 1`` ('pt' and
        'cpt' only).
    n_iter_ : int
        Epochs run.
    history_ : dict of ndarray
        Per-epoch figures recorded by the training engine; 'pt' and 'cpt'
        add ``'swap_acceptance_t'``, the fraction of accepted swaps between
        ``betas_[t]`` and ``betas_[t + 1]`` in the epoch.
    best_validation_score_ : float or None
        Best held-out mean log-likelihood, when one was computed.
    log_partition_ : LogPartition
        The last ``log Z`` computed, with its band.
    random_state_ : RandomState
        Stream used by :meth:`gibbs`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    DCPBernoulliRBM : The same solvers for binary data.
    sklearn.mixture.GaussianMixture : Another density model of real data.

    References
    ----------
    K. Cho, A. Ilin and T. Raiko. Improved learning of Gaussian-Bernoulli
    restricted Boltzmann machines. ICANN 2011.

    V. Upadhya and P. S. Sastry. Learning RBM with a DC programming approach.
    ACML 2017.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn_rbm import GaussianBernoulliRBM
    >>> X, _ = load_iris(return_X_y=True)
    >>> model = make_pipeline(
    ...     StandardScaler(),
    ...     GaussianBernoulliRBM(n_components=4, n_iter=50, batch_size=10,
    ...                          random_state=0)).fit(X)
    >>> model.transform(X).shape
    (150, 4)
    >>> bool(model.score(X) > -4 * 0.5 * np.log(2 * np.pi * np.e))
    True
    """

    _parameter_constraints: dict = {
        **{
            name: constraint
            for name, constraint in DCPBernoulliRBM._parameter_constraints.items()
            if name != "init"
        },
        "solver": [StrOptions(set(_SOLVERS))],
        "sigma": [
            StrOptions({"learn"}),
            Interval(numbers.Real, 0, None, closed="neither"),
            "array-like",
        ],
        "sigma_learning_rate_factor": [Interval(numbers.Real, 0, None, closed="left")],
        "min_sigma": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    _criterion = Criterion(
        "validation_log_likelihood", greater_is_better=True,
        best_attribute="best_validation_score_",
    )  # fmt: skip

    def __init__(
        self,
        n_components=256,
        *,
        solver="csdcp",
        sigma="learn",
        learning_rate=0.01,
        sigma_learning_rate_factor=0.1,
        min_sigma=0.01,
        batch_size=100,
        n_iter=20,
        n_gibbs_steps=1,
        n_inner_steps=None,
        centering_rate_visible=None,
        centering_rate_hidden=None,
        n_temperatures=None,
        min_beta=None,
        beta_ladder=None,
        momentum=0.0,
        weight_decay=0.0,
        validation_fraction=None,
        early_stopping=False,
        n_iter_no_change=5,
        tol=1e-4,
        score_method="auto",
        ais_n_chains=100,
        ais_betas=1000,
        verbose=0,
        random_state=None,
    ):
        self.n_components = n_components
        self.solver = solver
        self.sigma = sigma
        self.learning_rate = learning_rate
        self.sigma_learning_rate_factor = sigma_learning_rate_factor
        self.min_sigma = min_sigma
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.n_gibbs_steps = n_gibbs_steps
        self.n_inner_steps = n_inner_steps
        self.centering_rate_visible = centering_rate_visible
        self.centering_rate_hidden = centering_rate_hidden
        self.n_temperatures = n_temperatures
        self.min_beta = min_beta
        self.beta_ladder = beta_ladder
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.score_method = score_method
        self.ais_n_chains = ais_n_chains
        self.ais_betas = ais_betas
        self.verbose = verbose
        self.random_state = random_state

    def _learns_sigma(self):
        return isinstance(self.sigma, str)

    # -------------------------------------------------------- initialisation
    def _fixed_sigma(self, n_features, dtype):
        """The fixed ``sigma`` as one positive value per feature."""
        sigma = np.asarray(self.sigma, dtype=np.float64)
        if sigma.ndim == 0:
            sigma = np.full(n_features, float(sigma))
        if sigma.shape != (n_features,):
            raise ValueError(
                f"sigma must be 'learn', a positive float or one value per "
                f"feature (shape ({n_features},)), got shape {sigma.shape}."
            )
        bad = ~(np.isfinite(sigma) & (sigma > 0))
        if np.any(bad):
            raise ValueError(
                f"sigma must be positive and finite; feature "
                f"{int(np.flatnonzero(bad)[0])} has sigma={float(sigma[bad][0])!r}. "
                "Pass positive standard deviations, or sigma='learn'."
            )
        return sigma.astype(dtype)

    def _initialise(self, X, rs):
        """Weights ``N(0, 0.01^2)``, hidden biases 0, visible biases and
        ``sigma`` the data's mean and standard deviation: at the start the
        model is (nearly) the independent Gaussians that fit the data."""
        n_features, dtype = X.shape[1], X.dtype
        spec = _SOLVERS[self.solver]
        # The tempered solvers keep batch_size chains at every temperature.
        chains = ("batch_size", self.batch_size)
        if spec.tempered:
            betas = temperature_ladder(
                self.n_temperatures, self.min_beta, self.beta_ladder
            )
            chains = ("n_temperatures * batch_size", betas.size * self.batch_size)
        check_rbm_memory(
            ("n_components", self.n_components), n_features, chains, X.dtype.itemsize
        )
        mean, variance = _column_moments(X)
        self.base_mean_ = mean
        self.base_sigma_ = np.maximum(np.sqrt(variance), self.min_sigma)
        if self._learns_sigma():
            sigma = self.base_sigma_.astype(dtype)
        else:
            sigma = self._fixed_sigma(n_features, dtype)
        self._log_variance = (2.0 * np.log(sigma)).astype(dtype)
        W = rs.normal(0.0, 0.01, size=(self.n_components, n_features)).astype(dtype)
        b = mean.astype(dtype)
        c = np.zeros(self.n_components, dtype=dtype)
        # Offsets start at the mean of v / sigma^2 and 1/2 (Upadhya & Sastry
        # 2017, Algorithm 4); the centred biases keep the model (W, b, c).
        mu = (mean / sigma**2).astype(dtype) if spec.centred else np.zeros_like(b)
        lam = np.full(self.n_components, 0.5 if spec.centred else 0.0, dtype=dtype)
        self.offset_visible_, self.offset_hidden_ = mu, lam
        self._centred_visible_bias = b + lam @ W
        self._centred_hidden_bias = c + W @ mu
        self._velocity = (
            np.zeros_like(W), np.zeros_like(b), np.zeros_like(c), np.zeros_like(b)
        )  # fmt: skip
        if spec.tempered:
            self.betas_ = betas
            self._swap_monitor = SwapMonitor(betas, self.batch_size)
        self._chain_hidden = np.zeros((chains[1], self.n_components), dtype=dtype)
        self._kernel_rng = kernel_rng(rs)
        self._shuffle_rs = rs  # continues the shuffling in partial_fit
        self._ais_seed = child_seed(rs)
        self.random_state_ = check_random_state(child_seed(rs))
        self.n_iter_ = 0
        self._publish(W)

    def _start_sigma(self):
        """``sigma`` at initialisation: the data's, or the fixed one."""
        if self._learns_sigma():
            return self.base_sigma_
        return self._fixed_sigma(self.base_sigma_.size, np.float64)

    def _publish(self, W=None):
        """Expose the uncentred RBM of the training state (weights ``W``)."""
        W = self.components_ if W is None else W
        self.components_ = W
        self.intercept_visible_ = self._centred_visible_bias - self.offset_hidden_ @ W
        self.intercept_hidden_ = self._centred_hidden_bias - W @ self.offset_visible_
        if self._learns_sigma():
            self.sigma_ = np.exp(0.5 * self._log_variance)
        else:
            self.sigma_ = self._fixed_sigma(W.shape[1], W.dtype)
        self._forget_log_partition()

    def _held_out(self, X, X_val, rs):
        """``(training data, validation data or None)`` for ``fit``."""
        if X_val is not None:
            X_val = validate_held_out(self, X_val, accept_sparse="csr", dtype=X.dtype)
        (X_train,), validation = hold_out(
            (X,),
            rs,
            fraction=self.validation_fraction,
            default_fraction=0.1 if self.early_stopping else None,
            given=None if X_val is None else (X_val,),
        )
        return X_train, None if validation is None else validation[0]

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, X_val=None):
        """Fit the RBM to real-valued data ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, best standardised.
        y : None
            Ignored.
        X_val : {array-like, sparse matrix} of shape (n_val, n_features), \
                default=None
            Held-out data of your own for early stopping and the verbose
            output, used instead of holding out ``validation_fraction`` of
            ``X``.

        Returns
        -------
        self : GaussianBernoulliRBM
            The fitted estimator.
        """
        X = validate_data(self, X, accept_sparse="csr", dtype=FLOAT_DTYPES)
        rs = check_random_state(self.random_state)
        X_train, X_val = self._held_out(X, X_val, rs)
        self._initialise(X_train, rs)
        self._start_history()
        self._watch_divergence(X_train, self._start_sigma())
        validation = None if X_val is None else (X_val,)
        with self._blas_threads():
            self._run_epochs(
                (X_train,), validation, self.n_iter, rs,
                early_stopping=self.early_stopping,
            )  # fmt: skip
        self._warn_if_sigma_at_floor()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """One epoch over ``X`` in mini-batches, continuing chains and offsets.

        The first call initialises the model from ``X`` (weights, means,
        ``sigma``, offsets); later calls continue from the current state.

        Returns
        -------
        self : GaussianBernoulliRBM
        """
        first_call = not hasattr(self, "components_")
        X = validate_data(
            self, X, accept_sparse="csr", dtype=FLOAT_DTYPES, reset=first_call
        )
        if first_call:
            self._initialise(X, check_random_state(self.random_state))
        self._start_history(keep=not first_call)
        X = X.astype(self.components_.dtype, copy=False)
        self._watch_divergence(X, self._start_sigma())
        with self._blas_threads():
            self._run_epochs((X,), None, 1, self._shuffle_rs, early_stopping=False)
        return self

    def _blas_threads(self):
        n_hidden, n_visible = self.components_.shape
        return blas_threads_for(self.batch_size * n_hidden * n_visible)

    def _warn_if_sigma_at_floor(self):
        if not self._learns_sigma():
            return
        at_floor = np.flatnonzero(self.sigma_ <= self.min_sigma * (1 + 1e-6))
        if at_floor.size:
            warn(
                f"sigma of {at_floor.size} feature(s) (first: {at_floor[:5].tolist()}) "
                f"is at its floor min_sigma={self.min_sigma:g}: those features are "
                "constant, or their variance collapsed onto discrete values. "
                "Their log-density depends on the floor. Drop constant features "
                "(VarianceThreshold), add uniform noise to discrete data, or fix "
                "sigma."
            )

    # ------------------------------------------------- the engine's hooks
    def _make_step(self):
        settings = resolve_solver(self, _SOLVERS)
        return settings.spec.make_step(self, settings)

    def _begin_epoch(self, epoch):
        if _SOLVERS[self.solver].tempered:
            self._swap_monitor.start_epoch()

    def _end_epoch(self):
        self._publish()

    def _epoch_figures(self):
        """The swap acceptance of each neighbour pair ('pt' and 'cpt')."""
        if not _SOLVERS[self.solver].tempered:
            return {}
        self._swap_monitor.warn_about_gaps(f"in epoch {self.n_iter_}")
        return self._swap_monitor.figures()

    def _training_state(self):
        return {name: getattr(self, name).copy() for name in _STATE}

    def _set_training_state(self, state):
        for name, value in state.items():
            getattr(self, name)[...] = value
        self._publish()

    def _divergence(self):
        problem = self._diagnose_divergence(
            self.components_,
            self._centred_visible_bias,
            self._centred_hidden_bias,
            self._log_variance,
        )
        if problem is not None:
            return (
                f"{problem}, with learning_rate={self.learning_rate:g}. Use a "
                "smaller learning_rate (and momentum), check that X is "
                "standardised, or fix sigma."
            )
        if not self._learns_sigma():
            return None
        # A sigma far wider than the data is no fit: each such feature costs
        # at least log(ratio) nats. The floor bounds the other direction.
        ratio = self.sigma_ / self.base_sigma_
        exploded = np.flatnonzero(ratio > _MAX_SIGMA_RATIO)
        if exploded.size == 0:
            return None
        i = int(exploded[0])
        return (
            f"the variances exploded: sigma of feature {i} grew to "
            f"{self.sigma_[i]:.3g}, more than {_MAX_SIGMA_RATIO:g} times its "
            f"training standard deviation {self.base_sigma_[i]:.3g} "
            f"({exploded.size} feature(s) in all), with learning_rate="
            f"{self.learning_rate:g} and sigma_learning_rate_factor="
            f"{self.sigma_learning_rate_factor:g}. Use a smaller learning_rate, "
            "more Gibbs steps, or a fixed sigma."
        )

    def _validation_score(self, validation):
        return self.score(validation[0])

    def _monitor(self, train, validation):
        """The training log-likelihood, when ``log Z`` is exact (cheap), or at
        ``verbose >= 2``, by AIS."""
        if self.verbose < 2 and self._resolve_score_method() != "exact":
            return {}
        return {"train_log_likelihood": self.score(train[0])}


def _column_moments(X):
    """Mean and variance of each column of ``X`` (dense or sparse), float64."""
    if sp.issparse(X):
        mean, variance = mean_variance_axis(X.tocsr(), axis=0)
        return np.asarray(mean, np.float64), np.asarray(variance, np.float64)
    X = np.asarray(X, dtype=np.float64)
    return X.mean(axis=0), X.var(axis=0)
