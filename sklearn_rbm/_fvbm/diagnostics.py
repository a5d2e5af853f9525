"""The curvature of the log pseudo-likelihood at a fit, and the sandwich
standard errors of the parameters.

The curvature is ``H = sum_i w_i sum_j (1 - tanh^2 a_ij) z_ij z_ij^T (+ alpha
I)`` over the ``p = d(d+1)/2`` parameters (``z_ij`` is row ``i`` with entry
``j`` replaced by 1: the gradient of the field ``a_ij``). The existence
certificate of :mod:`.existence` needs only solves with ``H``, done by
conjugate gradients at any size; the standard errors need the diagonal of
``H^-1 J H^-1``, for which ``H`` and ``J`` are formed as dense ``p x p``
matrices (``d <= 100``).
"""

import math

import numpy as np
import scipy.linalg
from scipy.linalg.blas import ssymm, ssyrk
from scipy.linalg.lapack import dpotri

from .._numerics.newton import conjugate_gradient
from . import kernels
from .joint import PseudoLikelihood, theta_matrix
from .model import pack, unpack

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


def max_dense_features():
    """The largest ``d`` whose ``p x p`` matrices may be formed (100)."""
    return (math.isqrt(8 * MAX_DENSE_PARAMETERS + 1) - 1) // 2


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
