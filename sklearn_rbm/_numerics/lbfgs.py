"""Limited-memory BFGS for objectives of millions of parameters, with its
vector work compiled.

scipy's L-BFGS-B spends longer in its own Fortran update than a Potts model's
compiled gradient takes on a family of 1,000 sequences and 5.7 million
parameters, and the Python around it copies the parameter vector several
times per iteration. Here an iteration makes two compiled passes over
memory besides the objective's:

* :func:`_accept_step` moves ``x`` along the accepted step, stores the new
  correction pair ``(s, y)`` in float32 (the history is only a model of the
  curvature; half the bytes) and takes the dot products of the new gradient
  with every stored pair, block by block (those of ``s`` and ``y`` follow
  from them and the line search, :meth:`_Curvature.push`);
* :func:`_combine` writes the next direction (float32 too: the line search
  and the pair use the rounded direction throughout) as a combination of the
  stored pairs and the gradient.

The two-loop recursion itself runs on those dot products alone, in
``(2m + 1)``-dimensional coefficient space: the "vector-free" L-BFGS of Chen,
Wang & Zhou (2014), the same direction as Nocedal's two-loop recursion
(Nocedal & Wright 2006, Algorithm 7.4), whose ``2m`` steps each read a pair
and read and write a full-length vector. Every sum runs in a fixed order, so
the result does not depend on the thread count.

The line search (:func:`wolfe_search`) finds a step meeting the strong Wolfe
conditions by bracketing and safeguarded cubic interpolation (Nocedal &
Wright 2006, Algorithms 3.5 and 3.6), on the values and slopes the objective
returns; it never touches a vector. When it fails with a history, the history
is dropped and steepest descent tried once, as L-BFGS-B does (Byrd, Lu,
Nocedal & Zhu 1995).
"""

from dataclasses import dataclass

import numba
import numpy as np

from .jit import jit
from .reduction import dot

#: Entries per block of the passes (and of their deterministic dot products).
BLOCK = 1 << 14
#: Sufficient decrease and curvature constants of the strong Wolfe conditions
#: (L-BFGS-B's ``ftol`` and ``gtol``).
ARMIJO, CURVATURE = 1e-3, 0.9
#: Objective evaluations one line search may make.
MAX_SEARCH = 20


@jit(parallel=True)
def _accept_step(x, d, t, g, g_new, S, Y, slot):
    """``x += t d``; the new pair ``S[slot] = t d``, ``Y[slot] = g_new - g``
    (float32); in the same pass over memory, the dot products of ``g_new``
    with ``S[0..m-1]``, ``Y[0..m-1]``, ``g_new`` and ``g`` (2 m + 2 entries,
    summed block by block in block order: independent of the thread count).
    """
    m, n = S.shape
    n_blocks = (n + BLOCK - 1) // BLOCK
    partial = np.empty((n_blocks, 2 * m + 2))
    for block in numba.prange(n_blocks):
        lo = block * BLOCK
        hi = min(n, lo + BLOCK)
        # Views from 0: no wraparound checks.
        xb, db, gb, nb = x[lo:hi], d[lo:hi], g[lo:hi], g_new[lo:hi]
        sb, yb = S[slot, lo:hi], Y[slot, lo:hi]
        for k in range(xb.size):
            step = t * db[k]
            xb[k] += step
            sb[k] = step
            yb[k] = nb[k] - gb[k]
        out = partial[block]
        for c in range(m):
            out[c] = dot(nb, S[c, lo:hi])
            out[m + c] = dot(nb, Y[c, lo:hi])
        out[2 * m] = dot(nb, nb)
        out[2 * m + 1] = dot(nb, gb)
    total = np.zeros(2 * m + 2)
    for block in range(n_blocks):
        total += partial[block]
    return total


@jit(parallel=True)
def _combine(coef_s, coef_y, coef_g, S, Y, g, d):
    """``d = sum_c coef_s[c] S[c] + coef_y[c] Y[c] + coef_g g``, block by
    block (a block of ``d`` stays in cache while the pairs are added)."""
    m, n = S.shape
    n_blocks = (n + BLOCK - 1) // BLOCK
    for block in numba.prange(n_blocks):
        lo = block * BLOCK
        hi = min(n, lo + BLOCK)
        out, gb = d[lo:hi], g[lo:hi]  # views from 0: no wraparound checks
        for k in range(out.size):
            out[k] = coef_g * gb[k]
        for c in range(m):
            if coef_s[c] != 0.0 or coef_y[c] != 0.0:
                a, b = coef_s[c], coef_y[c]
                s, y = S[c, lo:hi], Y[c, lo:hi]
                for k in range(out.size):
                    out[k] += a * s[k] + b * y[k]


class _Curvature:
    """The Gram matrix of the stored pairs and the gradient, and the
    two-loop recursion on it."""

    def __init__(self, m):
        self.m = m
        self.gram = np.zeros((2 * m + 1, 2 * m + 1))  # S, Y, g
        self.order = []  # slots, oldest first

    def clear(self):
        self.order = []

    def next_slot(self):
        if len(self.order) < self.m:
            return min(set(range(self.m)) - set(self.order))
        return self.order[0]

    def push(self, slot, step, direction, slope, new_slope, g_dots):
        """Record the pair ``s = step * d``, ``y = g_new - g`` now in ``slot``
        from the dot products of ``g_new`` alone (``g_dots``, from
        :func:`_accept_step`); keep it only if ``s . y > 0`` (else the update
        would not stay positive definite).

        ``s`` and ``y`` need no products of their own: ``d`` is the
        combination ``direction`` of the old pairs and ``g``, so ``s . v`` for
        an old vector ``v`` is ``step * (direction . G[:, v])``; ``y . v`` is
        ``g_new . v - g . v``; ``s . g_new`` is ``step`` times the slope the
        line search returned (Chen, Wang & Zhou 2014). They describe the
        pair before its float32 rounding, to that rounding.
        """
        m, G = self.m, self.gram
        new_g = g_dots[: 2 * m + 1]  # g_new . (S, Y with the new pair, g_new)
        g_new_dot_g = g_dots[2 * m + 1]
        s = step * (G @ direction)  # s . (old S, old Y, g)
        y = new_g - G[2 * m]  # y . (old S, old Y); index 2m below
        s_y = step * (new_slope - slope)
        s[slot] = step * step * (direction @ G @ direction)
        s[m + slot] = y[slot] = s_y
        y[m + slot] = new_g[2 * m] - 2.0 * g_new_dot_g + G[2 * m, 2 * m]
        s[2 * m] = step * new_slope
        y[2 * m] = new_g[2 * m] - g_new_dot_g
        if slot in self.order:
            self.order.remove(slot)
        for index, row in ((slot, s), (m + slot, y), (2 * m, new_g)):
            G[index, :] = row
            G[:, index] = row
        if s_y > 1e-12 * G[m + slot, m + slot] and s_y > 0.0:
            self.order.append(slot)

    def set_gradient_norm(self, squared):
        self.gram[-1, -1] = squared

    def direction(self):
        """The coefficients of ``d = -H g`` in the stored pairs and ``g``
        (length ``2 m + 1``: S, Y, g), and ``g . d``."""
        m, G = self.m, self.gram
        coef = np.zeros(2 * m + 1)
        coef[-1] = -1.0
        alpha = {}
        for i in reversed(self.order):
            alpha[i] = (coef @ G[:, i]) / G[i, m + i]
            coef[m + i] -= alpha[i]
        if self.order:
            newest = self.order[-1]
            coef *= G[newest, m + newest] / G[m + newest, m + newest]
        for i in self.order:
            beta = (coef @ G[:, m + i]) / G[i, m + i]
            coef[i] += alpha[i] - beta
        return coef, float(coef @ G[:, -1])


def _cubic_minimiser(t0, f0, s0, t1, f1, s1):
    """The minimiser of the cubic through two values and slopes, or None."""
    d1 = s0 + s1 - 3.0 * (f0 - f1) / (t0 - t1)
    radicand = d1 * d1 - s0 * s1
    if not radicand >= 0.0:
        return None
    d2 = np.copysign(np.sqrt(radicand), t1 - t0)
    t = t1 - (t1 - t0) * (s1 + d2 - d1) / (s1 - s0 + 2.0 * d2)
    return t if np.isfinite(t) else None


def _interpolate(lo, hi):
    """A trial step strictly inside the bracket ``(lo, hi)`` (each a
    ``(t, f, slope)``): the cubic's minimiser kept 10 % away from both ends,
    the midpoint when the cubic has none."""
    t_lo, t_hi = lo[0], hi[0]
    t = _cubic_minimiser(*lo, *hi) if np.isfinite(hi[1]) else None
    a, b = min(t_lo, t_hi), max(t_lo, t_hi)
    margin = 0.1 * (b - a)
    if t is None or not a + margin <= t <= b - margin:
        return 0.5 * (t_lo + t_hi)
    return t


def wolfe_search(phi, f0, slope0, t, max_evaluations=MAX_SEARCH):
    """A step ``t > 0`` along a descent direction meeting the strong Wolfe
    conditions ``phi(t) <= f0 + ARMIJO t slope0`` and ``|phi'(t)| <=
    CURVATURE |slope0|``, from the first trial ``t``.

    ``phi(t) -> (value, slope)``. The accepted step is always the last one
    evaluated. Returns ``(t, value, slope, evaluations)``, ``t = None`` when no
    step was found within ``max_evaluations``.
    """
    previous = (0.0, f0, slope0)
    for n in range(1, max_evaluations + 1):
        f, slope = phi(t)
        current = (t, f, slope)
        if not f <= f0 + ARMIJO * t * slope0 or (n > 1 and f >= previous[1]):
            return _zoom(phi, f0, slope0, previous, current, max_evaluations - n, n)
        if abs(slope) <= -CURVATURE * slope0:
            return t, f, slope, n
        if slope >= 0.0:
            return _zoom(phi, f0, slope0, current, previous, max_evaluations - n, n)
        previous = current
        t *= 4.0
    return None, None, None, max_evaluations


def _zoom(phi, f0, slope0, lo, hi, budget, used):
    """Nocedal & Wright's zoom: ``lo`` satisfies sufficient decrease and has
    the lowest value so far, the minimiser lies between ``lo`` and ``hi``."""
    for n in range(1, budget + 1):
        t = _interpolate(lo, hi)
        if t == lo[0] or t == hi[0]:
            break  # the bracket has shrunk to rounding
        f, slope = phi(t)
        current = (t, f, slope)
        if not f <= f0 + ARMIJO * t * slope0 or f >= lo[1]:
            hi = current
            continue
        if abs(slope) <= -CURVATURE * slope0:
            return t, f, slope, used + n
        if slope * (hi[0] - lo[0]) >= 0.0:
            hi = lo
        lo = current
    return None, None, None, used + budget


@dataclass
class LBFGSResult:
    """The last point, its value, the iterations run, the evaluations made
    and why it stopped: 'callback', 'max_iter', 'max_evaluations' or
    'line_search' (no step lowers the objective along steepest descent);
    ``gradient_norm``, the gradient's Euclidean norm at ``x``, tells a
    line search that failed at a minimum from one that failed far from it."""

    x: np.ndarray
    fun: float
    nit: int
    n_evaluations: int
    status: str
    gradient_norm: float = np.nan


def lbfgs(
    evaluate, x0, history, max_iter, max_evaluations, callback,
    gradient_dtype=np.float64,
):  # fmt: skip
    """Minimise a smooth function by L-BFGS from ``x0``.

    ``evaluate(x, d, t, grad) -> (value, slope)`` gives the value at ``x + t
    d``, writes the gradient there into ``grad`` and returns its dot product
    with ``d`` (objectives that fuse the step into their own passes never
    form ``x + t d``). ``callback(iteration, value)`` after every iteration
    stops the minimisation when it returns True. ``history`` pairs are kept.
    The gradients are kept in ``gradient_dtype``: float32 for an objective
    whose gradient is no more precise (a third fewer bytes per iteration);
    the slopes stay those ``evaluate`` returns. A float64 ``x0`` is moved
    along in place and returned as the result's ``x`` (no copy of millions
    of parameters).
    """
    x = np.asarray(x0, dtype=np.float64)
    n = x.size
    S = np.zeros((history, n), dtype=np.float32)
    Y = np.zeros((history, n), dtype=np.float32)
    g, g_new = np.empty(n, gradient_dtype), np.empty(n, gradient_dtype)
    # The direction in float32 too: the line search and the pair use the
    # rounded direction throughout, so it is exactly the direction followed.
    d = np.zeros(n, dtype=np.float32)
    value, _ = evaluate(x, d, 0.0, g)
    evaluations = 1
    curvature = _Curvature(history)
    curvature.set_gradient_norm(dot(g, g))
    nit = 0
    status = "max_iter"
    while nit < max_iter:
        coef, slope = curvature.direction()
        _combine(coef[:history], coef[history:-1], coef[-1], S, Y, g, d)
        # Without history the first step is scaled to unit length, as
        # L-BFGS-B's; later the curvature model's unit step fits.
        t0 = 1.0 if curvature.order else 1.0 / np.sqrt(curvature.gram[-1, -1])

        def phi(t, trial=g_new):
            return evaluate(x, d, t, trial)

        budget = min(MAX_SEARCH, max_evaluations - evaluations)
        t, new_value, new_slope, used = wolfe_search(phi, value, slope, t0, budget)
        evaluations += used
        if t is None:
            if evaluations >= max_evaluations:
                status = "max_evaluations"
                break
            if curvature.order:  # retry once along steepest descent
                curvature.clear()
                continue
            status = "line_search"
            break
        slot = curvature.next_slot()
        g_dots = _accept_step(x, d, t, g, g_new, S, Y, slot)
        curvature.push(slot, t, coef, slope, new_slope, g_dots)
        g, g_new = g_new, g
        value = new_value
        nit += 1
        if callback(nit, value):
            status = "callback"
            break
    gradient_norm = float(np.sqrt(dot(g, g)))
    return LBFGSResult(x, float(value), nit, evaluations, status, gradient_norm)
