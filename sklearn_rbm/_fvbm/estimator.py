"""FVBMPseudoLikelihood: fully visible Boltzmann machines fitted by maximum
pseudo-likelihood (Nguyen & Wood 2016).

This module holds the scikit-learn surface: hyperparameters, validation, the
fitted attributes and the queries. The solvers and their table are in
``_fvbm/solvers.py``, the objective they share in ``_fvbm/objective.py``, the
existence check and the standard errors in ``_fvbm/diagnostics.py``;
simulation is public in :mod:`sklearn_rbm.datasets`.
"""

import numbers

import numpy as np
import scipy.stats
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.docstrings import sample_docstring
from .._core.fit_context import fit_context
from .._core.likelihood_mixin import (
    SCORE_PARAMETER_CONSTRAINTS,
    LikelihoodMixin,
    check_score_settings,
)
from .._core.sklearn_compat import Interval, StrOptions, validate_params
from .._core.utils import (
    GIBBS_SAMPLING_CONSTRAINTS,
    N_JOBS_CONSTRAINT,
    blas_threads_for,
    child_seed,
    kernel_rng,
    warn,
)
from .._partition.annealing import ais_band as _ais_band
from .._partition.annealing import ais_betas
from .._partition.exact import LogPartition
from . import fitting, kernels
from .diagnostics import (
    FitCurvature,
    dense_fits,
    max_dense_features,
    sandwich_variances,
)
from .existence import MPLEDoesNotExistWarning
from .model import (
    distinct_rows,
    energies,
    from_spins,
    mean_field_fields,
    to_spins,
    unpack,
)
from .model import sample as _sample
from .solvers import SOLVERS

__all__ = ["FVBMPseudoLikelihood", "MPLEDoesNotExistWarning"]


def _standard_errors_obstacle(estimator, settings, n_features, converged=True):
    """``(why, what to do instead)`` when the sandwich standard errors do not
    exist for this estimator's fits (or for this fit, ``converged`` False),
    else None."""
    if not settings.joint:
        return (
            "the sandwich standard errors are those of the joint MPLE, which "
            "solver='nodewise' does not compute",
            "Refit with solver='newton' (the joint MPLE) and compute_std='auto'.",
        )
    if estimator.penalty == "l1" and estimator.alpha > 0:
        return (
            "an L1-penalised fit (penalty='l1', alpha > 0) has no sandwich "
            "standard errors: its estimate is not asymptotically normal",
            "For intervals on the couplings it selected, refit without the L1 "
            "penalty (penalty='l2', with alpha=0 or a small alpha > 0) and read "
            "its confidence_intervals() where this fit's coupling_ != 0 "
            "(intervals chosen after a selection are optimistic).",
        )
    if not converged:
        # The sandwich is the covariance of the maximiser; at a point short
        # of it the numbers mean nothing, and at d = 100 they take seconds.
        return (
            f"the fit stopped at max_iter={estimator.max_iter} before it "
            "converged, and standard errors hold only at the maximiser",
            "Refit with a larger max_iter.",
        )
    if not dense_fits(n_features):
        most = max_dense_features()
        return (
            f"the sandwich needs p x p matrices, p = d(d+1)/2 = "
            f"{n_features * (n_features + 1) // 2}, and is limited to d <= {most}",
            f"Fit at most {most} of the features to get standard errors.",
        )
    return None


class FVBMPseudoLikelihood(LikelihoodMixin, BaseEstimator):
    """Fully visible Boltzmann machine fitted by maximum pseudo-likelihood.

    A density estimator for binary vectors ``x in {-1, 1}^d`` with
    ``P(x) = exp(1/2 x^T M x + b^T x) / Z`` (``M`` symmetric, zero diagonal;
    Nguyen & Wood 2016, eq. 1.1), also known as the Ising model or pairwise
    maximum-entropy model. ``Z`` is a sum over ``2^d`` states, so the
    parameters maximise the log pseudo-likelihood ``P_n = sum_i sum_j log
    P(x_ij | x_i,-j)`` (eq. 2.1), strictly concave and cheap; the true
    log-likelihood is then evaluated exactly (Gray-code enumeration) or by
    annealed importance sampling.

    Data may use {0, 1} or {-1, 1}; the parameters always refer to the ±1 model
    (a {0, 1} input ``v`` is read as ``x = 2 v - 1``).

    Read more in the :ref:`User Guide <fvbm_user_guide>`.

    Parameters
    ----------
    solver : {'newton', 'nodewise', 'mm', 'bslm', 'ga', 'lbfgs'}, default='newton'
        - 'newton': truncated Newton on all parameters at once, each step
          solved by preconditioned conjugate gradients with exact
          Hessian-vector products (on a sample of the rows where there are
          many); with ``penalty='l1'``, proximal Newton on the free couplings
          with exact per-unit Hessian blocks. The fast route at every size.
        - 'nodewise': each unit's logistic regression on the others fitted
          separately (Ravikumar, Wainwright & Lafferty 2010), then the two
          estimates of each coupling averaged (with ``penalty='l1'``, zero
          unless both are nonzero). Not the joint MPLE; ``n_jobs`` groups of
          units run in parallel.
        - 'mm': Nguyen & Wood's lower bound (``sech^2 <= 1``) on the whole
          vector at once, each step solved by conjugate gradients; monotone.
        - 'bslm': Nguyen & Wood's block successive lower-bound maximisation
          (updates 2.4 and 2.7): monotone and provably convergent (their
          Theorem 1), one coordinate at a time; the reference algorithm.
        - 'ga': Hyvarinen's gradient ascent, the BSLM updates scaled by
          ``step_size`` (eqs. 4.1-4.2).
        - 'lbfgs': scipy's L-BFGS-B with the exact gradient.
    penalty : {'l2', 'l1'}, default='l2'
        'l2' maximises ``P_n / n - alpha / 2 ||theta||^2`` (intercepts and
        couplings); 'l1' maximises ``P_n / n - alpha sum_{j<k} |m_jk|``, which
        sets couplings exactly to zero (structure learning, Ravikumar et al.
        2010; the intercepts stay free). Only 'newton' and 'nodewise' support
        'l1'.
    alpha : float, default=0.0
        Penalty strength. With ``alpha=0`` the estimate is the MPLE where it
        exists, and a finite penalised fit where it does not (see Notes);
        ``alpha > 0`` penalises every fit (with 'l1', constant features are
        fitted apart). At most 1e10, beyond which every parameter is zero to
        double precision.
    step_size : float, default=1.0
        Step ``mu`` of 'ga'. ``mu <= 1`` keeps the monotone guarantee; ``mu > 1``
        has none (a warning says so). Ignored by the other solvers.
    tol : float, default=1e-5
        Stop when ``P_n`` (the sum over samples; Nguyen & Wood use 1e-5)
        changes by less than ``tol`` in one iteration.
    max_iter : int, default=1000
        Maximum number of iterations (sweeps for 'bslm' and 'ga').
    init : {'auto', 'independent', 'zeros', 'random'}, default='auto'
        Starting point: 'independent' is the fitted independent model
        (intercepts ``arctanh`` of the feature means, couplings 0), where an
        L1 penalty screens couplings by their covariances; 'zeros' is the
        uniform model (Nguyen & Wood's start); 'random' draws normals with
        variance 0.5 as in their simulation; 'auto' is 'independent' for
        'newton' and 'nodewise' and 'zeros' for the others. The maximiser,
        when it exists, is unique: this changes the path, not the result.
    score_method : {'auto', 'exact', 'ais'}, default='auto'
        How :meth:`score_samples` gets ``log Z``: 'exact' enumerates the ``2^d``
        states (``d <= 30``); 'ais' uses annealed importance sampling from the
        naive mean-field independent model; 'auto' is exact for ``d <= 20``.
    ais_n_chains : int, default=100
        Number of independent AIS chains.
    ais_betas : int, {'linear', 'three-segment'} or array-like, default=1000
        AIS inverse temperatures (see :func:`sklearn_rbm.likelihood.ais_betas`).
        One Gibbs sweep per temperature.
    compute_std : bool or 'auto', default='auto'
        Compute the sandwich standard errors ``coupling_std_`` and
        ``intercept_std_``, needed by :meth:`confidence_intervals`. They exist
        for the unpenalised or L2-penalised MPLE of a joint solver (not
        'nodewise', not ``penalty='l1'``) and form ``p x p`` matrices, ``p =
        d(d+1)/2``, so ``d <= 100``. 'auto' computes them when they exist;
        True also warns when they do not.
    n_jobs : int or None, default=None
        Number of groups of units that 'nodewise' fits in parallel (joblib
        threads). ``None`` means 1 unless in a :func:`joblib.parallel_config`
        context; ``-1`` means all processors. Ignored by the other solvers.
    random_state : int, RandomState instance or None, default=None
        Seeds ``init='random'``, the AIS stream (drawn at fit, so that each
        fitted state has one ``log Z`` estimate) and :meth:`sample`. An int
        makes all of them reproducible bit for bit.
    verbose : int, default=0
        Print the objective after every iteration when > 0.

    Attributes
    ----------
    coupling_ : ndarray of shape (n_features, n_features)
        Estimated ``M``: symmetric, zero diagonal.
    intercept_ : ndarray of shape (n_features,)
        Estimated ``b``.
    coupling_std_ : ndarray of shape (n_features, n_features)
        Sandwich standard errors of ``coupling_`` (0 on the diagonal), when
        computed (see ``compute_std``); ``inf`` when the Hessian is singular,
        and for the couplings of constant features (fitted apart: their data
        never vary).
    intercept_std_ : ndarray of shape (n_features,)
        Sandwich standard errors of ``intercept_`` (``inf`` for constant
        features).
    n_iter_ : int
        Number of iterations run.
    pseudo_likelihood_curve_ : ndarray of shape (`n_iter_` + 1,)
        Mean log pseudo-likelihood per sample minus the penalty, at the start
        and after every iteration (for 'nodewise', the sum of the units'
        separate objectives); with ``alpha=0`` the first iterations carry the
        automatic ridge (see Notes). Never decreases for the monotone solvers
        ('newton', 'nodewise', 'mm', 'bslm', and 'ga' with ``step_size <=
        1``).
    mple_exists_ : bool or None
        False when the data admit no MPLE (a warning names the features, see
        :class:`MPLEDoesNotExistWarning`); True when it exists (proved), or
        when a penalty keeps the estimate finite; None when undecided (the
        fit stopped at ``max_iter``, or the check ran out of budget; a
        warning says which).
    alpha_ : float
        The penalty strength of the estimate: ``alpha``, or with ``alpha=0``
        the automatic ridge ``1 / n_samples`` where the fit kept it (the MPLE
        does not exist, or was not shown to), else 0.
    input_values_ : tuple
        ``(0, 1)`` or ``(-1, 1)``: the convention of the training data, used by
        :meth:`sample`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    sklearn.covariance.GraphicalLasso : Sparse Gaussian graphical models, the
        continuous counterpart of ``penalty='l1'``.

    Notes
    -----
    The MPLE is consistent and asymptotically normal, but it does not always
    exist: when a conditional is separable (a constant feature, two equal or
    opposite features, a pixel on in one image only, or the nearly frozen
    data of Nguyen & Wood's N(0, 0.5) couplings for ``d >= 10``) the log-PL
    rises forever along some direction, and unpenalised estimates run off to
    infinity. With ``alpha=0`` the fit therefore:

    - screens the data before iterating, and names in one
      :class:`MPLEDoesNotExistWarning` the constant, equal or opposite
      features and those determined by a pattern of the others;
    - fits constant features apart: no couplings, and the intercept that
      maximises their conditional under a standard normal prior (the value
      never seen gets a probability of about ``1 / n_samples``); the others
      are fitted as if they were absent;
    - fits the others first with the automatic ridge ``alpha = 1 /
      n_samples`` (a standard normal prior on every parameter), whose
      maximiser always exists, and lifts it (continuing to the MPLE) only
      where the converged ridge fit proves that the MPLE exists, by Stiemke's
      lemma; otherwise, or when a linear program finds a separating
      direction, the ridge fit is the estimate, ``alpha_`` says so and a
      warning names the features.

    Set ``alpha > 0`` to choose the penalty yourself (e.g. by
    :class:`~sklearn.model_selection.GridSearchCV` on the held-out score).

    References
    ----------
    H. D. Nguyen and I. A. Wood (2016). A block successive lower-bound
    maximization algorithm for the maximum pseudo-likelihood estimation of
    fully visible Boltzmann machines. Neural Computation 28, 485-492.

    P. Ravikumar, M. J. Wainwright and J. D. Lafferty (2010). High-dimensional
    Ising model selection using l1-regularized logistic regression. Annals of
    Statistics 38, 1287-1319.

    A. Hyvarinen (2006). Consistency of pseudolikelihood estimation of fully
    visible Boltzmann machines. Neural Computation 18, 2283-2292.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm import FVBMPseudoLikelihood
    >>> from sklearn_rbm.datasets import make_fvbm
    >>> X, coupling, intercept = make_fvbm(
    ...     4000, 5, coupling_variance=0.1, random_state=0)
    >>> fvbm = FVBMPseudoLikelihood().fit(X)
    >>> fvbm.coupling_.shape
    (5, 5)
    >>> bool(np.all(np.abs(fvbm.coupling_ - coupling) < 4 * fvbm.coupling_std_ + 1e-12))
    True
    >>> bool(fvbm.score(X) < fvbm.pseudo_log_likelihood(X).mean() + 5)
    True
    """

    _parameter_constraints: dict = {
        "solver": [StrOptions(set(SOLVERS))],
        "penalty": [StrOptions({"l2", "l1"})],
        # Beyond 1e10 every parameter is zero to double precision, and the
        # Newton solvers' curvature products would overflow.
        "alpha": [Interval(numbers.Real, 0, 1e10, closed="both")],
        "step_size": [Interval(numbers.Real, 0, None, closed="neither")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "init": [StrOptions({"auto", "independent", "zeros", "random"})],
        **SCORE_PARAMETER_CONSTRAINTS,
        "compute_std": ["boolean", StrOptions({"auto"})],
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        solver="newton",
        penalty="l2",
        alpha=0.0,
        step_size=1.0,
        tol=1e-5,
        max_iter=1000,
        init="auto",
        score_method="auto",
        ais_n_chains=100,
        ais_betas=1000,
        compute_std="auto",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.solver = solver
        self.penalty = penalty
        self.alpha = alpha
        self.step_size = step_size
        self.tol = tol
        self.max_iter = max_iter
        self.init = init
        self.score_method = score_method
        self.ais_n_chains = ais_n_chains
        self.ais_betas = ais_betas
        self.compute_std = compute_std
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # -- fitting ------------------------------------------------------------

    def _check_solver(self, settings):
        """Refuse a penalty the solver lacks; warn about ignored settings."""
        if self.penalty not in settings.penalties:
            supporting = [name for name, s in SOLVERS.items() if "l1" in s.penalties]
            raise ValueError(
                f"solver={self.solver!r} supports only penalty='l2', got "
                f"penalty={self.penalty!r}. Use solver={supporting[0]!r} (or "
                f"{supporting[1]!r}) for an L1 penalty."
            )
        if settings.uses_step_size and self.step_size > 1:
            warn(
                f"step_size={self.step_size} > 1: gradient ascent has no monotone "
                "or convergence guarantee beyond 1 (Nguyen & Wood 2016, Sec. 4); "
                "the log pseudo-likelihood may decrease or diverge. Use "
                "step_size <= 1 or solver='bslm'."
            )
        elif not settings.uses_step_size and self.step_size != 1.0:
            warn(
                f"step_size is only used by solver='ga'; it is ignored by "
                f"solver={self.solver!r}."
            )
        if not settings.uses_n_jobs and self.n_jobs not in (None, 1):
            warn(
                f"n_jobs is only used by solver='nodewise'; it is ignored by "
                f"solver={self.solver!r}."
            )

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the FVBM by maximum (penalised) pseudo-likelihood.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Binary data in {0, 1} or in {-1, 1} (not mixed), ``n_features >= 2``.
        y : None
            Ignored.

        Returns
        -------
        self : FVBMPseudoLikelihood
            The fitted estimator.
        """
        check_score_settings(self)
        X = validate_data(
            self, X, dtype=[np.float64, np.float32], ensure_min_features=2
        )
        spins, self.input_values_ = to_spins(X)
        settings = SOLVERS[self.solver]
        self._check_solver(settings)
        rows, w = distinct_rows(spins)
        # Small products run BLAS on one thread (where threads only add
        # overhead, a lot of it on busy cores); large ones as BLAS decides.
        with blas_threads_for(rows.shape[0] * rows.shape[1] ** 2):
            fit = fitting.fit(self, settings, rows, w, X.shape[0])
            self._publish(fit)
            self._set_standard_errors(settings, fit)
        return self

    def _publish(self, fit):
        """The fitted attributes, and the warning of a fit that ran out of
        iterations."""
        self.intercept_, self.coupling_ = fit.intercept, fit.coupling
        self._forget_log_partition()
        self._ais_seed = child_seed(self.random_state)
        self.alpha_ = fit.alpha
        self.mple_exists_ = fit.mple_exists
        self.n_iter_ = fit.n_iter
        self.pseudo_likelihood_curve_ = fit.curve
        if fit.converged:
            return
        unchecked = (
            " Whether the maximum pseudo-likelihood estimate exists was not "
            "checked (that needs a converged fit): mple_exists_ is None and the "
            f"estimate keeps the automatic ridge alpha_={fit.alpha:.3g}."
            if fit.mple_exists is None
            else ""
        )
        warn(
            f"{self.solver!r} stopped after max_iter={self.max_iter} iterations "
            f"before the log pseudo-likelihood rise fell below tol={self.tol}."
            f"{unchecked} Increase max_iter{SOLVERS[self.solver].max_iter_advice}.",
            ConvergenceWarning,
        )

    def _standard_errors_apply(self, settings, n_features, converged):
        """Whether to compute the standard errors; warns when asked for and
        impossible (``compute_std=True``)."""
        obstacle = _standard_errors_obstacle(self, settings, n_features, converged)
        self._standard_errors_missing = obstacle
        if self.compute_std is False:
            self._standard_errors_missing = (
                "the fit skipped them (compute_std=False)",
                "Refit with compute_std='auto'.",
            )
            return False
        if obstacle is not None and self.compute_std is True:
            warn(
                f"compute_std=True, but {obstacle[0]}: no standard errors. Set "
                "compute_std='auto' or False to silence this."
            )
        return obstacle is None

    def _set_standard_errors(self, settings, fit):
        """The sandwich standard errors of the fitted features; ``inf`` for
        the parameters of constant features, fitted apart (their data never
        vary)."""
        for name in ("intercept_std_", "coupling_std_"):  # from a previous fit
            self.__dict__.pop(name, None)
        d = self.n_features_in_
        if not self._standard_errors_apply(settings, d, fit.converged):
            return
        alpha_l2 = 0.0 if self.penalty == "l1" else fit.alpha
        features = fit.features
        curvature = FitCurvature(
            fit.rows, fit.w, fit.intercept[features],
            fit.coupling[np.ix_(features, features)], alpha_l2, dense=True,
        )  # fmt: skip
        k = features.size
        if curvature.singular:
            warn(
                "The pseudo-likelihood Hessian is singular at the estimate: the "
                "standard errors are infinite."
            )
            variances = np.full(k + k * (k - 1) // 2, np.inf)
        else:
            variances = sandwich_variances(curvature, fit.monitors[0].n_samples)
        intercept_std, coupling_std = unpack(np.sqrt(variances), k)
        self.intercept_std_ = np.full(d, np.inf)
        self.intercept_std_[features] = intercept_std
        self.coupling_std_ = np.full((d, d), np.inf)
        self.coupling_std_[np.diag_indices(d)] = 0.0
        self.coupling_std_[np.ix_(features, features)] = coupling_std

    # -- queries ------------------------------------------------------------

    def _spins(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return to_spins(X)[0]

    def pseudo_log_likelihood(self, X):
        """Log pseudo-likelihood of each sample, ``sum_j log P(x_j | x_-j)``.

        This is the fitted objective (Nguyen & Wood 2016, eq. 2.1, one term per
        sample), not the log-likelihood: see :meth:`score_samples` for that.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Binary data in {0, 1} or {-1, 1}.

        Returns
        -------
        log_pl : ndarray of shape (n_samples,)
            Per-sample log pseudo-likelihood.
        """
        spins = self._spins(X)
        log_cond, _ = kernels.conditional_terms(spins, self.intercept_, self.coupling_)
        return log_cond.sum(axis=1)

    # The hooks of LikelihoodMixin, which provides score, score_samples and
    # log_partition_function.
    def _validate_query(self, X):
        return self._spins(X)

    def _log_unnormalised(self, spins):
        return energies(spins, self.coupling_, self.intercept_)

    def _enumerated_units(self):
        return self.n_features_in_

    def _exact_log_partition(self):
        return kernels.log_partition_exact(self.coupling_, self.intercept_)

    def _ais_log_partition(self, n_chains, betas, random_state):
        """AIS from the naive mean-field independent model (see the kernel)."""
        base = mean_field_fields(self.coupling_, self.intercept_)
        log_w = kernels.ais_log_weights(
            self.coupling_,
            self.intercept_,
            base,
            ais_betas(betas),
            n_chains,
            np.random.default_rng(random_state),
        )
        log_z_base = float(np.sum(np.logaddexp(base, -base)))  # sum log(2 cosh)
        return LogPartition(*_ais_band(log_w, log_z_base), "ais")

    @validate_params(GIBBS_SAMPLING_CONSTRAINTS, prefer_skip_nested_validation=True)
    @sample_docstring
    def sample(self, n_samples=1, *, burn_in=1000, thinning=10, random_state=None):
        """Draw samples from the fitted model, in the convention of the training data.

        Exact by enumeration for ``d <= 20``; beyond, Gibbs sampling from
        ``min(n_samples, 16)`` chains with ``burn_in`` and ``thinning`` (see
        :func:`~sklearn_rbm.datasets.sample_fvbm`).

        Parameters
        ----------
        n_samples : int, default=1
            Number of samples.
        burn_in : int, default=1000
            Gibbs sweeps discarded at the start of each chain (Gibbs only).
        thinning : int, default=10
            Gibbs sweeps between two kept states of a chain (Gibbs only).
        %(sample_random_state)s

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            Samples with values in ``input_values_``.
        """
        check_is_fitted(self)
        rng = kernel_rng(self.random_state if random_state is None else random_state)
        spins = _sample(
            self.coupling_, self.intercept_, n_samples, "auto", burn_in, thinning, rng
        )
        return from_spins(spins, self.input_values_)

    @validate_params(
        {"alpha": [Interval(numbers.Real, 0, 1, closed="neither")]},
        prefer_skip_nested_validation=True,
    )
    def confidence_intervals(self, alpha=0.05):
        """Wald confidence intervals from the sandwich standard errors.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the coverage: 0.05 gives 95% intervals ``estimate +-
            1.96 std``. Not the penalty ``alpha`` of the estimator.

        Returns
        -------
        coupling_interval : ndarray of shape (n_features, n_features, 2)
            Lower and upper bounds for each coupling (0, 0 on the diagonal).
        intercept_interval : ndarray of shape (n_features, 2)
            Lower and upper bounds for each intercept.
        """
        check_is_fitted(self)
        if not hasattr(self, "coupling_std_"):
            why, instead = self._standard_errors_missing
            raise AttributeError(
                f"confidence_intervals needs the standard errors, but {why}. {instead}"
            )
        # The upper alpha/2 quantile, accurate (and finite) for any alpha > 0;
        # ppf(1 - alpha / 2) rounds to an infinite z below alpha ~ 1e-16.
        z = scipy.stats.norm.isf(alpha / 2)

        def interval(estimate, std):
            return np.stack([estimate - z * std, estimate + z * std], axis=-1)

        self._warn_if_unbounded()
        return (
            interval(self.coupling_, self.coupling_std_),
            interval(self.intercept_, self.intercept_std_),
        )

    def _warn_if_unbounded(self):
        """Infinite standard errors give infinite intervals: said at the call
        that returns them, with the reason, not only at fit."""
        n_infinite = int(np.isinf(self.intercept_std_).sum()) + int(
            np.isinf(np.triu(self.coupling_std_, 1)).sum()
        )
        if not n_infinite:
            return
        if self.mple_exists_ is False:
            warn(
                f"{n_infinite} confidence intervals are infinite: the maximum "
                "pseudo-likelihood estimate does not exist for these data "
                "(mple_exists_ is False), so its standard errors are infinite. "
                "Refit with a penalty (alpha > 0) and read its intervals with "
                "care, or drop the features the fit's warning named.",
                MPLEDoesNotExistWarning,
            )
            return
        warn(
            f"{n_infinite} confidence intervals are infinite: their standard "
            "errors are infinite (a singular pseudo-likelihood Hessian, or "
            "constant features fitted apart). Drop constant features, or use a "
            "penalty (alpha > 0)."
        )
