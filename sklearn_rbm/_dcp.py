"""DCPBernoulliRBM: a binary RBM trained by CD-K, PCD, the centred gradient,
S-DCP or centred S-DCP (Upadhya & Sastry, ACML 2017).

Every solver is a parameterisation of one compiled mini-batch update,
:func:`sklearn_rbm._kernels.gibbs.dcp_minibatch_update`; the table
``_SOLVERS`` below says which. This module holds the scikit-learn surface:
validation, initialisation, the epoch loop, monitoring and early stopping.
"""

import numbers
import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import _fit_context
from sklearn.utils import check_random_state, gen_batches
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import _FLOAT_DTYPES, BaseBinaryRBM
from ._kernels.gibbs import dcp_minibatch_update
from ._utils import blas_threads_for, divergence, kernel_rng
from .likelihood import base_rate_bias, free_energy, log_partition_exact

__all__ = ["DCPBernoulliRBM"]


@dataclass(frozen=True)
class _Solver:
    """How a solver name maps onto the unified update."""

    centred: bool  # offsets mu, lambda move with the data (Melchior et al. 2016)
    persistent: bool  # chains persist across mini-batches (Tieleman 2008)
    inner_steps: bool  # several convex-surrogate steps per mini-batch (S-DCP)


_SOLVERS = {
    "cd": _Solver(centred=False, persistent=False, inner_steps=False),
    "pcd": _Solver(centred=False, persistent=True, inner_steps=False),
    "cg": _Solver(centred=True, persistent=False, inner_steps=False),
    "sdcp": _Solver(centred=False, persistent=False, inner_steps=True),
    "csdcp": _Solver(centred=True, persistent=False, inner_steps=True),
}

_DEFAULT_INNER_STEPS = 3  # the seed's d for small data sets (d=3, K'=4)
_DEFAULT_CENTERING_RATE = 0.01  # the seed's nu_mu = nu_lambda
# Monitoring computes the exact likelihood each epoch only while enumeration
# costs at most this many (state x unit) evaluations.
_CHEAP_ENUMERATION = 2**22


class DCPBernoulliRBM(BaseBinaryRBM):
    """Bernoulli RBM trained by (centred) stochastic DC programming or CD.

    The RBM log-likelihood is a difference of two convex functions,
    ``g(theta) - f(theta)`` with ``f = log Z``. S-DCP (Upadhya & Sastry 2017,
    Algorithms 2-3) takes each mini-batch's data term ``grad g`` once and then
    makes ``n_inner_steps`` (their ``d``) stochastic gradient steps on the
    convex surrogate ``f(theta) - theta^T grad g(theta_t)``, each with
    ``n_gibbs_steps`` (their ``K'``) Gibbs steps of one chain kept across the
    inner steps. With ``d = 1`` it is CD-K. CS-DCP (Algorithm 4) does the same
    with the centred gradient of Melchior, Fischer & Wiskott (2016). The cost
    per mini-batch equals CD-K's when ``d * K' = K``: the seed compares CD-12
    with (d=3, K'=4) and CD-24 with (d=6, K'=4).

    Read more in the :ref:`User Guide <dcp_user_guide>`.

    Parameters
    ----------
    n_components : int, default=256
        Number of hidden units ``n``.
    solver : {'cd', 'pcd', 'cg', 'sdcp', 'csdcp'}, default='sdcp'
        Training algorithm: contrastive divergence (chains start at the data),
        persistent CD (chains persist across mini-batches), centred gradient
        (CD with centring offsets), S-DCP, and centred S-DCP.
    learning_rate : float, default=0.05
        Step size ``eta`` of every (inner) gradient step.
    batch_size : int, default=100
        Mini-batch size ``N_B``; the seed uses the full data set for its small
        problems and 200 for MNIST.
    n_iter : int, default=20
        Number of epochs (passes over the training data).
    n_gibbs_steps : int, default=1
        Gibbs steps per gradient estimate: ``K`` for 'cd', 'pcd' and 'cg';
        ``K'`` (per inner step) for 'sdcp' and 'csdcp'.
    n_inner_steps : int or None, default=None
        Inner gradient steps ``d`` per mini-batch for 'sdcp' and 'csdcp';
        ``None`` means 3. Setting it for another solver warns (it has no
        effect there).
    centering_rate_visible : float or None, default=None
        Sliding factor ``nu_mu`` of the visible offsets ``mu`` (exponential
        moving average of the data mean) for 'cg' and 'csdcp'; ``None`` means
        the seed's 0.01.
    centering_rate_hidden : float or None, default=None
        Sliding factor ``nu_lambda`` of the hidden offsets ``lambda``;
        ``None`` means 0.01.
    momentum : float, default=0.0
        Momentum of the parameter updates (off in the seed's protocol).
    weight_decay : float, default=0.0
        L2 penalty on the weights, added to the weight gradient as
        ``-weight_decay * W`` (off in the seed's protocol).
    init : fitted RBM estimator or None, default=None
        ``None`` uses the seed's initialisation: weights ``N(0, 0.01^2)``,
        hidden biases 0, visible biases ``logit`` of the training-data mean
        (the base rate). A fitted RBM-family estimator (for instance a
        :class:`FrankWolfeRBM`) starts from its parameters instead; it must
        have ``n_components`` hidden units and the data's number of features.
    validation_fraction : float or None, default=None
        Fraction of the training data held out to monitor the fit (verbose
        output) and for early stopping. ``None`` holds nothing out unless
        ``early_stopping=True``, which then uses 0.1. Ignored when ``fit`` is
        given held-out data of your own (``X_val``).
    early_stopping : bool, default=False
        Stop when the held-out log-likelihood (computed as ``score`` computes
        it: exact or AIS) has not improved by ``tol`` for ``n_iter_no_change``
        epochs, and keep the best parameters seen. With AIS this costs one
        AIS run per epoch.
    n_iter_no_change : int, default=5
        Patience of early stopping, in epochs.
    tol : float, default=1e-4
        Minimum improvement of the held-out mean log-likelihood.
    score_method : {'auto', 'exact', 'ais'}, default='auto'
        How ``score`` obtains ``log Z``: exact enumeration of the smaller
        layer, AIS, or exact while the smaller layer has at most 20 units.
    ais_n_chains : int, default=100
        AIS chains (the seeds' value).
    ais_betas : int, {'linear', 'three-segment'} or array-like, default=1000
        AIS temperatures. The default keeps ``score`` to seconds on
        MNIST-sized models; ``'linear'`` is the DCP seed's 10,000 and
        ``'three-segment'`` the Frank-Wolfe seed's 14,500.
    verbose : int, default=0
        Print one line per epoch: time and the training (and held-out)
        log-likelihood when enumeration is cheap, otherwise the free-energy
        gap between held-out and training data.
    random_state : int, RandomState instance or None, default=None
        Seed of the initial weights, the shuffling, the Gibbs chains and the
        AIS chains. The same value gives bit-identical parameters.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Weight matrix ``W``.
    intercept_hidden_ : ndarray of shape (n_components,)
        Hidden biases ``c`` of the equivalent uncentred RBM.
    intercept_visible_ : ndarray of shape (n_features,)
        Visible biases ``b`` of the equivalent uncentred RBM.
    offset_visible_ : ndarray of shape (n_features,)
        Centring offsets ``mu`` (zeros for uncentred solvers).
    offset_hidden_ : ndarray of shape (n_components,)
        Centring offsets ``lambda`` (zeros for uncentred solvers).
    base_rate_bias_ : ndarray of shape (n_features,)
        ``logit`` of the clipped training-data mean: the AIS base model.
    n_iter_ : int
        Epochs run.
    validation_scores_ : list of float or None
        Held-out mean log-likelihood after each epoch, when early stopping.
    best_validation_score_ : float or None
        Best of ``validation_scores_``.
    random_state_ : RandomState
        Stream used by :meth:`gibbs`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    sklearn.neural_network.BernoulliRBM : PCD-1 RBM scored by pseudo-likelihood.

    References
    ----------
    V. Upadhya and P. S. Sastry. Learning RBM with a DC programming approach.
    ACML 2017.

    J. Melchior, A. Fischer and L. Wiskott. How to center deep Boltzmann
    machines. JMLR 17(99), 2016.

    Examples
    --------
    >>> from sklearn_rbm import DCPBernoulliRBM
    >>> from sklearn_rbm.datasets import make_bars_and_stripes
    >>> X = make_bars_and_stripes()
    >>> rbm = DCPBernoulliRBM(n_components=4, solver='csdcp', n_gibbs_steps=4,
    ...                       learning_rate=0.3, batch_size=14, n_iter=200,
    ...                       random_state=0).fit(X)
    >>> rbm.transform(X).shape
    (14, 4)
    >>> bool(rbm.score(X) > -9 * np.log(2))  # better than the uniform model
    True
    """

    _parameter_constraints: dict = {
        **BaseBinaryRBM._parameter_constraints,
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "solver": [StrOptions(set(_SOLVERS))],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_gibbs_steps": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_inner_steps": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "centering_rate_visible": [Interval(numbers.Real, 0, 1, closed="both"), None],
        "centering_rate_hidden": [Interval(numbers.Real, 0, 1, closed="both"), None],
        "momentum": [Interval(numbers.Real, 0, 1, closed="left")],
        "weight_decay": [Interval(numbers.Real, 0, None, closed="left")],
        "init": [HasMethods(["transform"]), None],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "early_stopping": ["boolean"],
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        n_components=256,
        *,
        solver="sdcp",
        learning_rate=0.05,
        batch_size=100,
        n_iter=20,
        n_gibbs_steps=1,
        n_inner_steps=None,
        centering_rate_visible=None,
        centering_rate_hidden=None,
        momentum=0.0,
        weight_decay=0.0,
        init=None,
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
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.n_gibbs_steps = n_gibbs_steps
        self.n_inner_steps = n_inner_steps
        self.centering_rate_visible = centering_rate_visible
        self.centering_rate_hidden = centering_rate_hidden
        self.momentum = momentum
        self.weight_decay = weight_decay
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

    # ------------------------------------------------------------- settings
    def _solver_settings(self):
        """Resolve the solver-dependent defaults; warn about unused settings."""
        spec = _SOLVERS[self.solver]
        unused = []
        if not spec.inner_steps and self.n_inner_steps is not None:
            unused.append("n_inner_steps")
        if not spec.centred:
            unused += [
                name
                for name in ("centering_rate_visible", "centering_rate_hidden")
                if getattr(self, name) is not None
            ]
        if unused:
            warnings.warn(
                f"solver={self.solver!r} does not use {', '.join(unused)}; "
                f"{'it is' if len(unused) == 1 else 'they are'} ignored. "
                "n_inner_steps applies to 'sdcp' and 'csdcp', the centering "
                "rates to 'cg' and 'csdcp'.",
                UserWarning,
                stacklevel=3,
            )
        n_inner = (
            (self.n_inner_steps or _DEFAULT_INNER_STEPS) if spec.inner_steps else 1
        )
        if spec.centred:
            nu_mu = _default(self.centering_rate_visible, _DEFAULT_CENTERING_RATE)
            nu_lam = _default(self.centering_rate_hidden, _DEFAULT_CENTERING_RATE)
        else:
            nu_mu = nu_lam = 0.0
        return spec, n_inner, nu_mu, nu_lam

    # -------------------------------------------------------- initialisation
    def _initialise(self, X, rs):
        """The seed's initialisation, or a copy of ``init``'s parameters."""
        n_features, dtype = X.shape[1], X.dtype
        spec = _SOLVERS[self.solver]
        self.base_rate_bias_ = base_rate_bias(X)
        if self.init is None:
            W = rs.normal(0.0, 0.01, size=(self.n_components, n_features)).astype(dtype)
            b = self.base_rate_bias_.astype(dtype)
            c = np.zeros(self.n_components, dtype=dtype)
        else:
            W, b, c = _parameters_of(self.init, n_features, self.n_components, dtype)
        # Offsets start at the data mean and 1/2 (the seed); the centred biases
        # are chosen so that the model is exactly (W, b, c).
        mu = (
            np.asarray(X.mean(axis=0), dtype=dtype).ravel()
            if spec.centred
            else np.zeros(n_features, dtype)
        )
        lam = np.full(self.n_components, 0.5 if spec.centred else 0.0, dtype=dtype)
        self.offset_visible_, self.offset_hidden_ = mu, lam
        self._centred_visible_bias = b + lam @ W
        self._centred_hidden_bias = c + W @ mu
        self._velocity = (np.zeros_like(W), np.zeros_like(b), np.zeros_like(c))
        self._chain_hidden = np.zeros((self.batch_size, self.n_components), dtype=dtype)
        self._kernel_rng = kernel_rng(rs)
        self._shuffle_rs = rs  # continues the shuffling in partial_fit
        self._ais_seed = int(rs.randint(np.iinfo(np.int32).max))
        self.random_state_ = check_random_state(rs.randint(np.iinfo(np.int32).max))
        self.n_iter_ = 0
        self._publish(W)

    def _publish(self, W):
        """Expose the uncentred RBM equivalent to the centred training state."""
        self._set_fitted_parameters(
            W,
            self._centred_visible_bias - self.offset_hidden_ @ W,
            self._centred_hidden_bias - W @ self.offset_visible_,
        )

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, X_val=None):
        """Fit the RBM to ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data: binary, or values in [0, 1] read as probabilities
            (as scikit-learn's BernoulliRBM accepts).
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
        self : DCPBernoulliRBM
            The fitted estimator.
        """
        X = validate_data(self, X, accept_sparse="csr", dtype=_FLOAT_DTYPES)
        settings = self._solver_settings()
        rs = check_random_state(self.random_state)
        X_train, X_val = self._held_out(
            X, X_val, rs, default_fraction=0.1 if self.early_stopping else None
        )
        self._initialise(X_train, rs)
        self.validation_scores_ = [] if self.early_stopping else None
        self.best_validation_score_ = None
        self._run_epochs(X_train, X_val, self.n_iter, settings, rs)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """One epoch over ``X`` in mini-batches, continuing chains and offsets.

        The first call initialises the model from ``X`` (weights, base rate,
        offsets); later calls continue from the current state, including the
        persistent chains of 'pcd' and the centring offsets.

        Returns
        -------
        self : DCPBernoulliRBM
        """
        first_call = not hasattr(self, "components_")
        X = validate_data(
            self, X, accept_sparse="csr", dtype=_FLOAT_DTYPES, reset=first_call
        )
        settings = self._solver_settings()
        if first_call:
            self._initialise(X, check_random_state(self.random_state))
            self.validation_scores_ = None
            self.best_validation_score_ = None
        X = X.astype(self.components_.dtype, copy=False)
        self._run_epochs(X, None, 1, settings, self._shuffle_rs)
        return self

    def _run_epochs(self, X, X_val, n_epochs, settings, rs):
        n_hidden, n_visible = self.components_.shape
        with blas_threads_for(self.batch_size * n_hidden * n_visible):
            self._epochs(X, X_val, n_epochs, settings, rs)

    def _epochs(self, X, X_val, n_epochs, settings, rs):
        spec, n_inner, nu_mu, nu_lam = settings
        W = self.components_
        b, c = self._centred_visible_bias, self._centred_hidden_bias
        mu, lam = self.offset_visible_, self.offset_hidden_
        vel_W, vel_b, vel_c = self._velocity
        data_term = np.empty_like(W)  # kernel scratch, once per fit
        best, no_improvement = None, 0
        n_samples = X.shape[0]
        for _ in range(n_epochs):
            start = time.perf_counter()
            saved = _snapshot(self)
            order = rs.permutation(n_samples)
            for batch in gen_batches(n_samples, self.batch_size):
                V = _dense_rows(X, order[batch])
                dcp_minibatch_update(
                    V, W, b, c, mu, lam, nu_mu, nu_lam, self._chain_hidden,
                    spec.persistent, n_inner, self.n_gibbs_steps,
                    float(self.learning_rate), float(self.momentum),
                    float(self.weight_decay), vel_W, vel_b, vel_c, data_term,
                    self._kernel_rng,
                )  # fmt: skip
            self._check_divergence(W, b, c, saved)
            self.n_iter_ += 1
            self._publish(W)
            if self.verbose:
                self._report_epoch(X, X_val, time.perf_counter() - start)
            if self.early_stopping and X_val is not None:
                score = self.score(X_val)
                self.validation_scores_.append(score)
                if best is None or score > best[0] + self.tol:
                    best, no_improvement = (score, _snapshot(self)), 0
                else:
                    no_improvement += 1
                if no_improvement >= self.n_iter_no_change:
                    if self.verbose:
                        print(
                            "Early stopping: no improvement for "
                            f"{no_improvement} epochs."
                        )
                    break
        if best is not None:
            self.best_validation_score_ = best[0]
            _restore(self, best[1])

    def _check_divergence(self, W, b, c, saved):
        problem = divergence(W, b, c)
        if problem is None:
            return
        _restore(self, saved)
        raise FloatingPointError(
            f"Training diverged in epoch {self.n_iter_ + 1}: the parameters "
            f"became {problem} with learning_rate={self.learning_rate:g}. "
            "Use a smaller learning_rate (and momentum). The parameters of the "
            "last finite epoch were kept."
        )

    def _report_epoch(self, X, X_val, seconds):
        message = f"[{type(self).__name__}] epoch {self.n_iter_}, {seconds:.2f} s"
        W = self.components_
        if 2 ** min(W.shape) * max(W.shape) <= _CHEAP_ENUMERATION:
            log_z = log_partition_exact(
                W, self.intercept_visible_, self.intercept_hidden_
            )
            message += f", train log-likelihood {self._mean_log_p(X, log_z):.4f}"
            if X_val is not None:
                message += f", held-out {self._mean_log_p(X_val, log_z):.4f}"
        elif X_val is not None:
            gap = self._mean_free_energy(X_val) - self._mean_free_energy(
                X[: X_val.shape[0]]
            )
            message += f", free-energy gap (held-out - train) {gap:.4f}"
        else:
            message += f", mean free energy {self._mean_free_energy(X):.4f}"
        print(message)

    def _mean_free_energy(self, X):
        return float(
            np.mean(
                free_energy(
                    X, self.components_, self.intercept_visible_, self.intercept_hidden_
                )
            )
        )

    def _mean_log_p(self, X, log_z):
        return -self._mean_free_energy(X) - log_z


def _default(value, default):
    return default if value is None else value


def _dense_rows(X, rows):
    """Rows of ``X`` as a C-contiguous dense array (sparse batches are densified)."""
    batch = X[rows]
    if sp.issparse(batch):
        return batch.toarray()
    return np.ascontiguousarray(batch)


def _parameters_of(estimator, n_features, n_components, dtype):
    """Copies of a fitted RBM estimator's ``(W, b, c)`` for a warm start."""
    check_is_fitted(estimator, "components_")
    W = np.array(estimator.components_, dtype=dtype)
    if W.shape[1] != n_features:
        raise ValueError(
            f"init was fitted on {W.shape[1]} features but X has {n_features}; "
            "a warm start needs the same visible units."
        )
    if W.shape[0] != n_components:
        raise ValueError(
            f"init has {W.shape[0]} hidden units but n_components={n_components}; "
            f"pass n_components={W.shape[0]}."
        )
    b = np.array(estimator.intercept_visible_, dtype=dtype)
    c = np.array(estimator.intercept_hidden_, dtype=dtype)
    return W, b, c


def _snapshot(rbm):
    """Copies of the training state, to restore after divergence or early stopping."""
    return {
        name: getattr(rbm, name).copy()
        for name in (
            "components_",
            "_centred_visible_bias",
            "_centred_hidden_bias",
            "offset_visible_",
            "offset_hidden_",
        )
    }


def _restore(rbm, snapshot):
    for name, value in snapshot.items():
        getattr(rbm, name)[...] = value
    rbm._publish(rbm.components_)
