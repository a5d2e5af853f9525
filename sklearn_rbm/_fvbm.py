"""Fully visible Boltzmann machines fitted by maximum pseudo-likelihood.

The estimator :class:`FVBMPseudoLikelihood` and two helpers that simulate the
seed's experiments: :func:`sample_fvbm` (exact draws by enumeration, Gibbs
beyond) and :func:`make_fvbm` (random parameters and data as in the seed's
Section 5).

Reference: H. D. Nguyen and I. A. Wood (2016), "A block successive lower-bound
maximization algorithm for the maximum pseudo-likelihood estimation of fully
visible Boltzmann machines", Neural Computation 28, 485-492 (the "seed").
"""

import numbers
import warnings

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse
import scipy.stats
from scipy.special import logsumexp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ._kernels import fvbm as kernels
from ._likelihood_mixin import LikelihoodMixin
from ._sklearn_compat import Interval, StrOptions, _fit_context, validate_params
from ._utils import child_seed, kernel_rng
from .likelihood import (
    MAX_EXACT_UNITS,
    SCORE_PARAMETER_CONSTRAINTS,
    LogPartition,
    _ais_band,
    ais_betas,
    check_enumerable,
)

__all__ = [
    "FVBMPseudoLikelihood",
    "MPLEDoesNotExistWarning",
    "make_fvbm",
    "sample_fvbm",
]

#: Number of independent Gibbs chains that share the draws of one ``sample`` call.
GIBBS_CHAINS = 16

# The existence check solves the separation LP directly up to this many
# constraints (distinct rows x d) and by cutting planes beyond.
_SEPARATION_FULL_LP_ROWS = 50_000
_SEPARATION_MAX_ROUNDS = 20
# Dense p x p matrices (p = d(d+1)/2: the 'mm' bound, the Hessian of the
# certificate and of the sandwich) are formed up to d = 100 (200 MB).
_MAX_DENSE_PARAMETERS = 5050


def _dense_fits(n_features):
    return n_features * (n_features + 1) // 2 <= _MAX_DENSE_PARAMETERS


class MPLEDoesNotExistWarning(ConvergenceWarning):
    """The data admit no maximum pseudo-likelihood estimate (it lies at infinity).

    Raised by :class:`FVBMPseudoLikelihood` when ``alpha == 0`` and some
    conditional is (quasi-)separable: the log pseudo-likelihood keeps rising
    along a direction of the parameters, so every solver's estimates run off to
    infinity and stop wherever the tolerance stops them. Set ``alpha > 0``.
    """


# ---------------------------------------------------------------------------
# Data conventions


def _first_position(mask):
    """``(row, column)`` of the first True entry of a 2-d mask."""
    row, col = np.unravel_index(np.argmax(mask), mask.shape)
    return int(row), int(col)


def _to_spins(X):
    """Map binary ``X`` in {0, 1} or {-1, 1} to a new float64 array in {-1, 1}.

    Returns ``(spins, values)`` where ``values`` is ``(0, 1)`` or ``(-1, 1)``,
    the convention of ``X``; an array of ones only is read as {0, 1}. The copy
    is always new, C-contiguous and writable, so kernels compile once and never
    touch the caller's (possibly read-only) array.
    """
    X = np.asarray(X)
    bad = (X != 0) & (X != 1) & (X != -1)
    if bad.any():
        row, col = _first_position(bad)
        raise ValueError(
            "FVBMPseudoLikelihood needs binary X, with values in {0, 1} or in "
            f"{{-1, 1}}; found X[{row}, {col}] = {X[row, col].item()!r}. Binarise X "
            "first (e.g. X > 0.5 or np.sign(X))."
        )
    has_zero = X == 0
    has_minus = X == -1
    if has_zero.any() and has_minus.any():
        r0, c0 = _first_position(has_zero)
        r1, c1 = _first_position(has_minus)
        raise ValueError(
            "X mixes the {0, 1} and {-1, 1} conventions: X"
            f"[{r0}, {c0}] = 0 and X[{r1}, {c1}] = -1. Encode all of X in one "
            "convention."
        )
    values = (-1, 1) if has_minus.any() else (0, 1)
    spins = np.where(X > 0, 1.0, -1.0)  # a new C-contiguous float64 array
    return spins, values


def _from_spins(spins, values):
    """Map {-1, 1} draws back to the convention ``values``."""
    return spins if values == (-1, 1) else (spins + 1.0) / 2.0


def _distinct_rows(spins):
    """Distinct rows and their weights (multiplicity / n_samples), summing to 1.

    Every sum over samples in the log-PL is a weighted sum over distinct rows;
    nearly frozen data (the seed's N(0, 0.5) couplings) collapse to a handful.
    """
    n, d = spins.shape
    if d < 63:  # one int64 code per row: a 1-d unique, far cheaper than axis=0
        codes = (spins > 0).astype(np.int64) @ (
            np.int64(1) << np.arange(d, dtype=np.int64)
        )
        _, first, counts = np.unique(codes, return_index=True, return_counts=True)
        rows = spins[first]
    else:
        rows, counts = np.unique(spins, axis=0, return_counts=True)
    return np.ascontiguousarray(rows), counts / n


def _pack(intercept, coupling):
    """The seed's parameter vector ``theta = [b, M[triu(d, 1)]]``."""
    upper = np.triu_indices(intercept.shape[0], 1)
    return np.concatenate([intercept, coupling[upper]])


def _unpack(theta, n_features):
    """Inverse of :func:`_pack`: ``(b, M)`` with ``M`` symmetric, zero diagonal."""
    intercept = theta[:n_features].copy()
    coupling = np.zeros((n_features, n_features))
    upper = np.triu_indices(n_features, 1)
    coupling[upper] = theta[n_features:]
    return intercept, coupling + coupling.T


def _energies(spins, coupling, intercept):
    """``1/2 x^T M x + b^T x = 1/2 x^T (A + b)`` for every row (the unnormalised log P).

    Computed row by row (no BLAS, whose blocking depends on the number of
    rows), so a row's value does not depend on the other rows.
    """
    A = kernels.predictors(spins, intercept, coupling)
    return 0.5 * np.sum(spins * (A + intercept), axis=1)


# ---------------------------------------------------------------------------
# Simulation


def _mean_field_fields(coupling, intercept, n_iter=200):
    """Effective fields ``M m + b`` at a damped naive mean-field fixed point.

    Used as the independent model from which AIS anneals and Gibbs chains
    start; any choice keeps them valid, a closer one lowers their variance.
    """
    m = np.tanh(intercept)
    for _ in range(n_iter):
        m = 0.5 * m + 0.5 * np.tanh(coupling @ m + intercept)
    return np.clip(coupling @ m + intercept, -20.0, 20.0)


def _sample_exact(coupling, intercept, n_samples, rng):
    """Exact draws by inverting the cumulative distribution of the 2^d states."""
    energies = kernels.state_energies(coupling, intercept)
    cdf = np.cumsum(np.exp(energies - logsumexp(energies)))
    codes = np.searchsorted(cdf, rng.random(n_samples) * cdf[-1], side="right")
    codes = np.minimum(codes, cdf.shape[0] - 1)
    bits = (codes[:, None] >> np.arange(intercept.shape[0])) & 1
    return np.where(bits == 1, 1.0, -1.0)


@validate_params(
    {
        "coupling": ["array-like"],
        "intercept": ["array-like"],
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "method": [StrOptions({"auto", "exact", "gibbs"})],
        "burn_in": [Interval(numbers.Integral, 0, None, closed="left")],
        "thinning": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def sample_fvbm(
    coupling,
    intercept,
    n_samples,
    *,
    method="auto",
    burn_in=1000,
    thinning=10,
    random_state=None,
):
    """Draw samples in {-1, 1}^d from the FVBM ``P(x) ~ exp(1/2 x^T M x + b^T x)``.

    Parameters
    ----------
    coupling : array-like of shape (n_features, n_features)
        Symmetric coupling matrix ``M`` with zero diagonal (seed eq. 1.1).
    intercept : array-like of shape (n_features,)
        Intercepts ``b``.
    n_samples : int
        Number of draws.
    method : {'auto', 'exact', 'gibbs'}, default='auto'
        'exact' inverts the cumulative distribution of all ``2^d`` states
        (Gray-code enumeration; memory ``8 * 2^d`` bytes, so ``d <= 25``);
        'gibbs' runs ``min(n_samples, 16)`` systematic-scan Gibbs chains started
        from the naive mean-field independent model, each discarding
        ``burn_in`` sweeps and then keeping one state every ``thinning`` sweeps;
        'auto' is exact for ``d <= 20`` and Gibbs beyond.
    burn_in : int, default=1000
        Gibbs sweeps discarded at the start of each chain.
    thinning : int, default=10
        Gibbs sweeps between two kept states of a chain.
    random_state : int, RandomState instance or None, default=None
        Seed of the draws; an int gives the same draws every time.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Draws with values -1.0 and 1.0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm._fvbm import sample_fvbm
    >>> coupling = np.array([[0.0, 2.0], [2.0, 0.0]])  # strongly aligned pair
    >>> X = sample_fvbm(coupling, np.zeros(2), 1000, random_state=0)
    >>> bool(np.mean(X[:, 0] == X[:, 1]) > 0.95)
    True
    """
    coupling = np.ascontiguousarray(coupling, dtype=np.float64)
    intercept = np.ascontiguousarray(intercept, dtype=np.float64)
    n_features = intercept.shape[0]
    if coupling.shape != (n_features, n_features):
        raise ValueError(
            f"coupling must have shape ({n_features}, {n_features}) to match "
            f"intercept, got {coupling.shape}."
        )
    if not (np.all(np.isfinite(coupling)) and np.all(np.isfinite(intercept))):
        raise ValueError("coupling and intercept must be finite.")
    if not np.array_equal(coupling, coupling.T) or np.any(np.diag(coupling) != 0):
        raise ValueError(
            "coupling must be symmetric with a zero diagonal (seed eq. 1.1); "
            "use (C + C.T) / 2 with the diagonal set to 0."
        )
    if method == "auto":
        method = "exact" if n_features <= MAX_EXACT_UNITS else "gibbs"
    if method == "exact":
        # A table of 2 ** d probabilities: the per-call memory limit.
        check_enumerable(
            n_features,
            f"Exact sampling of d={n_features} units",
            limit=MAX_EXACT_UNITS,
            instead="method='gibbs'",
        )
    rng = kernel_rng(random_state)
    if method == "exact":
        return _sample_exact(coupling, intercept, n_samples, rng)
    n_chains = min(n_samples, GIBBS_CHAINS)
    per_chain = -(-n_samples // n_chains)
    start = _mean_field_fields(coupling, intercept)
    draws = kernels.gibbs_samples(
        coupling, intercept, start, n_chains, per_chain, burn_in, thinning, rng
    )
    return draws[:n_samples]


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_features": [Interval(numbers.Integral, 2, None, closed="left")],
        "coupling_variance": [Interval(numbers.Real, 0, None, closed="left")],
        "intercept_variance": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_fvbm(
    n_samples,
    n_features,
    *,
    coupling_variance=0.5,
    intercept_variance=0.5,
    random_state=None,
):
    """Random FVBM parameters and a sample from them (the seed's Section 5).

    The upper-triangular couplings ``m_jk`` (``j < k``) and the intercepts
    ``b_j`` are independent normals with mean 0 and the given variances; the
    data are drawn with :func:`sample_fvbm` (exact for ``d <= 20``). The seed
    uses variance 0.5 for both, which for ``d >= 10`` gives nearly frozen data
    whose MPLE often does not exist; ``coupling_variance=0.5 / d`` keeps the
    total field on a unit of order one.

    Parameters
    ----------
    n_samples : int
        Number of samples (the seed uses 16,000).
    n_features : int
        Dimension ``d`` (the seed uses 5, 10, 15, 20).
    coupling_variance : float, default=0.5
        Variance of each coupling ``m_jk``.
    intercept_variance : float, default=0.5
        Variance of each intercept ``b_j``.
    random_state : int, RandomState instance or None, default=None
        Seed of the parameters and of the draws.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Samples with values -1.0 and 1.0.
    coupling : ndarray of shape (n_features, n_features)
        The true symmetric, zero-diagonal coupling matrix ``M``.
    intercept : ndarray of shape (n_features,)
        The true intercepts ``b``.

    Examples
    --------
    >>> from sklearn_rbm._fvbm import make_fvbm
    >>> X, coupling, intercept = make_fvbm(100, 5, random_state=0)
    >>> X.shape, coupling.shape, intercept.shape
    ((100, 5), (5, 5), (5,))
    """
    rng = check_random_state(random_state)
    upper = np.triu(rng.normal(0.0, np.sqrt(coupling_variance), (n_features,) * 2), 1)
    coupling = upper + upper.T
    intercept = rng.normal(0.0, np.sqrt(intercept_variance), n_features)
    X = sample_fvbm(coupling, intercept, n_samples, random_state=rng)
    return X, coupling, intercept


# ---------------------------------------------------------------------------
# The optimisation problem and its solvers


class _Problem:
    """The penalised mean log-PL of distinct rows ``X`` with weights ``w``.

    ``f(theta) = sum_i w_i sum_j log P(x_ij | x_i,-j) - alpha / 2 ||theta||^2``;
    with ``alpha = 0`` it is the seed's ``P_n`` (eq. 2.1) divided by ``n``.
    """

    def __init__(self, X, w, n_samples, alpha):
        self.X = X
        self.w = w
        self.n_samples = n_samples
        self.alpha = alpha
        self.n_features = X.shape[1]

    def penalty(self, intercept, coupling):
        if self.alpha == 0:
            return 0.0
        upper = np.triu_indices(self.n_features, 1)
        # A diverging fit may square huge values: let that be inf, which the
        # iteration loop turns into an error naming the step size.
        with np.errstate(over="ignore"):
            squares = intercept @ intercept + coupling[upper] @ coupling[upper]
        return 0.5 * self.alpha * squares

    def value_and_gradient(self, theta):
        """``f(theta)`` and its gradient in the packed parameter space."""
        intercept, coupling = _unpack(theta, self.n_features)
        value, grad_b, grad_M = kernels.pseudo_log_likelihood_gradient(
            self.X, self.w, intercept, coupling
        )
        gradient = _pack(grad_b, grad_M) - self.alpha * theta
        return value - self.penalty(intercept, coupling), gradient


class _Monitor:
    """The objective after every iteration, and the stopping rule all solvers share.

    A solver stops when the seed's ``P_n`` (the sum over samples, i.e. ``n``
    times the mean we record) changes by less than ``tol`` in one iteration, or
    when the objective is no longer finite (a diverging fit).
    """

    def __init__(self, value, problem, estimator):
        self.curve = [value]
        self.n_samples = problem.n_samples
        self.tol = estimator.tol
        self.verbose = estimator.verbose
        self.stopped = False

    @property
    def n_iter(self):
        return len(self.curve) - 1

    def record(self, value):
        """Append ``value``; True when the solver should stop."""
        self.curve.append(value)
        rise = value - self.curve[-2]
        if self.verbose:
            print(
                f"iteration {self.n_iter}: mean log-PL {value:.10f} (rise {rise:.3e})"
            )
        self.stopped = not np.isfinite(value) or abs(rise) * self.n_samples < self.tol
        return self.stopped


def _iterate(step, value, problem, estimator):
    """Run ``step()`` (which returns the new objective) under a :class:`_Monitor`.

    Returns the objective curve (first entry: the initial point), the number of
    iterations and whether the stopping rule was met before ``max_iter``.
    """
    monitor = _Monitor(value, problem, estimator)
    for _ in range(estimator.max_iter):
        if monitor.record(step()):
            break
    converged = monitor.stopped and bool(np.isfinite(monitor.curve[-1]))
    return monitor.curve, monitor.n_iter, converged


def _solve_coordinate(problem, intercept, coupling, estimator, step_size):
    """BSLM (``step_size = 1``) or gradient ascent: seed updates 2.4/2.7, 4.1/4.2."""
    X, w, alpha = problem.X, problem.w, problem.alpha
    XT = np.ascontiguousarray(X.T)
    ones = np.ones(X.shape[0])
    intercept, coupling = intercept.copy(), coupling.copy()
    ET = np.empty(XT.shape)
    TT = np.empty(XT.shape)

    def objective(log_pl):
        return log_pl - problem.penalty(intercept, coupling)

    value = objective(kernels.bslm_resync(X, w, intercept, coupling, ET, TT))

    def step():
        log_pl = kernels.bslm_sweep(
            X, XT, w, ones, intercept, coupling, ET, TT, step_size, alpha
        )
        return objective(log_pl)

    curve, n_iter, converged = _iterate(step, value, problem, estimator)
    return intercept, coupling, curve, n_iter, converged


def _solve_bslm(problem, intercept, coupling, estimator):
    return _solve_coordinate(problem, intercept, coupling, estimator, 1.0)


def _solve_ga(problem, intercept, coupling, estimator):
    return _solve_coordinate(
        problem, intercept, coupling, estimator, estimator.step_size
    )


def _solve_mm(problem, intercept, coupling, estimator):
    """Minorise-maximise on the whole parameter vector at once.

    Since ``d^2/da^2 log cosh(a) <= 1``, ``f(theta + delta) >= f(theta) +
    g^T delta - 1/2 delta^T B delta`` with ``B = sum_i w_i sum_j z_ij z_ij^T +
    alpha I`` fixed by the data (the argument of the seed's Theorem 1 applied
    to the full vector). Each step maximises the bound, ``delta = B^{-1} g``:
    monotone like BSLM, with one Cholesky factorisation for the whole fit.
    """
    d = problem.n_features
    if not _dense_fits(d):
        raise ValueError(
            f"solver='mm' factorises a p x p matrix, p = d(d+1)/2 = {d * (d + 1) // 2} "
            f"here, and is limited to p <= {_MAX_DENSE_PARAMETERS} (d <= 100); use "
            "solver='lbfgs' or 'bslm'."
        )
    curvature = kernels.bound_curvature(
        problem.X, problem.w, kernels.parameter_index(d)
    )
    # The 1e-10 keeps B positive definite when a feature is constant (then
    # the MPLE does not exist anyway); a larger B is still a valid bound.
    curvature[np.diag_indices_from(curvature)] += problem.alpha + 1e-10
    factor = scipy.linalg.cho_factor(curvature)
    theta = _pack(intercept, coupling)
    value, gradient = problem.value_and_gradient(theta)
    state = {"theta": theta, "gradient": gradient}

    def step():
        state["theta"] = state["theta"] + scipy.linalg.cho_solve(
            factor, state["gradient"]
        )
        new_value, state["gradient"] = problem.value_and_gradient(state["theta"])
        return new_value

    curve, n_iter, converged = _iterate(step, value, problem, estimator)
    return (*_unpack(state["theta"], d), curve, n_iter, converged)


def _solve_lbfgs(problem, intercept, coupling, estimator):
    """scipy's L-BFGS-B on ``-f`` with the exact gradient from the compiled kernel.

    scipy's own stopping rules are switched off (``ftol = gtol = 0``) so that
    all solvers stop on the same rise of ``P_n``.
    """
    theta = _pack(intercept, coupling)
    monitor = _Monitor(problem.value_and_gradient(theta)[0], problem, estimator)

    def negative(theta):
        value, gradient = problem.value_and_gradient(theta)
        return -value, -gradient

    def callback(intermediate_result):
        if monitor.record(-intermediate_result.fun):
            raise StopIteration

    result = scipy.optimize.minimize(
        negative,
        theta,
        jac=True,
        method="L-BFGS-B",
        callback=callback,
        options={"maxiter": estimator.max_iter, "ftol": 0.0, "gtol": 0.0},
    )
    # Without the rule, L-BFGS-B stops early only when its line search can no
    # longer make progress: converged to machine precision.
    converged = monitor.stopped or monitor.n_iter < estimator.max_iter
    return (
        *_unpack(result.x, problem.n_features),
        monitor.curve,
        monitor.n_iter,
        converged,
    )


_SOLVERS = {
    "bslm": _solve_bslm,
    "ga": _solve_ga,
    "mm": _solve_mm,
    "lbfgs": _solve_lbfgs,
}


# ---------------------------------------------------------------------------
# Existence of the MPLE


def _separation_rows(X, index, rows):
    """Sparse rows ``x_ij z_ij`` of the separation LP, for ``rows = i * d + j``.

    The log-PL rises forever along ``delta`` iff ``G delta >= 0`` with some
    entry > 0, where ``G`` stacks these rows for every distinct row ``i`` and
    unit ``j``: no conditional ``x_ij a_ij`` decreases and one grows (the MPLE
    analogue of separation in logistic regression).
    """
    d = X.shape[1]
    i, j = np.divmod(rows, d)
    Z = X[i].copy()  # z_ij: row i with entry j replaced by 1
    Z[np.arange(rows.size), j] = 1.0
    values = (X[i, j][:, None] * Z).ravel()
    p = d + d * (d - 1) // 2
    return scipy.sparse.csr_matrix(
        (values, (np.repeat(np.arange(rows.size), d), index[j].ravel())),
        shape=(rows.size, p),
    )


def _margins(X, theta):
    """``x_ij a_ij(theta)`` for all distinct rows and units: the full ``G theta``."""
    intercept, coupling = _unpack(theta, X.shape[1])
    return X * kernels.predictors(X, intercept, coupling)


def _solve_separation_lp(G, weights):
    """``max weights^T G delta`` s.t. ``G delta >= 0``, ``|delta| <= 1`` (HiGHS)."""
    result = scipy.optimize.linprog(
        -(G.T @ weights),
        A_ub=-G,
        b_ub=np.zeros(G.shape[0]),
        bounds=(-1.0, 1.0),
        method="highs",
    )
    return result.x if result.status == 0 else None


def _separating_direction(X, w, margins):
    """Decide whether the MPLE exists: ``(exists, separable_features, direction)``.

    Up to 50,000 constraints the LP of :func:`_solve_separation_lp` is solved on
    all of ``G``. Beyond, by cutting planes: start from the ``4p`` constraints
    with the smallest fitted margins (the points that resist a run-off), keep a
    direction only if it satisfies every constraint, otherwise add the ``10p``
    most violated ones. An optimum of 0 on a subset of full column rank proves that no
    direction exists for all of ``G`` (one would be a nonzero feasible point of
    the subset). ``exists`` is None when the rounds run out.
    """
    n, d = X.shape
    p = d + d * (d - 1) // 2
    index = kernels.parameter_index(d)
    weights = np.repeat(w, d)
    none = np.array([], dtype=int)
    if n * d <= _SEPARATION_FULL_LP_ROWS:
        active = np.arange(n * d)
    else:
        active = np.argsort(margins.ravel(), kind="stable")[: 4 * p]
    for _ in range(_SEPARATION_MAX_ROUNDS):
        G = _separation_rows(X, index, active)
        direction = _solve_separation_lp(G, weights[active])
        if direction is None:
            return None, none, None
        full = _margins(X, direction)
        if full.max() > 1e-6 and full.min() > -1e-9:
            return False, np.flatnonzero((full > 1e-6).any(axis=0)), direction
        if full.min() > -1e-9:  # optimum 0 on the subset
            if active.size == n * d or np.linalg.matrix_rank(G.toarray()) == p:
                return True, none, None
            violated = np.setdiff1d(np.argsort(margins.ravel(), kind="stable"), active)
        else:  # the most violated first
            order = np.argsort(full.ravel(), kind="stable")
            violated = order[full.ravel()[order] < -1e-9]
        active = np.union1d(active, violated[: 10 * p])
    return None, none, None


def _existence_warning(what, features):
    warnings.warn(
        f"The maximum pseudo-likelihood estimate does not exist for these data: "
        f"{what} (features {features.tolist()}), so the log pseudo-likelihood keeps "
        "rising as the estimates run off to infinity; coupling_ and intercept_ are "
        "only where the solver stopped. Set alpha > 0 (e.g. alpha=1e-3) for a "
        "finite penalised estimate, or remove the offending features.",
        MPLEDoesNotExistWarning,
        stacklevel=6,
    )


def _newton_certificate(X, w, intercept, coupling, T, hessian):
    """True if a Newton step from the fit proves that the MPLE exists.

    By Stiemke's lemma, no direction ``delta`` has ``G delta >= 0, != 0`` iff
    some weights ``lambda > 0`` satisfy ``G^T lambda = 0``. The fit supplies
    ``lambda_ij = w_i (1 - x_ij t_ij) > 0`` with ``G^T lambda = g``, the gradient;
    the Newton correction ``c = H^{-1} g`` (``H`` minus the Hessian) removes it:
    ``lambda'_ij = lambda_ij [1 - (1 + x_ij t_ij) x_ij dA_ij]`` with ``dA = A(c)``
    has ``G^T lambda' = 0``, and it stays positive (the proof) whenever the
    Newton step moves no conditional by more than about 1/2 -- true near any
    converged fit of data whose MPLE exists. O(n d^2) given ``H``.
    """
    if hessian is None:
        return False
    _, grad_b, grad_M = kernels.pseudo_log_likelihood_gradient(
        X, w, intercept, coupling
    )
    step = scipy.linalg.cho_solve(hessian, _pack(grad_b, grad_M))
    moves = X * kernels.predictors(X, *_unpack(step, X.shape[1]))
    return bool(np.max((1.0 + X * T) * moves) < 0.999)


def _check_existence(X, w, intercept, coupling, T, hessian):
    """Detect a non-existent MPLE (for ``alpha == 0``); warn and return False if so.

    The check is exact, not a symptom of the fit (a slow solver can meet
    ``tol`` long before its run-off to infinity shows): a constant feature, then
    the Newton certificate of existence (cheap), then the separation LP (see
    :func:`_separating_direction`). Returns None if it could not decide, or
    (without warning) when ``d > 100`` and the LP would be large: then only
    constant features are detected.
    """
    constant = np.flatnonzero(np.all(X == X[:1], axis=0))
    if constant.size:
        _existence_warning("some features are constant in X", constant)
        return False
    if _newton_certificate(X, w, intercept, coupling, T, hessian):
        return True
    if not _dense_fits(X.shape[1]) and X.size > _SEPARATION_FULL_LP_ROWS:
        return None
    margins = _margins(X, _pack(intercept, coupling))
    exists, features, _ = _separating_direction(X, w, margins)
    if exists is None:
        warnings.warn(
            "Could not decide whether the maximum pseudo-likelihood estimate "
            "exists (the separation LP did not settle); if the estimates are "
            "large, set alpha > 0.",
            MPLEDoesNotExistWarning,
            stacklevel=5,
        )
    elif not exists:
        _existence_warning(
            "some conditionals are perfectly predicted (separation)", features
        )
    return exists


# ---------------------------------------------------------------------------
# Sandwich standard errors


def _curvature_at(X, w, intercept, coupling, alpha):
    """``tanh(A)`` and the Cholesky factor of minus the Hessian of the objective.

    ``H = sum_i w_i sum_j (1 - tanh^2 a_ij) z_ij z_ij^T + alpha I``; the factor
    is None when ``H`` is singular (data whose MPLE does not exist).
    """
    _, T = kernels.conditional_terms(X, intercept, coupling)
    hessian = kernels.node_gram(
        X, w[:, None] * (1.0 - T**2), kernels.parameter_index(X.shape[1])
    )
    hessian[np.diag_indices_from(hessian)] += alpha
    try:
        return T, scipy.linalg.cho_factor(hessian)
    except np.linalg.LinAlgError:
        return T, None


def _sandwich_covariance(X, w, n_samples, T, hessian):
    """Asymptotic covariance ``H^{-1} J H^{-1} / n`` of ``theta`` (packed order).

    ``H`` (given as its Cholesky factor) is minus the Hessian of the mean log-PL
    (plus ``alpha I``) and ``J`` the covariance of the per-sample scores: the
    MPLE is asymptotically normal with this covariance (Nguyen & Wood 2016,
    IEEE TNNLS 27(5); a "sandwich" because the pseudo-likelihood is not a
    likelihood, so ``H != J``).
    """
    scores = kernels.per_sample_scores(X, T, kernels.parameter_index(X.shape[1]))
    mean = w @ scores
    meat = (scores * w[:, None]).T @ scores - np.outer(mean, mean)
    half = scipy.linalg.cho_solve(hessian, meat)
    return scipy.linalg.cho_solve(hessian, half.T) / n_samples


# ---------------------------------------------------------------------------
# The estimator


class FVBMPseudoLikelihood(LikelihoodMixin, BaseEstimator):
    """Fully visible Boltzmann machine fitted by maximum pseudo-likelihood.

    A density estimator for binary vectors ``x in {-1, 1}^d`` with
    ``P(x) = exp(1/2 x^T M x + b^T x) / Z`` (``M`` symmetric, zero diagonal;
    Nguyen & Wood 2016, eq. 1.1). The partition function ``Z`` is a sum over
    ``2^d`` states, so the parameters are fitted by maximising the log
    pseudo-likelihood ``P_n = sum_i sum_j log P(x_ij | x_i,-j)`` (eq. 2.1),
    which is strictly concave and cheap; the true log-likelihood is then
    evaluated exactly (Gray-code enumeration) or by annealed importance
    sampling. Read more in the user guide (``doc/fvbm.rst``).

    Data may use {0, 1} or {-1, 1}; the parameters always refer to the ±1 model
    (a {0, 1} input ``v`` is read as ``x = 2 v - 1``).

    Parameters
    ----------
    solver : {'bslm', 'ga', 'mm', 'lbfgs'}, default='lbfgs'
        - 'bslm': the seed's block successive lower-bound maximisation, updates
          2.4 (intercepts) and 2.7 (couplings, lexicographic order), one
          coordinate at a time with the predictors kept current; each sweep
          raises the log-PL (Theorem 1). O(n d^2) per sweep.
        - 'ga': Hyvarinen's gradient ascent, the same coordinate updates scaled
          by ``step_size`` (eqs. 4.1-4.2); with ``step_size=1`` it is 'bslm'.
        - 'mm': the lower-bound principle on the whole vector at once: a fixed
          curvature matrix from X, factorised once, one linear solve per step;
          monotone, few iterations; O(n d^2) per step after a one-off
          O(d^6 / 24) factorisation, so limited to d <= 100.
        - 'lbfgs': scipy's L-BFGS-B with the exact compiled gradient; the
          default, because it also copes with nearly deterministic
          conditionals, where the fixed curvature bound of 'bslm' and 'mm'
          (``sech^2 <= 1``) is loose and they crawl.
    step_size : float, default=1.0
        Step ``mu`` of 'ga'. ``mu <= 1`` keeps the monotone guarantee; ``mu > 1``
        has none (a warning says so). Ignored by the other solvers.
    alpha : float, default=0.0
        L2 penalty: the solvers maximise ``P_n / n - alpha / 2 ||theta||^2``,
        ``theta`` the intercepts and upper-triangular couplings. ``alpha > 0``
        keeps the estimate finite when the MPLE does not exist.
    tol : float, default=1e-5
        Stop when ``P_n`` (the sum over samples, as in the seed, which uses
        1e-5) changes by less than ``tol`` in one iteration.
    max_iter : int, default=1000
        Maximum number of sweeps (bslm, ga) or iterations (mm, lbfgs).
    init : {'zeros', 'random'}, default='zeros'
        Starting point: all parameters 0 (the independent uniform model), or
        normal with variance 0.5 as in the seed's simulation. The maximiser,
        when it exists, is unique: this changes the path, not the result.
    score_method : {'auto', 'exact', 'ais'}, default='auto'
        How :meth:`score_samples` gets ``log Z``: 'exact' enumerates the ``2^d``
        states (``d <= 25``); 'ais' uses annealed importance sampling from the
        naive mean-field independent model; 'auto' is exact for ``d <= 20``.
    ais_n_chains : int, default=100
        Number of independent AIS chains.
    ais_betas : int, {'linear', 'three-segment'} or array-like, default=1000
        AIS inverse temperatures, as in the RBM estimators: a count of evenly
        spaced ones, or a named schedule (see
        :func:`sklearn_rbm.likelihood.ais_betas`). One Gibbs sweep per
        temperature.
    compute_std : bool, default=True
        Compute the sandwich standard errors ``coupling_std_`` and
        ``intercept_std_`` (cost O(n d^4 + d^6), so d <= 100); needed by
        :meth:`confidence_intervals`.
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
        Sandwich standard errors of ``coupling_`` (0 on the diagonal). Only with
        ``compute_std=True``; ``inf`` when the Hessian is singular.
    intercept_std_ : ndarray of shape (n_features,)
        Sandwich standard errors of ``intercept_``.
    n_iter_ : int
        Number of sweeps or iterations run.
    pseudo_likelihood_curve_ : ndarray of shape (`n_iter_` + 1,)
        Mean log pseudo-likelihood per sample (minus the penalty when
        ``alpha > 0``) at the start and after every iteration; never decreases
        for 'bslm', 'mm' and 'ga' with ``step_size <= 1``.
    mple_exists_ : bool or None
        False when the data admit no MPLE (a warning says so, see
        :class:`MPLEDoesNotExistWarning`); True when it exists (proved), or
        when ``alpha > 0``; None when undecided (a warning says so) or not
        checked (``d > 100`` with many distinct rows: only constant features
        are then detected).
    input_values_ : tuple
        ``(0, 1)`` or ``(-1, 1)``: the convention of the training data, used by
        :meth:`sample`.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    sklearn.neighbors.KernelDensity : a non-parametric density estimator.

    Notes
    -----
    The MPLE is consistent and asymptotically normal, but it does not always
    exist: when a conditional is separable (e.g. a constant feature, or the
    nearly frozen data of the seed's N(0, 0.5) couplings for ``d >= 10``) the
    log-PL rises forever along some direction. The fit detects this and warns.

    References
    ----------
    H. D. Nguyen and I. A. Wood (2016). A block successive lower-bound
    maximization algorithm for the maximum pseudo-likelihood estimation of
    fully visible Boltzmann machines. Neural Computation 28, 485-492.

    A. Hyvarinen (2006). Consistency of pseudolikelihood estimation of fully
    visible Boltzmann machines. Neural Computation 18, 2283-2292.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm._fvbm import FVBMPseudoLikelihood, make_fvbm
    >>> X, coupling, intercept = make_fvbm(
    ...     4000, 5, coupling_variance=0.1, random_state=0)
    >>> fvbm = FVBMPseudoLikelihood(solver="mm").fit(X)
    >>> fvbm.coupling_.shape
    (5, 5)
    >>> bool(np.all(np.abs(fvbm.coupling_ - coupling) < 4 * fvbm.coupling_std_ + 1e-12))
    True
    >>> bool(fvbm.score(X) < fvbm.pseudo_log_likelihood(X).mean() + 5)
    True
    """

    _parameter_constraints: dict = {
        "solver": [StrOptions(set(_SOLVERS))],
        "step_size": [Interval(numbers.Real, 0, None, closed="neither")],
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "init": [StrOptions({"zeros", "random"})],
        **SCORE_PARAMETER_CONSTRAINTS,
        "compute_std": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        solver="lbfgs",
        step_size=1.0,
        alpha=0.0,
        tol=1e-5,
        max_iter=1000,
        init="zeros",
        score_method="auto",
        ais_n_chains=100,
        ais_betas=1000,
        compute_std=True,
        random_state=None,
        verbose=0,
    ):
        self.solver = solver
        self.step_size = step_size
        self.alpha = alpha
        self.tol = tol
        self.max_iter = max_iter
        self.init = init
        self.score_method = score_method
        self.ais_n_chains = ais_n_chains
        self.ais_betas = ais_betas
        self.compute_std = compute_std
        self.random_state = random_state
        self.verbose = verbose

    # -- fitting ------------------------------------------------------------

    def _check_step_size(self):
        """Warn about a step size without guarantee, or one that is ignored."""
        if self.solver == "ga" and self.step_size > 1:
            warnings.warn(
                f"step_size={self.step_size} > 1: gradient ascent has no monotone "
                "or convergence guarantee beyond 1 (Nguyen & Wood 2016, Sec. 4); "
                "the log pseudo-likelihood may decrease or diverge. Use "
                "step_size <= 1 or solver='bslm'.",
                UserWarning,
                stacklevel=4,
            )
        elif self.solver != "ga" and self.step_size != 1.0:
            warnings.warn(
                f"step_size is only used by solver='ga'; it is ignored by "
                f"solver={self.solver!r}.",
                UserWarning,
                stacklevel=4,
            )

    def _initial_parameters(self, n_features):
        if self.init == "zeros":
            return np.zeros(n_features), np.zeros((n_features, n_features))
        rng = check_random_state(self.random_state)
        upper = np.triu(rng.normal(0.0, np.sqrt(0.5), (n_features, n_features)), 1)
        return rng.normal(0.0, np.sqrt(0.5), n_features), upper + upper.T

    @_fit_context(prefer_skip_nested_validation=True)
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
        X = validate_data(
            self, X, dtype=[np.float64, np.float32], ensure_min_features=2
        )
        spins, self.input_values_ = _to_spins(X)
        self._check_step_size()
        # BLAS calls here act on vectors and matrices of size p = d(d+1)/2 (L-BFGS
        # updates, Cholesky factors, triangular solves), where threads only add
        # overhead -- a lot of it when the cores are busy.
        with threadpool_limits(limits=1, user_api="blas"):
            return self._fit(X, spins)

    def _fit(self, X, spins):
        rows, w = _distinct_rows(spins)
        problem = _Problem(rows, w, X.shape[0], float(self.alpha))
        intercept, coupling = self._initial_parameters(X.shape[1])
        intercept, coupling, curve, n_iter, converged = _SOLVERS[self.solver](
            problem, intercept, coupling, self
        )
        if not np.isfinite(curve[-1]):
            raise FloatingPointError(
                f"The fit diverged (the log pseudo-likelihood became {curve[-1]}) "
                f"with solver={self.solver!r} and step_size={self.step_size}. "
                "Use step_size <= 1, which keeps the seed's monotone guarantee, "
                "or solver='bslm'."
            )
        self.intercept_, self.coupling_ = intercept, coupling
        self._forget_log_partition()
        self._ais_seed = child_seed(self.random_state)
        self.n_iter_ = n_iter
        self.pseudo_likelihood_curve_ = np.asarray(curve)
        T, hessian = None, None
        if _dense_fits(X.shape[1]):
            T, hessian = _curvature_at(rows, w, intercept, coupling, float(self.alpha))
        self.mple_exists_ = True
        if self.alpha == 0:
            self.mple_exists_ = _check_existence(
                rows, w, intercept, coupling, T, hessian
            )
        if not converged and self.mple_exists_:
            advice = "increase max_iter" + (
                ""
                if self.solver == "lbfgs"
                else ", or use solver='lbfgs', which copes better with nearly "
                "deterministic conditionals"
            )
            warnings.warn(
                f"{self.solver!r} stopped after max_iter={self.max_iter} iterations "
                f"before the log pseudo-likelihood rise fell below tol={self.tol}; "
                f"{advice}.",
                ConvergenceWarning,
                stacklevel=4,
            )
        if self.compute_std:
            self._set_standard_errors(rows, w, X.shape[0], T, hessian)
        return self

    def _set_standard_errors(self, X, w, n_samples, T, hessian):
        d = X.shape[1]
        if not _dense_fits(d):
            warnings.warn(
                f"compute_std=True needs p x p matrices, p = d(d+1)/2 = "
                f"{d * (d + 1) // 2}, and is limited to d <= 100: no standard "
                "errors. Set compute_std=False to silence this.",
                UserWarning,
                stacklevel=5,
            )
            return
        if hessian is None:
            warnings.warn(
                "The pseudo-likelihood Hessian is singular at the estimate: the "
                "standard errors are infinite.",
                UserWarning,
                stacklevel=5,
            )
            variances = np.full(d + d * (d - 1) // 2, np.inf)
        else:
            covariance = _sandwich_covariance(X, w, n_samples, T, hessian)
            variances = np.clip(np.diag(covariance), 0.0, None)
        self.intercept_std_, self.coupling_std_ = _unpack(np.sqrt(variances), d)

    # -- queries ------------------------------------------------------------

    def _spins(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return _to_spins(X)[0]

    def pseudo_log_likelihood(self, X):
        """Log pseudo-likelihood of each sample, ``sum_j log P(x_j | x_-j)``.

        This is the fitted objective (seed eq. 2.1, one term per sample), not
        the log-likelihood: see :meth:`score_samples` for that.

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
        return _energies(spins, self.coupling_, self.intercept_)

    def _enumerated_units(self):
        return self.n_features_in_

    def _exact_log_partition(self):
        return kernels.log_partition_exact(self.coupling_, self.intercept_)

    def _ais_log_partition(self, n_chains, betas, random_state):
        """AIS from the naive mean-field independent model (see the kernel)."""
        base = _mean_field_fields(self.coupling_, self.intercept_)
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
        random_state : int, RandomState instance or None, default=None
            Seed of the draws; ``None`` uses the estimator's ``random_state``,
            so an int ``random_state`` gives the same samples on every call.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            Samples with values in ``input_values_``.
        """
        check_is_fitted(self)
        spins = sample_fvbm(
            self.coupling_,
            self.intercept_,
            n_samples,
            burn_in=burn_in,
            thinning=thinning,
            random_state=self.random_state if random_state is None else random_state,
        )
        return _from_spins(spins, self.input_values_)

    def confidence_intervals(self, alpha=0.05):
        """Wald confidence intervals from the sandwich standard errors.

        Parameters
        ----------
        alpha : float, default=0.05
            One minus the coverage: 0.05 gives 95% intervals ``estimate +-
            1.96 std``. (Not the penalty ``alpha`` of the estimator.)

        Returns
        -------
        coupling_interval : ndarray of shape (n_features, n_features, 2)
            Lower and upper bounds for each coupling (0, 0 on the diagonal).
        intercept_interval : ndarray of shape (n_features, 2)
            Lower and upper bounds for each intercept.
        """
        check_is_fitted(self)
        if not hasattr(self, "coupling_std_"):
            raise AttributeError(
                "confidence_intervals needs the standard errors: refit with "
                "compute_std=True."
            )
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}.")
        z = scipy.stats.norm.ppf(1 - alpha / 2)

        def interval(estimate, std):
            return np.stack([estimate - z * std, estimate + z * std], axis=-1)

        return (
            interval(self.coupling_, self.coupling_std_),
            interval(self.intercept_, self.intercept_std_),
        )
