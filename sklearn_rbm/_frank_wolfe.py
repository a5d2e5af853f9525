"""FrankWolfeRBM: a binary RBM grown one hidden unit at a time by Frank-Wolfe
(Ping, Liu & Ihler, "Learning Infinite RBMs with Frank-Wolfe", NIPS 2016).

The seed's Algorithm 1, with the symbols of the paper:

* each hidden unit is one vector ``w = [W_j, c_j]`` acting on the visible
  vector with a constant 1 appended (the hidden bias folded in);
* step ``t`` draws ``S`` samples from the current model (persistent Gibbs
  chains), solves the single-unit sub-problem (Eq. 9) on those fixed samples
  with scipy's L-BFGS, inserts the unit with ``alpha_t = t`` so that the model
  stays an ordinary RBM with ``t`` units (Proposition 3.1), and moves the
  visible bias ``b`` by a few stochastic gradient steps (Eq. 10);
* the number of units is chosen on held-out data while the model grows.

This module holds the scikit-learn surface and the outer loop; the
element-wise pass of the sub-problem is in ``_kernels/frank_wolfe.py``.
"""

import copy
import numbers
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize, minimize_scalar
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import _FLOAT_DTYPES, BaseBinaryRBM
from ._kernels.frank_wolfe import signed_softplus_sum_, softplus_rows
from ._kernels.gibbs import gibbs_sample_visible
from ._sklearn_compat import HasMethods, Interval, StrOptions, _fit_context
from ._utils import blas_threads_for, divergence, kernel_rng
from .likelihood import MAX_EXACT_UNITS, base_rate_bias, log_partition_exact

__all__ = ["FrankWolfeRBM"]

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


class FrankWolfeRBM(BaseBinaryRBM):
    """Binary RBM grown one hidden unit at a time by Frank-Wolfe.

    Ping, Liu & Ihler (2016) relax the RBM to a model with a distribution
    ``q(w)`` over hidden-unit weights,
    ``log p(v) = alpha E_q[softplus(w^T [v, 1])] + b^T v - log Z``, whose
    penalised likelihood is concave in ``q`` (their Eqs. 5-6). Frank-Wolfe
    with step ``1/t`` adds one point mass per step, and with ``alpha_t = t``
    the model after ``t`` steps is exactly an RBM with the ``t`` units found
    so far. Each step (their Algorithm 1):

    1. advances ``n_samples_per_step`` persistent Gibbs chains
       ``n_gibbs_steps`` steps under the current model;
    2. solves the linear sub-problem (Eq. 9) on those fixed samples,
       ``w*_t = argmin_w alpha/2 |w|^2 + mean_s softplus(w^T v~_s)
       - mean_n softplus(w^T v~_n)``, by L-BFGS with the closed-form gradient
       (``n_restarts`` random starts, the best kept);
    3. inserts ``w*_t`` as hidden unit ``t``;
    4. makes ``n_bias_steps`` steps ``b += visible_learning_rate *
       (mean(data) - mean(chains))`` (Eq. 10), advancing the chains one Gibbs
       step before each.

    Because the model after every step is an ordinary RBM, the sequence of
    models of increasing size comes for free, and the size is chosen on
    held-out data as the model grows (see ``early_stopping``).

    Read more in the :ref:`User Guide <frank_wolfe_user_guide>`.

    Parameters
    ----------
    max_components : int, default=100
        Largest number of hidden units, the seed's ``T``.
    alpha : float, default=0.1
        L2 penalty of each unit's weights (hidden bias included), the seed's
        ``lambda`` in Eqs. 6 and 9. It keeps the sub-problem bounded, so it
        must be positive; the seed selects it from {1, 0.5, 0.1, 0.05, 0.01}.
    visible_learning_rate : float, default=0.01
        Step size ``eta`` of the visible-bias updates (Eq. 10); the seed
        selects it from {0.05, 0.02, 0.01, 0.005}.
    n_samples_per_step : int, default=500
        Number ``S`` of persistent Gibbs chains, whose states are the model
        samples of the sub-problem and of the bias gradient.
    n_gibbs_steps : int, default=5
        Gibbs steps of every chain before each sub-problem, and again before
        the line search of ``unit_scale='line-search'`` (which needs samples
        the unit was not fitted to).
    n_bias_steps : int, default=10
        Visible-bias gradient steps after each inserted unit (the inner
        ``repeat`` loop of Algorithm 1), one Gibbs step of the chains each.
    n_restarts : int, default=1
        Random starting points of each sub-problem (it is not convex); the
        solution with the lowest objective is inserted.
    unit_scale : {'line-search', 'one'}, default='line-search'
        How much of the sub-problem's solution ``w*_t`` is inserted. ``'one'``
        inserts it whole, the seed's ``alpha_t = t``. ``'line-search'``
        inserts ``s w*_t`` with ``s`` in [0, 1] maximising a sample estimate
        of the training log-likelihood change (see the Notes); the model is
        still an ordinary RBM (the seed's Eq. 12 with ``c_t = s``). A unit
        whose insertion lowers that estimate even shrunk 64-fold is not
        inserted.
    lbfgs_max_iter : int, default=100
        L-BFGS iterations per sub-problem start. A start that stops without
        converging raises a ``ConvergenceWarning``; its unit is still inserted
        when it improves the objective (value below 0, the value of ``w = 0``).
    lbfgs_tol : float, default=1e-5
        L-BFGS tolerance on the projected gradient (scipy's ``gtol``).
    init : fitted RBM estimator or None, default=None
        ``None`` starts from the independent model with the data's base rate
        (no hidden units). A fitted RBM-family estimator (for instance a
        :class:`DCPBernoulliRBM` trained by CD) is grown further instead: its
        units become ``w*_1 ... w*_k`` and the steps continue at ``t = k + 1``
        (the seed's "adding hidden units", Sec. 3.2). ``max_components`` must
        exceed ``k``.
    validation_fraction : float or None, default=0.1
        Fraction of the training data held out to choose the number of units.
        ``None`` holds nothing out and keeps every unit. Ignored when ``fit``
        is given held-out data of your own (``X_val``).
    early_stopping : bool, default=True
        Stop growing once the held-out criterion has not improved for
        ``n_iter_no_change`` consecutive evaluations, and keep the best
        model. The criterion is the held-out log-likelihood every
        ``score_every`` units when ``score_every`` is set; otherwise the
        free-energy estimate of the held-out log-likelihood change (see the
        Notes). With ``False`` the model grows to ``max_components`` and the
        best size is still selected when there is held-out data.
    n_iter_no_change : int, default=10
        Patience of early stopping, in evaluations of the criterion (units,
        or likelihood evaluations with ``score_every``).
    score_every : int or None, default=None
        Compute the held-out log-likelihood (as ``score`` does: exact or AIS)
        every ``score_every`` units, the seed's ``k``, and choose the size by
        it. ``None`` computes none.
    score_method : {'auto', 'exact', 'ais'}, default='auto'
        How ``score`` obtains ``log Z``: exact enumeration of the smaller
        layer, AIS, or exact while the smaller layer has at most 20 units.
    ais_n_chains : int, default=100
        AIS chains (the seeds' value).
    ais_betas : int, {'linear', 'three-segment'} or array-like, default=1000
        AIS temperatures; ``'three-segment'`` is the seed's 14,500.
    verbose : int, default=0
        Print one line per inserted unit.
    random_state : int, RandomState instance or None, default=None
        Seed of the held-out split, the chains, the sub-problem starts and the
        AIS chains. The same value gives bit-identical parameters.

    Attributes
    ----------
    components_ : ndarray of shape (`n_components_`, n_features)
        Weights ``W`` of the selected model, one row per unit in the order
        they were inserted.
    intercept_hidden_ : ndarray of shape (`n_components_`,)
        Hidden biases ``c`` (the last coordinate of each ``w*_t``).
    intercept_visible_ : ndarray of shape (n_features,)
        Visible biases ``b`` of the selected model.
    n_components_ : int
        Number of hidden units of the selected model.
    history_ : dict of ndarray
        One entry per inserted unit, for plotting: ``'n_components'`` (size
        after the step), ``'objective'`` (sub-problem value at ``w*_t``,
        Eq. 9; below 0 when the unit improves the linearised likelihood),
        ``'free_energy_gap'`` (mean held-out minus mean training free energy,
        ``log Z`` cancels; NaN without held-out data), ``'validation_gain'``
        (the free-energy estimate of the held-out log-likelihood change, see
        the Notes), ``'validation_log_likelihood'`` (NaN where not computed)
        and ``'time'`` (seconds since the start of ``fit``).
    n_iter_ : int
        Frank-Wolfe steps run (units inserted, selected or not).
    base_rate_bias_ : ndarray of shape (n_features,)
        ``logit`` of the clipped training-data mean: the starting visible
        bias and the AIS base model.
    random_state_ : RandomState
        Stream used by :meth:`gibbs`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    DCPBernoulliRBM : fixed-size RBM trained by CD, PCD or S-DCP; use
        :meth:`fine_tune` to train the grown model further with it.

    Notes
    -----
    Deviations from Algorithm 1 as printed, each for a stated reason:

    * The seed starts from ``b_0 = 0`` and one random unit with
      ``alpha_0 = 1``, a unit that the first step discards (``q_1`` is the
      point mass at ``w*_1``). We start from the model with no unit and the
      base-rate biases, the best independent model: the first samples are
      exact and the random unit serves no purpose.
    * The printed sub-problem (Eq. 9) omits the factor ``alpha_t`` of the
      functional gradient (Eq. 8); we solve Eq. 9 as printed, so ``alpha``
      is the penalty of one unit.
    * Unit scale. With ``alpha_t = t`` every unit enters with weight one, but
      ``w*_t`` maximises the *linearised* likelihood, and a full unit can
      overshoot: on binarised digits (``alpha=0.1``) the exact likelihood
      fell from the second unit on (-24.3 to -34.6 nats in five units), on
      bars & stripes (``alpha=0.01``) from -10 to -126. The default
      ``unit_scale='line-search'`` therefore inserts ``s w*_t`` (the seed's
      Eq. 12 with ``c_t = s``, still an ordinary RBM), ``s`` maximising the
      sample estimate of the training log-likelihood change on fresh chain
      states; if the chain states of the new model then show a loss (below),
      the step is undone and retried with ``s / 4`` (up to three times).
      A unit that still shows a loss is not inserted; after three such steps
      in a row growth stops with a ``ConvergenceWarning`` (the sub-problem's
      units are too large: a small ``alpha`` on data that the chains cannot
      reach). ``unit_scale='one'`` is the seed's literal update.
    * A unit so large that no chain reaches its active region fools the
      sample estimate of ``log Z_t / Z_{t-1}``: on 300 MNIST images with
      ``alpha=0.001`` it estimated +2,034 nats for a unit that cost 4,980,
      and six steps took the exact likelihood from -196 to tens of
      thousands below. The running estimate of the training log-likelihood
      (exact at the start when ``log Z`` can be enumerated) is therefore
      capped by ``mean_n log p~(v_n) - max_n log p~(v_n)``, a bound that
      holds because ``Z >= max_n p~(v_n)``; it binds only for such units.
    * Held-out selection. The seed monitors the gap between the mean
      training and held-out log-likelihoods (``log Z`` cancels) and stops when
      it "largely increases". To make this a rule without a threshold, each
      step's change of the held-out log-likelihood is estimated as the
      training change minus the growth of the gap. The training change is
      the exact change of the mean training "negative free energy"
      ``u(v) = softplus(w.v~) + (b_t - b_{t-1}).v`` minus
      ``log Z_t / Z_{t-1} = -log E_t[exp(-u)]``, estimated on the chain
      states after the bias steps (bounded weights, samples the unit was not
      fitted to). Its accuracy rests on the chains mixing: with 4,000 chains
      it is within 0.02 nats of exact enumeration on 9 pixels; with few,
      poorly mixing chains it overstates the gain. The size with the largest
      cumulative estimated held-out change is kept. ``score_every`` replaces
      the estimate by the held-out likelihood (exact or AIS), the seed's
      "test likelihood every 20 units".

    ``partial_fit`` is deliberately absent: a Frank-Wolfe step compares the
    model with *the* training data, so a step on a new batch would be a step
    on another objective. To grow a fitted model further, pass it as
    ``init``.

    References
    ----------
    W. Ping, Q. Liu and A. Ihler. Learning infinite RBMs with Frank-Wolfe.
    NIPS 2016.

    Examples
    --------
    >>> from sklearn_rbm._frank_wolfe import FrankWolfeRBM
    >>> from sklearn_rbm.datasets import load_binary_digits
    >>> X, _ = load_binary_digits()
    >>> fw = FrankWolfeRBM(max_components=10, n_samples_per_step=100,
    ...                    validation_fraction=None, random_state=0).fit(X)
    >>> fw.n_components_, fw.transform(X).shape
    (10, (1797, 10))
    >>> bool(fw.history_['objective'].max() < 0)  # every unit improved Eq. 9
    True
    """

    _parameter_constraints: dict = {
        **BaseBinaryRBM._parameter_constraints,
        "max_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        "visible_learning_rate": [Interval(numbers.Real, 0, None, closed="left")],
        "n_samples_per_step": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_gibbs_steps": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_bias_steps": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_restarts": [Interval(numbers.Integral, 1, None, closed="left")],
        "lbfgs_max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "lbfgs_tol": [Interval(numbers.Real, 0, None, closed="left")],
        "init": [HasMethods(["transform"]), None],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "early_stopping": ["boolean"],
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
        "score_every": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "unit_scale": [StrOptions({"one", "line-search"})],
    }

    def __init__(
        self,
        max_components=100,
        *,
        alpha=0.1,
        visible_learning_rate=0.01,
        n_samples_per_step=500,
        n_gibbs_steps=5,
        n_bias_steps=10,
        n_restarts=1,
        unit_scale="line-search",
        lbfgs_max_iter=100,
        lbfgs_tol=1e-5,
        init=None,
        validation_fraction=0.1,
        early_stopping=True,
        n_iter_no_change=10,
        score_every=None,
        score_method="auto",
        ais_n_chains=100,
        ais_betas=1000,
        verbose=0,
        random_state=None,
    ):
        self.max_components = max_components
        self.alpha = alpha
        self.visible_learning_rate = visible_learning_rate
        self.n_samples_per_step = n_samples_per_step
        self.n_gibbs_steps = n_gibbs_steps
        self.n_bias_steps = n_bias_steps
        self.n_restarts = n_restarts
        self.unit_scale = unit_scale
        self.lbfgs_max_iter = lbfgs_max_iter
        self.lbfgs_tol = lbfgs_tol
        self.init = init
        self.validation_fraction = validation_fraction
        self.early_stopping = early_stopping
        self.n_iter_no_change = n_iter_no_change
        self.score_every = score_every
        self.score_method = score_method
        self.ais_n_chains = ais_n_chains
        self.ais_betas = ais_betas
        self.verbose = verbose
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, X_val=None):
        """Grow the RBM on ``X`` and keep the size chosen on held-out data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data: binary, or values in [0, 1] read as probabilities.
            Sparse input is densified once (the sub-problem reads every row
            at every L-BFGS iteration).
        y : None
            Ignored.
        X_val : {array-like, sparse matrix} of shape (n_val, n_features), \
                default=None
            Held-out data of your own for choosing the number of units,
            used instead of holding out ``validation_fraction`` of ``X``
            (ignored when ``X_val`` is given). In a ``Pipeline``, ``X_val``
            is transformed like ``X`` with
            ``Pipeline(..., transform_input=["X_val"])``.

        Returns
        -------
        self : FrankWolfeRBM
            The fitted estimator.
        """
        X = validate_data(self, X, accept_sparse="csr", dtype=_FLOAT_DTYPES)
        rs = check_random_state(self.random_state)
        X_train, X_val = self._held_out(X, X_val, rs)
        growth = _Growth(self, X_train, X_val, rs)
        n_visible = X.shape[1]
        with blas_threads_for(
            self.n_samples_per_step * self.max_components * n_visible
        ):
            growth.run()
        growth.publish_selected(X.dtype)
        return self

    # ----------------------------------------------------------- fine-tuning
    def submodel(self, n_components):
        """The RBM after ``n_components`` units of the fitted path.

        ``fit`` keeps every unit it inserted and the visible biases after each
        step, so the model of any size it reached (not only the selected one)
        is available, for instance to score each size on test data as the
        seed's Fig. 1 does.

        Parameters
        ----------
        n_components : int
            A size reached during ``fit``: from the initial size (0, or the
            units of ``init``) to the initial size plus ``n_iter_``.

        Returns
        -------
        rbm : FrankWolfeRBM
            A fitted copy of ``self`` with that many units (``self`` is not
            modified).
        """
        check_is_fitted(self, "components_")
        W, c, biases, initial = self._path
        if not initial <= n_components <= W.shape[0]:
            raise ValueError(
                f"n_components={n_components} was not reached by fit; sizes "
                f"{initial} to {W.shape[0]} are available."
            )
        sub = copy.copy(self)
        sub._set_fitted_parameters(
            W[:n_components].copy(),
            biases[n_components - initial].copy(),
            c[:n_components].copy(),
        )
        sub.n_components_ = n_components
        return sub

    def fine_tune(self, X, **params):
        """Train the selected model further by CD: the seed's "CD (FW init.)".

        Equivalent to ``DCPBernoulliRBM(n_components=self.n_components_,
        solver='cd', init=self, **params).fit(X)``; ``params`` are any other
        :class:`DCPBernoulliRBM` hyperparameters (they may override
        ``solver``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        **params
            Hyperparameters of :class:`DCPBernoulliRBM`.

        Returns
        -------
        rbm : DCPBernoulliRBM
            The fitted, fine-tuned RBM; ``self`` is not modified.
        """
        from ._dcp import DCPBernoulliRBM

        check_is_fitted(self, "components_")
        settings = {"solver": "cd", **params}
        rbm = DCPBernoulliRBM(n_components=self.n_components_, init=self, **settings)
        return rbm.fit(X)


class _Growth:
    """The state of one ``fit``: data, chains, units so far and the history."""

    def __init__(self, rbm, X_train, X_val, rs):
        self.rbm, self.rs = rbm, rs
        self.start = time.perf_counter()
        X_train = X_train.toarray() if sp.issparse(X_train) else X_train
        X_train = np.asarray(X_train, dtype=np.float64)
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
        rbm.base_rate_bias_ = base_rate_bias(X_train)
        rbm._ais_seed = int(rs.randint(np.iinfo(np.int32).max))
        rbm.random_state_ = check_random_state(rs.randint(np.iinfo(np.int32).max))
        self.kernel_rng = kernel_rng(rs)
        if rbm.init is None:
            W = np.zeros((0, n_visible))
            c = np.zeros(0)
            b = rbm.base_rate_bias_.copy()
        else:
            W, b, c = _parameters_of(rbm.init, n_visible)
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
        self.chains = (start < expit(rbm.base_rate_bias_)).astype(np.float64)
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
        self.records = []
        self.last_gap = None if self.X_val is None else self._free_energy_gap()
        self._publish(W.shape[0])

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
        rbm = self.rbm
        stopper = _EarlyStopping(rbm, self.X_val is not None, self.initial_size)
        t, n_rejected = self.initial_size + 1, 0
        while t <= rbm.max_components:
            record = self.step(t)
            if record is None:
                if rbm.verbose:
                    print(
                        f"[FrankWolfeRBM] step {t}: no unit improves the "
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
            self.records.append(record)
            if rbm.verbose:
                _report(record)
            if stopper.update(record):
                if rbm.verbose:
                    print(
                        "[FrankWolfeRBM] early stopping: no held-out improvement "
                        f"for {rbm.n_iter_no_change} evaluations."
                    )
                break
            t += 1
        self.selected = stopper.best_size(self.W.shape[0])

    def step(self, t):
        """One Frank-Wolfe step (Algorithm 1): its record; ``None`` when no
        unit improves the sub-problem; ``_REJECTED`` when the unit lowered the
        estimated likelihood at every scale tried (nothing is inserted)."""
        rbm = self.rbm
        self._advance_chains(rbm.n_gibbs_steps)
        n_visible = self.W.shape[1]
        self.rows[self.n_train :, :n_visible] = self.chains
        w, objective = self._solve_subproblem(t)
        if w is None:
            return None
        w, scale = self._scale_unit(w)
        # The seed's literal update ('one') inserts the unit whatever follows;
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
        self.chains = gibbs_sample_visible(
            self.chains, self.W, self.b, self.c, n_steps, self.kernel_rng
        )

    # ------------------------------------------------------ the sub-problem
    def _solve_subproblem(self, t):
        """Best of ``n_restarts`` L-BFGS runs on Eq. 9; ``(None, value)`` if
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

        ``unit_scale='one'`` inserts ``w`` (``s = 1``: the seed's
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
        """Eq. 10: ``b += eta (mean(data) - mean(chains))``, one Gibbs step of
        the chains before each gradient step."""
        rbm = self.rbm
        eta = float(rbm.visible_learning_rate)
        for _ in range(rbm.n_bias_steps):
            self._advance_chains(1)
            self.b += eta * (self.data_mean - self.chains.mean(axis=0))
        problem = divergence(self.b)
        if problem is not None:
            self._publish(t - 1)
            raise FloatingPointError(
                f"Training diverged at unit {t}: the visible biases became "
                f"{problem} with visible_learning_rate="
                f"{rbm.visible_learning_rate:g}. Use a smaller "
                "visible_learning_rate. The parameters before this unit were kept."
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
            self._publish(t)
            log_likelihood = rbm.score(self.X_val)
        return {
            "n_components": t,
            "objective": objective,
            "scale": scale,
            "training_gain": gain,
            "free_energy_gap": gap,
            "validation_gain": val_gain,
            "validation_log_likelihood": log_likelihood,
            "time": time.perf_counter() - self.start,
        }

    def _free_energy_gap(self):
        """Mean held-out minus mean training free energy (``log Z`` cancels)."""
        val_mean = np.asarray(self.X_val.mean(axis=0)).ravel()
        train = -self.b @ self.data_mean - self.train_softplus.mean()
        val = -self.b @ val_mean - self.val_softplus.mean()
        return float(val - train)

    # ---------------------------------------------------------- publishing
    def _publish(self, size):
        """Install the model with the first ``size`` units in the estimator."""
        self.rbm._set_fitted_parameters(
            self.W[:size].copy(), self.biases[size - self.initial_size].copy(),
            self.c[:size].copy(),
        )  # fmt: skip

    def publish_selected(self, dtype):
        rbm = self.rbm
        self._publish(self.selected)
        rbm._set_fitted_parameters(
            rbm.components_.astype(dtype),
            rbm.intercept_visible_.astype(dtype),
            rbm.intercept_hidden_.astype(dtype),
        )
        rbm.n_components_ = self.selected
        rbm.n_iter_ = len(self.records)
        # Every unit reached and the visible bias after each step, so that
        # ``submodel`` can return the RBM of any size on the path.
        rbm._path = (
            self.W.astype(dtype),
            self.c.astype(dtype),
            np.array(self.biases, dtype=dtype),
            self.initial_size,
        )
        keys = (
            "n_components",
            "objective",
            "scale",
            "training_gain",
            "free_energy_gap",
            "validation_gain",
            "validation_log_likelihood",
            "time",
        )
        rbm.history_ = {
            key: np.array([r[key] for r in self.records], dtype=float) for key in keys
        }
        rbm.history_["n_components"] = rbm.history_["n_components"].astype(int)


class _SubProblem:
    """Eq. 9 on fixed rows: value and gradient for scipy's L-BFGS.

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
            warnings.warn(
                f"L-BFGS did not converge on the sub-problem of unit {t} "
                f"({result.message}); lbfgs_max_iter={lbfgs_max_iter}. The unit "
                "is inserted only if it improves the objective (value < 0). "
                "Increase lbfgs_max_iter or alpha.",
                ConvergenceWarning,
                stacklevel=7,  # the caller of fit, past _fit_context
            )
        if best is None or result.fun < best.fun:
            best = result
    if not np.isfinite(best.fun) or best.fun > -_MIN_IMPROVEMENT:
        return None, float(best.fun)
    return best.x, float(best.fun)


_REJECTED = object()  # what ``step`` returns for a unit it did not insert


def _warn_rejected(t, alpha):
    warnings.warn(
        f"FrankWolfeRBM stopped growing at {t - 1} hidden units: at "
        f"{_MAX_REJECTED_STEPS} steps in a row the sub-problem's unit lowered "
        "the estimated training log-likelihood even when shrunk to "
        f"{_BACKTRACK_FACTOR**_MAX_BACKTRACKS:g} of its size, so none was "
        f"inserted. Its units are too large for these data at alpha={alpha:g}; "
        "a larger alpha gives smaller ones.",
        ConvergenceWarning,
        stacklevel=5,  # the caller of fit, past _fit_context
    )


class _EarlyStopping:
    """The held-out criterion: the best size seen and when to stop growing."""

    def __init__(self, rbm, has_validation, initial_size):
        self.rbm = rbm
        self.active = has_validation
        self.use_likelihood = rbm.score_every is not None
        self.cumulative = 0.0
        # (criterion, size). The gap criterion is a change from the initial
        # model, so a warm start's own size competes at 0; a fit from
        # scratch keeps at least one unit.
        keep_initial = initial_size > 0 and not self.use_likelihood
        self.best = (0.0, initial_size) if keep_initial else (-np.inf, None)
        self.stale = 0

    def update(self, record):
        """Take one step's record; True when growing should stop."""
        if not self.active:
            return False
        if self.use_likelihood:
            value = record["validation_log_likelihood"]
            if np.isnan(value):
                return False
        else:
            self.cumulative += record["validation_gain"]
            value = self.cumulative
        if value > self.best[0]:
            self.best, self.stale = (value, record["n_components"]), 0
        else:
            self.stale += 1
        return self.rbm.early_stopping and self.stale >= self.rbm.n_iter_no_change

    def best_size(self, final_size):
        if not self.active or self.best[1] is None:
            return final_size
        return self.best[1]


def _log_mean_exp(x):
    shift = x.max()
    return shift + np.log(np.mean(np.exp(x - shift)))


def _report(record):
    message = (
        f"[FrankWolfeRBM] unit {record['n_components']}, "
        f"{record['time']:.2f} s, objective {record['objective']:.4f}"
    )
    if not np.isnan(record["free_energy_gap"]):
        message += (
            f", free-energy gap {record['free_energy_gap']:.4f}"
            f", held-out gain {record['validation_gain']:.4f}"
        )
    if not np.isnan(record["validation_log_likelihood"]):
        message += (
            f", held-out log-likelihood {record['validation_log_likelihood']:.4f}"
        )
    print(message)


def _parameters_of(estimator, n_features):
    """float64 copies of a fitted RBM estimator's ``(W, b, c)`` for growing it."""
    check_is_fitted(estimator, "components_")
    W = np.array(estimator.components_, dtype=np.float64)
    if W.ndim != 2 or W.shape[1] != n_features:
        raise ValueError(
            f"init was fitted on {W.shape[-1]} features but X has {n_features}; "
            "growing an RBM needs the same visible units."
        )
    b = np.array(estimator.intercept_visible_, dtype=np.float64)
    c = np.array(estimator.intercept_hidden_, dtype=np.float64)
    return W, b, c
