"""ConditionalRBMRegressor: structured prediction of binary outputs with a
conditional RBM (Ping & Ihler, AISTATS 2017).

For an input ``x`` the model is an RBM over the outputs ``v`` and hidden units
``h`` whose biases depend on ``x`` (Sec. 3.2),
``E(v, h, x) = -v^T W^{vh} h - v^T W^{vx} x - h^T W^{hx} x - b^{vT} v - b^{hT} h``.
Every solver is a way of estimating the model expectations of the
log-likelihood gradient (Eq. (5) and Appendix A), or of a max-margin loss
(Eqs. (6)-(7)); the table ``_SOLVERS`` says which one each name uses. The
estimator holds the scikit-learn surface: validation, the epoch loop, early
stopping on the held-out pixel error, scoring by ``log p(y | x)``.
"""

import numbers
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin
from sklearn.utils import ClassifierTags, check_random_state, gen_batches
from sklearn.utils.validation import check_is_fitted, validate_data

from ._kernels.conditional import conditional_gibbs_chain
from ._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context
from ._utils import (
    blas_threads_for,
    divergence,
    hold_out,
    kernel_rng,
    validate_held_out,
)
from .inference import (
    MAX_EXACT_INFERENCE_UNITS,
    belief_propagation,
    bethe_log_partition,
    exact_log_partition,
    exact_marginals,
    mean_field,
)
from .likelihood import SCORE_PARAMETER_CONSTRAINTS, log_partition_ais

__all__ = ["ConditionalRBMRegressor"]

# The seed's iteration schedule of message passing during training: T = 7 + epoch.
_SCHEDULE_OFFSET = 7


class _Phase(NamedTuple):
    """Model-side statistics of a mini-batch (the negative phase).

    ``rows`` selects the rows whose inference converged (``None``: all);
    ``visible``/``hidden`` are ``E[v]``, ``E[h]`` per row, and ``pairwise``
    is ``sum_rows E[h v^T]`` over the selected rows (``None`` when it
    factorises as ``hidden^T visible``, which is cheaper to form later).
    """

    rows: np.ndarray | None
    visible: np.ndarray
    hidden: np.ndarray
    pairwise: np.ndarray | None


@dataclass(frozen=True)
class _Solver:
    """How a solver name estimates the gradient and what it predicts with."""

    negative_phase: object  # (estimator, X, V, B1, B2, rng, max_iter) -> _Phase
    prediction: str  # inference used by inference='auto' (seed observation 3)
    latent_map: bool  # positive hidden statistics by max instead of mean (LSSVM)


# ---------------------------------------------------------------- phases
def _cd_phase(est, X, V, B1, B2, rng, max_iter):
    """CD-k: Gibbs chains of each ``x``'s RBM, from random or data states.

    The seed (Sec. 4.1) finds data-started chains poor for CRBMs, whose
    conditionals are peaked and multi-modal; random starts are the default.
    """
    if est.chain_start == "random":
        start = (est._chain_rs.random_sample(V.shape) < 0.5).astype(np.float64)
    else:
        start = V
    V_neg, H_neg = conditional_gibbs_chain(
        start, est.components_, B1, B2, est.n_gibbs_steps, False, rng
    )
    return _Phase(None, V_neg, H_neg, None)


def _percloss_phase(est, X, V, B1, B2, rng, max_iter):
    """CD-PercLoss (Mnih, Larochelle & Hinton 2011): the perceptron loss
    ``F(v^n | x) - min_v F(v | x)``.

    Its gradient contrasts the data with the minimiser of the free energy,
    which a CD-like stochastic search approximates: a Gibbs chain started
    from the logistic-regression component (a draw from ``sigmoid(b1)``, as
    the seed describes it in Sec. 2), keeping the visited state of lowest
    free energy. (Measured on noisy digits: starting at the thresholded
    ``1[b1 > 0]`` instead trains far worse under mean-field decoding.)
    """
    start = (est._chain_rs.random_sample(V.shape) < expit(B1)).astype(np.float64)
    V_neg, H_neg = conditional_gibbs_chain(
        start, est.components_, B1, B2, est.n_gibbs_steps, True, rng
    )
    return _Phase(None, V_neg, H_neg, None)


def _converged_rows(result):
    converged = np.asarray(result.converged, dtype=bool)
    return None if converged.all() else converged


def _mf_phase(est, X, V, B1, B2, rng, max_iter):
    """MLE-MF: mean-field beliefs in place of the model expectations."""
    result = mean_field(est.components_, B1, B2, **est._message_settings(max_iter))
    return _selected(_converged_rows(result), result.visible, result.hidden, None)


def _bp_phase(est, X, V, B1, B2, rng, max_iter):
    """MLE-BP: sum-product beliefs, pairwise ``Gamma`` of Eq. (18) for ``E[v h^T]``."""
    result = belief_propagation(
        est.components_,
        B1,
        B2,
        product="sum",
        pairwise=True,
        **est._message_settings(max_iter),
    )
    rows = _converged_rows(result)
    pairwise = result.pairwise if rows is None else result.pairwise[rows]
    return _selected(rows, result.visible, result.hidden, pairwise.sum(axis=0))


def _mssvm_phase(est, X, V, B1, B2, rng, max_iter):
    """MSSVM, Eq. (7): loss-augmented marginal MAP by mixed-product BP.

    The Hamming loss adds ``1 - 2 v^n_i`` to ``b1_i`` (up to a constant).
    Given the decoding ``v_hat``, the hidden beliefs of converged mixed
    product are exactly ``p(h | v_hat, x)`` (Eq. (15) clamps the visible
    units), so the expectation of Eq. (7) is formed from ``v_hat`` directly.
    """
    result = belief_propagation(
        est.components_,
        B1 + (1.0 - 2.0 * V),
        B2,
        product="mixed",
        **est._message_settings(max_iter),
    )
    v_hat = (result.visible > 0.5).astype(np.float64)
    h_mean = expit(v_hat @ est.components_.T + B2)
    return _selected(_converged_rows(result), v_hat, h_mean, None)


def _lssvm_phase(est, X, V, B1, B2, rng, max_iter):
    """LSSVM (Yu & Joachims 2009): loss-augmented joint MAP by max-product BP."""
    result = belief_propagation(
        est.components_,
        B1 + (1.0 - 2.0 * V),
        B2,
        product="max",
        **est._message_settings(max_iter),
    )
    v_hat = (result.visible > 0.5).astype(np.float64)
    h_hat = (result.hidden > 0.5).astype(np.float64)
    return _selected(_converged_rows(result), v_hat, h_hat, None)


def _exact_phase(est, X, V, B1, B2, rng, max_iter):
    """Exact expectations by enumeration (tiny models; the tests' reference)."""
    exact = exact_marginals(est.components_, B1, B2)
    return _Phase(None, exact.visible, exact.hidden, exact.pairwise.sum(axis=0))


def _selected(rows, visible, hidden, pairwise):
    if rows is None:
        return _Phase(None, visible, hidden, pairwise)
    return _Phase(rows, visible[rows], hidden[rows], pairwise)


_SOLVERS = {
    "cd": _Solver(_cd_phase, prediction="mf", latent_map=False),
    "cd-percloss": _Solver(_percloss_phase, prediction="mf", latent_map=False),
    "mf": _Solver(_mf_phase, prediction="mf", latent_map=False),
    "bp": _Solver(_bp_phase, prediction="bp", latent_map=False),
    "mssvm": _Solver(_mssvm_phase, prediction="mixed", latent_map=False),
    "lssvm": _Solver(_lssvm_phase, prediction="max", latent_map=True),
}
_INFERENCES = ("mf", "bp", "mixed", "max", "exact")
_FLOAT_DTYPES = [np.float64, np.float32]
# In the order of the gradient's terms.
_PARAMETER_NAMES = (
    "components_",
    "coef_",
    "hidden_coef_",
    "intercept_",
    "intercept_hidden_",
)
_BP_PRODUCTS = {"bp": "sum", "mixed": "mixed", "max": "max"}


class ConditionalRBMRegressor(MultiOutputMixin, RegressorMixin, BaseEstimator):
    """Conditional RBM for structured prediction of binary outputs.

    Given real features ``x`` the model is an RBM over the binary outputs
    ``y`` (the seed's visible units ``v``) and ``n_components`` hidden units,
    whose biases depend linearly on ``x`` (Ping & Ihler 2017, Eq. (3)):
    ``b1 = intercept_ + coef_ @ x`` and ``b2 = intercept_hidden_ +
    hidden_coef_ @ x``. With no hidden units it is logistic regression per
    output; the hidden units couple the outputs.

    **Why a regressor.** The outputs are a vector of binary values, predicted
    jointly: scikit-learn's multi-output regressor interface (``fit(X, Y)``
    with 2-D ``Y``, ``predict`` returning ``Y``'s shape, a 1-D ``y`` giving
    1-D predictions, ``KFold`` cross-validation) is what fits it; a classifier
    would get class-label handling and stratified splits that do not apply to
    vectors of pixels. It inherits ``RegressorMixin`` for that behaviour and
    ``MultiOutputMixin`` for the multi-output tag, but **``score`` is not
    R²**: it is the mean conditional log-likelihood ``log p(y | x)`` (higher
    is better, as every scorer), so ``GridSearchCV`` with its default scoring
    selects by likelihood. Pass ``scoring='r2'`` or
    ``'neg_mean_absolute_error'`` (the per-pixel Hamming error for binary
    ``Y``) to select by another criterion.

    Read more in the :ref:`User Guide <conditional_user_guide>`.

    Parameters
    ----------
    n_components : int, default=256
        Number of hidden units (the seed uses 256 on MNIST); 0 gives
        logistic regression per output.
    solver : {'cd', 'cd-percloss', 'mf', 'bp', 'mssvm', 'lssvm'}, default='bp'
        How the gradient's model expectations are estimated:

        * ``'cd'``: CD-k with ``n_gibbs_steps`` Gibbs steps (Sec. 4.1), chains
          started at random states (``chain_start``).
        * ``'cd-percloss'``: CD-PercLoss (Mnih, Larochelle & Hinton 2011):
          minimises the perceptron loss ``F(y | x) - min_v F(v | x)``; the
          minimiser is the lowest-free-energy state of an ``n_gibbs_steps``
          Gibbs chain started from a draw of the logistic-regression part.
        * ``'mf'``: maximum likelihood with mean-field beliefs (MLE-MF).
        * ``'bp'``: maximum likelihood with sum-product BP beliefs (MLE-BP,
          Eq. (5) with ``tau^v``, ``tau^h`` and the pairwise ``Gamma``).
        * ``'mssvm'``: marginal structured SVM, Eqs. (6)-(7), with
          loss-augmented mixed-product BP (Hamming loss).
        * ``'lssvm'``: latent structured SVM with loss-augmented max-product
          BP (joint MAP).

        Message-passing solvers learn only from the rows of a mini-batch on
        which inference converged (Sec. 4.1); a batch with none is skipped
        and counted in ``n_skipped_batches_``.
    inference : {'auto', 'mf', 'bp', 'mixed', 'max', 'exact'}, default='auto'
        Inference of ``predict`` and ``predict_proba``. ``'auto'`` matches
        the solver (the seed's observation 3): mean field for 'cd',
        'cd-percloss' and 'mf'; sum-product BP for 'bp'; mixed product for
        'mssvm'; max product for 'lssvm'. ``'exact'`` enumerates the smaller
        of the output and hidden layers (at most 20 units). There is no
        Gibbs-sampling inference: the seed queries CD-trained models by mean
        field, and sampled marginals would be neither deterministic per row
        nor checked for convergence (the user guide says more).
    learning_rate : float, default=0.05
        Step size of the mini-batch gradient steps (the seed selects from
        {0.05, 0.02, 0.01, 0.005}); gradients are averaged over the batch.
    batch_size : int, default=20
        Mini-batch size (the seed selects from {10, 20, 40, 80, 160}).
    n_iter : int, default=50
        Epochs (the seed: 50 for MF, BP and the SVMs, 200 for CD methods).
    n_gibbs_steps : int, default=10
        Gibbs steps ``k`` of 'cd' and 'cd-percloss' (the seed's CD-10).
    chain_start : {'random', 'data'}, default='random'
        Start of the CD chains: uniform random states (the seed's advice for
        CRBMs) or the training outputs (classical CD).
    inference_max_iter : int or None, default=None
        Most iterations of BP / mean field. ``None`` uses the seed's schedule
        ``T = 7 + epoch`` during training and ``7 + n_iter_`` for prediction,
        so that training and test inference match.
    inference_tol : float, default=1e-3
        Convergence tolerance of BP / mean field (the seed's 1e-3).
    inference_damping : float, default=0.0
        Message damping in [0, 1) (the seed finds no damping best).
    weight_scale : float, default=0.01
        Standard deviation of the Gaussian initial weights; biases start at 0.
    init : fitted ConditionalRBMRegressor or None, default=None
        Warm start: copy its output part (``coef_``, ``intercept_``) and the
        parameters of its first ``min(n_components, init.n_components)``
        hidden units; the other hidden units start as usual. Typical use:
        start the CRBM from the fitted logistic regression (``n_components=0``),
        the seed's view of LR as a CRBM with only ``W^{vx}`` and ``b^v``.
    validation_fraction : float or None, default=None
        Fraction of the rows held out to monitor the per-pixel (Hamming)
        error. ``None`` holds nothing out unless ``early_stopping=True``,
        which then uses 0.1. Ignored when ``fit`` is given held-out data of
        your own (``X_val``, ``Y_val``).
    early_stopping : bool, default=False
        Stop when the held-out pixel error has not improved for
        ``n_iter_no_change`` epochs and keep the best parameters (the seed
        uses early stopping for every method).
    n_iter_no_change : int, default=5
        Patience of early stopping, in epochs.
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
        Epochs run (of the kept parameters when early stopping).
    inference_max_iter_ : int
        Iterations of BP / mean field used by ``predict``.
    converged_fraction_ : list of float
        Per epoch, the fraction of training rows on which inference converged
        (1.0 for the CD solvers).
    n_skipped_batches_ : int
        Mini-batches skipped because inference converged on none of their rows.
    validation_errors_ : list of float or None
        Held-out per-pixel error after each epoch, when a fraction is held out.
    best_validation_error_ : float or None
        Smallest of ``validation_errors_``.
    n_outputs_ : int
        Number of outputs.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    sklearn_rbm.inference.belief_propagation : the inference of the BP solvers.
    sklearn.linear_model.LogisticRegression : the model without hidden units.

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
    >>> from sklearn_rbm._conditional import ConditionalRBMRegressor
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
        "solver": [StrOptions(set(_SOLVERS))],
        "inference": [StrOptions({"auto", *_INFERENCES})],
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
        "init": [HasMethods(["predict_proba"]), None],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "early_stopping": ["boolean"],
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=256,
        *,
        solver="bp",
        inference="auto",
        learning_rate=0.05,
        batch_size=20,
        n_iter=50,
        n_gibbs_steps=10,
        chain_start="random",
        inference_max_iter=None,
        inference_tol=1e-3,
        inference_damping=0.0,
        weight_scale=0.01,
        init=None,
        validation_fraction=None,
        early_stopping=False,
        n_iter_no_change=5,
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
        return tags

    # ------------------------------------------------------------ settings
    def _resolved_inference(self):
        if self.inference == "auto":
            return _SOLVERS[self.solver].prediction
        return self.inference

    def _message_settings(self, max_iter):
        return dict(
            max_iter=int(max_iter),
            tol=float(self.inference_tol),
            damping=float(self.inference_damping),
        )

    def _training_max_iter(self, epoch):
        """The seed's ``T = 7 + epoch`` (1-based) unless fixed by the user."""
        if self.inference_max_iter is not None:
            return self.inference_max_iter
        return _SCHEDULE_OFFSET + epoch

    # -------------------------------------------------------------- input
    def _validate_training_data(self, X, Y):
        X, Y = validate_data(
            self, X, Y, multi_output=True, y_numeric=True, dtype=_FLOAT_DTYPES
        )
        self._dtype = X.dtype
        X = X.astype(np.float64, copy=False)
        Y = np.asarray(Y, dtype=np.float64)
        self._single_output = Y.ndim == 1
        Y = Y.reshape(-1, 1) if Y.ndim == 1 else Y
        _check_binary_targets(Y)
        return X, np.ascontiguousarray(Y)

    def _validate_query(self, X):
        check_is_fitted(self, "components_")
        X = validate_data(self, X, dtype=_FLOAT_DTYPES, reset=False)
        return X.astype(np.float64, copy=False)

    def _publish(self):
        """Fitted parameters in the dtype of the training ``X`` (float32 stays
        float32); the computation itself runs in float64."""
        for name in _PARAMETER_NAMES:
            setattr(self, name, getattr(self, name).astype(self._dtype, copy=False))

    # ------------------------------------------------------------- model
    def _biases(self, X):
        """Per-row RBM biases ``B1 = b^v + W^{vx} x`` and ``B2 = b^h + W^{hx} x``."""
        B1 = X @ self.coef_.T + self.intercept_
        B2 = X @ self.hidden_coef_.T + self.intercept_hidden_
        return np.ascontiguousarray(B1), np.ascontiguousarray(B2)

    def _parameters(self):
        return tuple(getattr(self, name) for name in _PARAMETER_NAMES)

    def _initialise(self, n_features, n_outputs, rs):
        n_hidden = self.n_components
        scale = self.weight_scale
        self.components_ = rs.normal(0.0, scale, (n_hidden, n_outputs))
        self.coef_ = rs.normal(0.0, scale, (n_outputs, n_features))
        self.hidden_coef_ = rs.normal(0.0, scale, (n_hidden, n_features))
        self.intercept_ = np.zeros(n_outputs)
        self.intercept_hidden_ = np.zeros(n_hidden)
        if self.init is not None:
            self._copy_init(n_features, n_outputs)
        self.n_outputs_ = n_outputs
        self._kernel_rng = kernel_rng(rs)
        self._chain_rs = check_random_state(rs.randint(np.iinfo(np.int32).max))
        self._ais_seed = int(rs.randint(np.iinfo(np.int32).max))

    def _copy_init(self, n_features, n_outputs):
        """Start from a fitted model: its output part, and its first hidden units."""
        init = self.init
        check_is_fitted(init, "coef_")
        if init.coef_.shape != (n_outputs, n_features):
            raise ValueError(
                f"init was fitted with {init.coef_.shape[1]} features and "
                f"{init.coef_.shape[0]} outputs, but the data have {n_features} "
                f"and {n_outputs}; a warm start needs the same inputs and outputs."
            )
        self.coef_[...] = init.coef_
        self.intercept_[...] = init.intercept_
        shared = min(self.n_components, init.components_.shape[0])
        self.components_[:shared] = init.components_[:shared]
        self.hidden_coef_[:shared] = init.hidden_coef_[:shared]
        self.intercept_hidden_[:shared] = init.intercept_hidden_[:shared]

    # ---------------------------------------------------------- gradient
    def _gradient(self, X, V, phase_name=None, rng=None, max_iter=None):
        """Ascent direction of one mini-batch and the rows it used.

        The log-likelihood gradient of Eq. (5) and Appendix A, averaged over
        the rows whose inference converged, with the model expectations
        estimated by ``phase_name`` (default: the solver's). For 'mssvm' and
        'lssvm' it is minus the gradient of the max-margin loss (Eq. (7)).

        Returns
        -------
        gradient : tuple of arrays or None
            In the order of ``_parameters``; ``None`` when no row converged.
        rows : ndarray of bool or None
            Rows used (``None``: all).
        """
        spec = _SOLVERS.get(self.solver)
        phase_fn = _NEGATIVE_PHASES[phase_name or self.solver]
        B1, B2 = self._biases(X)
        W = self.components_
        if W.shape[0] == 0:  # logistic regression: the expectations are exact
            phase = _Phase(None, expit(B1), np.zeros((len(X), 0)), None)
        else:
            phase = phase_fn(self, X, V, B1, B2, rng, max_iter)
        if phase.rows is not None:
            if not phase.rows.any():
                return None, phase.rows
            X, V, B2 = X[phase.rows], V[phase.rows], B2[phase.rows]
        pre = V @ W.T + B2
        if spec is not None and spec.latent_map and phase_name is None:
            H_data = (pre > 0.0).astype(np.float64)  # max over h (LSSVM)
        else:
            H_data = expit(pre)  # the seed's mu^n
        pairwise = phase.pairwise
        if pairwise is None:
            pairwise = phase.hidden.T @ phase.visible
        n_rows = len(X)
        dV = V - phase.visible
        dH = H_data - phase.hidden
        gradient = (
            (H_data.T @ V - pairwise) / n_rows,
            dV.T @ X / n_rows,
            dH.T @ X / n_rows,
            dV.mean(axis=0),
            dH.mean(axis=0),
        )
        return gradient, phase.rows

    # ---------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
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
        X, Y = self._validate_training_data(X, Y)
        rs = check_random_state(self.random_state)
        X_train, Y_train, X_val, Y_val = self._split_validation(
            X, Y, self._validate_validation_data(X_val, Y_val, Y.shape[1]), rs
        )
        self._initialise(X.shape[1], Y.shape[1], rs)
        self.n_iter_ = 0
        self.inference_max_iter_ = self._training_max_iter(1)
        self.converged_fraction_ = []
        self.n_skipped_batches_ = 0
        self.validation_errors_ = [] if X_val is not None else None
        self.best_validation_error_ = None
        n_products = self.batch_size * max(self.n_components, 1) * Y.shape[1]
        try:
            with blas_threads_for(n_products):
                self._epochs(X_train, Y_train, X_val, Y_val, rs)
        finally:
            self._publish()
        return self

    def _validate_validation_data(self, X_val, Y_val, n_outputs):
        """``(X_val, Y_val)`` checked like the training data, or None."""
        if X_val is None and Y_val is None:
            return None
        if X_val is None or Y_val is None:
            given, missing = ("X_val", "Y_val") if Y_val is None else ("Y_val", "X_val")
            raise ValueError(f"{given} was passed to fit without {missing}; pass both.")
        X_val = validate_held_out(self, X_val, dtype=_FLOAT_DTYPES)
        X_val = X_val.astype(np.float64, copy=False)
        return X_val, _check_targets_for(X_val, Y_val, n_outputs, ("X_val", "Y_val"))

    def _split_validation(self, X, Y, validation, rs):
        (X_train, Y_train), validation = hold_out(
            (X, Y),
            rs,
            fraction=self.validation_fraction,
            default_fraction=0.1 if self.early_stopping else None,
            given=validation,
        )
        return X_train, Y_train, *(validation or (None, None))

    def _epochs(self, X, Y, X_val, Y_val, rs):
        best, no_improvement = None, 0
        n_samples = X.shape[0]
        for epoch in range(1, self.n_iter + 1):
            start = time.perf_counter()
            max_iter = self._training_max_iter(epoch)
            saved = [p.copy() for p in self._parameters()]
            order = rs.permutation(n_samples)
            n_used = 0
            for batch in gen_batches(n_samples, self.batch_size):
                rows = order[batch]
                n_used += self._step(X[rows], Y[rows], max_iter, saved, epoch)
            self.n_iter_ = epoch
            self.inference_max_iter_ = max_iter
            self.converged_fraction_.append(n_used / n_samples)
            error = None
            if X_val is not None:
                error = float(np.mean(self._predict_binary(X_val) != Y_val))
                self.validation_errors_.append(error)
            if self.verbose:
                self._report_epoch(epoch, time.perf_counter() - start, max_iter, error)
            if not self.early_stopping:
                continue
            if best is None or error < best[0]:
                best = (error, [p.copy() for p in self._parameters()], epoch)
                no_improvement = 0
            else:
                no_improvement += 1
            if no_improvement >= self.n_iter_no_change:
                if self.verbose:
                    print(
                        f"Early stopping: no improvement for {no_improvement} epochs."
                    )
                break
        if best is not None:
            self.best_validation_error_ = best[0]
            self._set_parameters(best[1])
            self.n_iter_ = best[2]
            self.inference_max_iter_ = self._training_max_iter(best[2])
        elif self.validation_errors_:
            self.best_validation_error_ = min(self.validation_errors_)

    def _step(self, X, V, max_iter, saved, epoch):
        """One gradient step on a mini-batch; returns the number of rows used."""
        gradient, rows = self._gradient(X, V, rng=self._kernel_rng, max_iter=max_iter)
        if gradient is None:
            self.n_skipped_batches_ += 1
            return 0
        for parameter, step in zip(self._parameters(), gradient, strict=True):
            parameter += self.learning_rate * step
        self._check_divergence(saved, epoch)
        return len(X) if rows is None else int(rows.sum())

    def _set_parameters(self, values):
        for parameter, value in zip(self._parameters(), values, strict=True):
            parameter[...] = value

    def _check_divergence(self, saved, epoch):
        problem = divergence(*self._parameters())
        if problem is None:
            return
        self._set_parameters(saved)
        raise FloatingPointError(
            f"Training diverged in epoch {epoch}: the parameters became "
            f"{problem} "
            f"with learning_rate={self.learning_rate:g}. Use a smaller "
            "learning_rate. The parameters of the last finished epoch were kept."
        )

    def _report_epoch(self, epoch, seconds, max_iter, error):
        message = f"[{type(self).__name__}] epoch {epoch}, {seconds:.2f} s"
        if self.solver not in ("cd", "cd-percloss"):
            message += (
                f", inference converged on {100 * self.converged_fraction_[-1]:.1f}%"
                f" of the rows (T={max_iter}), {self.n_skipped_batches_} batches"
                " skipped so far"
            )
        if error is not None:
            message += f", held-out pixel error {100 * error:.3f}%"
        print(message)

    # ------------------------------------------------------------ predict
    def infer(self, X, *, inference=None):
        """Beliefs of the outputs and hidden units given each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
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
        if method not in _INFERENCES:
            raise ValueError(
                f"inference must be one of {sorted(_INFERENCES)}; got {method!r}."
            )
        result = self._infer(X, method)
        dtype = self.components_.dtype
        return result._replace(
            visible=result.visible.astype(dtype, copy=False),
            hidden=result.hidden.astype(dtype, copy=False),
        )

    def _infer(self, X, method):
        B1, B2 = self._biases(X)
        W = self.components_
        n_samples = len(X)
        if W.shape[0] == 0:
            return _Result(
                expit(B1), B2, np.zeros(n_samples, int), np.ones(n_samples, bool)
            )
        if method == "exact":
            _check_enumerable(W, "inference='exact'")
            exact = exact_marginals(W, B1, B2)
            return _Result(
                exact.visible,
                exact.hidden,
                np.zeros(n_samples, int),
                np.ones(n_samples, bool),
            )
        settings = self._message_settings(self.inference_max_iter_)
        if method == "mf":
            result = mean_field(W, B1, B2, **settings)
        else:
            result = belief_propagation(
                W, B1, B2, product=_BP_PRODUCTS[method], **settings
            )
        return _Result(result.visible, result.hidden, result.n_iter, result.converged)

    def _predict_binary(self, X):
        return (self._infer(X, self._resolved_inference()).visible > 0.5).astype(
            np.float64
        )

    def predict_proba(self, X):
        """Beliefs ``p(y_i = 1 | x)`` of each output.

        The marginals of ``inference`` (mean field, sum-product BP, or exact);
        for 'mixed' and 'max' the normalised max-marginals, which decode by
        ``> 0.5`` but are not probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_outputs) or (n_samples,)
            1-D when the model was fitted on a 1-D ``y``.
        """
        X = self._validate_query(X)
        proba = self._infer(X, self._resolved_inference()).visible
        proba = proba.astype(self.components_.dtype, copy=False)
        return proba[:, 0] if self._single_output else proba

    def predict(self, X):
        """Binary outputs: the beliefs of ``inference`` thresholded at 1/2.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Y : ndarray of shape (n_samples, n_outputs) or (n_samples,)
            0.0 or 1.0; 1-D when the model was fitted on a 1-D ``y``.
        """
        X = self._validate_query(X)
        Y = self._predict_binary(X).astype(self.components_.dtype, copy=False)
        return Y[:, 0] if self._single_output else Y

    # -------------------------------------------------------------- score
    def _resolve_score_method(self):
        smaller = min(self.components_.shape)
        if self.score_method == "auto":
            return "exact" if smaller <= MAX_EXACT_INFERENCE_UNITS else "bethe"
        if self.score_method == "exact":
            _check_enumerable(self.components_, "score_method='exact'")
        return self.score_method

    def _log_partition(self, B1, B2):
        """``log Z(x)`` of each row's RBM according to ``score_method``."""
        W = self.components_
        if W.shape[0] == 0:
            return np.logaddexp(0.0, B1).sum(axis=1)
        method = self._resolve_score_method()
        if method == "exact":
            return exact_log_partition(W, B1, B2)
        if method == "bethe":
            return bethe_log_partition(W, B1, B2)
        # AIS from the row's own coupling-free model, with one stream fixed at
        # fit time so that a row's score does not depend on the other rows.
        return np.array(
            [
                log_partition_ais(
                    W,
                    b,
                    c,
                    base_rate=b,
                    n_chains=self.ais_n_chains,
                    betas=self.ais_betas,
                    random_state=self._ais_seed,
                ).log_z
                for b, c in zip(B1, B2, strict=True)
            ]
        )

    def conditional_log_likelihood(self, X, Y):
        """Conditional log-likelihood ``log p(y | x)`` of each row.

        ``log p(y | x) = -F(y | x) - log Z(x)`` with the free energy
        ``F(y | x) = -b1^T y - sum_j softplus(W_j y + b2_j)`` in closed form
        and ``log Z(x)`` by ``score_method``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        Y : array-like of shape (n_samples, n_outputs) or (n_samples,)
            Binary outputs.

        Returns
        -------
        log_likelihood : ndarray of shape (n_samples,)
        """
        X = self._validate_query(X)
        Y = _check_targets_for(X, Y, self.n_outputs_)
        B1, B2 = self._biases(X)
        free = -(Y * B1).sum(axis=1) - np.logaddexp(
            0.0, Y @ self.components_.T + B2
        ).sum(axis=1)
        return -free - self._log_partition(B1, B2)

    def score(self, X, y, sample_weight=None):
        """Mean conditional log-likelihood ``log p(y | x)`` (not R²).

        This overrides ``RegressorMixin.score`` on purpose: for binary
        outputs the likelihood is the natural criterion, and it is what
        ``GridSearchCV`` maximises by default.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, n_outputs) or (n_samples,)
            Binary outputs.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the mean.

        Returns
        -------
        log_likelihood : float
        """
        return float(
            np.average(self.conditional_log_likelihood(X, y), weights=sample_weight)
        )


_NEGATIVE_PHASES = {
    **{name: spec.negative_phase for name, spec in _SOLVERS.items()},
    "exact": _exact_phase,
}


class _Result(NamedTuple):
    visible: np.ndarray
    hidden: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray


def _check_targets_for(X, Y, n_outputs, names=("X", "Y")):
    """``Y`` as a 2-D float array of binary targets, one row per row of ``X``;
    ``names`` are what the error messages call the two arrays."""
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y.reshape(-1, 1) if Y.ndim == 1 else Y
    if Y.shape != (X.shape[0], n_outputs):
        raise ValueError(
            f"{names[1]} must have shape ({X.shape[0]}, {n_outputs}) for this "
            f"{names[0]} and model; got {Y.shape}."
        )
    _check_binary_targets(Y, names[1])
    return np.ascontiguousarray(Y)


def _check_binary_targets(Y, name="Y"):
    bad = (Y != 0) & (Y != 1)
    if bad.any():
        values = np.unique(Y[bad])[:5]
        raise ValueError(
            f"ConditionalRBMRegressor needs binary outputs {name} (0 or 1); "
            f"found the values {values.tolist()}. Binarise {name} first, e.g. "
            f"{name} > 0.5."
        )


def _check_enumerable(W, what):
    smaller = min(W.shape)
    if smaller > MAX_EXACT_INFERENCE_UNITS:
        raise ValueError(
            f"{what} enumerates 2 ** {smaller} states of the smaller layer "
            f"({W.shape[1]} outputs, {W.shape[0]} hidden units); it is limited "
            f"to {MAX_EXACT_INFERENCE_UNITS} units. Use 'bp' or 'mf' inference "
            "and score_method='bethe' or 'ais'."
        )
