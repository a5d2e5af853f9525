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

from ._kernels import fvbm_blocks as kernels

# The model is maximised until a sweep changes the coordinates by this
# fraction of the first sweep's (in the curvature norm): the Newton step is
# then accurate to about this relative error, far below what the line
# search and the next iteration can tell apart.
_MODEL_RTOL = 1e-2
_MODEL_MAX_SWEEPS = 100
_ARMIJO = 1e-4
_MAX_HALVINGS = 40


class FreeSetModel:
    """Minus the Hessian of the log-PL on the free coordinates, block by unit.

    ``free_j < free_k`` are the free couplings; every intercept is free. The
    attributes are the flat layout of :mod:`._kernels.fvbm_blocks`.
    """

    def __init__(self, XT, D, free_j, free_k):
        d = XT.shape[0]
        n_pairs = free_j.size
        units = np.arange(d)
        # Each free coordinate appears as a column of one unit (intercept) or
        # two units (coupling): lay the columns out unit by unit, sorted.
        owner = np.concatenate([units, free_j, free_k])
        column = np.concatenate([units, free_k, free_j])
        order = np.lexsort((column, owner))
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        self.offsets = np.searchsorted(owner[order], np.arange(d + 1))
        self.columns = column[order]
        local = rank - self.offsets[owner]
        self.self_pos = local[:d]
        self.pos_jk = local[d : d + n_pairs]
        self.pos_kj = local[d + n_pairs :]
        self.pair_j, self.pair_k = free_j, free_k
        sizes = np.diff(self.offsets)
        self.block_start = np.concatenate([[0], np.cumsum(sizes**2)[:-1]])
        self.blocks = np.empty(int((sizes**2).sum()))
        DT = np.ascontiguousarray(D.T)
        for j in units:
            start, stop = self.offsets[j], self.offsets[j + 1]
            Z = XT[self.columns[start:stop]]  # unit j's design, transposed
            Z[self.self_pos[j]] = 1.0  # its own column is the intercept's
            block = (Z * DT[j]) @ Z.T
            start = self.block_start[j]
            self.blocks[start : start + block.size] = block.ravel()

    def per_unit(self, values_b, values_m):
        """Packed values (intercepts, free couplings) laid out by unit."""
        out = np.empty(self.columns.size)
        kernels.per_unit_values(
            self.offsets, self.self_pos, self.pair_j, self.pair_k,
            self.pos_jk, self.pos_kj, values_b, values_m, out,
        )  # fmt: skip
        return out


class ProximalNewtonState:
    """An iterate of proximal Newton and the step planned from it.

    After :meth:`move`, ``new`` is the maximiser of the model (the full step),
    ``linear_rise`` the rise it promises to first order (what the line
    search's sufficient-increase test scales), ``next_rise`` the model's rise
    (the stopping rule's estimate of the next iteration), ``sweeps`` and
    ``n_free`` the coordinate-descent sweeps and free couplings behind it.
    """

    def __init__(self, objective, Theta):
        self.objective = objective
        self._XT = np.ascontiguousarray(objective.X.T, dtype=objective.curvatures.dtype)
        self.move(Theta)

    def move(self, Theta):
        self.Theta = Theta
        self.value, self.gradient = self.objective.derivatives(Theta)
        self._plan()

    def _free_couplings(self):
        """``(j, k)``, ``j < k``: the couplings the model may move.

        These are the nonzero couplings and those at zero whose gradient
        exceeds their penalty (every other coupling stays at zero), except
        that at most ``max(d, number nonzero)`` of the latter enter at once,
        those that exceed it most: a working set (as in glmnet's strong rules,
        Tibshirani et al. 2012). From a sparse start most couplings pass the
        gradient test, and a model on all of them is as expensive as a dense
        Newton step and as poor as one far from the solution. The support
        can still double per iteration, and the limit binds only while many
        couplings violate the optimality conditions, so the fit ends at the
        same maximiser.
        """
        Theta, gradient, l1 = self.Theta, self.gradient, self.objective.l1
        upper = np.triu(np.ones(Theta.shape, dtype=bool), 1)
        nonzero = upper & (Theta != 0.0)
        excess = np.where(upper & ~nonzero, np.abs(gradient) - l1, 0.0)
        entering = excess > 0.0
        room = max(Theta.shape[0], int(np.count_nonzero(nonzero)))
        if np.count_nonzero(entering) > room:
            cut = np.partition(excess[entering], -room)[-room]
            entering &= excess >= cut
        return np.nonzero(nonzero | entering)

    def _plan(self):
        objective, Theta, gradient = self.objective, self.Theta, self.gradient
        free_j, free_k = self._free_couplings()
        model = FreeSetModel(self._XT, objective.curvatures, free_j, free_k)
        theta_b, theta_m = np.diagonal(Theta).copy(), Theta[free_j, free_k]
        grad_b, grad_m = np.diagonal(gradient).copy(), gradient[free_j, free_k]
        l2_b, l2_m = np.diagonal(objective.l2).copy(), objective.l2[free_j, free_k]
        l1_m = objective.l1[free_j, free_k]
        new_b, new_m = theta_b.copy(), theta_m.copy()
        U = np.zeros(model.columns.size)  # B (new - theta), by unit
        # A unit whose conditional is deterministic on every row has no
        # curvature; a floor keeps its Newton step finite (the line search
        # then shortens it).
        largest = float(np.abs(model.blocks).max(initial=0.0))
        min_curvature = 1e-12 * max(largest, 1e-300)
        self.sweeps = kernels.l1_model_descent(
            model.blocks, model.block_start, model.offsets, model.self_pos,
            free_j, free_k, model.pos_jk, model.pos_kj,
            grad_b, grad_m, theta_b, theta_m, l2_b, l2_m, l1_m,
            new_b, new_m, U, min_curvature, _MODEL_MAX_SWEEPS, _MODEL_RTOL,
        )  # fmt: skip
        step_b, step_m = new_b - theta_b, new_m - theta_m
        curvature = model.per_unit(step_b, step_m) @ U
        curvature += l2_b @ step_b**2 + l2_m @ step_m**2
        l1_change = l1_m @ (np.abs(new_m) - np.abs(theta_m))
        self.linear_rise = grad_b @ step_b + grad_m @ step_m - l1_change
        self.next_rise = max(self.linear_rise - 0.5 * curvature, 0.0)
        self.n_free = free_j.size
        new = Theta.copy()
        new[free_j, free_k] = new[free_k, free_j] = new_m
        new[np.diag_indices_from(new)] = new_b
        self.new = new


def proximal_newton_iteration(state):
    """Step towards the model's maximiser, halving until the objective rises
    by ``_ARMIJO`` times the promised first-order rise (Tseng & Yun 2009).

    Returns the coordinate-descent sweeps behind the step; ``state`` moves to
    the new point, or stays with ``next_rise = 0`` when no step raises the
    objective (converged).
    """
    objective, Theta, new = state.objective, state.Theta, state.new
    sweeps = state.sweeps
    t = 1.0
    for _ in range(_MAX_HALVINGS):
        trial = new if t == 1.0 else Theta + t * (new - Theta)
        value = objective.value(trial)
        if value >= state.value + _ARMIJO * t * state.linear_rise:
            state.move(trial)
            return sweeps
        t *= 0.5
    state.next_rise = 0.0
    return sweeps
