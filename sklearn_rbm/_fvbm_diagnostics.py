"""What a fitted FVBM can say about itself: whether its MPLE exists, and the
sandwich standard errors of its parameters.

Both need the curvature of the log pseudo-likelihood at the fit, the ``p x p``
matrix ``H = sum_i w_i sum_j (1 - tanh^2 a_ij) z_ij z_ij^T (+ alpha I)`` over
the ``p = d(d+1)/2`` parameters (``z_ij`` is row ``i`` with entry ``j``
replaced by 1: the gradient of the field ``a_ij``).
"""

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse
from sklearn.exceptions import ConvergenceWarning

from ._fvbm_model import pack, unpack
from ._kernels import fvbm as kernels
from ._utils import warn

# The existence check solves the separation LP directly up to this many
# constraints (distinct rows x d) and by cutting planes beyond.
_SEPARATION_FULL_LP_ROWS = 50_000
_SEPARATION_MAX_ROUNDS = 20
#: Dense p x p matrices (p = d(d+1)/2: the Hessian of the existence certificate
#: and of the sandwich) are formed up to d = 100 (200 MB).
MAX_DENSE_PARAMETERS = 5050


def dense_fits(n_features):
    """Whether the ``p x p`` matrices of ``n_features`` units may be formed."""
    return n_features * (n_features + 1) // 2 <= MAX_DENSE_PARAMETERS


class MPLEDoesNotExistWarning(ConvergenceWarning):
    """The data admit no maximum pseudo-likelihood estimate (it lies at infinity).

    Raised by :class:`FVBMPseudoLikelihood` when ``alpha == 0`` and some
    conditional is (quasi-)separable: the log pseudo-likelihood keeps rising
    along a direction of the parameters, so every solver's estimates run off to
    infinity and stop wherever the tolerance stops them. Set ``alpha > 0``.
    """


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
    intercept, coupling = unpack(theta, X.shape[1])
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


def separating_direction(X, w, margins):
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
    warn(
        f"The maximum pseudo-likelihood estimate does not exist for these data: "
        f"{what} (features {features.tolist()}), so the log pseudo-likelihood keeps "
        "rising as the estimates run off to infinity; coupling_ and intercept_ are "
        "only where the solver stopped. Set alpha > 0 (e.g. alpha=1e-3) for a "
        "finite penalised estimate, or remove the offending features.",
        MPLEDoesNotExistWarning,
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
    step = scipy.linalg.cho_solve(hessian, pack(grad_b, grad_M))
    moves = X * kernels.predictors(X, *unpack(step, X.shape[1]))
    return bool(np.max((1.0 + X * T) * moves) < 0.999)


def check_existence(X, w, intercept, coupling, T, hessian):
    """Detect a non-existent MPLE (for ``alpha == 0``); warn and return False if so.

    The check is exact, not a symptom of the fit (a slow solver can meet
    ``tol`` long before its run-off to infinity shows): a constant feature, then
    the Newton certificate of existence (cheap), then the separation LP (see
    :func:`separating_direction`). Returns None if it could not decide, or
    (without warning) when ``d > 100`` and the LP would be large: then only
    constant features are detected.
    """
    constant = np.flatnonzero(np.all(X == X[:1], axis=0))
    if constant.size:
        _existence_warning("some features are constant in X", constant)
        return False
    if _newton_certificate(X, w, intercept, coupling, T, hessian):
        return True
    if not dense_fits(X.shape[1]) and X.size > _SEPARATION_FULL_LP_ROWS:
        return None
    margins = _margins(X, pack(intercept, coupling))
    exists, features, _ = separating_direction(X, w, margins)
    if exists is None:
        warn(
            "Could not decide whether the maximum pseudo-likelihood estimate "
            "exists (the separation LP did not settle); if the estimates are "
            "large, set alpha > 0.",
            MPLEDoesNotExistWarning,
        )
    elif not exists:
        _existence_warning(
            "some conditionals are perfectly predicted (separation)", features
        )
    return exists


# ---------------------------------------------------------------------------
# Sandwich standard errors


def curvature_at(X, w, intercept, coupling, alpha):
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


def sandwich_covariance(X, w, n_samples, T, hessian):
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
