"""PottsBoltzmannMachine: Potts models fitted by maximum likelihood on
persistent Gibbs chains (Boltzmann-machine learning; bmDCA, Figliuzzi,
Barrat-Charlaix & Weigt 2018; adabmDCA, Muntoni et al. 2021).

The chains' kernel is in ``chains.py``, the frequencies and correlations in
``statistics.py``; the queries of the fitted model are ``base.PottsModel``'s.
"""

import numbers
import time
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.fit_context import fit_context
from .._core.likelihood_mixin import (
    SCORE_PARAMETER_CONSTRAINTS,
    LikelihoodMixin,
    check_score_settings,
)
from .._core.sklearn_compat import HasMethods, Interval, StrOptions
from .._core.utils import (
    N_JOBS_CONSTRAINT,
    check_memory,
    check_sample_weight,
    child_seed,
    kernel_rng,
    one_blas_thread,
    warn,
)
from .._rbm.tempering import GAP_ACCEPTANCE, GAP_MIN_PROPOSALS
from . import sparsity
from .base import PottsModel, Threads
from .chains import gibbs_sweeps, stream_keys
from .data import MAX_STATES, check_codes, distinct_rows
from .estimator import PottsPseudoLikelihood
from .model import zero_sum_gauge
from .sparsity import ACTIVATE_EVERY
from .statistics import connected, frequencies, pearson_slope

__all__ = ["PottsBoltzmannMachine"]


def log_likelihood_gradient(f1, f2, p1, p2, J, l2):
    """The gradient of ``sum_n w_n log P(x_n) / sum_n w_n - l2 sum_{i<j}
    ||J_ij||^2`` in the fields and in each coupling block (both stored copies
    ``J[i, j]`` and ``J[j, i]`` of a block get its gradient): data
    frequencies ``f`` less the model's ``p`` (Figliuzzi et al. 2018, Eq. 4),
    less ``2 l2 J``; zero on the diagonal blocks."""
    grad_h = f1 - p1
    grad_J = f2 - p2
    if l2:
        grad_J -= 2.0 * l2 * J
    sites = np.arange(J.shape[0])
    grad_J[sites, sites] = 0.0
    return grad_h, grad_J


#: Updates over which the learning rate falls by sqrt(2): ``learning_rate /
#: sqrt(1 + t / _DECAY_UPDATES)`` at update ``t``.
_DECAY_UPDATES = 100.0

#: A stopping test whose chains did not reach the model's equilibrium (they
#: had not forgotten their states by the end of its sweeps, or the chains
#: it restarted settled elsewhere) multiplies the rate by this: the chains
#: trail the model by about how far it moves while they mix, and a smaller
#: step brings them closer (persistent chains follow the maximum-likelihood
#: path as the rate goes to zero; Younes 1999, Tieleman 2008). A test whose
#: chains did equilibrate and fell short only needs more updates: cutting
#: the rate there (measured on PF00014: 18 such tests, each a few updates
#: apart) freezes a model not yet fitted.
_RATE_CUT = 0.5

#: The default learning rates from the independent-site model and from a
#: fitted model (measured on PF00014: from a pseudo-likelihood fit, 0.002
#: gives fresh samples a Pearson correlation of 0.97, 0.005 of 0.89).
_RATE_COLD, _RATE_WARM = 0.01, 0.002

#: The coupling penalty of the pseudo-likelihood start (plmc's default is
#: 16): measured on PF00014, the samples of a pseudo-likelihood model
#: reproduce the data's connected correlations with a slope of 0.66 at 16,
#: 0.77 at 4 and 0.86 at 1, its PPV@L 1.00, 0.98 and 0.81. At 4 the
#: Boltzmann machine's corrections are small, and the contacts kept.
_START_LAMBDA_E = 4.0

#: Most sweeps of the equilibration before the stopping test.
_EQUILIBRATION_SWEEPS = 1000

#: Largest parameter magnitude of a fit that has not diverged.
_LARGEST = 1e30


class _RMSprop:
    """Per-parameter steps ``rate / (sqrt(v) + eps)``, ``v`` the bias-corrected
    running mean of the squared gradient (RMSprop, Tieleman & Hinton 2012;
    Adam's second moment, Kingma & Ba 2015, without its momentum).

    The couplings of common and of rare pairs of states have gradients
    (and curvatures) thousands of times apart: plain gradient ascent at a
    rate stable for the first crawls on the second. Normalising each step
    by the gradient's scale moves all at one pace. Momentum is left out:
    it delays the response to the persistent chains, and the fit then
    oscillates (measured on PF00014)."""

    def __init__(self, *shapes, decay=0.999, eps=1e-8):
        self.second = [np.zeros(shape) for shape in shapes]
        self.decay, self.eps, self.t = decay, eps, 0

    def steps(self, gradients, rate):
        self.t += 1
        correction = 1.0 - self.decay**self.t
        out = []
        for second, gradient in zip(self.second, gradients, strict=True):
            second *= self.decay
            second += (1.0 - self.decay) * gradient**2
            out.append(rate / (np.sqrt(second / correction) + self.eps))
        return out


def _soft_threshold(J, threshold):
    """``sign(J) max(|J| - threshold, 0)`` in place: the proximal step of
    the L1 penalty."""
    magnitude = np.abs(J)
    magnitude -= threshold
    np.maximum(magnitude, 0.0, out=magnitude)
    np.copysign(magnitude, J, out=J)


def _decorrelated(chains, before):
    """Whether the chains have forgotten the states ``before``: their mean
    overlap (fraction of equal sites) with them is no more than two standard
    errors above their overlap with other chains' current states
    (adabmDCA's equilibration test, Muntoni et al. 2021)."""
    own = np.mean(chains == before, axis=1)
    other = np.mean(chains == np.roll(chains, 1, axis=0), axis=1)
    error = np.sqrt((own.var() + other.var()) / chains.shape[0])
    return own.mean() - other.mean() <= 2.0 * error


#: A stopping test restarts one chain in this many (a block of columns that
#: turns with every test) at uniform random states; with fewer than two
#: restarted chains (``n_chains < 2 * RESTART_SHARE``) it restarts none.
RESTART_SHARE = 8

#: Every update restarts one chain in this many (a block of columns that
#: turns with every update) at uniform random states, so that each chain
#: lives this many updates: the gradient keeps seeing where chains from
#: random states go (``sample`` starts there), and pushes down a phase of
#: the model that persistent chains never visit. Fewer than this many
#: chains are never restarted between tests.
UPDATE_RESTART_SHARE = 100

#: Standard errors within which the restarted chains' mean statistical
#: energy must agree with the persistent ones' for a test to pass; the
#: restarted chains count as burned in at one standard error below.
_ENERGY_ERRORS = 3.0


class _EnergyCheck(NamedTuple):
    """The mean statistical energy ``E(x)`` (log-weight) of the chains a
    stopping test restarted at uniform random states and of the persistent
    ones, after the test's sweeps, and the standard error of their
    difference. Persistent chains that trail a model can miss a phase of
    it that chains from random starts fall into (on PF13354, gap-rich
    states of twice the data's ``E(x)``): the model's samples are then not
    the chains', whatever their correlations read."""

    restarted: float
    persistent: float
    error: float

    @classmethod
    def of(cls, scores, restarted):
        """The check of the ``beta = 1`` chains' ``scores``, the chains
        ``restarted`` (a slice) against the others; none restarted: equal."""
        kept = np.ones(scores.size, dtype=bool)
        kept[restarted] = False
        fresh, old = scores[restarted], scores[kept]
        if fresh.size == 0:
            return cls(0.0, 0.0, 0.0)
        error = np.sqrt(fresh.var() / fresh.size + old.var() / old.size)
        return cls(float(fresh.mean()), float(old.mean()), float(error))

    @property
    def burned_in(self):
        return self.restarted >= self.persistent - self.error

    @property
    def agrees(self):
        return abs(self.restarted - self.persistent) <= _ENERGY_ERRORS * self.error


class _FailedTest(NamedTuple):
    """A stopping test whose equilibrated chains fell short of the target,
    or whose restarted chains settled elsewhere than the persistent ones."""

    update: int
    sweeps: int
    forgot: bool
    pearson: float
    slope: float
    energy: _EnergyCheck

    @property
    def equilibrated(self):
        """Whether the chains reached the model's equilibrium: they forgot
        their states and the restarted ones settled where the others are."""
        return self.forgot and self.energy.agrees

    def describe(self):
        state = "forgot" if self.forgot else "had not forgotten"
        text = (
            f"stopping test at update {self.update} not passed: after "
            f"{self.sweeps} sweeps at fixed parameters (the chains {state} "
            f"their states) Pearson {self.pearson:.4f}, slope {self.slope:.4f}"
        )
        if self.energy.agrees:
            return text
        return text + (
            f"; the chains restarted at random states reached a mean statistical "
            f"energy E(x) of {self.energy.restarted:.1f}, the persistent chains "
            f"{self.energy.persistent:.1f} (standard error {self.energy.error:.2g})"
        )


def _not_converged_message(estimator, history, failed_tests):
    """The ConvergenceWarning of a fit that reached ``max_iter``: what fell
    short, and what to change. Failed stopping tests mean the chains passed
    while the model's own samples did not: the chains trail a model they do
    not sample, and more sweeps per update is the cure, not more updates.
    A test whose restarted chains settled elsewhere than the persistent
    ones found a part of the model those miss, which the restarted chains
    now show the gradient: more updates are the cure there, as they are
    after a test whose chains equilibrated (the model is not fitted yet)."""
    before = len(history["pearson"]) - estimator.max_iter  # a continued fit's
    message = (
        f"The Boltzmann-machine fit stopped after max_iter={estimator.max_iter} "
        + (f"more updates ({before} before them) " if before else "updates ")
        + f"at a Pearson correlation of {history['pearson'][-1]:.4f} "
        f"(target_pearson={estimator.target_pearson}, slope within "
        f"{estimator.slope_tolerance} of 1). "
    )
    going_on = (
        "go on with this fit (warm_start=True, set before the first fit) or "
        "start a new one from it (init=)."
    )
    if not failed_tests:
        return message + (
            "Give it more updates: with warm_start=True (set before the first fit) "
            "the next fit goes on from here, or start a new fit from this one with "
            "init= and more n_chains (the chains' noise bounds the correlation "
            "they can reach)."
        )
    last = failed_tests[-1]
    cuts = sum(not test.equilibrated for test in failed_tests)
    halved = (
        f"{cuts} test(s) whose chains had not equilibrated halved the rate, now "
        f"{history['rate'][-1]:.3g}"
    )
    if last.equilibrated:
        return message + (
            f"The persistent chains reached the target, but {len(failed_tests)} "
            f"stopping test(s) failed; the last: {last.describe()}. Its chains "
            "equilibrated, so their statistics are the model's own: it is not "
            f"fitted yet ({halved}). Give it more updates: " + going_on
        )
    if not last.energy.agrees:
        found = (
            "more probable states than the persistent chains hold: the model has "
            "a phase they do not visit"
            if last.energy.restarted > last.energy.persistent
            else "less probable states than the persistent chains, and had not "
            "climbed out of them"
        )
        return message + (
            f"{len(failed_tests)} stopping test(s) failed; the last: "
            f"{last.describe()}. Chains started at random states settle in "
            f"{found}, so the model's samples (sample() starts at random states) "
            "do not reproduce the data even where the persistent chains do. The "
            "restarted chains stay among the persistent ones, and the updates that "
            f"follow correct the model where they went ({halved}): give it more "
            "updates, " + going_on
        )
    return message + (
        f"The persistent chains reached the target, but {len(failed_tests)} "
        f"stopping test(s) failed; the last: {last.describe()}. "
        "The chains trail a model that mixes more slowly than they are swept "
        f"({halved}): "
        f"increase n_sweeps (now {estimator.n_sweeps}) or lower learning_rate, "
        "and " + going_on
    )


def _warn_about_gaps(ladder, acceptance, proposed):
    """Warn when a neighbour pair of the tempered chains accepted almost no
    swaps: states no longer travel through that gap of the ladder. As for
    the RBMs, a pair is judged only after ``GAP_MIN_PROPOSALS`` proposals (a
    fit of one update proposes none to the odd pairs)."""
    judged = proposed >= GAP_MIN_PROPOSALS
    gaps = np.flatnonzero((acceptance < GAP_ACCEPTANCE) & judged)
    if gaps.size:
        pairs = ", ".join(
            f"{ladder[t]:.3g} <-> {ladder[t + 1]:.3g}: {acceptance[t]:.2%}"
            for t in gaps
        )
        warn(
            f"Parallel tempering: swaps between neighbouring inverse temperatures "
            f"were almost never accepted ({pairs}); states did not travel across "
            "the ladder there. Use more temperatures (n_temperatures) or a "
            "min_beta closer to 1."
        )


def _independent_chains(f1, n_chains, rng):
    """``n_chains`` uint8 rows drawn site by site from the frequencies
    ``f1`` (inversion of each site's cumulative sum)."""
    cumulative = np.cumsum(f1, axis=1)
    cumulative /= cumulative[:, -1:]
    u = rng.random((n_chains, f1.shape[0]))
    states = np.empty((n_chains, f1.shape[0]), dtype=np.uint8)
    for i in range(f1.shape[0]):
        states[:, i] = np.minimum(
            np.searchsorted(cumulative[i], u[:, i], side="right"), f1.shape[1] - 1
        )
    return states


def _turning_block(width, n_blocks, index):
    """The ``index``-th of ``n_blocks`` blocks of ``width`` columns, in turn."""
    start = (index % n_blocks) * width
    return slice(start, start + width)


class _Chains:
    """The persistent chains, their random streams and the model they
    sample (float32: ``chains.py``).

    With a ``ladder`` of ``T`` inverse temperatures (1 first) there are
    ``T`` groups of ``n`` chains, rows ``t n, ..., (t + 1) n - 1`` sampling
    ``P(x)^ladder[t]``, and after every call of the sampler the chains of
    neighbouring groups in the same column ``k`` propose to swap their
    states (parallel tempering; the even pairs and the odd pairs in turn):
    states travel to the hot end, where they mix fast, and back. Only the
    ``beta = 1`` group's states are the model's samples (``states``).
    """

    def __init__(self, states, n_sweeps, q, rng, ladder=(1.0,)):
        self.all_states, self.q = states, q
        n_total, L = states.shape
        self.ladder = np.asarray(ladder, dtype=np.float64)
        self.n = n_total // self.ladder.size
        self.keys = stream_keys(rng, n_total)
        self.counters = np.zeros(n_total, dtype=np.int64)
        self.betas = np.repeat(self.ladder, self.n).astype(np.float32)
        self.scores = np.zeros(n_total)
        self.set_sweeps(n_sweeps)
        # The swaps' uniforms: a stream of their own, taken after the
        # chains' keys (untempered chains take nothing more from ``rng``).
        if self.ladder.size > 1:
            self.swap_rng = np.random.default_rng(rng.integers(2**63))
        # The stopping tests' restarts: the k-th draws from (seed, k).
        self.restart_seed = int(rng.integers(2**63))
        self.accepted = np.zeros(self.ladder.size - 1, dtype=np.int64)
        self.proposed = np.zeros(self.ladder.size - 1, dtype=np.int64)
        self.rounds = 0

    def set_sweeps(self, n_sweeps):
        """Sweeps an update: the model's statistics average every sweep's
        states of the update, ``n_sweeps`` times the samples for the price
        of one count per sweep."""
        self.n_sweeps = n_sweeps
        L = self.all_states.shape[1]
        self.visited = np.empty((n_sweeps, self.n, L), dtype=np.uint8)
        self.ones = np.ones(n_sweeps * self.n)

    @property
    def states(self):
        """The ``beta = 1`` chains' states: samples of the model."""
        return self.all_states[: self.n]

    def set_model(self, h, J):
        self.h = h.astype(np.float32)
        self.J = np.ascontiguousarray(J, dtype=np.float32)

    def drop_model(self):
        """Drop the float32 copy of the model (half a coupling tensor), which
        the next update's ``set_model`` makes afresh: a kept fit state
        (``warm_start``) is then no larger than it needs to be."""
        self.h = self.J = None

    def _run(self, n, visited):
        gibbs_sweeps(self.all_states, self.h, self.J, n, self.keys, self.counters,
                     visited, self.betas, self.scores)  # fmt: skip
        if self.ladder.size > 1:
            self._swap()

    def _swap(self):
        """One round of swap proposals between the groups ``(t, t + 1)`` of
        one parity: accepted with probability ``min(1, exp((beta_t -
        beta_{t+1}) (S(y) - S(x))))``, ``S`` the model's log-weight of the
        states ``x`` at ``t`` and ``y`` at ``t + 1``."""
        n = self.n
        for t in range(self.rounds % 2, self.ladder.size - 1, 2):
            cold, hot = slice(t * n, (t + 1) * n), slice((t + 1) * n, (t + 2) * n)
            log_ratio = (self.ladder[t] - self.ladder[t + 1]) * (
                self.scores[hot] - self.scores[cold]
            )
            u = self.swap_rng.random(n)
            accept = np.flatnonzero(np.log(u) < log_ratio)
            rows_cold, rows_hot = accept + t * n, accept + (t + 1) * n
            states, scores = self.all_states, self.scores
            states[rows_cold], states[rows_hot] = states[rows_hot], states[rows_cold]
            scores[rows_cold], scores[rows_hot] = scores[rows_hot], scores[rows_cold]
            self.accepted[t] += accept.size
            self.proposed[t] += n
        self.rounds += 1

    def sweep(self, n):
        self._run(n, self.visited[:0])

    def statistics(self):
        """``(p1, p2)`` of the ``beta = 1`` states of ``n_sweeps`` sweeps."""
        self._run(self.n_sweeps, self.visited)
        samples = self.visited.reshape(-1, self.all_states.shape[1])
        return frequencies(samples, self.ones, self.q)

    def swap_acceptance(self):
        """The fraction of accepted swaps of each neighbour pair so far."""
        return self.accepted / np.maximum(self.proposed, 1)

    def restarted_columns(self, test):
        """The columns the ``test``-th stopping test restarts: one in
        ``RESTART_SHARE``, a block that turns with every test (none below
        two chains)."""
        width = self.n // RESTART_SHARE
        if width < 2:
            return slice(0, 0)
        return _turning_block(width, RESTART_SHARE, test)

    def restart_at_update(self, update):
        """Restart the ``update``-th block of one chain in
        ``UPDATE_RESTART_SHARE`` (none below that many chains), from the
        update's own restart stream."""
        block = _turning_block(self.n // UPDATE_RESTART_SHARE,
                               UPDATE_RESTART_SHARE, update)  # fmt: skip
        self.restart(block, (update, 1))

    def restart(self, columns, stream):
        """Put the chains of ``columns`` (at every temperature: swaps keep
        states in their column) at uniform random states, drawn from the
        restart stream ``stream``: ``(k,)`` for the ``k``-th stopping test,
        ``(u, 1)`` for update ``u``. An empty block draws nothing (fewer
        chains than a share: every update of a small fit)."""
        if columns.stop == columns.start:
            return
        rng = np.random.default_rng([self.restart_seed, *stream])
        width, L = columns.stop - columns.start, self.all_states.shape[1]
        for t in range(self.ladder.size):
            rows = slice(t * self.n + columns.start, t * self.n + columns.stop)
            self.all_states[rows] = rng.integers(0, self.q, (width, L), np.uint8)

    def equilibrate(self, restarted):
        """Sweep, ``n_sweeps`` at a time, until the ``beta = 1`` chains have
        forgotten their present states and those of the columns
        ``restarted`` have climbed to the others' statistical energy (at
        most ``_EQUILIBRATION_SWEEPS``): ``(sweeps run, whether the chains
        not restarted forgot their states)``."""
        kept = np.ones(self.n, dtype=bool)
        kept[restarted] = False
        before = self.states[kept]
        done, forgot = 0, False
        while done < _EQUILIBRATION_SWEEPS:
            self.sweep(self.n_sweeps)
            done += self.n_sweeps
            forgot = forgot or _decorrelated(self.states[kept], before)
            if forgot and self.energy_check(restarted).burned_in:
                break
        return done, forgot

    def energy_check(self, restarted):
        """The ``_EnergyCheck`` of the ``beta = 1`` chains now."""
        return _EnergyCheck.of(self.scores[: self.n], restarted)


#: What ``history_`` records at every update.
_HISTORY = ("pearson", "slope", "time", "equilibrated", "density", "rate")

#: The settings a continued fit (``warm_start``) cannot change: its chains
#: and active couplings were built for them.
_KEPT_SETTINGS = ("n_chains", "n_temperatures", "min_beta", "couplings")


class _FitState:
    """A fit between two updates: the parameters in the fit's own gauge, the
    active couplings, the step sizes' running scales, the chains and their
    streams, where the rate's decay and the stopping tests stand, and the
    history. ``fit`` runs ``max_iter`` updates on it; with ``warm_start``
    the estimator keeps it and the next ``fit`` goes on from it, so two
    fits of ``a`` and ``b`` updates are one of ``a + b``, bit for bit."""

    def __init__(self, h, J, mask, sampler, rate, f1, n_eff, settings):
        self.h, self.J, self.mask, self.sampler = h, J, mask, sampler
        self.optimiser = _RMSprop(h.shape, J.shape)
        # The rate resolved at the start ('auto' depends on init, which a
        # continued fit no longer reads); the data's fingerprint; the
        # settings the chains were built for.
        self.rate, self.f1, self.n_eff, self.settings = rate, f1, n_eff, settings
        self.iteration, self.next_test, self.gauged = 0, 0, False
        self.rate_scale = 1.0  # halved by every unequilibrated stopping test
        self.failed_tests = []
        self.history = {name: [] for name in _HISTORY}


class PottsBoltzmannMachine(PottsModel, LikelihoodMixin, BaseEstimator):
    """Potts model fitted by maximum likelihood on persistent Gibbs chains.

    The model of :class:`PottsPseudoLikelihood`, ``P(x) = exp(sum_i h_i(x_i)
    + sum_{i<j} J_ij(x_i, x_j)) / Z``, fitted by Boltzmann-machine learning
    (bmDCA, Figliuzzi, Barrat-Charlaix & Weigt 2018; adabmDCA, Muntoni et
    al. 2021): ascent of the weighted mean log-likelihood, whose gradient
    is the data's one- and two-site frequencies ``f_i(a), f_ij(a, b)``
    (with a pseudocount) minus the model's, the latter averaged over the
    ``n_sweeps`` sweeps of ``n_chains`` persistent Gibbs chains between two
    updates; each parameter's step is normalised by its gradient's running
    scale (RMSprop, Tieleman & Hinton 2012), the rate decaying as ``1 /
    sqrt(1 + t / 100)`` and halved by every stopping test whose chains did
    not equilibrate (below). It stops when the connected correlations
    ``C_ij(a, b) = f_ij(a, b) - f_i(a) f_j(b)`` of the chains reach a Pearson
    correlation of ``target_pearson`` with the data's (adabmDCA's criterion)
    with a slope within ``slope_tolerance`` of one: the model is generative,
    its samples reproduce the family's statistics, which a
    pseudo-likelihood model's do not. The persistent chains trail a
    changing model, and their statistics can pass where the model's own do
    not: when they pass, the chains are run on at fixed parameters until
    they have forgotten their state (their overlap with it is down to that
    of two different chains: adabmDCA's equilibration test), and the stop
    is decided on the samples that follow. Persistent chains can also miss
    a phase of the model that chains from random states fall into (on a
    wide alignment, gap-rich states the fit never corrects): so each test
    first restarts one chain in eight (another block at every test) at
    uniform random states, runs them until they climb to the others' mean
    statistical energy ``E(x)`` or the test's sweeps end, and passes only if
    their mean then agrees with the others' within three standard errors.
    The restarted chains stay among the persistent ones, and a failed test
    thereby shows the gradient the phase they found. A test whose chains
    did not reach the model's equilibrium (not forgotten within its
    sweeps, or the restarted ones settled elsewhere) also halves the rate:
    the chains trail the model by about how far it moves while they mix,
    and persistent chains follow the maximum-likelihood path as the rate
    goes to zero (Robbins-Monro on evidence); a test whose chains did
    equilibrate and fell short leaves the rate, as the model only needs
    more updates. Between tests, too, every update restarts one chain in a
    hundred (the next block at the next update, so that each chain lives a
    hundred updates): the gradient keeps seeing where chains from random
    states go, as those of :meth:`sample` do, and pushes down a phase they
    fall into that the data lacks, before a test has to find it.

    The chains run in parallel threads (``n_jobs``), each with its own
    random stream: the fit does not depend on the number of threads.

    Read more in the :ref:`User Guide <potts_user_guide>`.

    Parameters
    ----------
    n_states : int or None, default=None
        Number of states ``q``; None takes ``max(X) + 1`` at fit (at least 2).
    n_chains : int, default=8000
        Number of persistent chains (adabmDCA's ``nchains``): the model's
        frequencies are their means, so their noise, about ``sqrt(f /
        n_chains)``, bounds the Pearson correlation the fit can measure.
        With fewer than 100 none is restarted between tests, with fewer
        than 16 none at the stopping tests either.
    n_sweeps : int, default=10
        Gibbs sweeps of every chain between two updates (adabmDCA's
        ``nsweeps``); the model's statistics average the states of all of
        them.
    n_temperatures : int, default=1
        With more than one, the persistent chains are tempered (parallel
        tempering, as the RBMs' ``solver='pt'``): ``n_chains`` chains at
        each of ``n_temperatures`` inverse temperatures evenly spaced from 1
        down to ``min_beta`` sample ``P(x)^beta``, and after every
        ``n_sweeps`` sweeps neighbouring temperatures propose to swap
        states. Only the ``beta = 1`` chains give the model's statistics;
        the others carry states across the barriers Gibbs sampling at
        ``beta = 1`` crosses too slowly (wide families, see the User
        Guide). Each update then costs ``n_temperatures`` times the sweeps.
    min_beta : float in (0, 1), default=0.8
        The hottest inverse temperature of the tempered chains.
    learning_rate : float or None, default=None
        Initial step of every parameter in units of its gradient's running
        scale (RMSprop): about the change of a field or coupling per
        update. None is 0.01 from the independent-site model and 0.002 from
        a fitted one (the pseudo-likelihood start or a fitted ``init``):
        near the optimum a smaller rate keeps the
        persistent chains at the model's equilibrium, so that fresh samples
        reproduce the data as well as the chains did. The rate of update
        ``t`` is ``learning_rate / sqrt(1 + t / 100)``, halved once for
        every stopping test before it whose chains did not equilibrate
        (``history_['rate']``).
    l2 : float, default=0.0
        L2 penalty ``l2 sum_{i<j} ||J_ij||^2`` on the couplings, relative to
        the mean log-likelihood per (weighted) sequence.
    l1 : float, default=0.0
        L1 penalty ``l1 sum_{i<j} sum_{a,b} |J_ij(a, b)|`` on the couplings
        (a proximal step after each update), for sparse couplings.
    pseudocount : float or None, default=None
        Weight ``pi`` of the uniform distribution mixed into the data's
        frequencies; None is adabmDCA's ``1 / N_eff`` (the inverse sum of the
        sample weights).
    target_pearson : float, default=0.95
        Stop when the Pearson correlation of the equilibrated chains'
        connected correlations with the data's reaches it (and the slope is
        close to one).
    slope_tolerance : float, default=0.05
        Stop only when the slope of the chains' connected correlations
        against the data's is within this distance of 1 (Pearson's
        correlation alone ignores the correlations' scale, and adabmDCA
        checks nothing else). Half the 0.1 of the usual check (a slope in
        [0.9, 1.1]): the in-fit slope reaches the band before the model
        does, and on PF00014 a tolerance of 0.1 stops the defaults fit at
        update 14, its model's own samples' slope 0.90, where 0.05 stops it
        at update 56 at 0.98 (128,000 samples of each).
    max_iter : int, default=2000
        Largest number of updates; reaching it warns (``ConvergenceWarning``).
    couplings : {'dense', 'activation', 'decimation'}, default='dense'
        Which coupling entries ``J_ij(a, b)`` the model has. 'dense': all.
        'activation' (eaDCA, Calvanese et al. 2024): none at the start
        (``init='auto'`` is then the independent-site model); every 10
        updates the 0.1% of the inactive entries with the largest gradient
        ``|f_ij(a, b) - p_ij(a, b)|`` are activated, until the stopping test
        passes. 'decimation' (edDCA, Barrat-Charlaix et al. 2021): a dense
        fit, then, each time the chains pass the test again, the 1% of the
        active entries whose removal changes the model least (Kullback-
        Leibler divergence ``p J + log(1 - p + p exp(-J))``) set to zero,
        until ``density``. Inactive couplings stay exactly zero:
        ``coupling_`` is then in the gauge of the fit, not the zero-sum one
        (which would fill them in).
    density : float in (0, 1], default=0.02
        The fraction of coupling entries decimation keeps (adabmDCA's
        default).
    init : {'auto', 'pseudolikelihood', 'independent'} or fitted Potts \
            estimator, default='auto'
        The start. 'pseudolikelihood': a :class:`PottsPseudoLikelihood`
        fit with ``lambda_e=4`` (its time is part of the fit's); its
        couplings are about right but too weak, and the Boltzmann machine
        only corrects them (on PF00014 the fit then meets its targets in
        minutes; from the independent-site model it does not, see the
        User Guide).
        'independent': the independent-site model (``h_i(a) = log
        f_i(a)``, ``J = 0``). 'auto' is 'independent' for
        ``couplings='activation'``, 'pseudolikelihood' otherwise. Or the
        parameters of a fitted :class:`PottsPseudoLikelihood` or
        ``PottsBoltzmannMachine`` (a new fit from them: a Boltzmann
        machine's chains are carried on too when their number matches, the
        step sizes and the rate's decay start afresh; with sparse
        ``couplings``, its zero couplings are the inactive ones). Not read
        by a fit that goes on (``warm_start``).
    warm_start : bool, default=False
        Keep the fit's whole state (the parameters in the fit's own gauge,
        the step sizes' running scales, the chains and their random
        streams, the schedules of the rate and of the stopping tests) so
        that the next ``fit``, on the same data, goes on from it for
        ``max_iter`` more updates: fits of ``a`` and then ``b`` updates
        give the model, chains and ``history_`` of one fit of ``a + b``,
        bit for bit (``time`` aside), so that a long fit can be run, saved
        and resumed in pieces. The state costs about two more ``(L, L, q,
        q)`` float64 tensors (about 300 MB at L = 202, q = 21 and 8,000
        chains). ``n_chains``, ``n_temperatures``, ``min_beta`` and
        ``couplings`` cannot change between the pieces; the other settings
        apply from the next update on (``learning_rate=None`` keeps the
        rate of the first piece's ``init``). A piece that raises (diverges,
        is interrupted) leaves the kept state as it was, to be run again.
    score_method : {'auto', 'exact', 'ais'}, default='auto'
        How :meth:`score_samples` gets ``log Z`` (as in
        :class:`PottsPseudoLikelihood`).
    ais_n_chains : int, default=100
        Number of AIS chains.
    ais_betas : int, {'linear', 'three-segment'} or array-like, default=1000
        AIS inverse temperatures, one Gibbs sweep each.
    n_jobs : int or None, default=None
        Threads of the chains (``numba.set_num_threads`` during the fit and
        :meth:`sample`, restored after); None keeps numba's setting, -1 all
        threads. The result does not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seeds the chains' start and streams, the AIS stream and
        :meth:`sample`.
    verbose : int, default=0
        Print the Pearson correlation, the slope and the time of every
        update when > 0, and of a stopping test the restarted and the other
        chains' mean ``E(x)`` (in the fit's own gauge: their difference,
        not their values, compares with :meth:`energy`'s) and, when it
        fails, why.

    Attributes
    ----------
    coupling_ : ndarray of shape (L, L, q, q)
        ``J`` in the zero-sum gauge, ``coupling_[i, j, a, b] = coupling_[j,
        i, b, a]``, zero diagonal blocks.
    intercept_ : ndarray of shape (L, q)
        ``h`` in the zero-sum gauge.
    chains_ : ndarray of shape (n_chains, L), dtype uint8
        The persistent chains' last states (at ``beta = 1``): samples of the
        fitted model.
    swap_acceptance_ : ndarray of shape (n_temperatures - 1,)
        With tempered chains, the fraction of the swaps between inverse
        temperatures ``t`` and ``t + 1`` accepted over the fit (empty
        without).
    history_ : dict of ndarray
        ``'pearson'``, ``'slope'`` (of the chains' connected correlations
        against the data's), ``'time'`` (seconds since the fit started, the
        ``init`` fit included), ``'equilibrated'`` (whether the chains were
        equilibrated first: the stopping test's samples), ``'density'`` (of
        the active couplings) and ``'rate'`` (of the step that followed) at
        every update.
    density_ : float
        Fraction of the off-diagonal coupling entries that are active (1
        for ``couplings='dense'``).
    n_states_ : int
        Number of states ``q``.
    n_iter_ : int
        Updates run (with ``warm_start``, by all the fits it went on from;
        ``history_`` records them all too).
    effective_n_samples_ : float
        Sum of the sample weights.
    n_features_in_ : int
        Number of sites ``L``.

    See Also
    --------
    PottsPseudoLikelihood : The same model by pseudo-likelihood: faster to
        contacts, but its samples do not reproduce the data's statistics.
    sklearn_rbm.sequences.compare_correlations : The generative check of any
        model's samples.

    References
    ----------
    M. Figliuzzi, P. Barrat-Charlaix and M. Weigt (2018). How pairwise
    coevolutionary models capture the collective residue variability in
    proteins. Molecular Biology and Evolution 35, 1018-1027.

    A. P. Muntoni, A. Pagnani, M. Weigt and F. Zamponi (2021). adabmDCA:
    adaptive Boltzmann machine learning for biological sequences. BMC
    Bioinformatics 22, 528.

    P. Barrat-Charlaix, A. P. Muntoni, K. Shimagaki, M. Weigt and F.
    Zamponi (2021). Sparse generative modeling via parameter reduction of
    Boltzmann machines: application to protein-sequence families. Physical
    Review E 104, 024407.

    F. Calvanese, C. N. Lambert, P. Nghe, F. Zamponi and M. Weigt (2024).
    Towards parsimonious generative modeling of RNA families. Nucleic Acids
    Research 52, 5465-5477.

    T. Tieleman and G. Hinton (2012). Lecture 6.5, RMSprop: divide the
    gradient by a running average of its recent magnitude. COURSERA: Neural
    Networks for Machine Learning.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm import PottsBoltzmannMachine
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(300, 4))
    >>> X[:, 1] = np.where(rng.random(300) < 0.7, X[:, 0], X[:, 1])
    >>> bm = PottsBoltzmannMachine(n_chains=1000, random_state=0).fit(X)
    >>> bm.coupling_.shape
    (4, 4, 3, 3)
    >>> bool(bm.history_["pearson"][-1] >= 0.95)
    True
    """

    _parameter_constraints: dict = {
        "n_states": [Interval(numbers.Integral, 2, MAX_STATES, closed="both"), None],
        "n_chains": [Interval(numbers.Integral, 2, None, closed="left")],
        "n_sweeps": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_temperatures": [Interval(numbers.Integral, 1, None, closed="left")],
        "min_beta": [Interval(numbers.Real, 0, 1, closed="neither")],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "l2": [Interval(numbers.Real, 0, None, closed="left")],
        "l1": [Interval(numbers.Real, 0, None, closed="left")],
        "pseudocount": [Interval(numbers.Real, 0, 1, closed="left"), None],
        "target_pearson": [Interval(numbers.Real, -1, 1, closed="both")],
        "slope_tolerance": [Interval(numbers.Real, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "couplings": [StrOptions({"dense", "activation", "decimation"})],
        "density": [Interval(numbers.Real, 0, 1, closed="right")],
        "init": [
            StrOptions({"auto", "independent", "pseudolikelihood"}),
            HasMethods(["fit", "energy"]),
        ],
        "warm_start": ["boolean"],
        **SCORE_PARAMETER_CONSTRAINTS,
        "n_jobs": N_JOBS_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        n_states=None,
        n_chains=8000,
        n_sweeps=10,
        n_temperatures=1,
        min_beta=0.8,
        learning_rate=None,
        l2=0.0,
        l1=0.0,
        pseudocount=None,
        target_pearson=0.95,
        slope_tolerance=0.05,
        max_iter=2000,
        couplings="dense",
        density=0.02,
        init="auto",
        warm_start=False,
        score_method="auto",
        ais_n_chains=100,
        ais_betas=1000,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.n_states = n_states
        self.n_chains = n_chains
        self.n_sweeps = n_sweeps
        self.n_temperatures = n_temperatures
        self.min_beta = min_beta
        self.learning_rate = learning_rate
        self.l2 = l2
        self.l1 = l1
        self.pseudocount = pseudocount
        self.target_pearson = target_pearson
        self.slope_tolerance = slope_tolerance
        self.max_iter = max_iter
        self.couplings = couplings
        self.density = density
        self.init = init
        self.warm_start = warm_start
        self.score_method = score_method
        self.ais_n_chains = ais_n_chains
        self.ais_betas = ais_betas
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _zero_sum_coupling(self):
        if self.density_ == 1.0:
            return self.coupling_
        # Sparse couplings are kept in the gauge of the fit.
        return zero_sum_gauge(self.intercept_, self.coupling_)[1]

    def _init(self):
        """``init`` with 'auto' resolved."""
        if not isinstance(self.init, str) or self.init != "auto":
            return self.init
        return "independent" if self.couplings == "activation" else "pseudolikelihood"

    def _start(self, X, weights, f1, q):
        """``(h, J, chains or None)`` of the chosen ``init``."""
        L = X.shape[1]
        init = self._init()
        if isinstance(init, str) and init == "independent":
            h = np.log(f1)
            return h - h.mean(axis=1, keepdims=True), np.zeros((L, L, q, q)), None
        if isinstance(init, str):  # 'pseudolikelihood'
            plm = PottsPseudoLikelihood(
                n_states=q, lambda_e=_START_LAMBDA_E, n_jobs=self.n_jobs
            )
            plm.fit(X, sample_weight=weights)
            return plm.intercept_, plm.coupling_, None
        try:
            check_is_fitted(init, ("intercept_", "coupling_"))
        except Exception as error:
            raise ValueError(
                "init must be 'auto', 'independent', 'pseudolikelihood' or a fitted "
                "PottsPseudoLikelihood or "
                f"PottsBoltzmannMachine; got an unfitted {type(self.init).__name__}."
                " Fit it first."
            ) from error
        shape = (self.init.n_features_in_, self.init.n_states_)
        if shape != (L, q):
            raise ValueError(
                f"init was fitted on L={shape[0]} sites and q={shape[1]} states, "
                f"but X has L={L} sites and q={q} states: fit init on the same "
                "alignment and n_states."
            )
        chains = getattr(self.init, "chains_", None)
        if chains is not None and chains.shape[0] != self.n_chains:
            chains = None
        return (
            np.array(self.init.intercept_, dtype=np.float64),
            np.array(self.init.coupling_, dtype=np.float64),
            None if chains is None else chains.copy(),
        )

    def _update(self, state, f1, f2, p1, p2, rate):
        """One RMSprop ascent step of ``rate`` of the state's ``h`` and ``J``
        in place (then the L1 proximal step), the inactive couplings kept at
        zero; a diverging fit stops here with a clear message."""
        h, J, mask = state.h, state.J, state.mask
        grad_h, grad_J = log_likelihood_gradient(f1, f2, p1, p2, J, self.l2)
        # A diverging fit overflows here: it is reported just below.
        with np.errstate(over="ignore", invalid="ignore"):
            step_h, step_J = state.optimiser.steps((grad_h, grad_J), rate)
            h += step_h * grad_h
            J += step_J * grad_J
            if self.l1:
                # The proximal step of the L1 penalty in the optimiser's
                # diagonal metric: each entry's threshold is its step.
                _soft_threshold(J, step_J * self.l1)
        if mask is not None:
            # The optimiser's running scales see every entry's gradient, so
            # an entry activated later starts at its own scale.
            J *= mask
        # NaN fails the comparison too; beyond 1e30 the sampler's float32
        # copy would overflow.
        if not (np.abs(h).max() < _LARGEST and np.abs(J).max() < _LARGEST):
            raise FloatingPointError(
                f"The Boltzmann-machine fit diverged at update {state.iteration} "
                f"(parameters beyond {_LARGEST:.0e} or not finite): decrease "
                f"learning_rate={self._base_rate(state)}."
            )

    def _learning_rate(self):
        if self.learning_rate is not None:
            return float(self.learning_rate)
        return _RATE_COLD if self._init() == "independent" else _RATE_WARM

    def _base_rate(self, state):
        """The rate the schedule starts from: ``learning_rate``, or the one
        resolved at the first piece of the fit (None depends on ``init``,
        which a continued fit no longer reads)."""
        return state.rate if self.learning_rate is None else float(self.learning_rate)

    def _step_rate(self, state, iteration):
        """The rate of update ``iteration``: the base rate, decayed as ``1 /
        sqrt(1 + t / 100)`` and halved by every stopping test whose chains
        did not equilibrate."""
        decay = np.sqrt(1.0 + iteration / _DECAY_UPDATES)
        return self._base_rate(state) * state.rate_scale / decay

    def _learn(self, state, f1, f2, started):
        """``max_iter`` updates of ``state`` (in place), fewer if the
        stopping test passes: whether it did."""
        h, J, mask, sampler, history = (state.h, state.J, state.mask,
                                        state.sampler, state.history)  # fmt: skip
        L = h.shape[0]
        pair_rows, pair_cols = np.triu_indices(L, k=1)
        data_connected = connected(f1, f2, pair_rows, pair_cols)

        def check(p1, p2):
            pearson, slope = pearson_slope(
                data_connected, connected(p1, p2, pair_rows, pair_cols)
            )
            passed = (
                pearson >= self.target_pearson
                and abs(slope - 1.0) <= self.slope_tolerance
            )
            return pearson, slope, passed

        if sampler.n_sweeps != self.n_sweeps:  # a continued fit may change them
            sampler.set_sweeps(self.n_sweeps)
        converged, first = False, state.iteration
        for iteration in range(first, first + self.max_iter):
            sampler.set_model(h, J)
            # The model is judged by samples from random states: a few
            # chains start there every update, so that the gradient sees
            # where such chains go.
            sampler.restart_at_update(iteration)
            p1, p2 = sampler.statistics()
            pearson, slope, passed = check(p1, p2)
            decimating = (
                self.couplings == "decimation" and sparsity.density(mask) > self.density
            )
            if passed and decimating:
                if not state.gauged:  # small couplings are small in the zero-sum gauge
                    h[:], _ = zero_sum_gauge(h, J, overwrite=True)
                    state.gauged = True
                sparsity.decimate(mask, J, p2, self.density)
                passed = False
            tested = passed and iteration >= state.next_test
            energy = None
            if tested:
                # The persistent chains trail the changing model: their
                # statistics can pass where the model's own do not, and
                # they can miss a phase of it. The stop is decided on the
                # chains run on at fixed parameters until they forget their
                # state, then sampled, a share of them restarted at random
                # states first: they must settle where the others are.
                test = int(np.sum(history["equilibrated"]))
                restarted = sampler.restarted_columns(test)
                sampler.restart(restarted, (test,))
                sweeps, forgot = sampler.equilibrate(restarted)
                p1, p2 = sampler.statistics()
                pearson, slope, converged = check(p1, p2)
                energy = sampler.energy_check(restarted)
                converged = converged and energy.agrees
                # A failed test is not repeated before as many updates as it
                # cost: at most half the time goes to tests.
                state.next_test = iteration + max(1, sweeps // self.n_sweeps)
                if not converged:
                    failed = _FailedTest(
                        iteration + 1, sweeps, forgot, pearson, slope, energy
                    )
                    state.failed_tests.append(failed)
                    if not failed.equilibrated:
                        state.rate_scale *= _RATE_CUT
            rate = self._step_rate(state, iteration)
            row = (pearson, slope, time.perf_counter() - started, tested,
                   1.0 if mask is None else sparsity.density(mask), rate)  # fmt: skip
            for name, value in zip(_HISTORY, row, strict=True):
                history[name].append(value)
            state.iteration = iteration + 1
            if self.verbose:
                self._report(iteration, row, state, energy, converged)
            if converged:
                break
            if self.couplings == "activation" and iteration % ACTIVATE_EVERY == 0:
                sparsity.activate(mask, f2, p2)
            self._update(state, f1, f2, p1, p2, rate)
        return converged

    def _report(self, iteration, row, state, energy, converged):
        """The verbose line of an update (and of a failed stopping test)."""
        pearson, slope, seconds, tested, density, _ = row
        note = ""
        if tested:
            restarted = (
                f"; restarted chains' mean E(x) {energy.restarted:.1f}, the "
                f"others' {energy.persistent:.1f}"
            )
            note = f" (equilibrated chains{restarted if energy.error else ''})"
        print(
            f"[PottsBoltzmannMachine] update {iteration + 1}: Pearson "
            f"{pearson:.4f}, slope {slope:.4f}, {seconds:.1f} s"
            + ("" if state.mask is None else f", density {density:.4f}")
            + note
        )
        if tested and not converged:
            print(
                f"[PottsBoltzmannMachine] {state.failed_tests[-1].describe()}; "
                f"training on, next test from update {state.next_test + 1}"
            )

    def _new_state(self, X, weights, f1, n_eff, q):
        """The ``_FitState`` of the chosen ``init``, its chains started."""
        h, J, chains = self._start(X, weights, f1, q)
        T = self.n_temperatures
        rng = kernel_rng(self.random_state)
        if chains is None:
            chains = _independent_chains(np.exp(h), self.n_chains * T, rng)
        elif T > 1:  # a fitted init's samples start every temperature
            chains = np.tile(chains, (T, 1))
        ladder = np.linspace(1.0, self.min_beta, T)
        sampler = _Chains(chains, self.n_sweeps, q, rng, ladder)
        mask = None if self.couplings == "dense" else J != 0.0
        settings = {name: getattr(self, name) for name in _KEPT_SETTINGS}
        rate = self._learning_rate()
        return _FitState(h, J, mask, sampler, rate, f1, n_eff, settings)

    def _kept_state(self, f1, n_eff):
        """With ``warm_start``, the previous fit's state to go on from (None
        before the first fit), once it is checked that the data and the
        chains' settings are the same."""
        if not self.warm_start or not hasattr(self, "n_iter_"):
            return None
        state = getattr(self, "_fit_state", None)
        if state is None:
            raise ValueError(
                "warm_start=True goes on with the previous fit, but that fit ran "
                "with warm_start=False and did not keep its chains' streams and "
                "step sizes. Set warm_start=True before the first fit, or start a "
                "new fit from this one with init= the fitted estimator."
            )
        if (
            f1.shape != state.f1.shape
            or n_eff != state.n_eff
            or not np.array_equal(f1, state.f1)
        ):
            raise ValueError(
                "warm_start=True goes on with the previous fit on the same data, "
                "but the frequencies of X (with sample_weight, n_states and "
                "pseudocount) differ from that fit's. Pass the same data and "
                "settings, or start a new fit from this one with init=."
            )
        changed = [
            f"{name} (was {value!r})"
            for name, value in state.settings.items()
            if getattr(self, name) != value
        ]
        if changed:
            raise ValueError(
                f"warm_start=True cannot change {', '.join(changed)}: the chains "
                "and active couplings were built for them. Restore them, or start "
                "a new fit from this one with init=."
            )
        return state

    def _set_fitted(self, state, q, n_eff):
        """The fitted attributes from the state a fit left."""
        h, J = state.h, state.J
        if self.warm_start:  # the kept state stays in the fit's own gauge
            h, J = h.copy(), J.copy()
        if state.mask is None:
            self.intercept_, self.coupling_ = zero_sum_gauge(h, J, overwrite=True)
        else:  # the zero-sum gauge would fill in the inactive couplings
            self.intercept_, self.coupling_ = h - h.mean(axis=1, keepdims=True), J
        sampler = state.sampler
        self.density_ = 1.0 if state.mask is None else sparsity.density(state.mask)
        self.chains_ = sampler.states.copy()
        self.swap_acceptance_ = sampler.swap_acceptance()
        _warn_about_gaps(sampler.ladder, self.swap_acceptance_, sampler.proposed)
        self.history_ = {name: np.array(v) for name, v in state.history.items()}
        sampler.drop_model()
        self._fit_state = state if self.warm_start else None
        self.n_states_ = q
        self.n_iter_ = state.iteration
        self.effective_n_samples_ = n_eff
        self._forget_log_partition()
        self._ais_seed = child_seed(self.random_state)

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Fit the Potts model by maximum likelihood (Boltzmann-machine learning).

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
        self : PottsBoltzmannMachine
            The fitted estimator.
        """
        check_score_settings(self)
        X = validate_data(self, X, dtype=None, ensure_min_features=2)
        X = check_codes(X, "X", self.n_states)
        q = self.n_states if self.n_states is not None else max(int(X.max()) + 1, 2)
        L = X.shape[1]
        T = self.n_temperatures
        # J, its gradient, two frequency tensors and the sampler's float32
        # copy; the chains and their visited states. A kept state (warm_start)
        # adds the copy of J gauged for coupling_ and, during a fit that goes
        # on, the copy of J, its steps' scales and coupling_ that an error
        # would restore.
        tensors = 4.5 + (3 if self.warm_start else 0)
        check_memory(
            int(tensors * L * L * q * q * 8)
            + self.n_chains * L * (self.n_sweeps + 9 * T),
            f"A Boltzmann-machine fit of L={L} sites, q={q} states, "
            f"n_chains={self.n_chains}, n_sweeps={self.n_sweeps} and "
            f"n_temperatures={T}" + (" with warm_start" if self.warm_start else ""),
            f"It needs about {tensors:g} * L^2 * q^2 * 8 bytes plus n_chains * L * "
            "(n_sweeps + 9 n_temperatures): fit fewer sites (columns), a "
            "smaller alphabet, fewer chains, sweeps per update or temperatures.",
        )
        weights = check_sample_weight(sample_weight, X.shape[0])
        if weights is None:
            weights = np.ones(X.shape[0])
        rows, w, _ = distinct_rows(X, weights)
        n_eff = float(weights.sum())
        pseudocount = 1.0 / n_eff if self.pseudocount is None else self.pseudocount
        pseudocount = min(pseudocount, 0.5)
        f1, f2 = frequencies(rows, w, q, pseudocount)
        state = self._kept_state(f1, n_eff)
        if state is None:
            started = time.perf_counter()
            state = self._new_state(X, weights, f1, n_eff, q)
        else:  # the history's clock goes on
            started = time.perf_counter() - state.history["time"][-1]
        with Threads(self.n_jobs), one_blas_thread():
            converged = self._learn(state, f1, f2, started)
        self._set_fitted(state, q, n_eff)
        if not converged:
            message = _not_converged_message(self, state.history, state.failed_tests)
            warn(message, ConvergenceWarning)
        return self
