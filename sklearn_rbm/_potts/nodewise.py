"""The node-wise solver: every site's conditional likelihood fitted alone,
in parallel, then symmetric couplings (plmDCA's asymmetric variant; Ekeberg,
Hartonen & Aurell 2014).

Site ``i``'s problem is a softmax regression of ``x_i`` on the other sites,
with its own fields ``h_i`` and couplings ``W_i[j]`` (of ``x_i`` with
``x_j``) and the penalty ``lambda_h ||h_i||^2 + (lambda_e / 2) ||W_i||^2``:
the sum of the ``L`` problems is the symmetric objective when ``W_i[j]`` and
``W_j[i]`` agree, since every coupling block enters two conditionals. The
couplings are the means of the two estimates; each field keeps the part of
its site's couplings that depends on ``x_i`` alone, which averaging would
otherwise halve.
"""

import numpy as np
from joblib import Parallel, delayed

from . import kernels


class SiteObjective:
    """Site ``i``'s penalised negative log conditional likelihood over
    ``theta = (h_i, W_i)``, ``W_i`` of shape (L, q, q) with ``W_i[j, b, a]``
    the coupling of ``x_i = a`` with ``x_j = b``."""

    #: The arithmetic of its value and gradient (the solvers' rounding floor).
    dtype = np.dtype(np.float64)

    def __init__(self, X, w, site, n_states, lambda_h, lambda_e):
        self.X, self.w, self.site, self.q = X, w, site, n_states
        self.lambda_h, self.lambda_e = lambda_h, lambda_e
        L = X.shape[1]
        self.grad_h = np.empty(n_states)
        self.grad_W = np.empty((L, n_states, n_states))

    def __call__(self, theta):
        q = self.q
        h, W = theta[:q], theta[q:].reshape(self.grad_W.shape)
        loss = kernels.site_terms(
            self.X, self.w, self.site, h, W, self.grad_h, self.grad_W
        )
        value = (
            loss
            + self.lambda_h * (h @ h)
            + 0.5 * self.lambda_e * (W.ravel() @ W.ravel())
        )
        grad = np.concatenate(
            [
                self.grad_h + 2.0 * self.lambda_h * h,
                (self.grad_W + self.lambda_e * W).ravel(),
            ]
        )
        return value, grad


def site_diagonal(counts, site, lambda_h, lambda_e):
    """The estimate of ``model.diagonal_preconditioner`` restricted to site
    ``site``'s conditional (its couplings enter one conditional here)."""
    single = np.diagonal(counts[site, site]) + 1.0
    spread = 1.0 - single / single.sum()
    d_h = single * spread + 2.0 * lambda_h
    pairs = counts[site].transpose(0, 2, 1) + 1.0 / counts.shape[2]  # (j, b, a)
    d_W = pairs * spread + lambda_e
    return np.concatenate([d_h, d_W.ravel()])


def fit_sites(X, w, layout, lambda_h, lambda_e, h0, solve, n_jobs):
    """``(h, e, n_iter, converged)``: every site's problem solved by ``solve(objective,
    diagonal, theta0) -> Result`` in ``n_jobs`` threads (the compiled site
    kernel releases the GIL), then the symmetric couplings as pair blocks."""
    L, q = layout.L, layout.q
    counts = kernels.pair_counts(X, w, q)

    def one(site, counts):
        objective = SiteObjective(X, w, site, q, lambda_h, lambda_e)
        theta0 = np.concatenate([h0[site], np.zeros(L * q * q)])
        return solve(objective, site_diagonal(counts, site, lambda_h, lambda_e), theta0)

    results = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(one)(site, counts) for site in range(L)
    )
    del counts
    h = np.array([r.x[:q] for r in results])
    # A[i, j, a, b]: site i's coupling of x_i = a with x_j = b.
    A = np.empty((L, L, q, q))
    for site, r in enumerate(results):
        A[site] = r.x[q:].reshape(L, q, q).transpose(0, 2, 1)
        r.x = None  # one copy of the site fits at a time
    A[np.arange(L), np.arange(L)] = 0.0
    e = 0.5 * (
        A[layout.rows, layout.cols] + A[layout.cols, layout.rows].transpose(0, 2, 1)
    )
    # The x_i-only part of site i's couplings, A_ij(a, .) averaged, of which
    # the symmetric J_ij(a, .) keeps the mean of the two estimates.
    h += 0.5 * (A.mean(axis=3) - A.mean(axis=2).transpose(1, 0, 2)).sum(axis=1)
    return h, e, max(r.nit for r in results), all(r.converged for r in results)
