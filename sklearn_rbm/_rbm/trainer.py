"""The one trainer of the package's RBMs, over a visible and a hidden layer.

:class:`RBMTrainer` runs every fit of :class:`~sklearn_rbm.DCPBernoulliRBM`
and :class:`~sklearn_rbm.GaussianBernoulliRBM` (and of any RBM made of other
layers): the hyperparameters they share, initialisation (Upadhya & Sastry's,
or a warm start from a fitted ``init``), ``fit`` and ``partial_fit``, the
training engine's hooks (``_core/engine.py``), and, through
:class:`~sklearn_rbm._rbm.base.FittedRBM`, the queries of the fitted model.
What depends on the type of the visible units is the layer's
(``_rbm/layers``); what depends on the solver is its entry in
``_rbm/solvers.py``. A subclass is a thin public class: its ``__init__``
with its parameters and their documentation, the constraints of its own
parameters, and its visible layer.

The fitted RBM is always the plain, uncentred one; training keeps the
centred parameters (Melchior, Fischer & Wiskott 2016) and publishes the
equivalent uncentred ``components_``, ``intercept_visible_`` and
``intercept_hidden_`` after every epoch.
"""

import numbers
from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

from .._core.engine import Criterion, EpochTrainingMixin
from .._core.fit_context import fit_context
from .._core.sklearn_compat import HasMethods, Interval, StrOptions
from .._core.utils import (
    blas_threads_for,
    check_sample_weight,
    child_seed,
    hold_out,
    kernel_rng,
)
from .._numerics.blas import kernel_dot
from .base import FittedRBM, check_rbm_memory, parameters_of
from .solvers import SOLVERS, resolve_solver
from .tempering import LADDERS

# The arrays that define the training state of every RBM (restored after
# divergence and by early stopping; the layer adds its own); the fitted
# uncentred parameters are derived from them.
_STATE = (
    "components_",
    "_centred_visible_bias",
    "_centred_hidden_bias",
    "offset_visible_",
    "offset_hidden_",
)


def _mean_one_weights(arrays):
    """``arrays`` with their weights (``arrays[1]``, when there) scaled to
    mean 1: the kernel's weighted sums then estimate the weighted mean of the
    training set without bias (``_rbm/kernels.minibatch_update_``)."""
    if len(arrays) < 2:
        return arrays
    weights = arrays[1]
    return (arrays[0], weights * (weights.size / weights.sum()), *arrays[2:])


@dataclass
class TrainingState:
    """What a solver's step works on: the arrays a fit trains (the same
    arrays the estimator holds, updated in place) and what the step needs
    besides the settings, so that no step reads the estimator.

    Attributes
    ----------
    W : ndarray of shape (n_components, n_features)
        The weights (``components_``).
    visible, hidden : NamedTuple
        The layers' kernel units: the centred biases, their velocities and
        the layers' own parameters.
    mu, lam : ndarray
        The centring offsets of the visible and hidden statistics.
    velocity : ndarray
        The velocity of ``W``.
    chain_hidden : ndarray
        The hidden states of the persistent chains (all replicas, stacked).
    rng : numpy.random.Generator
        The stream of the chains' draws.
    betas, tempering_base, monitor
        The ladder, the visible layer's base model at ``beta = 0`` and the
        swap monitor of the tempered solvers (``None`` otherwise).
    """

    W: np.ndarray
    visible: tuple
    hidden: tuple
    mu: np.ndarray
    lam: np.ndarray
    velocity: np.ndarray
    chain_hidden: np.ndarray
    rng: np.random.Generator
    betas: np.ndarray = None
    tempering_base: object = None
    monitor: object = None


class RBMTrainer(EpochTrainingMixin, FittedRBM):
    """The RBM trainer (not for direct use): see the module docstring.

    Subclasses define ``__init__`` with the hyperparameters of
    ``_parameter_constraints`` (their own added) and ``_visible_layer``.
    """

    _parameter_constraints: dict = {
        **FittedRBM._parameter_constraints,
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "solver": [StrOptions(set(SOLVERS))],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_gibbs_steps": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_inner_steps": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "centering_rate_visible": [Interval(numbers.Real, 0, 1, closed="both"), None],
        "centering_rate_hidden": [Interval(numbers.Real, 0, 1, closed="both"), None],
        "n_temperatures": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "min_beta": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "beta_ladder": [StrOptions(set(LADDERS)), "array-like", None],
        "momentum": [Interval(numbers.Real, 0, 1, closed="left")],
        "weight_decay": [Interval(numbers.Real, 0, None, closed="left")],
        "init": [HasMethods(["transform"]), None],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "early_stopping": ["boolean"],
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
    }

    _criterion = Criterion(
        "validation_log_likelihood", greater_is_better=True,
        best_attribute="best_validation_score_",
    )  # fmt: skip

    def _solver(self):
        return SOLVERS[self.solver]

    # -------------------------------------------------------- initialisation
    def _initialise(self, X, rs):
        """Upadhya & Sastry's initialisation (weights ``N(0, 0.01^2)``,
        hidden biases 0, the visible layer's base model as the start), or a
        copy of ``init``'s parameters."""
        solver, layer = self._solver(), self._visible_layer()
        n_features, dtype = layer.n_columns(self, X.shape[1]), X.dtype
        # The memory check comes first: a ladder of 10**9 temperatures would
        # be allocated before the replicas it asks for are refused.
        chains = solver.tempering.chains(self)
        # The layers read the resolved count (a subclass may derive it from X).
        self._n_hidden = n_hidden = self._hidden_units(X)
        check_rbm_memory(
            ("n_components", n_hidden), n_features, chains, X.dtype.itemsize
        )
        betas = solver.tempering.ladder(self)
        if self.init is not None:  # its width and size are checked first
            warm = parameters_of(self.init, n_features, dtype, n_hidden)
        layer.fit_base(self, X)
        layer.start_training(self, X, dtype, self.init)
        self._hidden_layer().start_training(self, dtype, self.init)
        if self.init is None:
            W = rs.normal(0.0, 0.01, size=(n_hidden, n_features)).astype(dtype)
            b = layer.initial_bias(self, X, dtype)
            c = np.zeros(n_hidden, dtype=dtype)
        else:
            W, b, c = warm
        # Offsets start at the data's mean statistics and 1/2 (Upadhya &
        # Sastry 2017, Algorithm 4); the centred biases are chosen so that
        # the model is exactly (W, b, c).
        if solver.centred:
            mu = layer.initial_offset(self, X, dtype)
        else:
            mu = np.zeros(n_features, dtype)
        offset = self._hidden_layer().initial_offset if solver.centred else 0.0
        lam = np.full(n_hidden, offset, dtype=dtype)
        self.offset_visible_, self.offset_hidden_ = mu, lam
        self._centred_visible_bias = b + kernel_dot(lam, W)
        self._centred_hidden_bias = c + kernel_dot(W, mu)
        self._velocity = (
            np.zeros_like(W),
            np.zeros_like(c),
            *layer.velocities(self, b),
        )
        solver.tempering.start(self, betas)
        # Persistent hidden states, all off: the first visible draw is the
        # base model's. The tempered solvers stack their replicas.
        self._chain_hidden = np.zeros((chains[1], n_hidden), dtype=dtype)
        self._kernel_rng = kernel_rng(rs)
        self._shuffle_rs = rs  # continues the shuffling in partial_fit
        self._ais_seed = child_seed(rs)
        self.random_state_ = check_random_state(child_seed(rs))
        self.n_iter_ = 0
        self._publish(W)

    def _hidden_units(self, X):
        """Hidden units of a new fit on the training rows ``X``:
        ``n_components`` (a subclass may derive them from the data)."""
        return self.n_components

    def _epochs_of_fit(self, n_rows):
        """Epochs of ``fit`` over ``n_rows`` training rows: ``n_iter`` (a
        subclass may derive them from the data)."""
        return self.n_iter

    def _publish(self, W=None):
        """Expose the uncentred RBM equivalent to the centred training state
        (whose weights ``W`` are ``components_`` once published)."""
        W = self.components_ if W is None else W
        self._set_fitted_parameters(
            W,
            self._centred_visible_bias - kernel_dot(self.offset_hidden_, W),
            self._centred_hidden_bias - kernel_dot(W, self.offset_visible_),
        )
        self._visible_layer().publish(self)
        self._hidden_layer().publish(self)

    # ------------------------------------------------------------------ fit
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, X_val=None):
        """Fit the RBM to ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.
        X_val : {array-like, sparse matrix} of shape (n_val, n_features), \
                default=None
            Held-out data of your own for early stopping and the verbose
            output, used instead of holding out ``validation_fraction`` of
            ``X`` (ignored when ``X_val`` is given). In a ``Pipeline``, ``X_val``
            is transformed like ``X`` with
            ``Pipeline(..., transform_input=["X_val"])``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, X_val)

    def _fit(self, X, X_val, sample_weight=None):
        """``fit``, with the rows' ``sample_weight`` (None or non-negative
        weights, checked here after ``X``) for the subclasses that take
        them."""
        X = self._validate_training_data(X)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        rs = check_random_state(self.random_state)
        arrays = (X,) if sample_weight is None else (X, sample_weight)
        given = None
        if X_val is not None:
            given = (self._held_out(X, X_val, rs)[1],)
        fraction = 0.1 if self.early_stopping else None
        train, validation = hold_out(
            arrays, rs, fraction=self.validation_fraction,
            default_fraction=fraction, given=given,
        )  # fmt: skip
        if validation is not None:
            validation = validation[:1]
        train = _mean_one_weights(train)
        self._fit_weights = train[1] if len(train) > 1 else None
        try:
            self._initialise(train[0], rs)
        finally:
            del self._fit_weights
        self._watch_divergence(train[0])
        self._start_history()
        n_epochs = self._epochs_of_fit(train[0].shape[0])
        self._run(train, validation, n_epochs, rs, early_stopping=self.early_stopping)
        self._visible_layer().after_fit(self)
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """One epoch over ``X`` in mini-batches, continuing chains and offsets.

        The first call initialises the model from ``X`` (weights, base model,
        offsets); later calls continue from the current state, including the
        persistent chains and the centring offsets. ``history_`` gains one
        entry per call.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The estimator, one epoch further.
        """
        return self._partial_fit(X)

    def _partial_fit(self, X, sample_weight=None):
        """``partial_fit``, with the rows' ``sample_weight`` or None."""
        first_call = not hasattr(self, "components_")
        X = self._validate_training_data(X, reset=first_call)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        train = _mean_one_weights((X,) if sample_weight is None else (X, sample_weight))
        if first_call:
            self._fit_weights = train[1] if len(train) > 1 else None
            try:
                self._initialise(X, check_random_state(self.random_state))
            finally:
                del self._fit_weights
        else:
            self._visible_layer().check_new_rows(self, X)
        self._start_history(keep=not first_call)
        X = X.astype(self.components_.dtype, copy=False)
        self._watch_divergence(X)
        self._run((X, *train[1:]), None, 1, self._shuffle_rs, early_stopping=False)
        return self

    def _blas_threads(self):
        n_hidden, n_visible = self.components_.shape
        return blas_threads_for(self.batch_size * n_hidden * n_visible)

    # ------------------------------------------------- the engine's hooks
    def _training_view(self):
        """The :class:`TrainingState` of the current fit (views, no copies)."""
        layer = self._visible_layer()
        velocity, hidden_velocity, *own_velocities = self._velocity
        return TrainingState(
            W=self.components_,
            visible=layer.units(self, self._centred_visible_bias, own_velocities),
            hidden=self._hidden_layer().training_units(
                self, self._centred_hidden_bias, hidden_velocity
            ),
            mu=self.offset_visible_,
            lam=self.offset_hidden_,
            velocity=velocity,
            chain_hidden=self._chain_hidden,
            rng=self._kernel_rng,
            betas=getattr(self, "betas_", None),
            tempering_base=layer.tempering_base(self, self.components_.dtype),
            monitor=getattr(self, "_swap_monitor", None),
        )

    def _run(self, train, validation, n_epochs, rs, *, early_stopping):
        """The engine's epochs, with the :class:`TrainingState` the steps and
        the solver's hooks work on (dropped afterwards: it is no fitted
        attribute)."""
        self._state = self._training_view()
        try:
            with self._blas_threads():
                self._run_epochs(
                    train, validation, n_epochs, rs, early_stopping=early_stopping
                )
        finally:
            del self._state

    def _make_step(self):
        settings = resolve_solver(self)
        return settings.spec.make_step(self._state, settings)

    def _begin_epoch(self, epoch):
        self._solver().tempering.begin_epoch(self._state)

    def _end_epoch(self):
        self._visible_layer().end_epoch(self)
        self._publish()

    def _epoch_figures(self):
        """The figures of the solver's tempering (the swap acceptance of each
        neighbour pair for 'pt' and 'cpt')."""
        return self._solver().tempering.figures(self._state, self.n_iter_)

    def _state_names(self):
        return (
            _STATE
            + self._visible_layer().state_attributes
            + self._hidden_layer().state_attributes
        )

    def _training_state(self):
        """Copies of the training state, to restore after divergence or early
        stopping."""
        return {name: getattr(self, name).copy() for name in self._state_names()}

    def _set_training_state(self, state):
        for name, value in state.items():
            getattr(self, name)[...] = value
        self._publish()

    def _divergence(self):
        layer = self._visible_layer()
        parameters = tuple(getattr(self, name) for name in self._state_names()[:3])
        own = tuple(getattr(self, name) for name in self._state_names()[len(_STATE) :])
        problem = self._diagnose_divergence(*parameters, *own)
        if problem is not None:
            return f"{problem}, {layer.divergence_advice(self)}"
        return layer.divergence(self)

    def _validation_score(self, validation):
        return self._score_fit_rows(validation[0])

    def _score_fit_rows(self, rows):
        """``score`` of rows as the fit holds them (validated by
        ``_validate_training_data``), for the epochs' figures."""
        return self.score(rows)

    def _monitor(self, train, validation):
        """The training log-likelihood when ``log Z`` is exact (cheap), or at
        ``verbose >= 2`` by AIS; with AIS, the width of the band of the
        ``log Z`` estimate behind the figures."""
        figures = {}
        if self.verbose >= 2 or self._resolve_score_method() == "exact":
            figures["train_log_likelihood"] = self._score_fit_rows(train[0])
        partition = getattr(self, "log_partition_", None)
        if partition is not None and partition.method == "ais":
            figures["ais_band_width"] = partition.upper - partition.lower
        return figures
