"""PottsPseudoLikelihood: Potts models of categorical sequences fitted by
maximum pseudo-likelihood (plmDCA; Ekeberg et al. 2013, Balakrishnan et
al. 2011), the scikit-learn face of the family.

The objective and the parameter layout are in ``model.py``, the compiled
kernels in ``kernels.py``, the data helpers in ``data.py``.
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import validate_data

from .._core.fit_context import fit_context
from .._core.likelihood_mixin import (
    SCORE_PARAMETER_CONSTRAINTS,
    LikelihoodMixin,
    check_score_settings,
)
from .._core.sklearn_compat import Interval, StrOptions
from .._core.utils import (
    N_JOBS_CONSTRAINT,
    check_memory,
    check_sample_weight,
    child_seed,
    one_blas_thread,
    warn,
)
from . import kernels
from .base import PottsModel, Threads
from .data import MAX_STATES, check_codes, distinct_rows
from .model import (
    CHUNK,
    PairLayout,
    PseudoLikelihoodObjective,
    diagonal_preconditioner,
    independent_fields,
    zero_sum_gauge,
)
from .solvers import HESSIAN_ROWS_PER_SITE, SOLVERS, Problem

__all__ = ["PottsPseudoLikelihood"]


def _fit_memory(n_rows, n_sites, n_states, solver, history, n_jobs=1):
    """Bytes a fit needs: ``SOLVERS[solver].blocks(history)`` times the
    coupling tensor's ``L^2 q^2 * 8`` bytes, plus the conditional fields of
    a chunk of rows, the partial sums of each thread (float64 at most), and
    the conditionals of the Hessian sample for 'newton'."""
    block = n_sites * n_sites * n_states * n_states * 8
    rows = min(n_rows, CHUNK) * n_sites * n_states * 4
    # Each thread of the objective keeps the L + 1 partial sums of a row's fields.
    rows += n_jobs * (n_sites + 1) * n_sites * n_states * 8
    if solver == "newton":
        rows += (
            min(n_rows, 2 * HESSIAN_ROWS_PER_SITE * n_sites) * n_sites * n_states * 8
        )
    return int(SOLVERS[solver].blocks(history, n_sites, n_jobs) * block + rows)


#: Largest total weight the solvers see (see ``fit``).
_MAX_WEIGHT = 1e100


def _unconverged_message(potts, result):
    """Why the solver's stop is no convergence: ``max_iter`` ran out, or no
    step could lower the objective although the minimum is not reached."""
    if result.nit >= potts.max_iter:
        return (
            f"The {potts.solver} solver stopped after max_iter={potts.max_iter} "
            "iterations before the objective's relative fall per iteration went "
            f"below tol={potts.tol}. Increase max_iter."
        )
    return (
        f"The {potts.solver} solver stopped after {result.nit} iterations: no "
        "step lowered the objective any more, although its gradient says the "
        f"minimum is not reached within tol={potts.tol} (objective "
        f"{result.fun:.6g}). Use moderate penalties (lambda_h, lambda_e, alpha), "
        "a larger tol, or another solver."
    )


class PottsPseudoLikelihood(PottsModel, LikelihoodMixin, BaseEstimator):
    """Potts model (direct coupling analysis) fitted by maximum pseudo-likelihood.

    A density estimator for sequences of categorical variables ``x in {0, ...,
    q-1}^L`` (a multiple sequence alignment: ``q = 21`` for proteins with the
    gap, 5 for RNA, 2 for binary data) with

    ``P(x) = exp(sum_i h_i(x_i) + sum_{i<j} J_ij(x_i, x_j)) / Z``,

    the model of direct coupling analysis (Weigt et al. 2009; Morcos et al.
    2011). The parameters minimise plmc's objective (Hopf et al. 2017, the
    symmetric pseudo-likelihood of Ekeberg et al. 2013 with sequence
    weights and Gaussian priors)::

        - sum_s w_s sum_i log P(x_si | x_s,-i)
        + lambda_h sum_i ||h_i||^2 + lambda_e sum_{i<j} ||J_ij||^2

    (by default by L-BFGS) over a compiled float32 objective whose
    conditional fields are gathers of ``L`` coupling rows per sequence
    (parallel, deterministic); duplicated rows are collapsed into weights
    first. Group-L1 on the coupling blocks (``alpha``) learns the interaction
    graph.

    Read more in the :ref:`User Guide <potts_user_guide>`.

    Parameters
    ----------
    n_states : int or None, default=None
        Number of states ``q``; None takes ``max(X) + 1`` at fit (at least 2).
        Give it when a state may be missing from the data (21 for proteins).
    lambda_h : float, default=0.01
        L2 penalty on the fields: plmc's ``-lh``.
    lambda_e : float, default=16.0
        L2 penalty on the couplings: plmc's ``-le`` (used as is; plmc does
        not rescale it). EVcouplings' ``lambda_J = 0.01`` with
        ``lambda_J_times_Lq`` is ``lambda_e = 0.01 (q - 1) (L - 1)``.
        Defaults are plmc's README settings for proteins (``-le 16.0 -lh
        0.01``); both penalties act on the weighted sum over sequences, so
        their strength relative to the data falls as the effective number of
        sequences grows.
    alpha : float, default=0.0
        Group-L1 penalty ``alpha sum_{i<j} ||J_ij||_F`` on the coupling blocks,
        for structure learning: blocks of pairs without a direct interaction
        come out exactly zero. Needs ``solver='proximal'``.
    solver : {'lbfgs', 'newton', 'nodewise', 'proximal'}, default='lbfgs'
        'lbfgs': L-BFGS on variables scaled by an estimate of the Hessian's
        diagonal (the fastest here on protein families). 'newton': truncated
        Newton, conjugate gradients with exact Hessian-vector products on a
        fixed sample of rows (converges in tens of iterations, each costing
        several evaluations). 'nodewise': every site's conditional likelihood
        fitted alone by the same L-BFGS, ``n_jobs`` sites in parallel, with
        half of ``lambda_e`` each, then the two estimates of each coupling
        averaged (plmDCA's asymmetric variant; not the symmetric objective's
        minimiser). 'proximal': accelerated proximal gradient, for ``alpha >
        0``.
    max_iter : int, default=200
        Maximum number of iterations (plmc's ``-m`` for 'lbfgs'; per site for
        'nodewise').
    tol : float, default=3e-5
        Stop when the objective fell by less than ``tol`` times its value per
        iteration, on average over the last 5 iterations (or when the line
        search can make no progress). On PF00014 the default stops after
        about 55 iterations, below plmc's objective after its 100, where the
        top-L contacts have settled.
    history : int, default=5
        Number of correction pairs L-BFGS keeps (in float32: memory
        ``history * L^2 q^2 * 4`` bytes; plmc's liblbfgs keeps 6).
    score_method : {'auto', 'exact', 'ais'}, default='auto'
        How :meth:`score_samples` gets ``log Z``: 'exact' enumerates the
        ``q^L`` states (at most ``2^30``); 'ais' anneals from the
        naive mean-field independent-site model; 'auto' is exact while
        ``q^L <= 2^20``.
    ais_n_chains : int, default=100
        Number of AIS chains.
    ais_betas : int, {'linear', 'three-segment'} or array-like, default=1000
        AIS inverse temperatures (see :func:`sklearn_rbm.likelihood.ais_betas`),
        one Gibbs sweep each.
    n_jobs : int or None, default=None
        Threads of the compiled objective (``numba.set_num_threads`` during
        the fit and :meth:`sample`, restored after), or of the node-wise
        fits (joblib threads).
        None keeps numba's current setting; -1 all threads. The result does
        not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seeds the AIS stream (drawn at fit) and :meth:`sample`.
    verbose : int, default=0
        Print the objective after every iteration when > 0.

    Attributes
    ----------
    coupling_ : ndarray of shape (L, L, q, q)
        ``J``, in the zero-sum gauge (every row and column of every block sums
        to 0), ``coupling_[i, j, a, b] = coupling_[j, i, b, a]``, zero diagonal
        blocks.
    intercept_ : ndarray of shape (L, q)
        ``h`` in the zero-sum gauge.
    n_states_ : int
        Number of states ``q``.
    n_iter_ : int
        Iterations run (the most of any site for 'nodewise').
    n_evaluations_ : int
        Objective and gradient evaluations.
    objective_ : float
        The final value of the objective above (plmc's ``fx``), plus the
        group-L1 term when ``alpha > 0``.
    effective_n_samples_ : float
        Sum of the sample weights.
    n_features_in_ : int
        Number of sites ``L``.

    See Also
    --------
    sklearn_rbm.FVBMPseudoLikelihood : The two-state model with its own
        Newton solvers.
    sklearn_rbm.sequences : Reading alignments, sequence weights, APC and
        contact precision.

    References
    ----------
    M. Ekeberg, C. Lovkvist, Y. Lan, M. Weigt and E. Aurell (2013). Improved
    contact prediction in proteins: using pseudolikelihoods to infer Potts
    models. Physical Review E 87, 012707.

    T. A. Hopf, J. B. Ingraham, F. J. Poelwijk, C. P. I. Scharfe, M.
    Springer, C. Sander and D. S. Marks (2017). Mutation effects predicted
    from sequence co-variation. Nature Biotechnology 35, 128-135 (plmc).

    S. Balakrishnan, H. Kamisetty, J. G. Carbonell, S.-I. Lee and C. J.
    Langmead (2011). Learning generative models for protein fold families.
    Proteins 79, 1061-1078.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm import PottsPseudoLikelihood
    >>> X = np.random.default_rng(0).integers(0, 3, size=(200, 4))
    >>> potts = PottsPseudoLikelihood(lambda_e=1.0).fit(X)
    >>> potts.coupling_.shape
    (4, 4, 3, 3)
    >>> bool(np.allclose(potts.coupling_.sum(axis=3), 0))
    True
    >>> bool(potts.score(X) < 0)
    True
    """

    _parameter_constraints: dict = {
        "n_states": [Interval(numbers.Integral, 2, MAX_STATES, closed="both"), None],
        "lambda_h": [Interval(numbers.Real, 0, None, closed="left")],
        "lambda_e": [Interval(numbers.Real, 0, None, closed="left")],
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
        "solver": [StrOptions(set(SOLVERS))],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, 1, closed="left")],
        "history": [Interval(numbers.Integral, 1, None, closed="left")],
        **SCORE_PARAMETER_CONSTRAINTS,
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        n_states=None,
        lambda_h=0.01,
        lambda_e=16.0,
        alpha=0.0,
        solver="lbfgs",
        max_iter=200,
        tol=3e-5,
        history=5,
        score_method="auto",
        ais_n_chains=100,
        ais_betas=1000,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.n_states = n_states
        self.lambda_h = lambda_h
        self.lambda_e = lambda_e
        self.alpha = alpha
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.history = history
        self.score_method = score_method
        self.ais_n_chains = ais_n_chains
        self.ais_betas = ais_betas
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # -- fitting ------------------------------------------------------------

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Fit the Potts model by maximum penalised pseudo-likelihood.

        Parameters
        ----------
        X : array-like of shape (n_samples, L)
            Integer state codes ``0 .. q-1`` (uint8 from
            :func:`sklearn_rbm.sequences.read_alignment`), ``L >= 2``.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, e.g.
            :func:`sklearn_rbm.sequences.sequence_weights`; None weighs every
            row 1.

        Returns
        -------
        self : PottsPseudoLikelihood
            The fitted estimator.
        """
        check_score_settings(self)
        if self.alpha > 0 and self.solver != "proximal":
            raise ValueError(
                f"alpha={self.alpha} (the group-L1 penalty on the coupling "
                f"blocks) is not differentiable: solver={self.solver!r} cannot "
                "minimise it. Set solver='proximal', or alpha=0."
            )
        X = validate_data(self, X, dtype=None, ensure_min_features=2)
        X = check_codes(X, "X", self.n_states)
        q = self.n_states if self.n_states is not None else max(int(X.max()) + 1, 2)
        L = X.shape[1]
        entry = SOLVERS[self.solver]
        check_memory(
            _fit_memory(
                X.shape[0], L, q, self.solver, self.history, Threads(self.n_jobs).n
            ),
            f"A Potts fit of L={L} sites and q={q} states (solver="
            f"{self.solver!r}, history={self.history})",
            f"It needs about ({entry.formula}) * L^2 * q^2 * 8 bytes "
            f"(solver={self.solver!r}); solver='nodewise' needs the least, "
            "about 4.5 * L^2 * q^2 * 8 bytes. Otherwise fit fewer sites "
            "(columns), a smaller alphabet or a smaller history.",
        )
        weights = check_sample_weight(sample_weight, X.shape[0])
        if weights is None:
            weights = np.ones(X.shape[0])
        rows, w, _ = distinct_rows(X, weights)
        # The solvers square gradients, which grow with the weights: weights
        # summing beyond _MAX_WEIGHT are divided down with the penalties (the
        # same minimiser) and the objective is multiplied back.
        unit = max(1.0, float(w.sum()) / _MAX_WEIGHT)
        w, lambda_h, lambda_e = w / unit, self.lambda_h / unit, self.lambda_e / unit
        layout = PairLayout(L, q)
        # FISTA's backtracking compares objective values to a quadratic bound
        # near the minimum, below float32's rounding: it gets float64.
        dtype = np.float64 if self.solver == "proximal" else np.float32
        objective = PseudoLikelihoodObjective(
            rows, w, layout, lambda_h, lambda_e, dtype
        )
        theta0 = np.zeros(layout.size)
        theta0[: layout.n_fields] = independent_fields(rows, w, q).ravel()
        problem = Problem(
            objective,
            diagonal_preconditioner(rows, w, layout, lambda_h, lambda_e),
            self.max_iter,
            self.tol,
            self.history,
            self.verbose,
            Threads(self.n_jobs).n,
            self.alpha / unit,
        )
        # The solvers' vector operations are small: BLAS threads would only
        # spin against the compiled objective's threads.
        with Threads(self.n_jobs), one_blas_thread():
            result = SOLVERS[self.solver].make_step(problem)(theta0)
        theta = result.x
        if not np.all(np.isfinite(theta)):
            raise FloatingPointError(
                "The pseudo-likelihood fit produced non-finite parameters; "
                "increase lambda_h and lambda_e."
            )
        h, e = layout.split(theta)
        self.intercept_, self.coupling_ = zero_sum_gauge(
            h, layout.symmetric(e), overwrite=True
        )
        self.n_states_ = q
        self.n_iter_ = int(result.nit)
        self.n_evaluations_ = objective.n_evaluations
        self.objective_ = float(result.fun) * unit
        self.effective_n_samples_ = float(weights.sum())
        self._forget_log_partition()
        self._ais_seed = child_seed(self.random_state)
        if not result.converged:
            warn(_unconverged_message(self, result), ConvergenceWarning)
        return self

    # -- queries (the rest in base.PottsModel) ------------------------------

    def pseudo_log_likelihood(self, X):
        """Log pseudo-likelihood of each row, ``sum_i log P(x_i | x_-i)``.

        The fitted objective's data term (one row at a time, unweighted), not
        the log-likelihood: see :meth:`score_samples` for that.

        Parameters
        ----------
        X : array-like of shape (n_samples, L)
            State codes.

        Returns
        -------
        log_pl : ndarray of shape (n_samples,)
            The log pseudo-likelihood of each sequence.
        """
        X = self._codes(X)
        terms = kernels.site_log_conditionals(X, self.intercept_, self._site_major())
        return terms.sum(axis=1)
