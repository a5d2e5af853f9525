"""Proximal Newton for the L1-penalised joint log pseudo-likelihood.

This is what ``solver='newton'`` runs with ``penalty='l1'``. Each iteration
replaces the smooth part of the objective (the log-PL) by its second-order
model at the current point and maximises the model minus the L1 term by
coordinate descent (Lee, Sun & Saunders 2014; for the pseudo-likelihood of a
binary pairwise network, Höfling & Tibshirani 2009), then takes the step
with a backtracking line search on the true objective.

What makes it fast is that the model lives on the free set alone: the
couplings that are nonzero or whose gradient beats the penalty (Hsieh et al.
2014, QUIC). Every other coupling stays at zero, by the optimality
conditions of the model. On the free set minus the Hessian is a sum of one
small block per unit, ``B_j = Z_jF^T diag(D_j) Z_jF``: unit ``j``'s
logistic regression on its free columns. Forming the blocks costs ``n sum_j
k_j^2`` for ``k_j`` free columns (matrix products, a fraction of one dense
Hessian product when the graph is sparse), and then the model is solved
exactly enough, with no further pass over the data, by coordinate descent
that touches two block rows per coupling. The orthant-wise truncated Newton
it replaces needed hundreds of dense Hessian products per step on binarised
images, whose nearly deterministic pixels make the Hessian badly
conditioned; exact blocks do not care.
"""

import numpy as np

from .._numerics.newton import ARMIJO, MAX_HALVINGS
from . import block_kernels as kernels

# The model is maximised until a sweep changes the coordinates by this
# fraction of the first sweep's (in the curvature norm): the Newton step is
# then accurate to about this relative error, far below what the line
# search and the next iteration can tell apart.
_MODEL_RTOL = 1e-2
_MODEL_MAX_SWEEPS = 100


class FreeSetModel:
    """Minus the Hessian of the log-PL on the free coordinates, block by unit.

    Block ``c`` is the logistic regression of unit ``units[c]``, with
    curvatures ``D[:, c]``. Free coefficient ``q`` is the coefficient of unit
    ``first[1][q]`` in block ``first[0][q]`` and, where a coupling is shared
    by two units (the symmetric layout), also that of unit ``second[1][q]``
    in block ``second[0][q]``. Every intercept is free. The attributes are
    the flat layout of :mod:`.block_kernels`.
    """

    def __init__(self, XT, D, units, first, second=None):
        n_blocks, n_coef = units.size, first[0].size
        # Each free coordinate is a column of one block (an intercept, a
        # node-wise coefficient) or of two (a coupling): lay the columns out
        # block by block, sorted.
        owner = [np.arange(n_blocks), first[0]] + ([second[0]] if second else [])
        column = [units, first[1]] + ([second[1]] if second else [])
        owner, column = np.concatenate(owner), np.concatenate(column)
        order = np.lexsort((column, owner))
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        self.offsets = np.searchsorted(owner[order], np.arange(n_blocks + 1))
        self.columns = column[order]
        local = rank - self.offsets[owner]
        self.self_pos = local[:n_blocks]
        self.block_first, self.pos_first = first[0], local[n_blocks : n_blocks + n_coef]
        if second:
            self.block_second, self.pos_second = second[0], local[n_blocks + n_coef :]
        else:
            self.block_second = self.pos_second = np.full(n_coef, -1)
        sizes = np.diff(self.offsets)
        self.block_start = np.concatenate([[0], np.cumsum(sizes**2)[:-1]])
        self.blocks = np.empty(int((sizes**2).sum()))
        DT = np.ascontiguousarray(D.T)
        for c in range(n_blocks):
            Z = XT[self.columns[self.offsets[c] : self.offsets[c + 1]]]
            Z[self.self_pos[c]] = 1.0  # the unit's own column is the intercept's
            block = (Z * DT[c]) @ Z.T
            start = self.block_start[c]
            self.blocks[start : start + block.size] = block.ravel()

    @property
    def layout(self):
        """The index arrays of the kernels, in their order."""
        return (
            self.blocks, self.block_start, self.offsets, self.self_pos,
            self.block_first, self.block_second, self.pos_first, self.pos_second,
        )  # fmt: skip

    def per_block(self, values_b, values_m):
        """Packed values (intercepts, free coefficients) laid out by block."""
        out = np.empty(self.columns.size)
        kernels.per_block_values(*self.layout[2:], values_b, values_m, out)
        return out


class ProximalNewtonState:
    """An iterate of proximal Newton and the step planned from it.

    Works in both layouts of :class:`._fvbm_joint.PseudoLikelihood`: the
    symmetric one (couplings shared by two units) and the node-wise one
    (each modelled unit its own coefficients). After :meth:`move`, ``new`` is
    the maximiser of the model (the full step), ``linear_rise`` the rise it
    promises to first order (what the line search's sufficient-increase test
    scales), ``next_rise`` the model's rise (the stopping rule's estimate of
    the next iteration), ``sweeps`` and ``n_free`` the coordinate-descent
    sweeps and free coefficients behind it.
    """

    def __init__(self, objective, Theta):
        self.objective = objective
        self._XT = np.ascontiguousarray(objective.X.T, dtype=objective.curvatures.dtype)
        # the penalised coefficients: a coupling once (upper triangle) in the
        # symmetric layout, everything but the intercepts in the node-wise one
        if objective.symmetric:
            self._penalised = np.triu(np.ones(Theta.shape, dtype=bool), 1)
        else:
            self._penalised = np.ones(Theta.shape, dtype=bool)
            self._penalised[objective.intercept_index] = False
        self.move(Theta)

    def move(self, Theta):
        self.Theta = Theta
        self.value, self.gradient = self.objective.derivatives(Theta)
        self._plan()

    def step(self):
        """Step towards the model's maximiser, halving until the objective
        rises by ``ARMIJO`` times the promised first-order rise (Tseng & Yun
        2009).

        Returns the figures of the progress line (coordinate-descent sweeps,
        free coefficients); the state moves to the new point, or stays with
        ``next_rise = 0`` when no step raises the objective (converged).
        """
        objective, Theta, new = self.objective, self.Theta, self.new
        figures = {"cd_sweeps": self.sweeps, "free": self.n_free}
        t = 1.0
        for _ in range(MAX_HALVINGS):
            trial = new if t == 1.0 else Theta + t * (new - Theta)
            value = objective.value(trial)
            if value >= self.value + ARMIJO * t * self.linear_rise:
                self.move(trial)
                return figures
            t *= 0.5
        self.next_rise = 0.0
        return figures

    def _free_coefficients(self):
        """``(rows, cols)`` of the coefficients the model may move.

        These are the nonzero ones and those at zero whose gradient exceeds
        their penalty (every other one stays at zero), except that at most
        ``max(d, number nonzero)`` of the latter enter at once, those that
        exceed it most: a working set (as in glmnet's strong rules, Tibshirani
        et al. 2012). From a sparse start most couplings pass the gradient
        test, and a model on all of them is as expensive as a dense Newton
        step and as poor as one far from the solution. The support can still
        double per iteration, and the limit binds only while many
        coefficients violate the optimality conditions, so the fit ends at the
        same maximiser.
        """
        Theta, gradient, l1 = self.Theta, self.gradient, self.objective.l1
        nonzero = self._penalised & (Theta != 0.0)
        excess = np.where(self._penalised & ~nonzero, np.abs(gradient) - l1, 0.0)
        entering = excess > 0.0
        room = max(Theta.shape[0], int(np.count_nonzero(nonzero)))
        if np.count_nonzero(entering) > room:
            cut = np.partition(excess[entering], -room)[-room]
            entering &= excess >= cut
        return np.nonzero(nonzero | entering)

    def _model(self, rows, cols):
        objective = self.objective
        if objective.symmetric:  # coupling (j, k): unit j's column k, unit k's j
            first, second = (rows, cols), (cols, rows)
        else:  # column c's coefficient of unit `row`
            first, second = (cols, rows), None
        return FreeSetModel(
            self._XT, objective.curvatures, objective.units, first, second
        )

    def _plan(self):
        objective, Theta, gradient = self.objective, self.Theta, self.gradient
        rows, cols = self._free_coefficients()
        model = self._model(rows, cols)
        intercept = objective.intercept_index
        theta_b, theta_m = Theta[intercept], Theta[rows, cols]
        grad_b, grad_m = gradient[intercept], gradient[rows, cols]
        l2_b, l2_m = objective.l2[intercept], objective.l2[rows, cols]
        l1_m = objective.l1[rows, cols]
        new_b, new_m = theta_b.copy(), theta_m.copy()
        U = np.zeros(model.columns.size)  # B (new - theta), by block
        # A unit whose conditional is deterministic on every row has no
        # curvature; a floor keeps its Newton step finite (the line search
        # then shortens it).
        largest = float(np.abs(model.blocks).max(initial=0.0))
        min_curvature = 1e-12 * max(largest, 1e-300)
        self.sweeps = kernels.l1_model_descent(
            *model.layout, grad_b, grad_m, theta_b, theta_m, l2_b, l2_m, l1_m,
            new_b, new_m, U, min_curvature, _MODEL_MAX_SWEEPS, _MODEL_RTOL,
        )  # fmt: skip
        step_b, step_m = new_b - theta_b, new_m - theta_m
        curvature = model.per_block(step_b, step_m) @ U
        curvature += l2_b @ step_b**2 + l2_m @ step_m**2
        l1_change = l1_m @ (np.abs(new_m) - np.abs(theta_m))
        self.linear_rise = grad_b @ step_b + grad_m @ step_m - l1_change
        self.next_rise = max(self.linear_rise - 0.5 * curvature, 0.0)
        self.n_free = rows.size
        new = Theta.copy()
        new[rows, cols] = new_m
        if objective.symmetric:
            new[cols, rows] = new_m
        new[intercept] = new_b
        self.new = new
