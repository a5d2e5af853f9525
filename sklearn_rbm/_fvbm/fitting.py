"""How a fit of :class:`FVBMPseudoLikelihood` proceeds on data whose maximum
pseudo-likelihood estimate (MPLE) may not exist.

With an L2 penalty ``alpha > 0`` the objective has a finite maximiser whatever
the data, and one solver run finds it. Otherwise (no penalty, or an L1 penalty,
which leaves the intercepts free):

1. Before any iteration, :func:`.existence.screen` looks for features whose
   conditionals the data predict perfectly; one warning names them and says
   what the fit does about them.
2. Constant features are fitted apart: no couplings, and the intercept that
   maximises their conditional under a standard normal prior (a feature never
   seen to change keeps a probability of about ``1/n`` of changing). The
   other features are fitted as if the constant ones were absent -- exactly
   the limit of the unpenalised fit, whose constant features' fields run off
   to infinity and take no part in the others' conditionals.
3. Without a penalty, the solver first maximises the log-PL with the
   automatic ridge ``alpha = 1/n_samples`` (a standard normal prior on every
   parameter), whose maximiser always exists, so that no solver chases
   estimates running off to infinity. Where the screen found nothing else and
   the converged ridge fit proves that the MPLE exists
   (:func:`.existence.decide`), the same solver continues from there without
   the ridge, to the MPLE; otherwise the ridge fit is the estimate.
"""

from dataclasses import dataclass

import numpy as np
import scipy.optimize
from sklearn.utils import check_random_state

from .._core.utils import warn
from .existence import MPLEDoesNotExistWarning, Screen, certify, decide, screen
from .objective import Problem
from .solvers import SolverOptions

# The run with the automatic ridge pauses to check existence once an
# iteration raises the mean log-PL by less than each of these in turn (then
# it runs to the estimator's tol): the certificate of existence usually holds
# at the first pause (a Newton step from there moves no conditional by 1/2),
# where the first-order solvers are a tenth of the way to tol.
_CHECK_RISES = (1e-4, 1e-6)


@dataclass
class Fit:
    """A fit's estimate over all ``n_features``, and how it was reached.

    ``features`` are the features the solver fitted (all but the constant
    ones, which were fitted apart), ``rows`` and ``w`` the distinct rows of
    those features and their weights; ``monitors`` hold the solver runs (two
    when the automatic ridge was lifted), ``alpha`` the L2 or L1 strength of
    the last one; ``offset`` is what the constant features' conditionals add
    to the mean log-PL.
    """

    intercept: np.ndarray
    coupling: np.ndarray
    monitors: list
    alpha: float
    mple_exists: object
    rows: np.ndarray
    w: np.ndarray
    features: np.ndarray
    offset: float = 0.0
    converged: bool = True

    def __post_init__(self):
        self.converged = self.converged and self.monitors[-1].converged

    @property
    def n_iter(self):
        return sum(monitor.n_iter for monitor in self.monitors)

    @property
    def curve(self):
        """The objective after every iteration; a later run starts where the
        previous one stopped, so its first value (that point again, without
        the ridge) is left out."""
        curve = [self.monitors[0].curve[0]]
        for monitor in self.monitors:
            curve += monitor.curve[1:]
        return np.asarray(curve) + self.offset


def initial_parameters(estimator, settings, problem):
    """The solver's starting point (see the estimator's ``init``)."""
    d = problem.n_features
    init = settings.start if estimator.init == "auto" else estimator.init
    if init == "random":
        rng = check_random_state(estimator.random_state)
        upper = np.triu(rng.normal(0.0, np.sqrt(0.5), (d, d)), 1)
        return rng.normal(0.0, np.sqrt(0.5), d), upper + upper.T
    intercept = np.zeros(d)
    if init == "independent":  # P(x_j = 1) = (1 + tanh b_j) / 2 = the mean
        means = np.clip(problem.w @ problem.X, -1.0 + 1e-8, 1.0 - 1e-8)
        intercept = np.arctanh(means)
    return intercept, np.zeros((d, d))


def _solve(estimator, settings, problem, start):
    """One solver run from ``start = (intercept, coupling)``; stops with an
    error naming the fix if it diverged."""
    options = SolverOptions(
        estimator.tol, estimator.max_iter,
        estimator.step_size if settings.uses_step_size else 1.0,
        estimator.n_jobs, estimator if estimator.verbose else None,
    )  # fmt: skip
    intercept, coupling, monitor = settings.make_step(problem, options)(*start)
    if not np.isfinite(monitor.curve[-1]):
        advice = (
            f" and step_size={estimator.step_size}. Use step_size <= 1, which "
            "keeps the monotone guarantee of Nguyen & Wood (2016), or "
            "solver='bslm'."
            if settings.uses_step_size
            else ". Set alpha > 0, or use solver='bslm', which never "
            "decreases the objective."
        )
        raise FloatingPointError(
            f"The fit diverged (the log pseudo-likelihood became "
            f"{monitor.curve[-1]}) with solver={estimator.solver!r}{advice}"
        )
    return intercept, coupling, monitor


def constant_intercept(ridge):
    """``b > 0`` maximising ``log P(x = 1 | b) - ridge / 2 b^2`` for a feature
    that is 1 on every row: ``2 / (1 + exp(2b)) = ridge * b``."""
    return scipy.optimize.brentq(
        lambda b: 2.0 / (1.0 + np.exp(2.0 * b)) - ridge * b, 0.0, 50.0, xtol=1e-14
    )


def _merged_columns(rows, w, features):
    """Distinct rows of ``rows[:, features]`` and their summed weights."""
    merged, inverse = np.unique(rows[:, features], axis=0, return_inverse=True)
    return np.ascontiguousarray(merged), np.bincount(inverse.ravel(), weights=w)


def fit(estimator, settings, rows, w, n_samples):
    """Fit the distinct rows ``rows`` (weights ``w``) as the module docstring
    says; returns a :class:`Fit`."""
    d = rows.shape[1]
    everything = np.arange(d)
    if estimator.penalty == "l2" and estimator.alpha > 0:
        problem = Problem(
            rows, w, n_samples, alpha_l2=estimator.alpha, max_iter=estimator.max_iter
        )
        start = initial_parameters(estimator, settings, problem)
        *estimate, monitor = _solve(estimator, settings, problem, start)
        return Fit(*estimate, [monitor], estimator.alpha, True, rows, w, everything)
    found = screen(rows)
    if estimator.alpha > 0:  # L1 bounds every coupling: only constants run off
        found = Screen(constant=found.constant)
    # Constant features are fitted apart, unless fewer than two would be left.
    apart = found.constant if d - found.constant.size >= 2 else found.constant[:0]
    ridge = 1.0 / n_samples
    if found:
        _warn_screened(estimator, found, apart, ridge)
    features = np.setdiff1d(everything, apart)
    part = _fit_features(
        estimator, settings, *_merged_columns(rows, w, features), n_samples,
        ridge, separable=found.features.size > apart.size,
    )  # fmt: skip
    if apart.size:
        part = _with_constant_features(part, rows, apart, ridge)
    if found:
        part.mple_exists = False
    return part


class _Runs:
    """Successive solver runs of one fit on ``rows`` (weights ``w``), each
    starting where the previous stopped, sharing the estimator's
    ``max_iter``."""

    def __init__(self, estimator, settings, rows, w, n_samples):
        self.estimator, self.settings = estimator, settings
        self.rows, self.w, self.n_samples = rows, w, n_samples
        self.monitors = []
        self.estimate = None

    @property
    def done(self):
        return sum(monitor.n_iter for monitor in self.monitors)

    def run(self, alpha_l2=0.0, alpha_l1=0.0, tol=None):
        """One more run; whether it converged (False when no iteration is
        left)."""
        remaining = self.estimator.max_iter - self.done
        if remaining == 0:
            return False
        problem = Problem(
            self.rows, self.w, self.n_samples, alpha_l2=alpha_l2, alpha_l1=alpha_l1,
            max_iter=remaining, done=self.done, tol=tol,
        )  # fmt: skip
        start = self.estimate or initial_parameters(
            self.estimator, self.settings, problem
        )
        *self.estimate, monitor = _solve(self.estimator, self.settings, problem, start)
        self.monitors.append(monitor)
        return monitor.converged

    def fit(self, alpha, mple_exists, converged):
        everything = np.arange(self.rows.shape[1])
        return Fit(
            *self.estimate, self.monitors, alpha, mple_exists, self.rows, self.w,
            everything, converged=converged,
        )  # fmt: skip


def _fit_features(estimator, settings, rows, w, n_samples, ridge, separable):
    """The fit of ``rows`` (see the module docstring, point 3); ``separable``
    says that the screen has proved the MPLE absent, so that the automatic
    ridge stays (with an L1 penalty it is added to it).

    The ridge run pauses at loose tolerances (``_CHECK_RISES``), where the
    certificate of existence already holds for data whose MPLE exists (it
    needs only a Newton step that moves no conditional by 1/2), and the run
    without the ridge converges from there. Only where the certificate fails
    at every pause does the ridge run continue to ``tol``, and the full check
    (:func:`.existence.decide`) decide.
    """
    runs = _Runs(estimator, settings, rows, w, n_samples)
    if estimator.alpha > 0:  # L1 (L2 was fitted directly)
        ridge_l1 = ridge if separable else 0.0  # constants left in: see fit
        converged = runs.run(alpha_l2=ridge_l1, alpha_l1=estimator.alpha)
        return runs.fit(estimator.alpha, True, converged)
    if separable:  # the caller's warning has said so; mple_exists_ is False
        return runs.fit(ridge, False, runs.run(alpha_l2=ridge))
    checks = [
        rise * n_samples for rise in _CHECK_RISES if rise * n_samples > estimator.tol
    ]
    for tol in [*checks, None]:  # None: the estimator's tol
        if not runs.run(alpha_l2=ridge, tol=tol):
            return runs.fit(ridge, None, False)  # no verdict: the warning says so
        unbalanced = certify(rows, w, *runs.estimate)
        if not unbalanced.size:
            break
    else:  # the certificate failed at the converged ridge fit
        verdict = decide(rows, w, *runs.estimate, unbalanced=unbalanced)
        if verdict.exists is False:
            _warn_separated(verdict.features, ridge)
        elif verdict.exists is None:
            _warn_undecided(verdict, ridge)
        if not verdict.exists:
            return runs.fit(ridge, verdict.exists, True)
    converged = runs.run()
    return runs.fit(0.0, True, converged)


def _with_constant_features(part, rows, constant, ridge):
    """``part``, a fit of the other features, with the constant ones added:
    no couplings, intercept ``+-b`` of :func:`constant_intercept`."""
    d = rows.shape[1]
    features = np.setdiff1d(np.arange(d), constant)
    b = constant_intercept(ridge)
    intercept = np.empty(d)
    intercept[features] = part.intercept
    intercept[constant] = b * rows[0, constant]
    coupling = np.zeros((d, d))
    coupling[np.ix_(features, features)] = part.coupling
    # each constant conditional: log P(x = +-1 | b) = -log(1 + exp(-2b))
    offset = -constant.size * np.log1p(np.exp(-2.0 * b))
    return Fit(
        intercept, coupling, part.monitors, part.alpha, part.mple_exists,
        part.rows, part.w, features, offset, part.converged,
    )  # fmt: skip


def _warn_screened(estimator, found, apart, ridge):
    """The one warning, before any iteration, naming what the screen found
    (``apart``: the constant features fitted apart) and what the fit does."""
    if estimator.alpha > 0:  # L1: only constant features are flagged
        cause = (
            "penalty='l1' leaves the intercepts free, so theirs would run off "
            "to infinity"
        )
        fix = "Remove these features to silence this warning."
    else:
        cause = (
            "without a penalty the log pseudo-likelihood rises forever and the "
            "estimates run off to infinity"
        )
        fix = (
            "Set alpha > 0 to choose the penalty yourself, or remove features "
            f"{[int(j) for j in found.features]} and refit."
        )
    remedies = []
    if apart.size:
        b = constant_intercept(ridge)
        remedies.append(
            f"Features {apart.tolist()} are fitted apart: no couplings, and "
            f"intercepts +-{b:.3g} (the maximiser under a standard normal prior, "
            f"which gives the value never seen probability "
            f"{1 / (1 + np.exp(2 * b)):.2g}); the others as if they were absent."
        )
    if found.features.size > apart.size:
        remedies.append(
            f"The fit keeps the automatic ridge alpha_={ridge:.3g} (1/n_samples: "
            "a standard normal prior on every parameter) so that the estimates "
            "stay finite."
        )
    warn(
        "The maximum pseudo-likelihood estimate does not exist for these data: "
        f"{found.describe()}, and {cause}. {' '.join(remedies)} {fix}",
        MPLEDoesNotExistWarning,
    )


def _warn_undecided(verdict, ridge):
    warn(
        "Could not decide whether the maximum pseudo-likelihood estimate "
        "exists: the certificate of existence fails at the conditionals of "
        f"features {verdict.unbalanced.tolist()} (nearly deterministic at the "
        f"fit), and {verdict.why}. Kept the fit with the automatic ridge "
        f"alpha_={ridge:.3g} (1/n_samples), which is finite. Set alpha > 0 to "
        "choose the penalty yourself.",
        MPLEDoesNotExistWarning,
    )


def _warn_separated(features, ridge):
    warn(
        "The maximum pseudo-likelihood estimate does not exist for these data: "
        f"the conditionals of features {features.tolist()} are perfectly "
        "predicted together (a separating direction of the log "
        "pseudo-likelihood, found by a linear program on these features), and "
        "without a penalty the estimates run off to infinity. The fit kept the "
        f"automatic ridge alpha_={ridge:.3g} (1/n_samples: a standard normal "
        "prior on every parameter), which keeps them finite. Set alpha > 0 to "
        "choose the penalty yourself.",
        MPLEDoesNotExistWarning,
    )
