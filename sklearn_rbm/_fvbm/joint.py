"""The log pseudo-likelihood as matrix products, for the solvers that move all
parameters at once (Newton, and MM at any size).

Parameters are held as a matrix whose column ``j`` is unit ``j``'s logistic
regression: its intercept ``b_j`` at row ``j`` and its coupling to unit ``k``
at row ``k``. The fields are ``A = X Theta`` with the intercept's contribution
moved from ``x_ij b_j`` to ``b_j``, and every derivative is a product with
``X``:

* gradient: with residuals ``R_ij = w_i (x_ij - tanh a_ij)``, ``U = X^T R``
  holds each unit's logistic-regression score (``sum_i R_ij`` at the
  intercept);
* minus the Hessian times a direction ``V``: the same map applied to ``S = D *
  (X V completed)``, with curvatures ``D_ij = w_i (1 - tanh^2 a_ij)``.

So a gradient costs two ``n x d x d`` matrix products and one element-wise
pass, and so does a Hessian-vector product. Two layouts of the parameters:

* ``symmetric`` (the FVBM, Nguyen & Wood 2016): ``Theta = M + diag(b)``, the
  coupling ``m_jk`` enters units ``j`` and ``k``, so its derivative is ``U_jk
  + U_kj``; vectors carry the inner product of the packed vector ``[b,
  M[triu]]``, so conjugate gradients here are conjugate gradients on Nguyen &
  Wood's parameter vector;
* node-wise (Ravikumar, Wainwright & Lafferty 2010): each column is a
  separate logistic regression (any subset of the units); the inner product is
  the plain one.

Penalties: ``alpha_l2 / 2 ||theta||^2`` on every parameter, and ``alpha_l1
sum_{j<k} |m_jk|`` on the couplings only (an L1-penalised intercept would pull
rare units towards probability 1/2). In the node-wise layout each unit carries
half of each coupling's penalty, so that the node-wise objectives sum to the
joint one when the couplings are symmetric.
"""

import numpy as np
import scipy.linalg

from . import pass_kernels as passes


def theta_matrix(intercept, coupling):
    """``Theta = M + diag(b)``."""
    Theta = np.array(coupling, dtype=np.float64)
    Theta[np.diag_indices_from(Theta)] = intercept
    return Theta


def split_theta(Theta):
    """``(b, M)`` from a square ``Theta``: the diagonal, and the rest."""
    intercept = np.diagonal(Theta).copy()
    coupling = Theta.copy()
    coupling[np.diag_indices_from(coupling)] = 0.0
    return intercept, coupling


class PseudoLikelihood:
    """The penalised mean log-PL of weighted distinct rows, by BLAS.

    ``units`` are the columns modelled (all of them for the symmetric
    layout). :meth:`value` evaluates a trial point and keeps its fields; then
    :meth:`derivatives` gives the gradient there and keeps the curvatures for
    :meth:`hessian_product`. Values and gradients are float64; Hessian
    products, which only steer the search direction of a Newton step, run in
    ``hessian_dtype`` (float32 halves the cost of their matrix products) and
    on ``hessian_rows`` (a sample of the rows; default all).
    """

    def __init__(
        self,
        X,
        w,
        *,
        units=None,
        alpha_l2=0.0,
        alpha_l1=0.0,
        hessian_dtype=np.float64,
        hessian_rows=None,
    ):
        n, d = X.shape
        self.symmetric = units is None
        self.units = np.arange(d) if units is None else np.asarray(units)
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.XU = np.ascontiguousarray(self.X[:, self.units])
        self.w = w
        self.shape = (d, self.units.size)
        self._rows = self.units  # Theta[units[c], c] is unit units[c]'s intercept
        self._cols = np.arange(self.units.size)
        share = 1.0 if self.symmetric else 0.5  # of each coupling's penalty
        self.l2 = np.full(self.shape, alpha_l2 * share)
        self.l2[self._rows, self._cols] = alpha_l2
        self.l1 = np.full(self.shape, alpha_l1 * share)
        self.l1[self._rows, self._cols] = 0.0
        self.has_l1 = alpha_l1 > 0
        # Hessian products may use a subsample of the rows, reweighted to
        # the total weight (a sub-sampled Newton direction, Byrd, Chin,
        # Neveitt & Nocedal 2011); values and gradients always use all rows.
        self._hessian_rows = hessian_rows
        sample = slice(None) if hessian_rows is None else hessian_rows
        self._hessian_scale = 1.0 if hessian_rows is None else w.sum() / w[sample].sum()
        self._X_h = np.ascontiguousarray(self.X[sample], dtype=hessian_dtype)
        self._XU_h = np.ascontiguousarray(self.XU[sample], dtype=hessian_dtype)
        m = self.units.size
        self._A = np.empty((n, m))
        self._R = np.empty((n, m))
        self._D = np.empty((n, m), hessian_dtype)
        self._D_h = self._D
        self._S = np.empty((self._X_h.shape[0], m), hessian_dtype)
        self._Theta = None

    # -- the vector space of parameters -------------------------------------

    def inner(self, U, V):
        """Inner product of parameter vectors (packed for the symmetric layout)."""
        if self.symmetric:
            return 0.5 * (np.vdot(U, V) + np.dot(np.diagonal(U), np.diagonal(V)))
        return np.vdot(U, V)

    @property
    def intercept_index(self):
        """``Theta[intercept_index]`` are the modelled units' intercepts."""
        return self._rows, self._cols

    def intercepts(self, Theta):
        return Theta[self.intercept_index]

    @property
    def residuals(self):
        """``R_ij = w_i (x_ij - tanh a_ij)`` at the last :meth:`derivatives` point."""
        return self._R

    @property
    def curvatures(self):
        """``D_ij = w_i (1 - tanh^2 a_ij)`` at the last :meth:`derivatives` point."""
        return self._D

    def fields(self, Theta):
        """The fields ``a_ij`` of the modelled units at ``Theta``, a new array."""
        A = self.X @ Theta
        passes.complete_fields(A, self.XU, self.intercepts(Theta).copy())
        return A

    def _to_parameters(self, U, column_sums):
        """Products ``X^T (n x m array)`` arranged as derivatives by parameter."""
        out = U + U.T if self.symmetric else U
        out[self._rows, self._cols] = column_sums
        return out

    # -- value, gradient, Hessian products ------------------------------------

    def penalty(self, Theta):
        total = 0.5 * self.inner(self.l2 * Theta, Theta)
        if self.has_l1:
            total += self.inner(self.l1, np.abs(Theta))
        return total

    def _fields(self, Theta):
        np.matmul(self.X, Theta, out=self._A)
        passes.complete_fields(self._A, self.XU, self.intercepts(Theta).copy())
        self._Theta = Theta

    def value(self, Theta):
        """The objective at ``Theta``; the fields are kept for :meth:`derivatives`."""
        self._fields(Theta)
        log_pl = passes.conditional_pass(self.XU, self._A, self.w)
        return log_pl - self.penalty(Theta)

    def derivatives(self, Theta):
        """``(objective, gradient of its smooth part)``, keeping the curvatures."""
        if self._Theta is not Theta:
            self._fields(Theta)
        log_pl = passes.conditional_pass(self.XU, self._A, self.w, self._R, self._D)
        if self._hessian_rows is not None:
            self._D_h = self._D[self._hessian_rows] * self._D.dtype.type(
                self._hessian_scale
            )
        gradient = self._to_parameters(self.X.T @ self._R, self._R.sum(axis=0))
        gradient -= self.l2 * Theta
        return log_pl - self.penalty(Theta), gradient

    def hessian_product(self, V):
        """Minus the Hessian of the smooth part applied to the direction ``V``."""
        dtype = self._S.dtype
        S = np.matmul(self._X_h, V.astype(dtype), out=self._S)
        column_sums = passes.curvature_weighted_fields(
            S, self._XU_h, self.intercepts(V).astype(dtype), self._D_h
        )
        U = (self._X_h.T @ S).astype(np.float64)
        product = self._to_parameters(U, column_sums)
        product += self.l2 * V
        return product

    def diagonal_preconditioner(self):
        """The inverse of the Hessian's diagonal at the curvatures kept last.

        With ``x_ij^2 = 1`` the diagonal of minus the Hessian is ``sum_i
        D_ij`` at intercept ``j`` and ``sum_i D_ij + D_ik`` at coupling
        ``m_jk`` (only ``D_ij`` in the node-wise layout).
        """
        sums = self._D_h.sum(axis=0, dtype=np.float64)
        diagonal = np.zeros(self.shape) if self.symmetric else np.empty(self.shape)
        if self.symmetric:
            diagonal += sums[:, None]
        diagonal += sums[None, :]
        diagonal[self._rows, self._cols] = sums
        diagonal += self.l2
        # A unit that never varies has no curvature; a tiny floor keeps the
        # division finite (its direction is then the gradient, scaled up).
        inverse = 1.0 / np.maximum(diagonal, 1e-12 * diagonal.mean())
        return lambda residual: residual * inverse

    def preconditioner(self):
        """A :class:`NodeGramPreconditioner` for the curvatures kept last."""
        D = self._D_h
        omega = D.mean(axis=1, dtype=np.float64)
        total = omega.sum()
        scale = D.sum(axis=0, dtype=np.float64) / total
        # A unit whose conditional is (nearly) deterministic on every row has
        # curvatures that underflow to 0; its block keeps a small scale.
        scale = np.maximum(scale, 1e-12 * scale.mean())
        # Keeps C positive definite for constant or duplicated units (a pixel
        # on in one image only, two pixels always equal); a relative 1e-6
        # changes no useful direction of a preconditioner.
        ridge = 0.5 * self.l2.max(initial=0.0) + 1e-6 * total
        # X in the Hessian's dtype: the Gram matrix of a preconditioner need
        # not be exact (float32 halves its n x d x d product)
        return NodeGramPreconditioner(
            self._X_h, omega, scale, ridge, self.units, self.symmetric
        )


class NodeGramPreconditioner:
    """An approximate inverse of ``sum_j Z_j^T diag(omega s_j) Z_j``, in O(d^3).

    Minus the Hessian of the log-PL is a sum over units: unit ``j``'s logistic
    regression has the design ``Z_j`` (``X`` with column ``j`` replaced by
    ones) and the block ``Z_j^T D_j Z_j``. With the curvatures ``D_ij``
    replaced by ``omega_i s_j`` (a row weight times a unit scale) every block
    is ``s_j B_j``, where ``B_j = Z_j^T diag(omega) Z_j`` is the one Gram
    matrix ``C = X^T diag(omega) X`` with row and column ``j`` replaced by ``m
    = X^T omega`` (``x_ij^2 = 1`` keeps the diagonal): a symmetric rank-2
    change of ``C``. One inverse of ``C`` and the Woodbury identity invert all
    the blocks at once, with one ``d x d x d`` product per application. In
    the symmetric layout the blocks are combined as in additive Schwarz: each
    coupling's residual is split evenly between its two units, each unit
    solves its block, and the two answers are averaged.

    With ``omega = w`` and ``s = 1`` the blocks are the fixed curvature bound
    of the MM solver (Nguyen & Wood's ``sech^2 <= 1`` on every conditional).
    """

    def __init__(self, X, omega, scale, ridge, units, symmetric):
        C = ((X.T * omega.astype(X.dtype)) @ X).astype(np.float64)
        C[np.diag_indices_from(C)] += ridge
        m = (X.T @ omega.astype(X.dtype)).astype(np.float64)
        d = C.shape[0]
        Q = scipy.linalg.cho_solve(scipy.linalg.cho_factor(C), np.eye(d))
        # B_j = C + e_j delta_j^T + delta_j e_j^T with delta_j = m - C[:, j]
        # off entry j; Pj = C^-1 delta_j, column by column, for the units.
        cols = np.arange(units.size)
        Delta = m[:, None] - C[:, units]
        Delta[units, cols] = 0.0
        Qu = Q[:, units]
        P = (Q @ m)[:, None] - np.eye(d)[:, units] - Qu * (m - np.diagonal(C))[units]
        # The 2 x 2 capacitance J + U^T C^-1 U of U = [e_j, delta_j], J = [[0,
        # 1], [1, 0]], for every unit.
        self._k11 = Qu[units, cols]
        self._k12 = 1.0 + P[units, cols]
        self._k22 = np.einsum("kj,kj->j", Delta, P)
        self._det = self._k11 * self._k22 - self._k12**2
        # det(B_j) = -det(C) det(K_j), so det(K_j) < 0. Where rounding has
        # cancelled it (B_j numerically singular), unit j keeps C^-1 alone:
        # still a positive definite block, so still a valid preconditioner.
        scale_k = self._k11 * np.abs(self._k22) + self._k12**2
        exact = np.isfinite(self._det) & (self._det < -1e-10 * scale_k)
        self._det[~exact] = -1.0
        self._k11[~exact] = self._k12[~exact] = self._k22[~exact] = 0.0
        self._Q, self._Qu, self._P = Q, Qu, P
        self._C, self._Delta = C, Delta
        self._units, self._cols = units, cols
        self._scale = scale
        self._symmetric = symmetric

    def block_product(self, V):
        """The blocks themselves applied to ``V``: ``s_j B_j v_j`` per unit.

        ``B_j v = C v + e_j (delta_j^T v) + delta_j v_j``: one ``d x d x d``
        product for all units. With ``omega = w`` and ``s = 1`` this is the
        MM solver's curvature bound times ``V``, never formed as a ``p x p``
        matrix.
        """
        units, cols = self._units, self._cols
        Y = self._C @ V
        Y[units, cols] += np.einsum("kj,kj->j", self._Delta, V)
        Y += self._Delta * V[units, cols]
        Y *= self._scale
        if not self._symmetric:
            return Y
        out = Y + Y.T
        out[units, cols] = Y[units, cols]
        return out

    def __call__(self, residual):
        """Approximately solve ``H V = residual``."""
        rhs = residual / self._scale  # column j: unit j's block, over s_j
        if self._symmetric:  # each coupling's residual split between its units
            rhs *= 0.5
            rhs[self._units, self._cols] *= 2.0
        Y = self._Q @ rhs
        a = Y[self._units, self._cols]
        c = np.einsum("kj,kj->j", self._P, rhs)
        alpha = (self._k22 * a - self._k12 * c) / self._det
        beta = (self._k11 * c - self._k12 * a) / self._det
        Y -= self._Qu * alpha
        Y -= self._P * beta
        if not self._symmetric:
            return Y
        out = 0.5 * (Y + Y.T)
        out[self._units, self._cols] = Y[self._units, self._cols]
        return out
