"""Whether the maximum pseudo-likelihood estimate (MPLE) exists: screened from
the data before a fit, decided from a penalised fit after it.

The log-PL is bounded above by 0 but need not attain its supremum (Nguyen &
Wood 2016 prove strict concavity, which makes a maximiser unique, not
present). It does not when some direction ``delta`` of the parameters raises
a conditional margin ``x_ij a_ij`` and lowers none: ``G delta >= 0, != 0``,
where ``G`` stacks the rows ``x_ij z_ij`` (``z_ij`` is row ``i`` with entry
``j`` replaced by 1), the analogue of separation in logistic regression. The
log-PL then rises forever along ``delta`` and every unpenalised solver's
estimates run off to infinity, at a cost that grows with the tolerance.

* :func:`screen` (before the fit, ``O(n d^2)``) finds the features that make
  it fail for a reason that can be named: constant features, pairs of equal
  or opposite features, and features that take one of their values only on a
  pattern of the other features that no other row shows.
* :func:`decide` (after a penalised fit) proves existence by Stiemke's lemma
  from one Newton step, or else looks for a separating direction by a linear
  program of bounded size, first on the features whose conditionals the step
  could not balance.
"""

from dataclasses import dataclass, field

import numpy as np
import scipy.optimize
import scipy.sparse
from sklearn.exceptions import ConvergenceWarning

from . import kernels
from .diagnostics import FitCurvature
from .joint import split_theta, theta_matrix
from .model import pack, unpack

# The separation LP is solved directly up to this many constraints (distinct
# rows x features) and by cutting planes beyond.
_SEPARATION_FULL_LP_ROWS = 50_000
_SEPARATION_MAX_ROUNDS = 20
# Its first linear program may have at most this many (variables x
# constraints), and all its rounds together at most this many simplex
# iterations: about a second on two cores (the LP of 30 features x 515
# distinct rows, 7e6, took 12 s). A budget in iterations, not seconds, keeps
# the verdict the same on every machine.
_SEPARATION_MAX_SIZE = 3_000_000
_SEPARATION_MAX_ITERATIONS = 5_000
# The certificate holds when the Newton step moves no conditional by more
# than about 1/2 (see :func:`unbalanced_features`).
_CERTIFICATE_MARGIN = 0.999


class MPLEDoesNotExistWarning(ConvergenceWarning):
    """The data admit no maximum pseudo-likelihood estimate (it lies at infinity).

    Raised by :class:`FVBMPseudoLikelihood` when some conditional is
    (quasi-)separable: a constant feature, two equal or opposite features,
    or more generally a direction of the parameters along which the log
    pseudo-likelihood rises forever, so that unpenalised estimates would run
    off to infinity. The warning names the features and what the fit did
    instead (constant features fitted apart, the automatic ridge ``alpha_``
    kept): the estimate stays finite. Set ``alpha > 0`` to choose the penalty
    yourself, or remove the features it names.
    """


# ---------------------------------------------------------------------------
# Before the fit: reasons that can be named


@dataclass
class Screen:
    """Features whose conditionals the data predict perfectly, by reason.

    ``constant``: features with one value; ``pairs``: ``(j, k, equal)`` for a
    feature ``k`` equal to (``equal``) or the opposite of an earlier feature
    ``j``; ``determined``: features that take one of their values only on
    rows sharing a pattern of the other features that no other row has.
    Each feature is listed under the first reason that applies.
    """

    constant: np.ndarray = field(default_factory=lambda: np.array([], dtype=int))
    pairs: list = field(default_factory=list)
    determined: np.ndarray = field(default_factory=lambda: np.array([], dtype=int))

    @property
    def features(self):
        """Every feature listed, sorted."""
        paired = [k for _, k, _ in self.pairs]
        return np.unique(np.concatenate([self.constant, paired, self.determined]))

    def __bool__(self):
        return bool(self.features.size)

    def describe(self):
        """The reasons, as a clause of the warning."""
        parts = []
        if self.constant.size:
            parts.append(f"features {self.constant.tolist()} are constant")
        for j, k, equal in self.pairs:
            relation = "equals" if equal else "is the opposite of"
            parts.append(f"feature {k} {relation} feature {j}")
        if self.determined.size:
            parts.append(
                f"features {self.determined.tolist()} each take one of their "
                "values only on rows that share a pattern of the other features "
                "that no other row has"
            )
        return "; ".join(parts)


def _constant_features(X):
    return np.flatnonzero(np.all(X == X[:1], axis=0))


def _paired_features(X, skip):
    """``(j, k, equal)`` for each feature ``k`` equal or opposite to an earlier
    ``j``, among the features not in ``skip``."""
    d = X.shape[1]
    candidates = np.setdiff1d(np.arange(d), skip)
    oriented = X[:, candidates] * X[:1, candidates]  # first row +1: x and -x alike
    bits = np.ascontiguousarray(np.packbits(oriented.T > 0, axis=1))
    keys = bits.view(np.dtype((np.void, bits.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    pairs = []
    for position, group in enumerate(inverse.ravel()):
        j, k = candidates[first[group]], candidates[position]
        if j != k:
            pairs.append((int(j), int(k), bool(X[0, j] == X[0, k])))
    return pairs


def _determined(X, j):
    """Whether feature ``j`` takes some value ``v`` only on rows that agree on
    a set ``S`` of the other features, and no other row agrees with them there.

    Then ``a_j = v (sum_{k in S} p_k x_k - |S| + 1)`` (``p`` the shared
    pattern) predicts ``x_j`` on every row, and with ``m_jk = v p_k``, ``b_k =
    p_k`` no other conditional loses: a separating direction. A value seen on
    one distinct row only always qualifies (every vertex of the hypercube is
    cut off from the others by a hyperplane).
    """
    for v in (1.0, -1.0):
        rows = X[:, j] == v
        low, high = X[rows].min(axis=0), X[rows].max(axis=0)
        shared = low == high
        shared[j] = False
        if not np.any(np.all(X[~rows][:, shared] == low[shared], axis=1)):
            return True
    return False


def screen(X):
    """The features of the distinct rows ``X`` (values +-1) whose conditional
    the others predict perfectly, for a reason :class:`Screen` can name.

    Each reason comes with a separating direction, so a non-empty screen
    proves that the MPLE does not exist; an empty one proves nothing.
    """
    # The screen only compares values: as int8 the d row masks and copies it
    # makes move an eighth of the bytes (0.83 -> 0.19 s at 20,000 x 100).
    X = np.asarray(X, dtype=np.int8)
    constant = _constant_features(X)
    if X.shape[0] == 1:
        return Screen(constant=constant)
    pairs = _paired_features(X, constant)
    listed = np.concatenate([constant, *[[j, k] for j, k, _ in pairs]]).astype(int)
    rest = np.setdiff1d(np.arange(X.shape[1]), listed)
    determined = np.array([j for j in rest if _determined(X, j)], dtype=int)
    return Screen(constant=constant, pairs=pairs, determined=determined)


# ---------------------------------------------------------------------------
# After the fit: Stiemke's certificate, or a separating direction


def unbalanced_features(curvature):
    """Features at which one Newton step from the fit fails to prove existence.

    By Stiemke's lemma, no direction ``delta`` has ``G delta >= 0, != 0`` iff
    some weights ``lambda > 0`` satisfy ``G^T lambda = 0``. The fit supplies
    ``lambda_ij = w_i (1 - x_ij t_ij) > 0`` with ``G^T lambda = g``, the
    gradient of the unpenalised log-PL; the Newton correction ``c = H^{-1} g``
    (``H`` minus its Hessian) removes it: ``lambda'_ij = lambda_ij [1 - (1 +
    x_ij t_ij) x_ij dA_ij]`` with ``dA = A(c)`` has ``G^T lambda' = 0``, and it
    stays positive (the proof) wherever the step moves no conditional by more
    than about 1/2 -- everywhere, near a fit of data whose MPLE exists. An
    empty answer is the proof; otherwise the features listed are those whose
    conditionals the step could not balance.
    """
    d = curvature.X.shape[1]
    if curvature.singular:
        return np.arange(d)
    X = curvature.X
    step = curvature.solve(curvature.gradient)
    moves = X * curvature.objective.fields(step)
    shifted = (1.0 + X * curvature.tanh()) * moves
    return np.flatnonzero(~(shifted < _CERTIFICATE_MARGIN).all(axis=0))


def certify(X, w, intercept, coupling):
    """The features at which the Newton certificate fails, from the fit
    ``(intercept, coupling)`` of the distinct rows ``X`` (weights ``w``); none
    proves that the MPLE exists (see :func:`unbalanced_features`)."""
    curvature = FitCurvature(X, w, intercept, coupling, 0.0, dense=False)
    return unbalanced_features(curvature)


def _separation_rows(X, index, rows):
    """Sparse rows ``x_ij z_ij`` of the separation LP, for ``rows = i * d + j``.

    The log-PL rises forever along ``delta`` iff ``G delta >= 0`` with some
    entry > 0, where ``G`` stacks these rows for every distinct row ``i`` and
    unit ``j``: no conditional ``x_ij a_ij`` decreases and one grows.
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


def _solve_separation_lp(G, weights, max_iterations):
    """``max weights^T G delta`` s.t. ``G delta >= 0``, ``|delta| <= 1`` (HiGHS).

    Returns ``(delta or None, simplex iterations)``; None also when the
    iteration limit stopped it.
    """
    result = scipy.optimize.linprog(
        -(G.T @ weights),
        A_ub=-G,
        b_ub=np.zeros(G.shape[0]),
        bounds=(-1.0, 1.0),
        method="highs",
        options={"maxiter": max(int(max_iterations), 1)},
    )
    return (result.x if result.status == 0 else None), int(result.nit)


def _first_constraints(n_constraints, p):
    """Constraints of the first LP: all, or the ``4p`` cutting planes start from."""
    return n_constraints if n_constraints <= _SEPARATION_FULL_LP_ROWS else 4 * p


def separation_lp_size(n_rows, n_features):
    """``variables x constraints`` of the first LP of :func:`separating_direction`."""
    p = n_features * (n_features + 1) // 2
    return p * _first_constraints(n_rows * n_features, p)


def separating_direction(X, w, margins, max_iterations=None):
    """Decide whether the MPLE exists: ``(exists, separable_features, direction)``.

    Up to 50,000 constraints the LP of :func:`_solve_separation_lp` is solved on
    all of ``G``. Beyond, by cutting planes: start from the ``4p`` constraints
    with the smallest fitted ``margins`` (the points that resist a run-off),
    keep a direction only if it satisfies every constraint, otherwise add the
    ``10p`` most violated ones. An optimum of 0 on a subset of full column
    rank proves that no direction exists for all of ``G`` (one would be a
    nonzero feasible point of the subset). ``exists`` is None when the rounds
    or the ``max_iterations`` simplex iterations (default 5,000) run out.
    """
    if max_iterations is None:
        max_iterations = _SEPARATION_MAX_ITERATIONS
    n, d = X.shape
    p = d + d * (d - 1) // 2
    index = kernels.parameter_index(d)
    weights = np.repeat(w, d)
    none = np.array([], dtype=int)
    order = np.argsort(margins.ravel(), kind="stable")  # smallest margins first
    active = np.sort(order[: _first_constraints(n * d, p)])
    for _ in range(_SEPARATION_MAX_ROUNDS):
        G = _separation_rows(X, index, active)
        direction, used = _solve_separation_lp(G, weights[active], max_iterations)
        max_iterations -= used
        if direction is None:
            return None, none, None
        full = _margins(X, direction)
        if full.max() > 1e-6 and full.min() > -1e-9:
            return False, np.flatnonzero((full > 1e-6).any(axis=0)), direction
        if full.min() > -1e-9:  # optimum 0 on the subset
            if active.size == n * d or np.linalg.matrix_rank(G.toarray()) == p:
                return True, none, None
            violated = order[~np.isin(order, active)]
        else:  # the most violated first
            worst = np.argsort(full.ravel(), kind="stable")
            violated = worst[full.ravel()[worst] < -1e-9]
        if max_iterations <= 0:
            return None, none, None
        active = np.union1d(active, violated[: 10 * p])
    return None, none, None


def _merged_rows(X, w):
    """Distinct rows of ``X``, their summed weights, and each row's distinct row."""
    rows, inverse = np.unique(X, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    return rows, np.bincount(inverse, weights=w), inverse


@dataclass
class Verdict:
    """What :func:`decide` found: ``exists`` (True, False or None: undecided);
    when False, the separating ``direction`` (packed, all features) and the
    features whose conditionals it raises; when None, the features the
    certificate could not balance and why the LP did not settle."""

    exists: object
    features: np.ndarray = field(default_factory=lambda: np.array([], dtype=int))
    direction: np.ndarray = None
    unbalanced: np.ndarray = field(default_factory=lambda: np.array([], dtype=int))
    why: str = ""


def _lp_on(X, w, margins, features):
    """The separation LP of the model restricted to ``features``, within the
    budget, as a :class:`Verdict` on these features (a direction found there
    is one of the full model, extended by zeros; None in ``exists`` means
    that the budget ran out).
    """
    rows, weights, inverse = _merged_rows(X[:, features], w)
    if separation_lp_size(*rows.shape) > _SEPARATION_MAX_SIZE:
        why = (
            f"the separation linear program on {features.size} features and "
            f"{rows.shape[0]} distinct rows is beyond its size budget"
        )
        return Verdict(None, why=why)
    merged = np.full(rows.shape, np.inf)  # the smallest margin of each merged row
    np.minimum.at(merged, inverse, margins[:, features])
    exists, separable, direction = separating_direction(rows, weights, merged)
    if exists is None:
        why = (
            f"the separation linear program hit its limit of "
            f"{_SEPARATION_MAX_ITERATIONS} simplex iterations"
        )
        return Verdict(None, why=why)
    if exists:
        return Verdict(True)
    full = np.zeros((X.shape[1], X.shape[1]))
    full[np.ix_(features, features)] = theta_matrix(*unpack(direction, features.size))
    return Verdict(False, features[separable], pack(*split_theta(full)))


def decide(X, w, intercept, coupling, unbalanced=None):
    """Whether the MPLE of the distinct rows ``X`` (weights ``w``) exists,
    from a converged penalised fit ``(intercept, coupling)``.

    First the Newton certificate (:func:`unbalanced_features`, one solve with
    the curvature); if it fails, the separation LP on the features it could
    not balance, then on all features, each within the LP's budget. A
    direction found on some features is one of the full model. ``unbalanced``
    is the certificate's answer at this fit, where already known.
    """
    d = X.shape[1]
    if unbalanced is None:
        unbalanced = certify(X, w, intercept, coupling)
    if not unbalanced.size:
        return Verdict(True)
    margins = _margins(X, pack(intercept, coupling))
    why = ""
    candidates = [unbalanced] if unbalanced.size == d else [unbalanced, np.arange(d)]
    for features in candidates:
        verdict = _lp_on(X, w, margins, features)
        if verdict.exists is False or (verdict.exists and features.size == d):
            return verdict
        why = verdict.why
    if not why:
        why = (
            f"the separation linear program found no direction among those "
            f"{unbalanced.size} features"
        )
    return Verdict(None, unbalanced=unbalanced, why=why)
