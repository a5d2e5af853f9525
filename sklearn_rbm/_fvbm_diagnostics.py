"""What a fitted FVBM can say about itself: whether its MPLE exists, and the
sandwich standard errors of its parameters.

Both use the curvature of the log pseudo-likelihood at the fit, ``H = sum_i w_i
sum_j (1 - tanh^2 a_ij) z_ij z_ij^T (+ alpha I)`` over the ``p = d(d+1)/2``
parameters (``z_ij`` is row ``i`` with entry ``j`` replaced by 1: the gradient
of the field ``a_ij``). The existence certificate needs only solves with
``H``, done by conjugate gradients at any size; the standard errors need the
diagonal of ``H^-1 J H^-1``, for which ``H`` and ``J`` are formed as dense ``p
x p`` matrices (``d <= 100``).
"""

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse
from scipy.linalg.blas import ssymm, ssyrk
from scipy.linalg.lapack import dpotri
from sklearn.exceptions import ConvergenceWarning

from ._fvbm_joint import (
    PseudoLikelihood,
    conjugate_gradient,
    split_theta,
    theta_matrix,
)
from ._fvbm_model import pack, unpack
from ._kernels import fvbm as kernels
from ._utils import warn

# The existence check solves the separation LP directly up to this many
# constraints (distinct rows x d) and by cutting planes beyond.
_SEPARATION_FULL_LP_ROWS = 50_000
_SEPARATION_MAX_ROUNDS = 20
#: Dense p x p matrices (p = d(d+1)/2, the curvature and the sandwich of the
#: standard errors) are formed up to d = 100 (200 MB each).
MAX_DENSE_PARAMETERS = 5050
# Without the dense factor, the existence certificate's Newton correction is
# solved by conjugate gradients (float32 products) to this relative residual:
# the certificate's weights then balance the conditionals up to 1e-4 of the
# fit's gradient, itself already at the solver's tolerance, and a further
# correction of that residual would move them 1e4 times less than the first.
_SOLVE_RTOL = 1e-4
_SOLVE_MAX_STEPS = 500
# Rows of the n x p (or n x d^2 / 2) scratch arrays of the dense products.
_CHUNK_ENTRIES = 1 << 22


def dense_fits(n_features):
    """Whether the ``p x p`` matrices of ``n_features`` units may be formed."""
    return n_features * (n_features + 1) // 2 <= MAX_DENSE_PARAMETERS


class MPLEDoesNotExistWarning(ConvergenceWarning):
    """The data admit no maximum pseudo-likelihood estimate (it lies at infinity).

    Raised by :class:`FVBMPseudoLikelihood` when some conditional is
    (quasi-)separable and nothing keeps the estimate finite (``alpha == 0``,
    or a constant feature, whose intercept the L1 penalty leaves free): the
    log pseudo-likelihood keeps rising along a direction of the parameters,
    so every solver's estimates run off to infinity and stop wherever the
    tolerance stops them. Set ``alpha > 0`` or remove the feature.
    """


def _chunks(n_rows, row_size):
    step = max(1, _CHUNK_ENTRIES // max(row_size, 1))
    return [slice(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]


class FitCurvature:
    """The log-PL's derivatives at a fitted ``(b, M)``, and solves with ``H``.

    ``H`` is minus the Hessian of the (L2-penalised) mean log-PL; with
    ``dense=True`` it is formed and factorised (None when singular), else
    :meth:`solve` runs conjugate gradients on Hessian-vector products.
    """

    def __init__(self, X, w, intercept, coupling, alpha_l2, *, dense):
        self.X, self.w = X, w
        self.objective = PseudoLikelihood(
            X, w, alpha_l2=alpha_l2, hessian_dtype=np.float64 if dense else np.float32
        )
        self.Theta = theta_matrix(intercept, coupling)
        _, self.gradient = self.objective.derivatives(self.Theta)
        self.factor = self._factorise(alpha_l2) if dense else None
        self.singular = dense and self.factor is None

    def _factorise(self, alpha_l2):
        X, D = self.X, self.objective.curvatures
        d = X.shape[1]
        n_pairs = d * (d - 1) // 2
        moments = np.zeros((n_pairs, d))  # sum_i D_ij x_ik x_il, pair by unit
        for rows in _chunks(X.shape[0], n_pairs):
            pairs = np.empty((rows.stop - rows.start, n_pairs))
            kernels.pair_products(X[rows], pairs)
            moments += pairs.T @ D[rows]
        blocks = kernels.node_blocks(moments, D.T @ X, D.sum(axis=0))
        hessian = kernels.scatter_blocks(blocks, kernels.parameter_index(d))
        hessian[np.diag_indices_from(hessian)] += alpha_l2
        try:
            # hessian.T: the same symmetric matrix in the Fortran order LAPACK
            # wants, so it is factorised in place instead of copied.
            return scipy.linalg.cho_factor(hessian.T, overwrite_a=True)
        except np.linalg.LinAlgError:
            return None

    def solve(self, Theta):
        """``H^-1 Theta`` (both in the matrix layout of :mod:`._fvbm_joint`).

        By the Cholesky factor, or else by conjugate gradients to a residual
        of ``_SOLVE_RTOL`` times ``Theta``'s norm.
        """
        if self.factor is not None:
            d = Theta.shape[0]
            packed = pack(np.diagonal(Theta).copy(), Theta)
            return theta_matrix(*unpack(scipy.linalg.cho_solve(self.factor, packed), d))
        objective = self.objective
        step, _ = conjugate_gradient(
            objective.hessian_product,
            Theta,
            objective.preconditioner(),
            objective.inner,
            _SOLVE_RTOL,
            _SOLVE_MAX_STEPS,
        )
        return step

    def tanh(self):
        """``tanh a_ij`` at the fit, from the residuals ``w_i (x_ij - tanh a_ij)``."""
        return self.X - self.objective.residuals / self.w[:, None]


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


def _newton_certificate(curvature):
    """True if a Newton step from the fit proves that the MPLE exists.

    By Stiemke's lemma, no direction ``delta`` has ``G delta >= 0, != 0`` iff
    some weights ``lambda > 0`` satisfy ``G^T lambda = 0``. The fit supplies
    ``lambda_ij = w_i (1 - x_ij t_ij) > 0`` with ``G^T lambda = g``, the gradient;
    the Newton correction ``c = H^{-1} g`` (``H`` minus the Hessian) removes it:
    ``lambda'_ij = lambda_ij [1 - (1 + x_ij t_ij) x_ij dA_ij]`` with ``dA = A(c)``
    has ``G^T lambda' = 0``, and it stays positive (the proof) whenever the
    Newton step moves no conditional by more than about 1/2 -- true near any
    converged fit of data whose MPLE exists.
    """
    if curvature.singular:
        return False
    X = curvature.X
    step = curvature.solve(curvature.gradient)
    moves = X * curvature.objective.fields(step)
    return bool(np.max((1.0 + X * curvature.tanh()) * moves) < 0.999)


def constant_features(X):
    """Warn and return True when a feature is constant (no MPLE, with any
    penalty that leaves the intercepts free)."""
    constant = np.flatnonzero(np.all(X == X[:1], axis=0))
    if constant.size:
        _existence_warning("some features are constant in X", constant)
    return bool(constant.size)


def check_existence(curvature):
    """Detect a non-existent MPLE (for ``alpha == 0``); warn and return False if so.

    The check is exact, not a symptom of the fit (a slow solver can meet
    ``tol`` long before its run-off to infinity shows): a constant feature, then
    the Newton certificate of existence (cheap), then the separation LP (see
    :func:`separating_direction`). Returns None if it could not decide, or
    (without warning) when the certificate fails on data whose LP would be
    large (``d > 100`` and many distinct rows).
    """
    X, w = curvature.X, curvature.w
    if constant_features(X):
        return False
    if _newton_certificate(curvature):
        return True
    if not dense_fits(X.shape[1]) and X.size > _SEPARATION_FULL_LP_ROWS:
        return None
    margins = _margins(X, pack(*split_theta(curvature.Theta)))
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


def sandwich_variances(curvature, n_samples):
    """Diagonal of the asymptotic covariance ``H^-1 J H^-1 / n`` (packed order).

    ``H`` is minus the Hessian of the mean log-PL (plus ``alpha I``) and ``J``
    the covariance of the per-sample scores: the MPLE is asymptotically normal
    with this covariance (Nguyen & Wood 2016, IEEE TNNLS 27(5); a "sandwich"
    because the pseudo-likelihood is not a likelihood, so ``H != J``).

    ``J`` is accumulated by symmetric rank-k updates over chunks of rows (its
    upper triangle only) and ``diag(H^-1 J H^-1) = colsum((J H^-1) * H^-1)``
    by symmetric-times-full products. These two, ``n p^2 / 2`` and ``p^3``
    multiply-adds, are the cost (p = 5,050 at d = 100) and run in float32,
    which moves the standard errors by about 1e-5 relative; ``H`` is
    factorised and inverted in float64. No ``p x p`` array is copied to
    symmetrise it.
    """
    X, w = curvature.X, curvature.w
    d = X.shape[1]
    p = d + d * (d - 1) // 2
    scaled = curvature.objective.residuals / np.sqrt(w)[:, None]  # sqrt(w) (x - t)
    meat = np.zeros((p, p), np.float32, order="F")
    for rows in _chunks(X.shape[0], p):
        scores = np.empty((rows.stop - rows.start, p), np.float32)
        kernels.packed_scores(X[rows], scaled[rows], scores)
        # scores.T is the Fortran-ordered p x n_rows matrix: no copy.
        meat = ssyrk(1.0, scores.T, beta=1.0, c=meat, overwrite_c=True)
    # The mean score is the gradient of the unpenalised log-PL.
    smooth = curvature.gradient + curvature.objective.l2 * curvature.Theta
    mean = pack(np.diagonal(smooth).copy(), smooth).astype(np.float32)
    meat = ssyrk(-1.0, mean[:, None], beta=1.0, c=meat, overwrite_c=True)
    factor, lower = curvature.factor
    inverse, info = dpotri(factor, lower=lower)
    if info != 0:  # pragma: no cover - the factor came from a successful potrf
        raise np.linalg.LinAlgError(f"dpotri failed with info={info}")
    kernels.mirror_triangle(inverse, lower)
    inverse32 = inverse.astype(np.float32)
    variances = np.empty(p)
    for cols in _chunks(p, p):
        half = ssymm(1.0, meat, inverse32[:, cols])  # J H^-1, these columns
        variances[cols] = np.einsum("ij,ij->j", half, inverse[:, cols])
    return np.clip(variances / n_samples, 0.0, None)
