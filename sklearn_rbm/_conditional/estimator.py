"""ConditionalRBMRegressor: structured prediction of binary outputs with a
conditional RBM (Ping & Ihler, AISTATS 2017).

For an input ``x`` the model is an RBM over the outputs ``v`` and hidden units
``h`` whose biases depend on ``x`` (Ping & Ihler 2017, Sec. 3.2),
``E(v, h, x) = -v^T W^{vh} h - v^T W^{vx} x - h^T W^{hx} x - b^{vT} v - b^{hT} h``.
The solvers, one step function each, are in ``_conditional/solvers.py``; the
epoch loop and early stopping (on the held-out per-pixel error) are the
training engine's. This module holds the scikit-learn surface: validation,
initialisation, inference for ``predict``, and scoring by ``log p(y | x)``.
"""

import numbers
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin
from sklearn.utils import ClassifierTags, check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.divergence import (
    N_CHECKED_ROWS,
    base_rate_log_likelihood,
    blamed_settings,
    diagnose,
)
from .._core.engine import Criterion, EpochTrainingMixin
from .._core.fit_context import fit_context
from .._core.likelihood_mixin import SCORE_PARAMETER_CONSTRAINTS, check_score_settings
from .._core.sklearn_compat import HasMethods, Interval, StrOptions
from .._core.utils import (
    blas_threads_for,
    check_magnitude,
    check_memory,
    child_seed,
    hold_out,
    kernel_array,
    kernel_rng,
    warn,
    warn_if_outlying,
)
from .inference import (
    INFERENCES,
    ConditionalLikelihoodMixin,
    beliefs,
    binary_targets,
    check_held_out,
    conditional_ceiling,
)
from .solvers import LOGISTIC, SOLVERS, TrainingState, copy_warm_start
from .start import (
    Standardisation,
    logistic_start,
    row_biases,
    stack_rows,
    times_weights,
)

__all__ = ["ConditionalRBMRegressor"]

# Ping & Ihler's iteration schedule of message passing in training: T = 7 + epoch.
_SCHEDULE_OFFSET = 7
_FLOAT_DTYPES = [np.float64, np.float32]
# Held out for early stopping when validation_fraction is None.
_VALIDATION_FRACTION = 0.1
# How far, in standard errors, the best epoch must beat its rival on the
# held-out outputs to replace it (see _rival_is_better).
_RIVAL_MARGIN = 2.0
# Initial weights of the hidden units when the fit continues from logistic
# regression: 0.01 learned the occluded strokes of MNIST more slowly
# (doc/conditional.rst, issue 36).
_CONTINUATION_WEIGHT_SCALE = 0.1
# How far, in standard errors, the continuation from logistic regression
# must beat it on the held-out outputs to be kept: negative, it may lose by
# up to one (_continue_from_logistic).
_CONTINUATION_MARGIN = -1.0
# In the order of the gradient's terms.
_PARAMETER_NAMES = (
    "components_",
    "coef_",
    "hidden_coef_",
    "intercept_",
    "intercept_hidden_",
)


class _Rival(NamedTuple):
    """A model the best epoch must beat: its held-out predictions, its
    training state, and whether it is logistic regression (no coupling)."""

    predictions: np.ndarray
    state: dict
    logistic: bool


class ConditionalRBMRegressor(
    ConditionalLikelihoodMixin,
    EpochTrainingMixin,
    MultiOutputMixin,
    RegressorMixin,
    BaseEstimator,
):
    """Conditional RBM for structured prediction of binary outputs.

    Given real features ``x`` the model is an RBM over the binary outputs
    ``y`` (Ping & Ihler's visible units ``v``) and ``n_components`` hidden
    units, whose biases depend linearly on ``x`` (Ping & Ihler 2017, Eq. (3)):
    ``b1 = intercept_ + coef_ @ x`` and ``b2 = intercept_hidden_ +
    hidden_coef_ @ x``. With no hidden units it is logistic regression per
    output; the hidden units couple the outputs.

    The gradient steps work on standardised features (``(x - mean) /
    std`` of the training rows; binary features stay as they are and sparse
    ``X`` is only scaled), so the learning rate does not depend on the
    features' scale; the fitted parameters refer to the raw ``X``.

    It is a multi-output regressor (``fit(X, Y)`` with 2-D binary ``Y``,
    ``KFold`` cross-validation), but **``score`` is not R²**: it is the mean
    conditional log-likelihood ``log p(y | x)``, so ``GridSearchCV`` selects
    by likelihood unless given ``scoring='neg_mean_absolute_error'`` (the
    per-pixel Hamming error for binary ``Y``) or another scorer.

    Read more in the :ref:`User Guide <conditional_user_guide>`.

    Parameters
    ----------
    n_components : int, default=32
        Number of hidden units (Ping & Ihler use 256 on MNIST's 784 outputs;
        on 8 to 64 outputs 64 units fitted no better than 32, in twice the
        time); 0 gives logistic regression per output.
    solver : {'cd', 'cd-percloss', 'mf', 'bp', 'mssvm', 'lssvm'}, default='bp'
        How the gradient's model expectations are estimated: CD-k
        (``n_gibbs_steps`` Gibbs steps from ``chain_start``), CD-PercLoss
        (Mnih, Larochelle & Hinton 2011: the lowest-free-energy state of a
        Gibbs chain), mean field (MLE-MF), sum-product BP with its pairwise
        beliefs (MLE-BP, Ping & Ihler's Eq. (5)), or the max-margin marginal
        (MSSVM, their Eq. (7)) and latent (LSSVM) structured SVMs with
        loss-augmented mixed- and max-product BP. Message-passing solvers
        learn only from the rows on which inference converged; a batch with
        none is skipped and counted in ``n_skipped_batches_``. The user guide
        compares them.
    inference : {'auto', 'mf', 'bp', 'mixed', 'max', 'exact'}, default='auto'
        Inference of ``predict`` and ``predict_proba``: ``'auto'`` matches
        the solver, as Ping & Ihler advise (mean field for 'cd',
        'cd-percloss' and 'mf'; sum-, mixed- and max-product BP for 'bp',
        'mssvm' and 'lssvm'); ``'exact'`` enumerates the smaller of the output
        and hidden layers (at most ``likelihood.MAX_EXACT_UNITS`` units).
    learning_rate : float, default=0.05
        Step size of the mini-batch gradient steps (Ping & Ihler select it
        from {0.05, 0.02, 0.01, 0.005}); gradients are averaged over the batch.
    batch_size : int, default=20
        Mini-batch size (Ping & Ihler select from {10, 20, 40, 80, 160}).
    n_iter : int, default=10
        Most epochs (Ping & Ihler: 50 for MF, BP and the SVMs, 200 for CD, on
        50,000 images). On 4,000 noisy MNIST images the test error of a
        random start after 10 epochs (2.58%, against 2.91% for per-pixel
        ``LogisticRegression()``) was that of the best held-out epoch of 20;
        the fit took 1.75 times logistic regression's CPU time with 10
        epochs, about 3 times with 20 (epochs cost more as BP's cap ``T = 7
        + epoch`` grows; the user guide's section on the defaults).
    n_gibbs_steps : int, default=10
        Gibbs steps ``k`` of 'cd' and 'cd-percloss' (Ping & Ihler's CD-10).
    chain_start : {'random', 'data'}, default='random'
        Start of the CD chains: uniform random states (Ping & Ihler's advice
        for CRBMs) or the training outputs (classical CD).
    inference_max_iter : int or None, default=None
        Most iterations of BP / mean field. ``None`` uses Ping & Ihler's
        schedule ``T = 7 + epoch`` during training and ``7 + n_iter_`` for prediction,
        so that training and test inference match.
    inference_tol : float, default=1e-3
        Convergence tolerance of BP / mean field (Ping & Ihler's 1e-3).
    inference_damping : float, default=0.0
        Message damping in [0, 1) (Ping & Ihler find no damping best).
    weight_scale : float, default=0.01
        Standard deviation of the Gaussian initial weights; biases start at 0.
    init : 'auto', 'logistic', fitted ConditionalRBMRegressor or None, \
            default='auto'
        Start of the fit. ``None``: every weight starts small and random,
        biases at 0, as in Ping & Ihler's experiments. ``'auto'``: the same
        start; under early stopping, per-output logistic regression is the
        rival the best epoch must beat (``early_stopping``). When it wins,
        ``n_iter`` more epochs start from it (the hidden units at weights of
        scale 0.1, the steps on half mini-batches), and they are kept
        unless on the held-out outputs they break more than they fix by
        more than one standard error; kept, they are run again on every
        row, from logistic regression fitted on every row. On occluded
        MNIST (an 8x8 patch, 4,000 training images) the random start does
        not regain logistic regression's identity part in 10 epochs, and
        the epochs from logistic regression learn the occluded strokes:
        1.827% per-pixel test error, 64.85% of the occluded strokes, against
        1.830% and 68.33% for logistic regression, in 573 s of CPU time
        (289 s before). ``'logistic'``: the output part (``coef_``,
        ``intercept_``) starts at scikit-learn's ``LogisticRegression()``
        fitted per output on the training rows (Ping
        & Ihler's view of logistic regression as a CRBM with only ``W^{vx}``
        and ``b^v``), the hidden units at small random weights. A fitted
        estimator: copy its output part and the parameters of its first
        ``min(n_components, init.n_components)`` hidden units; the other
        hidden units start as usual. The default was ``'logistic'`` until
        issue 36: on 4,000 noisy MNIST images the epochs from the logistic
        start did not beat it beyond noise (the fit stopped after 6 epochs
        and kept it: 3.489% per-pixel error against 3.508%), while the
        epochs from a random start learn the logistic part and the coupling
        together and ended 11% below logistic regression.
    validation_fraction : float or None, default=None
        Fraction of the rows held out to monitor the per-pixel (Hamming)
        error. ``None`` holds nothing out unless ``early_stopping=True``,
        which then uses 0.1 (nothing when that is less than one row).
        Ignored when ``fit`` is given held-out data of your own (``X_val``,
        ``Y_val``).
    early_stopping : bool, default=True
        Stop when the held-out pixel error has not fallen by more than
        ``tol`` for ``n_iter_no_change`` epochs and keep the best parameters
        (Ping & Ihler use early stopping for every method). A rival competes
        with the best epoch: the start from ``init``, or with
        ``init='auto'`` per-output ``LogisticRegression()`` fitted on the
        training rows (a random start, ``init=None``, has none). The best
        epoch replaces the rival only if, on the held-out outputs, it fixes
        more than it breaks by more than two standard errors (the best of
        many epochs looks better on held-out data than it is). Logistic
        regression that wins is refitted on the held-out rows too when they
        were split from ``X`` and kept as it is (no output coupling), unless
        with ``init='auto'`` the epochs from it are kept (``init``); so with
        the defaults the fit is never worse on held-out data than per-output
        logistic regression, beyond noise, and gains where the coupling of
        the outputs shows on held-out rows.
    n_iter_no_change : int, default=5
        Patience of early stopping, in epochs (from a random start on noisy
        MNIST the held-out error fell in each of the first 10 epochs and
        stopped falling after the 15th; on occluded MNIST it still fell
        after 23 epochs, never flat for more than two).
    tol : float, default=0.0
        Smallest fall of the held-out per-pixel error that counts as an
        improvement for early stopping.
    score_method : {'auto', 'exact', 'bethe', 'ais'}, default='auto'
        How ``score`` obtains ``log Z(x)`` of each row: ``'exact'`` enumerates
        the smaller layer; ``'bethe'`` is the Bethe free energy at the
        sum-product beliefs (fast, approximate, exact with one hidden unit);
        ``'ais'`` runs AIS for each row (slow, unbiased in ``Z``).
        ``'auto'``: exact while the smaller layer has at most 20 units, Bethe
        otherwise.
    ais_n_chains : int, default=100
        AIS chains per row for ``score_method='ais'``.
    ais_betas : int, {'linear', 'three-segment'} or array-like, default=1000
        AIS temperatures for ``score_method='ais'``.
    verbose : int, default=0
        Print one line per epoch: time, the fraction of rows on which
        inference converged, skipped batches, and the held-out pixel error.
        With held-out data, the error is computed every epoch.
    random_state : int, RandomState instance or None, default=None
        Seed of the initial weights, the shuffling, the validation split, the
        Gibbs chains and AIS. The same value gives bit-identical parameters.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_outputs)
        ``W^{vh}`` transposed to the RBM core's (hidden, visible) orientation.
        Every fitted parameter has the dtype of the training ``X`` (float64,
        or float32 for float32 ``X``).
    coef_ : ndarray of shape (n_outputs, n_features)
        ``W^{vx}``: the logistic-regression part.
    hidden_coef_ : ndarray of shape (n_components, n_features)
        ``W^{hx}``.
    intercept_ : ndarray of shape (n_outputs,)
        ``b^v``.
    intercept_hidden_ : ndarray of shape (n_components,)
        ``b^h``.
    n_iter_ : int
        Epochs run.
    inference_max_iter_ : int
        Iterations of BP / mean field used by ``predict`` (the training
        schedule's value at the epoch of the kept parameters).
    history_ : dict of ndarray
        One entry per epoch: ``'epoch'``, ``'seconds'``,
        ``'converged_fraction'`` (the fraction of training rows on which
        inference converged; 1.0 for the CD solvers) and, with held-out data,
        ``'validation_error'`` (the per-pixel error).
    n_skipped_batches_ : int
        Mini-batches skipped because inference converged on none of their rows.
    best_validation_error_ : float or None
        Smallest held-out per-pixel error, when there are held-out data.
    n_outputs_ : int
        Number of outputs.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    sklearn_rbm.inference.belief_propagation : The inference of the BP solvers.
    sklearn.linear_model.LogisticRegression : The model without hidden units.

    References
    ----------
    W. Ping and A. Ihler. Belief propagation in conditional RBMs for
    structured prediction. AISTATS 2017.

    V. Mnih, H. Larochelle and G. E. Hinton. Conditional restricted Boltzmann
    machines for structured output prediction. UAI 2011.

    C.-N. J. Yu and T. Joachims. Learning structural SVMs with latent
    variables. ICML 2009.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm import ConditionalRBMRegressor
    >>> rng = np.random.RandomState(0)
    >>> Y = (rng.random_sample((200, 6)) < 0.5).astype(float)
    >>> Y[:, 3:] = Y[:, :3]  # the outputs come in equal pairs
    >>> X = Y[:, :3] + 0.5 * rng.randn(200, 3)  # noisy views of the first half
    >>> crbm = ConditionalRBMRegressor(n_components=4, learning_rate=0.1,
    ...                                n_iter=30, random_state=0).fit(X, Y)
    >>> crbm.predict(X).shape
    (200, 6)
    >>> bool(crbm.score(X, Y) > 6 * np.log(0.5))  # better than coin flips
    True
    """

    _parameter_constraints: dict = {
        **SCORE_PARAMETER_CONSTRAINTS,
        "score_method": [StrOptions({"auto", "exact", "bethe", "ais"})],
        "n_components": [Interval(numbers.Integral, 0, None, closed="left")],
        "solver": [StrOptions(set(SOLVERS))],
        "inference": [StrOptions({"auto", *INFERENCES})],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_gibbs_steps": [Interval(numbers.Integral, 1, None, closed="left")],
        "chain_start": [StrOptions({"random", "data"})],
        "inference_max_iter": [
            Interval(numbers.Integral, 1, None, closed="left"),
            None,
        ],
        "inference_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "inference_damping": [Interval(numbers.Real, 0, 1, closed="left")],
        "weight_scale": [Interval(numbers.Real, 0, None, closed="left")],
        "init": [
            HasMethods(["predict_proba"]),
            StrOptions({"auto", "logistic"}),
            None,
        ],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "early_stopping": ["boolean"],
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }
    _criterion = Criterion(
        "validation_error", greater_is_better=False,
        best_attribute="best_validation_error_",
    )  # fmt: skip

    def __init__(
        self,
        n_components=32,
        *,
        solver="bp",
        inference="auto",
        learning_rate=0.05,
        batch_size=20,
        n_iter=10,
        n_gibbs_steps=10,
        chain_start="random",
        inference_max_iter=None,
        inference_tol=1e-3,
        inference_damping=0.0,
        weight_scale=0.01,
        init="auto",
        validation_fraction=None,
        early_stopping=True,
        n_iter_no_change=5,
        tol=0.0,
        score_method="auto",
        ais_n_chains=100,
        ais_betas=1000,
        verbose=0,
        random_state=None,
    ):
        self.n_components = n_components
        self.solver = solver
        self.inference = inference
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.n_gibbs_steps = n_gibbs_steps
        self.chain_start = chain_start
        self.inference_max_iter = inference_max_iter
        self.inference_tol = inference_tol
        self.inference_damping = inference_damping
        self.weight_scale = weight_scale
        self.init = init
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.score_method = score_method
        self.ais_n_chains = ais_n_chains
        self.ais_betas = ais_betas
        self.verbose = verbose
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        # scikit-learn has no tag for "binary targets" on a regressor; the
        # classifier tags' ``multi_class=False`` is the one that says it (the
        # common checks then draw 0/1 targets instead of continuous ones),
        # and ``multi_label=True`` says the outputs are predicted jointly.
        # The estimator type stays 'regressor' (KFold, not stratified, CV).
        tags.classifier_tags = ClassifierTags(multi_class=False, multi_label=True)
        tags.input_tags.sparse = True
        return tags

    # ------------------------------------------------------------ settings
    def _resolved_inference(self):
        if self.inference == "auto":
            return SOLVERS[self.solver].prediction
        return self.inference

    def _training_max_iter(self, epoch):
        """Ping & Ihler's ``T = 7 + epoch`` (1-based) unless fixed by the user."""
        if self.inference_max_iter is not None:
            return self.inference_max_iter
        return _SCHEDULE_OFFSET + epoch

    # -------------------------------------------------------------- input
    def _validate_query(self, X):
        check_is_fitted(self, "components_")
        X = validate_data(
            self, X, dtype=_FLOAT_DTYPES, accept_sparse="csr", reset=False
        )
        return X.astype(np.float64, copy=False)

    # ------------------------------------------------------------- model
    def _biases(self, X):
        """Per-row RBM biases ``B1 = b^v + W^{vx} x`` and ``B2 = b^h + W^{hx} x``."""
        return row_biases(self._parameters(), X)

    def _parameters(self):
        return tuple(getattr(self, name) for name in _PARAMETER_NAMES)

    def _check_memory(self, n_rows, n_features, n_outputs):
        """Refuse sizes whose arrays cannot fit, before allocating them."""
        n_hidden, batch_rows = self.n_components, min(self.batch_size, n_rows)
        # Weights and their snapshots; per batch row, BP's pairwise beliefs.
        check_memory(
            4 * 8 * n_hidden * (n_outputs + n_features),
            f"n_components={n_hidden} with {n_features} features and "
            f"{n_outputs} outputs",
            "Use fewer hidden units (n_components).",
        )
        check_memory(
            3 * 8 * batch_rows * (n_hidden + 1) * (n_outputs + 1),
            f"batch_size={self.batch_size} with {n_hidden} hidden units and "
            f"{n_outputs} outputs",
            "Use a smaller batch_size.",
        )

    def _initialise(self, X_train, Y_train, rs):
        """Starting parameters, in the standardised coordinates of the fit."""
        n_features, n_outputs = X_train.shape[1], Y_train.shape[1]
        n_hidden = self.n_components
        scale = self.weight_scale
        self.components_ = rs.normal(0.0, scale, (n_hidden, n_outputs))
        self.coef_ = rs.normal(0.0, scale, (n_outputs, n_features))
        self.hidden_coef_ = rs.normal(0.0, scale, (n_hidden, n_features))
        self.intercept_ = np.zeros(n_outputs)
        self.intercept_hidden_ = np.zeros(n_hidden)
        if self.init == "logistic":
            self._fit_logistic(X_train, Y_train, self.coef_, self.intercept_)
        elif self.init not in (None, "auto"):
            # The fitted model's parameters refer to raw features.
            self._to_raw()
            copy_warm_start(self.init, self._parameters(), n_features, n_outputs)
            self._to_standardised()
        self.n_outputs_ = n_outputs
        kernel_stream = kernel_rng(rs)
        chain_rs = check_random_state(child_seed(rs))
        self._state = TrainingState(
            self._parameters(), float(self.learning_rate), self.n_gibbs_steps,
            self.chain_start, float(self.inference_tol),
            float(self.inference_damping), chain_rs, kernel_stream,
        )  # fmt: skip
        self._ais_seed = child_seed(rs)
        self.n_iter_ = 0
        self.n_skipped_batches_ = 0
        # Epochs before the continuation from logistic regression, and whether
        # it runs (_continue_from_logistic).
        self._schedule_start, self._half_batches = 0, False
        self.inference_max_iter_ = self._training_max_iter(1)

    def _fit_logistic(self, X, Y, coef, intercept):
        """In place: ``coef``, ``intercept`` of per-output logistic regression
        on standardised rows ``X`` (see ``_conditional/start.py``)."""
        with blas_threads_for(X.shape[0] * X.shape[1] * Y.shape[1]):
            logistic_start(X, Y, coef, intercept, self._standardisation.scale)

    def _input_parts(self):
        """The (weights, intercept) pairs that multiply the features."""
        return (
            (self.coef_, self.intercept_),
            (self.hidden_coef_, self.intercept_hidden_),
        )

    def _to_standardised(self):
        for weights, intercept in self._input_parts():
            self._standardisation.to_standardised(weights, intercept)

    def _to_raw(self):
        for weights, intercept in self._input_parts():
            self._standardisation.to_raw(weights, intercept)

    def _publish(self):
        """Fitted parameters on the raw features, in the dtype of the training
        ``X`` (float32 stays float32); the computation itself runs in float64
        and in standardised coordinates."""
        self._to_raw()
        for name in _PARAMETER_NAMES:
            setattr(self, name, getattr(self, name).astype(self._dtype, copy=False))

    # ---------------------------------------------------------------- fit
    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, Y, *, X_val=None, Y_val=None):
        """Fit the conditional RBM by mini-batch stochastic gradient steps.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Real-valued input features. float32 ``X`` gives float32 fitted
            parameters, and ``predict``, ``predict_proba`` and ``infer``
            then return float32; the training itself (gradients, Gibbs
            chains, BP and mean field) computes in float64 whatever the
            input dtype, and the parameters are rounded once at the end.
        Y : array-like of shape (n_samples, n_outputs) or (n_samples,)
            Binary outputs (0 or 1); a 1-D ``Y`` is one output.
        X_val : array-like of shape (n_val, n_features), default=None
            Held-out inputs of your own for the validation error and early
            stopping, used instead of holding out ``validation_fraction`` of
            the rows (ignored when ``X_val`` is given). Pass them when rows
            are related, e.g. several corruptions of one clean image: a split
            of rows would put copies of one image on both sides.
        Y_val : array-like of shape (n_val, n_outputs) or (n_val,), default=None
            Binary outputs of ``X_val``; given together with ``X_val``.

        Returns
        -------
        self : ConditionalRBMRegressor
            The fitted estimator.
        """
        X, Y = validate_data(
            self, X, Y, multi_output=True, y_numeric=True, dtype=_FLOAT_DTYPES,
            accept_sparse="csr",
        )  # fmt: skip
        check_score_settings(self)
        # Features so large that their squares overflow are refused (they
        # would blame the learning rate later), far outliers warned about.
        fix = "Standardise X (StandardScaler) and look for corrupted values."
        check_magnitude(X, "X", X.shape[0] * X.shape[1], fix)
        warn_if_outlying(X, fix=fix)
        # The dtype's name, not the dtype object: skops.io persists strings.
        self._dtype, self._single_output = X.dtype.name, Y.ndim == 1
        X, Y = X.astype(np.float64, copy=False), binary_targets(Y)
        rs = check_random_state(self.random_state)
        given = check_held_out(self, X_val, Y_val, Y.shape[1])
        (X_train, Y_train), validation = hold_out(
            (X, Y),
            rs,
            fraction=self.validation_fraction,
            default_fraction=self._default_validation_fraction(X.shape[0]),
            given=given,
        )
        if validation is None and self.early_stopping:
            warn(
                f"early_stopping=True holds out {_VALIDATION_FRACTION:.0%} of "
                f"the rows, less than one of n_samples={X.shape[0]}: nothing is "
                f"held out and all n_iter={self.n_iter} epochs run. Pass "
                "held-out rows (X_val, Y_val), more rows, or set "
                "early_stopping=False."
            )
        self._check_memory(X_train.shape[0], X.shape[1], Y.shape[1])
        # The steps work in standardised coordinates (see _conditional/start.py).
        self._standardisation = Standardisation.of(X_train)
        X_train = self._standardisation.transform(X_train)
        if validation is not None:
            validation = (self._standardisation.transform(validation[0]), validation[1])
        self._initialise(X_train, Y_train, rs)
        self._n_train = X_train.shape[0]
        self._checked_rows = (X_train[:N_CHECKED_ROWS], Y_train[:N_CHECKED_ROWS])
        self._checked_baseline = base_rate_log_likelihood(
            Y_train[:N_CHECKED_ROWS], Y_train.mean(axis=0)
        )
        self._start_history()
        n_products = self.batch_size * max(self.n_components, 1) * Y.shape[1]
        try:
            with blas_threads_for(n_products):
                rival = self._rival(X_train, Y_train, validation)
                self._run_epochs(
                    (X_train, Y_train), validation, self.n_iter, rs,
                    early_stopping=self.early_stopping,
                )  # fmt: skip
            if self._rival_is_better(rival, validation):
                # Rows split from X are the user's training data too: a
                # logistic regression that won is refitted on them as well.
                split = (X_train, Y_train, *validation) if given is None else None
                if not self._continue_from_logistic(
                    rival, (X_train, Y_train), validation, split, rs
                ):
                    self._keep_rival(rival, validation, split)
        finally:
            self._publish()
        return self

    def _default_validation_fraction(self, n_samples):
        """Early stopping's 0.1, unless that is less than one row (then
        nothing is held out and every epoch runs)."""
        if not self.early_stopping or n_samples * _VALIDATION_FRACTION < 1:
            return None
        return _VALIDATION_FRACTION

    def _rival(self, X_train, Y_train, validation):
        """What the best epoch competes with under early stopping: the start
        from ``init``, or with ``init='auto'`` per-output logistic regression
        fitted on the training rows. ``None`` when nothing competes (a random
        start, no held-out rows, or no early stopping)."""
        if validation is None or not self.early_stopping or self.init is None:
            return None
        if self.init != "auto":
            state = self._training_state()
            logistic = self.init == "logistic"
            return _Rival(self._predict_binary(validation[0]), state, logistic)
        # The rival's parameters: logistic regression, no output coupling.
        state = self._training_state()
        _, coef, _, intercept, _ = state["parameters"]
        state["parameters"][0][...] = 0.0
        coef[...], intercept[...] = 0.0, 0.0
        self._fit_logistic(X_train, Y_train, coef, intercept)
        logits = times_weights(validation[0], coef) + intercept
        return _Rival((logits > 0.0).astype(np.float64), state, True)

    def _rival_is_better(self, rival, validation):
        """Whether a rival competed and the best epoch did not beat it beyond
        noise on the held-out outputs.

        The best of many epochs on one held-out set looks better than it is
        (on multi-label data whose hidden units gain nothing, the best epoch
        beat the logistic start by more than one standard error on held-out
        rows in 3 of 4 random states, and lost to it on test rows each
        time). So the epochs replace the rival only when they fix more
        held-out outputs than they break by more than ``_RIVAL_MARGIN``
        standard errors of that difference under no change,
        ``sqrt(fixed + broken)`` (McNemar's statistic).
        """
        if rival is None:
            return False
        fixed, broken = self._fixed_and_broken(rival, validation)
        return fixed - broken <= _RIVAL_MARGIN * np.sqrt(fixed + broken)

    def _fixed_and_broken(self, rival, validation):
        """How many held-out outputs the current parameters get right that
        the rival got wrong, and the other way round."""
        X_val, Y_val = validation
        before = rival.predictions == Y_val
        after = self._predict_binary(X_val) == Y_val
        return np.sum(after & ~before), np.sum(before & ~after)

    def _continue_from_logistic(self, rival, train, validation, split, rs):
        """With ``init='auto'``, when logistic regression beat the epochs from
        the random start: ``n_iter`` epochs from logistic regression itself,
        the hidden units at ``_CONTINUATION_WEIGHT_SCALE``, on half batches.
        Kept (and ``True`` returned) unless its last epoch breaks more
        held-out outputs than it fixes by more than ``-_CONTINUATION_MARGIN``
        standard errors; then, when the held-out rows were split from ``X``,
        refitted on every row: logistic regression on every row and
        ``n_iter`` epochs from it, from the same hidden weights.

        Why: on occluded MNIST the random start does not regain the identity
        part of the map (each input pixel to its output) in 10 epochs, so
        logistic regression wins; from it, the hidden units learn the
        occluded strokes (doc/conditional.rst, issue 36). Their gain there,
        0.003 to 0.02 points on test, is within the noise of 400 held-out images (the
        last epoch fixed 655 held-out outputs and broke 667), so the rule
        only refuses a continuation that is worse beyond noise: one that
        starts at logistic regression and is not the best of many epochs is
        not much worse than it. One standard error, not two, because on
        count features (multi-label data of issue 22) a continuation that
        broke 11 held-out outputs and fixed 4 also lost on test rows.
        """
        if self.init != "auto" or not rival.logistic or self.n_components == 0:
            return False
        self._set_training_state(rival.state)
        hidden = self._hidden_start(rs)
        self._continued_epochs(train, validation, rs)
        fixed, broken = self._fixed_and_broken(rival, validation)
        if self.verbose:
            print(
                f"[{type(self).__name__}] the epochs from logistic regression "
                f"fixed {fixed} held-out outputs and broke {broken}."
            )
        if fixed - broken <= _CONTINUATION_MARGIN * np.sqrt(fixed + broken):
            return False
        self.best_validation_error_ = self._validation_score(validation)
        if split is not None:
            X_train, Y_train, X_val, Y_val = split
            X_all, Y_all = stack_rows(X_train, X_val), np.vstack((Y_train, Y_val))
            self._fit_logistic(X_all, Y_all, self.coef_, self.intercept_)
            for parameter, value in zip(self._hidden_parameters(), hidden, strict=True):
                parameter[...] = value
            self._continued_epochs((X_all, Y_all), None, rs)
        return True

    def _hidden_parameters(self):
        return self.components_, self.hidden_coef_, self.intercept_hidden_

    def _hidden_start(self, rs):
        """In place: the hidden units' weights at the continuation's scale,
        biases 0; returns copies of them."""
        W, hidden_coef, intercept_hidden = self._hidden_parameters()
        W[...] = rs.normal(0.0, _CONTINUATION_WEIGHT_SCALE, W.shape)
        hidden_coef[...] = rs.normal(0.0, _CONTINUATION_WEIGHT_SCALE, hidden_coef.shape)
        intercept_hidden[...] = 0.0
        return tuple(p.copy() for p in self._hidden_parameters())

    def _continued_epochs(self, train, validation, rs):
        """``n_iter`` epochs on half batches, BP's schedule restarted at its
        first epoch, no early stopping."""
        self._schedule_start, self._half_batches = self.n_iter_, True
        self._n_train = train[0].shape[0]  # of the converged fraction
        try:
            self._run_epochs(train, validation, self.n_iter, rs, early_stopping=False)
        finally:
            self._half_batches = False

    def _keep_rival(self, rival, validation, split):
        """Restore the rival. Logistic regression is kept exactly (no output
        coupling), refitted on the training and held-out rows together when
        ``split = (X_train, Y_train, X_val, Y_val)``."""
        self._set_training_state(rival.state)
        if rival.logistic:
            self.components_[...] = 0.0
        error = self._validation_score(validation)
        self.best_validation_error_ = error
        if rival.logistic and split is not None:
            X_train, Y_train, X_val, Y_val = split
            X_all = stack_rows(X_train, X_val)
            self._fit_logistic(
                X_all, np.vstack((Y_train, Y_val)), self.coef_, self.intercept_
            )
        if self.verbose:
            kept = "logistic regression" if rival.logistic else "the start"
            print(
                f"[{type(self).__name__}] the best epoch did not beat {kept} "
                f"(held-out error {error:.4f}) beyond noise; keeping {kept}."
            )

    # ------------------------------------------------- the engine's hooks
    def _make_step(self):
        solver = LOGISTIC if self.n_components == 0 else SOLVERS[self.solver]
        step = solver.make_step(self._state)
        if not self._half_batches:
            return step

        def half_steps(batch):
            # Each mini-batch as two steps: the continuation from logistic
            # regression learned the occluded strokes faster on batches of
            # 10 than of 20 (doc/conditional.rst).
            half = (batch[0].shape[0] + 1) // 2
            step(tuple(array[:half] for array in batch))
            if batch[0].shape[0] > half:
                step(tuple(array[half:] for array in batch))

        return half_steps

    def _begin_epoch(self, epoch):
        self._state.max_iter = self._training_max_iter(epoch - self._schedule_start)
        self._state.n_rows_used = 0

    def _end_epoch(self):
        self.inference_max_iter_ = self._state.max_iter
        self.n_skipped_batches_ = self._state.n_skipped_batches

    def _epoch_figures(self):
        return {"converged_fraction": self._state.n_rows_used / self._n_train}

    def _training_state(self):
        return {
            "parameters": [p.copy() for p in self._parameters()],
            "inference_max_iter_": self.inference_max_iter_,
        }

    def _set_training_state(self, state):
        for parameter, value in zip(
            self._parameters(), state["parameters"], strict=True
        ):
            parameter[...] = value
        self.inference_max_iter_ = state["inference_max_iter_"]

    def _divergence(self):
        X, Y = self._checked_rows
        ceiling = conditional_ceiling(self.components_, *self._biases(X), Y)
        problem = diagnose(
            ceiling, self._checked_baseline, Y.shape[1], *self._parameters()
        )
        if problem is None:
            return None
        names, settings = blamed_settings(self, if_changed=("weight_scale",))
        return (
            f"{problem.replace('training', 'training conditional')}, with "
            f"{settings}. Use a smaller {' or '.join(names)}, and standardise X "
            "(StandardScaler) if its features are large."
        )

    def _validation_score(self, validation):
        X_val, Y_val = validation
        return float(np.mean(self._predict_binary(X_val) != Y_val))

    def _monitor(self, train, validation):
        if not SOLVERS[self.solver].uses_message_passing:
            return {}
        return {
            "inference_iterations": self._state.max_iter,
            "skipped_batches": self._state.n_skipped_batches,
        }

    # ------------------------------------------------------------ predict
    def infer(self, X, *, inference=None):
        """Beliefs of the outputs and hidden units given each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input features, one row per sample.
        inference : {'mf', 'bp', 'mixed', 'max', 'exact'} or None
            ``None`` uses the estimator's ``inference`` setting.

        Returns
        -------
        result : named tuple
            ``visible`` (n_samples, n_outputs) and ``hidden`` (n_samples,
            n_components) beliefs, and per row ``n_iter`` and ``converged``,
            so rows on which BP or mean field did not converge can be found;
            their beliefs are the last iterate, always finite.
        """
        X = self._validate_query(X)
        method = inference or self._resolved_inference()
        if method not in INFERENCES:
            raise ValueError(
                f"inference must be one of {sorted(INFERENCES)}; got {method!r}."
            )
        result = self._infer(X, method)
        dtype = self.components_.dtype
        return result._replace(
            visible=result.visible.astype(dtype, copy=False),
            hidden=result.hidden.astype(dtype, copy=False),
        )

    def _infer(self, X, method):
        B1, B2 = self._biases(X)
        W = kernel_array(self.components_)
        return beliefs(
            W, B1, B2, method, self.inference_max_iter_,
            self.inference_tol, self.inference_damping,
        )  # fmt: skip

    def _beliefs(self, X):
        """The visible beliefs of the fitted ``inference`` for validated ``X``."""
        return self._infer(X, self._resolved_inference()).visible

    def _predict_binary(self, X):
        return (self._beliefs(X) > 0.5).astype(np.float64)

    def predict_proba(self, X):
        """Beliefs ``p(y_i = 1 | x)`` of each output.

        The marginals of ``inference`` (mean field, sum-product BP, or exact);
        for 'mixed' and 'max' the normalised max-marginals, which decode by
        ``> 0.5`` but are not probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input features, one row per sample.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_outputs) or (n_samples,)
            1-D when the model was fitted on a 1-D ``y``.
        """
        return self._shaped_like_y(self._beliefs(self._validate_query(X)))

    def predict(self, X):
        """Binary outputs: the beliefs of ``inference`` thresholded at 1/2.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input features, one row per sample.

        Returns
        -------
        Y : ndarray of shape (n_samples, n_outputs) or (n_samples,)
            0.0 or 1.0; 1-D when the model was fitted on a 1-D ``y``.
        """
        return self._shaped_like_y(self._predict_binary(self._validate_query(X)))

    def _shaped_like_y(self, outputs):
        """``outputs`` (one column per output) in the fitted dtype, 1-D when
        the model was fitted on a 1-D ``y``."""
        outputs = outputs.astype(self.components_.dtype, copy=False)
        return outputs[:, 0] if self._single_output else outputs
