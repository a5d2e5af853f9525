"""FrankWolfeRBM: a binary RBM grown one hidden unit at a time by Frank-Wolfe
(Ping, Liu & Ihler, "Learning Infinite RBMs with Frank-Wolfe", NIPS 2016).

This module holds the scikit-learn surface (hyperparameters, ``fit``,
``submodel``, ``fine_tune``); the growth itself, Algorithm 1 with the
held-out choice of the size, is in ``_frank_wolfe/growth.py`` and returns a
result that ``fit`` installs.
"""

import copy
import numbers
from functools import partial

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._core.divergence import DivergenceError
from .._core.fit_context import fit_context
from .._core.sklearn_compat import HasMethods, Interval, StrOptions
from .._core.utils import blas_threads_for, child_seed
from .._rbm.base import BaseBinaryRBM, check_rbm_memory
from .._rbm.layers.bernoulli import base_rate_bias as _base_rate_bias
from .growth import Growth

__all__ = ["FrankWolfeRBM"]


class FrankWolfeRBM(BaseBinaryRBM):
    """Binary RBM grown one hidden unit at a time by Frank-Wolfe.

    Ping, Liu & Ihler (2016) relax the RBM to a model with a distribution
    ``q(w)`` over hidden-unit weights,
    ``log p(v) = alpha E_q[softplus(w^T [v, 1])] + b^T v - log Z``, whose
    penalised likelihood is concave in ``q`` (their Eqs. (5)-(6)). Frank-Wolfe
    with step ``1/t`` adds one point mass per step, and with ``alpha_t = t``
    the model after ``t`` steps is exactly an RBM with the ``t`` units found
    so far. Each step (their Algorithm 1):

    1. advances ``n_samples_per_step`` persistent Gibbs chains
       ``n_gibbs_steps`` steps under the current model;
    2. solves the linear sub-problem (their Eq. (9)) on those fixed samples,
       ``w*_t = argmin_w alpha/2 |w|^2 + mean_s softplus(w^T v~_s)
       - mean_n softplus(w^T v~_n)``, by L-BFGS with the closed-form gradient
       (``n_restarts`` random starts, the best kept);
    3. inserts ``w*_t`` as hidden unit ``t``;
    4. makes ``n_bias_steps`` steps ``b += visible_learning_rate *
       (mean(data) - mean(chains))`` (their Eq. (10)), advancing the chains one Gibbs
       step before each.

    Because the model after every step is an ordinary RBM, the sequence of
    models of increasing size comes for free, and the size is chosen on
    held-out data as the model grows (see ``early_stopping``).

    Read more in the :ref:`User Guide <frank_wolfe_user_guide>`.

    Parameters
    ----------
    max_components : int, default=100
        Largest number of hidden units, Ping, Liu & Ihler's ``T``.
    alpha : float, default=0.1
        L2 penalty of each unit's weights (hidden bias included), Ping, Liu
        & Ihler's ``lambda`` (their Eqs. (6) and (9)). It keeps the
        sub-problem bounded, so it must be positive; they select it from
        {1, 0.5, 0.1, 0.05, 0.01}.
    visible_learning_rate : float, default=0.01
        Step size ``eta`` of the visible-bias updates (their Eq. (10)),
        selected from {0.05, 0.02, 0.01, 0.005} in the paper.
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
        inserts it whole, the literal ``alpha_t = t``. ``'line-search'``
        inserts ``s w*_t`` with ``s`` in [0, 1] maximising a sample estimate
        of the training log-likelihood change; the model is still an
        ordinary RBM (Ping, Liu & Ihler's Eq. (12) with ``c_t = s``). A unit
        whose insertion lowers that estimate even shrunk 64-fold is not
        inserted. The user guide explains why and what it buys.
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
        ("adding hidden units", Ping, Liu & Ihler, Sec. 3.2).
        ``max_components`` must exceed ``k``.
    validation_fraction : float or None, default=0.1
        Fraction of the training data held out to choose the number of units.
        ``None`` holds nothing out and keeps every unit. Ignored when ``fit``
        is given held-out data of your own (``X_val``).
    early_stopping : bool, default=True
        Stop growing once the held-out criterion has not improved for
        ``n_iter_no_change`` consecutive evaluations, and keep the best model.
        An evaluation improves on the best one when it beats it by more than
        ``tol`` and by more than 5% of the improvement since the start: the
        gain of each unit shrinks as the model grows, so growth stops where
        the held-out curve flattens (on binarised digits it keeps about 50
        units instead of 100). The criterion is the held-out log-likelihood every
        ``score_every`` units when ``score_every`` is set; otherwise the
        free-energy estimate of the cumulative held-out log-likelihood change
        (see the user guide). With ``False`` the model grows to
        ``max_components`` and the best size is still selected when there are
        held-out data.
    n_iter_no_change : int, default=10
        Patience of early stopping, in evaluations of the criterion (units,
        or likelihood evaluations with ``score_every``).
    tol : float, default=0.01
        Smallest improvement of the held-out criterion, in nats per sample,
        that counts for early stopping (the relative threshold above applies
        too; the larger one counts).
    score_every : int or None, default=None
        Compute the held-out log-likelihood (as ``score`` does: exact or AIS)
        every ``score_every`` units (Ping, Liu & Ihler's ``k``), and choose the size by
        it. ``None`` computes none.
    score_method : {'auto', 'exact', 'ais'}, default='auto'
        How ``score`` obtains ``log Z``: exact enumeration of the smaller
        layer, AIS, or exact while the smaller layer has at most 20 units.
    ais_n_chains : int, default=100
        AIS chains (Ping, Liu & Ihler use 100).
    ais_betas : int, {'linear', 'three-segment'} or array-like, default=1000
        AIS temperatures; ``'three-segment'`` is the 14,500 of Salakhutdinov
        & Murray (2008) that Ping, Liu & Ihler use.
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
        after the step), ``'objective'`` (sub-problem value at ``w*_t``;
        below 0 when the unit improves the linearised likelihood),
        ``'free_energy_gap'`` (mean held-out minus mean training free energy,
        ``log Z`` cancels; NaN without held-out data), ``'validation_gain'``
        (the free-energy estimate of the held-out log-likelihood change),
        ``'validation_log_likelihood'`` (NaN where not computed) and
        ``'seconds'`` (the time of the step).
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
    DCPBernoulliRBM : Fixed-size RBM trained by CD, PCD or S-DCP; use
        :meth:`fine_tune` to train the grown model further with it.

    Notes
    -----
    Three departures from Algorithm 1 as printed, each explained with
    measurements in the user guide: the growth starts from the base-rate
    model with no unit (not from one random unit); units are scaled by a
    line search and backtracking (``unit_scale``), with the running
    likelihood estimate capped by ``Z >= max_n p~(v_n)``; and the size is
    chosen by a threshold-free held-out rule. ``partial_fit`` is absent on
    purpose: a step on a new batch would be a step on another objective;
    grow a fitted model further with ``init``.

    References
    ----------
    W. Ping, Q. Liu and A. Ihler. Learning infinite RBMs with Frank-Wolfe.
    NIPS 2016.

    Examples
    --------
    >>> from sklearn_rbm import FrankWolfeRBM
    >>> from sklearn_rbm.datasets import load_binary_digits
    >>> X, _ = load_binary_digits()
    >>> fw = FrankWolfeRBM(max_components=10, n_samples_per_step=100,
    ...                    validation_fraction=None, random_state=0).fit(X)
    >>> fw.n_components_, fw.transform(X).shape
    (10, (1797, 10))
    >>> bool(fw.history_['objective'].max() < 0)  # every unit improved it
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
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
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
        tol=0.01,
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
        self.tol = tol
        self.score_every = score_every
        self.score_method = score_method
        self.ais_n_chains = ais_n_chains
        self.ais_betas = ais_betas
        self.verbose = verbose
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    @fit_context(prefer_skip_nested_validation=True)
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
        X = self._validate_training_data(X)
        rs = check_random_state(self.random_state)
        X_train, X_val = self._held_out(X, X_val, rs)
        check_rbm_memory(
            ("max_components", self.max_components), X.shape[1],
            ("n_samples_per_step", self.n_samples_per_step), 8,
        )  # fmt: skip
        # The sub-problem reads every training row at every L-BFGS iteration:
        # dense float64, once.
        X_train = X_train.toarray() if sp.issparse(X_train) else X_train
        X_train = np.asarray(X_train, dtype=np.float64)
        self.base_rate_bias_ = _base_rate_bias(X_train)
        self._ais_seed = child_seed(rs)
        self.random_state_ = check_random_state(child_seed(rs))
        growth = Growth(
            self, X_train, X_val, rs, base_rate=self.base_rate_bias_,
            score_model=partial(self._held_out_log_likelihood, X_val),
        )  # fmt: skip
        n_visible = X.shape[1]
        with blas_threads_for(
            self.n_samples_per_step * self.max_components * n_visible
        ):
            result = growth.run()
        self._install(result, X.dtype)
        if result.divergence is not None:
            raise DivergenceError(result.divergence)
        return self

    def _install(self, result, dtype):
        """Publish the selected model of a growth and keep its whole path."""
        self._path = (
            result.components.astype(dtype),
            result.hidden_bias.astype(dtype),
            result.visible_biases.astype(dtype),
            result.initial_size,
        )
        self._set_path_model(result.selected)
        self.n_iter_ = result.n_steps
        self.history_ = result.history

    def _set_path_model(self, n_components):
        W, c, biases, initial = self._path
        self._set_fitted_parameters(
            W[:n_components].copy(),
            biases[n_components - initial].copy(),
            c[:n_components].copy(),
        )
        self.n_components_ = n_components

    def _held_out_log_likelihood(self, X_val, W, b, c):
        """Mean log-likelihood of ``X_val`` under ``(W, b, c)``, as ``score``
        computes it (for ``score_every``); ``self`` is not modified."""
        model = copy.copy(self)
        model._set_fitted_parameters(W, b, c)
        return model.score(X_val)

    # ----------------------------------------------------------- fine-tuning
    def submodel(self, n_components):
        """The RBM after ``n_components`` units of the fitted path.

        ``fit`` keeps every unit it inserted and the visible biases after each
        step, so the model of any size it reached (not only the selected one)
        is available, for instance to score each size on test data as Ping,
        Liu & Ihler's Fig. 1 does.

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
        W, _, _, initial = self._path
        if not (
            isinstance(n_components, numbers.Integral)
            and initial <= n_components <= W.shape[0]
        ):
            raise ValueError(
                f"n_components={n_components!r} was not reached by fit; sizes "
                f"{initial} to {W.shape[0]} (integers) are available."
            )
        sub = copy.copy(self)
        sub._set_path_model(int(n_components))
        return sub

    def fine_tune(self, X, **params):
        """Train the selected model further by CD.

        This is "CD (FW init.)" of Ping, Liu & Ihler (2016), equivalent to
        ``DCPBernoulliRBM(n_components=self.n_components_, solver='cd',
        init=self, **params).fit(X)``; ``params`` are any other
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
        from .._rbm.bernoulli import DCPBernoulliRBM

        check_is_fitted(self, "components_")
        if "n_components" in params:
            raise ValueError(
                "fine_tune takes no n_components: it trains the selected model, "
                f"which has n_components_={self.n_components_} hidden units; to "
                "fine-tune the model of another size on the path, call "
                "submodel(size).fine_tune(X, ...)."
            )
        settings = {"solver": "cd", **params}
        rbm = DCPBernoulliRBM(n_components=self.n_components_, init=self, **settings)
        return rbm.fit(X)
