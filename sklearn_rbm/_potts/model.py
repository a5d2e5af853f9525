"""The Potts model's parameters as the solvers see them, and the penalised
pseudo-likelihood objective.

The parameter vector is plmc's: the fields ``h`` (L, q) followed by one
(q, q) block ``e_ij`` per pair ``i < j`` (row-major over pairs), so that
``lambda_e * ||theta_e||^2`` is plmc's ``lambda_e sum_{i<j} ||e_ij||^2``.
"""

import numpy as np

from . import kernels

#: Rows whose float32 conditional fields the objective holds at once.
CHUNK = 2048
#: Parameters beyond this size (a line search probing far away) are
#: evaluated in float64: sums of L of them could overflow float32.
_FLOAT32_SAFE = 1e30


class PairLayout:
    """Where the pair blocks of an (L, q) model sit, and the conversions
    between the parameter vector, the symmetric coupling tensor ``J`` and the
    kernels' site-major ``Jt``."""

    def __init__(self, n_sites, n_states):
        self.L, self.q = n_sites, n_states
        self.rows, self.cols = np.triu_indices(n_sites, k=1)
        self.n_fields = n_sites * n_states
        self.size = self.n_fields + self.rows.size * n_states * n_states

    def split(self, theta):
        L, q = self.L, self.q
        h = theta[: self.n_fields].reshape(L, q)
        e = theta[self.n_fields :].reshape(-1, q, q)
        return h, e

    def site_major(self, e, dtype=np.float64):
        """``Jt[i, j] = J[i, j].T`` from the pair blocks ``e``."""
        L, q = self.L, self.q
        Jt = np.zeros((L, L, q, q), dtype=dtype)
        Jt[self.rows, self.cols] = e.transpose(0, 2, 1)
        Jt[self.cols, self.rows] = e
        return Jt

    def symmetric(self, e):
        """``J`` (L, L, q, q), ``J[i, j, a, b] = J[j, i, b, a]``."""
        L, q = self.L, self.q
        J = np.zeros((L, L, q, q))
        J[self.rows, self.cols] = e
        J[self.cols, self.rows] = e.transpose(0, 2, 1)
        return J

    def fold(self, grad_Jt):
        """The gradient of each pair block from the free-entry gradient of
        ``Jt``: ``J[i, j, a, b]`` is ``Jt[i, j, b, a]`` and ``Jt[j, i, a, b]``."""
        return (
            grad_Jt[self.rows, self.cols].transpose(0, 2, 1)
            + grad_Jt[self.cols, self.rows]
        )


def column_order(X):
    """The columns of ``X`` from the fewest distinct values to the most (ties
    by position): sorted in this order, neighbouring rows agree on long
    prefixes."""
    n_values = np.array([np.unique(column).size for column in X.T])
    return np.argsort(n_values, kind="stable").astype(np.intp)


class PseudoLikelihoodObjective:
    """``f(theta) = -sum_s w_s sum_i log P(x_si | x_s,-i) + lambda_h ||h||^2
    + lambda_e sum_{i<j} ||e_ij||^2`` and its gradient (plmc's
    ``PLMNegLogPosterior``), over the distinct rows ``X`` with weights ``w``.

    The data term is computed in ``dtype`` (float32 by default of the
    estimator: the fields of one row are sums of ``L`` terms of order 1, so
    float32 keeps the gradient to a relative 1e-5, well below what L-BFGS
    resolves, at half the memory traffic) and summed in float64. Rows are
    processed in chunks of ``chunk`` (their residuals are held at once).
    The work buffers are allocated once; ``n_evaluations`` counts calls.
    """

    def __init__(self, X, w, layout, lambda_h, lambda_e, dtype=np.float64, chunk=CHUNK):
        # The kernel reuses the partial sums of the fields over the columns
        # a row shares with the row before it: sort the columns from the most
        # conserved and the rows in that column order (the objective does not
        # depend on the order of the rows).
        self.order = column_order(X)
        rows = np.lexsort(X[:, self.order[::-1]].T)
        X, w = np.ascontiguousarray(X[rows]), np.asarray(w)[rows]
        self.X, self.w, self.layout = X, w, layout
        # Each site's state held by the most rows (the lowest on ties): the
        # kernels' sums leave it out (``kernels.pseudo_likelihood_residuals``).
        self.common = site_counts(X, None, layout.q).argmax(axis=1)
        self.lambda_h, self.lambda_e = float(lambda_h), float(lambda_e)
        self.dtype = np.dtype(dtype)
        self.chunk = min(chunk, max(X.shape[0], 1))
        # The kernels see the weights over their largest, so that float32
        # residuals stay within [-1, 1] whatever the weights' scale.
        top = float(np.max(w, initial=0.0))
        self.w_scale = top if top > 0 else 1.0
        self.row_loss = np.empty(X.shape[0])
        self._buffers = {}
        self.n_evaluations = 0

    def _work(self, dtype):
        """The scaled weights, coupling gradient, residual chunk, relative
        couplings and base fields (``kernels.stage_parameters``) in ``dtype``,
        allocated at the first use."""
        if dtype not in self._buffers:
            L, q = self.layout.L, self.layout.q
            self._buffers[dtype] = (
                (self.w / self.w_scale).astype(dtype),
                np.empty((L, q, L * q), dtype=dtype),
                np.empty((self.chunk, L * q), dtype=dtype),
                np.zeros((L, q, L * q), dtype=dtype),  # diagonal blocks stay 0
                np.empty(L * q, dtype=dtype),
            )
        return self._buffers[dtype]

    def _data_term(self, w, G, R, D, base):
        """The negative log pseudo-likelihood over the weights ``w / w_scale``
        at the staged base fields and relative couplings ``D``; its row-major
        coupling gradient left in ``G``, its field gradient returned."""
        grad_h = np.zeros(base.size)
        for start in range(0, self.X.shape[0], R.shape[0]):
            kernels.pseudo_likelihood_residuals(
                self.X, self.order, self.common, w, base, D, R, self.row_loss, start
            )
            kernels.scatter_residuals(self.X, R, G, start, self.common)
            grad_h += R[: self.X.shape[0] - start].sum(axis=0, dtype=np.float64)
        kernels.complete_common_rows(G, grad_h, self.common)
        return float(np.sum(self.row_loss)), grad_h

    def evaluate(self, x, grad, direction=None, step=0.0, scale=None):
        """The objective at ``theta = (x + step * direction) * scale`` (None:
        no direction, no scaling), its gradient in ``x`` written into
        ``grad``; returns ``(value, grad . direction)``.

        ``theta`` is never formed: one compiled pass writes the kernels'
        couplings from ``x`` and ``direction``, another folds the data
        gradient and adds the penalty's (the L-BFGS solver's line search
        probes points along its direction this way).
        """
        layout = self.layout
        staged = (x, direction, step, scale, layout.rows, layout.cols)
        dtype = self.dtype
        w, G, R, D, base = self._work(dtype)
        top, fields, couplings = kernels.stage_parameters(*staged, self.common, base, D)
        if dtype != np.float64 and not top < _FLOAT32_SAFE:
            # A line search's far probe: sums of L such terms overflow float32.
            w, G, R, D, base = self._work(np.dtype(np.float64))
            top, fields, couplings = kernels.stage_parameters(
                *staged, self.common, base, D
            )
        loss, grad_h = self._data_term(w, G, R, D, base)
        slope = kernels.gather_gradient(
            G, grad_h, self.w_scale, *staged, self.lambda_h, self.lambda_e, grad
        )
        self.n_evaluations += 1
        penalty = self.lambda_h * fields + self.lambda_e * couplings
        return loss * self.w_scale + penalty, slope

    def float32_gradient_fits(self, largest_scale):
        """Whether float32 holds every entry ``scale_k (data_k + 2 lambda
        theta_k)`` of the gradient in variables scaled by at most
        ``largest_scale``, and is as precise as it: the data term is float32
        and at most twice the total weight per entry, ``|theta|`` below
        ``_FLOAT32_SAFE`` wherever it is float32 (farther line-search probes
        are never accepted steps)."""
        largest_penalty = 2.0 * max(self.lambda_h, self.lambda_e) * _FLOAT32_SAFE
        bound = float(largest_scale) * (2.0 * float(np.sum(self.w)) + largest_penalty)
        limit = 0.25 * float(np.finfo(np.float32).max)
        return self.dtype == np.float32 and bound < limit

    def __call__(self, theta):
        grad = np.empty(theta.size)
        value, _ = self.evaluate(theta, grad)
        return value, grad

    def hessian(self, theta, sample=None):
        """``v -> H v``, the objective's exact Hessian at ``theta`` times a
        vector, the data term taken on the rows ``sample`` (None: all) with
        their weights scaled up to the total weight (a subsampled Hessian
        only steers Newton's direction; Byrd, Chin, Neveitt & Nocedal 2011).
        """
        layout = self.layout
        X, w = self.X, self.w
        if sample is not None:
            X, w = X[sample], w[sample] * (w.sum() / w[sample].sum())
        h, e = layout.split(theta)
        P = kernels.conditional_probabilities(
            X, np.ascontiguousarray(h), layout.site_major(e)
        )
        curvature = np.concatenate(
            [np.full(layout.n_fields, 2.0 * self.lambda_h),
             np.full(theta.size - layout.n_fields, 2.0 * self.lambda_e)]
        )  # fmt: skip
        L, q = layout.L, layout.q
        out_h, out_Jt = np.empty((L, q)), np.empty((L, L, q, q))

        def product(v):
            vh, ve = layout.split(v)
            kernels.pseudo_likelihood_hessian_product(
                X, w, P, np.ascontiguousarray(vh), layout.site_major(ve), out_h, out_Jt
            )
            data = np.concatenate([out_h.ravel(), layout.fold(out_Jt).ravel()])
            return data + curvature * v

        return product


def zero_sum_gauge(h, J, overwrite=False):
    """The same distribution with every coupling block's rows and columns
    summing to zero and every field summing to zero (the fields absorb the
    block means; the additive constant goes into ``log Z``). With
    ``overwrite``, ``J`` itself is gauged (a fit's own tensor: one
    (L, L, q, q) tensor less)."""
    row_mean = J.mean(axis=3, keepdims=True)  # J_ij(a, .)
    col_mean = J.mean(axis=2, keepdims=True)  # J_ij(., b)
    all_mean = J.mean(axis=(2, 3), keepdims=True)
    J0 = J if overwrite else J.copy()
    J0 -= row_mean
    J0 -= col_mean
    J0 += all_mean
    h0 = h + (row_mean[..., 0] - all_mean[..., 0]).sum(axis=1)
    h0 = h0 - h0.mean(axis=1, keepdims=True)
    return h0, J0


def site_counts(X, w, q):
    """Weighted counts ``c_i(a) = sum_s w_s [x_si = a]``, shape (L, q)."""
    L = X.shape[1]
    counts = np.zeros((L, q))
    for i in range(L):
        counts[i] = np.bincount(X[:, i], weights=w, minlength=q)[:q]
    return counts


def independent_fields(X, w, q, pseudocount=1.0):
    """plmc's start: ``h_i(a) = log(n_eff f_i(a) + 1)`` centred (Laplace's
    rule with one pseudocount)."""
    h = np.log(site_counts(X, w, q) + pseudocount)
    return h - h.mean(axis=1, keepdims=True)


def diagonal_preconditioner(X, w, layout, lambda_h, lambda_e):
    """An estimate of the diagonal of the objective's Hessian, from the
    weighted single and pair counts ``c`` of the data (one pseudocount):
    ``c_i(a) (1 - f_i(a)) + 2 lambda_h`` for a field and ``c_ij(a, b) (2 -
    f_i(a) - f_j(b)) + 2 lambda_e`` for a coupling (the curvature of the two
    conditionals it enters, at conditionals equal to the frequencies).

    L-BFGS on the variables scaled by its square root converges in about
    half the iterations on protein families: the curvature of a coupling
    between rare states is the penalty alone, that of a common pair is
    thousands of times larger."""
    single = site_counts(X, w, layout.q) + 1.0
    f = single / single.sum(axis=1, keepdims=True)
    diagonal = np.empty(layout.size)
    diagonal[: layout.n_fields] = (single * (1.0 - f) + 2.0 * lambda_h).ravel()
    kernels.coupling_curvature(
        np.ascontiguousarray(X.T), w, f, layout.rows, layout.cols, lambda_e,
        diagonal[layout.n_fields :].reshape(-1, layout.q, layout.q),
    )  # fmt: skip
    return diagonal


def _narrowed(scale):
    """``scale`` in float32 where float32 holds every entry as a normal
    number, else in float64 (penalties up to 1e300). The rounded scale *is*
    the preconditioner, used for every evaluation and the result alike; the
    two passes of each evaluation read it at half the bytes."""
    limits = np.finfo(np.float32)
    # NaN fails both comparisons; min and max allocate nothing.
    if scale.min() >= 2.0 * limits.tiny and scale.max() <= 0.5 * limits.max:
        return scale.astype(np.float32)
    return scale


class Preconditioned:
    """``objective(x * scale)``, ``scale = 1 / sqrt(D)``, as the L-BFGS
    solver evaluates it: ``(x, d, t, grad) -> (value, slope)`` at ``x + t d``
    with the gradient in ``x`` written into ``grad`` and its dot product with
    ``d`` (``_numerics.lbfgs``). Objectives with a fused ``evaluate`` (the
    pseudo-likelihood) take the step and the scaling in their own passes."""

    def __init__(self, objective, diagonal):
        self.objective = objective
        scale = np.sqrt(diagonal)
        self.scale = _narrowed(np.divide(1.0, scale, out=scale))

    @property
    def gradient_dtype(self):
        """float32 when the objective's gradient is no more precise than
        that and float32 holds it (:meth:`PseudoLikelihoodObjective.
        float32_gradient_fits`), else float64."""
        fits = getattr(self.objective, "float32_gradient_fits", None)
        narrow = self.scale.dtype == np.float32 and fits is not None
        return np.float32 if narrow and fits(self.scale.max()) else np.float64

    def __call__(self, x, d, t, grad):
        if hasattr(self.objective, "evaluate"):
            return self.objective.evaluate(x, grad, d, t, self.scale)
        value, theta_grad = self.objective((x + t * d) * self.scale)
        np.multiply(theta_grad, self.scale, out=grad)
        return value, float(grad @ d)
