"""The training engine: what happens in one epoch, for every estimator that
trains by epochs over mini-batches.

:meth:`EpochTrainingMixin._run_epochs` is the one loop. Each epoch it

1. shuffles the rows (one permutation drawn from the fit's random stream) and
   makes one update per mini-batch with the estimator's step;
2. asks the estimator whether the model diverged; if so it restores the state
   of the last check that passed and raises ``DivergenceError`` (a
   ``FloatingPointError``) with the estimator's diagnosis and advice. Every
   epoch is checked except on small data sets, where epochs of a few
   mini-batches come by the hundred: there the first
   :data:`CHECKED_FIRST_EPOCHS` epochs, the last one of the call, every one
   that is scored or printed, and one every :data:`CHECK_EVERY_ROWS` training
   rows (:func:`check_due`);
3. counts and times the epoch, scores the held-out data when there are any
   (early stopping's criterion), adds the estimator's own figures, records it
   all in ``history_`` and prints it when ``verbose``;
4. keeps the best state seen and stops after ``n_iter_no_change`` epochs
   without an improvement of more than ``tol`` (:class:`EarlyStopping`).

After the loop the best state is restored. An estimator supplies only its
step and its state, as scikit-learn's ``BaseMixture`` subclasses supply
``_m_step`` while the base runs ``fit``:

* ``_make_step()``: a function ``step(batch)`` making one update from a
  mini-batch (a tuple of row subsets of the training arrays); the solver
  tables of the estimators build it, and it calls the compiled kernel;
* ``_training_state()`` / ``_set_training_state(state)``: copies of every
  array training changes, and their restoration (which also republishes the
  fitted parameters);
* ``_divergence()``: ``None``, or a sentence saying what went wrong and what
  to do (see :mod:`sklearn_rbm._core.divergence` for the binary RBMs' test);
* ``_validation_score(validation)``: the early-stopping criterion on the
  held-out arrays, named by the class attribute ``_criterion``;
* optionally ``_begin_epoch(epoch)``, ``_end_epoch()``, ``_epoch_figures()``
  (cheap figures recorded every epoch, e.g. the fraction of rows on which
  inference converged) and ``_monitor(train, validation)`` (figures that cost
  work, computed only when ``verbose`` asks for them).
"""

import contextlib
import time
from abc import ABC, abstractmethod
from typing import NamedTuple

import numpy as np
from sklearn.utils import gen_batches

from .._numerics.jit import CACHE
from .divergence import DivergenceError
from .numba_compat import on_first_compile


class Criterion(NamedTuple):
    """The held-out figure early stopping watches.

    Attributes
    ----------
    name : str
        Its key in ``history_`` (e.g. ``'validation_log_likelihood'``).
    greater_is_better : bool
        Whether larger values are improvements.
    best_attribute : str
        The fitted attribute holding the best value (e.g.
        ``'best_validation_score_'``).
    """

    name: str
    greater_is_better: bool
    best_attribute: str


class EarlyStopping:
    """Patience rule of every estimator that stops early.

    A value improves on the best one when it is better by more than ``tol``
    (in the criterion's direction); after ``patience`` evaluations in a row
    without an improvement, :meth:`update` says stop. Every estimator's
    ``tol`` and ``n_iter_no_change`` mean exactly this.
    """

    def __init__(self, tol, patience, *, greater_is_better=True):
        self.tol = tol
        self.patience = patience
        self.sign = 1.0 if greater_is_better else -1.0
        self.best_value = None
        self.best_index = None
        self.best_state = None
        self.n_stale = 0

    def improves(self, value):
        """Whether ``value`` beats the best value by more than ``tol``."""
        if self.best_value is None:
            return True
        return self.sign * (value - self.best_value) > self.tol

    def update(self, value, index, state=None):
        """Record ``value`` (reached at ``index``, with ``state`` a callable
        returning the state to keep); ``True`` when patience has run out."""
        if self.improves(value):
            self.best_value, self.best_index, self.n_stale = value, index, 0
            if state is not None:
                self.best_state = state()
        else:
            self.n_stale += 1
        return self.n_stale >= self.patience


def compile_notice(estimator):
    """At ``verbose >= 1``, a context in which the first numba compilation of
    a package kernel prints one line.

    A kernel that neither ships with the package nor is in the user's cache
    compiles on its first call (seconds); numba's compile events say when
    that happens, so the notice is printed exactly when it does, and not
    when the kernels load from a cache.
    """
    if not estimator.verbose:
        return contextlib.nullcontext()
    name = type(estimator).__name__

    def notice(kernel):
        later = (
            "it is cached on disk for later runs"
            if CACHE
            else "SKLEARN_RBM_NUMBA_CACHE=0 turns the cache off"
        )
        print(
            f"[{name}] compiling the numba kernel {kernel} and those it calls "
            f"on their first use (seconds; {later})"
        )

    return on_first_compile(notice, package="sklearn_rbm")


def progress_line(estimator, unit, index, total, seconds, figures):
    """One progress line, the same for every estimator.

    ``[Name] epoch 3/20, 0.42 s, train log-likelihood -45.2103, ...``: the
    estimator, the unit of progress with its count, the seconds it took
    (scoring included) and the figures, named by their history keys.
    """
    parts = [f"[{type(estimator).__name__}] {unit} {index}/{total}", f"{seconds:.2f} s"]
    for name, value in figures.items():
        if value is None or (isinstance(value, float) and np.isnan(value)):
            continue
        label = _label(name)
        if isinstance(value, (int, np.integer)):
            parts.append(f"{label} {value}")
        else:
            parts.append(f"{label} {value:.4f}")
    return ", ".join(parts)


def _label(name):
    """A history key as it reads in a progress line."""
    label = name.replace("validation_", "held-out ").replace("train_", "train ")
    for compound in ("log_likelihood", "free_energy"):
        label = label.replace(compound, compound.replace("_", "-"))
    return label.replace("_", " ").replace("ais ", "AIS ")


#: Epochs that are always checked for divergence: a learning rate too large
#: for the data shows there.
CHECKED_FIRST_EPOCHS = 10

#: Training rows between two divergence checks after the first epochs. Epochs
#: of at least this many rows are all checked; on smaller data sets a check
#: every epoch costs as much as a sizeable part of the epoch (a sixth of a
#: default ``GaussianBernoulliRBM`` fit of ``load_wine``'s 178 rows, 400
#: epochs of four mini-batches, where one check in six epochs is 3 %).
CHECK_EVERY_ROWS = 1000


def check_due(epoch, last_epoch, n_samples, evaluated):
    """Whether epoch ``epoch`` (1-based, counted across calls) of a call
    ending at ``last_epoch`` on ``n_samples`` training rows is checked for
    divergence; ``evaluated``: the epoch is scored or printed, which needs a
    sound model."""
    every = -(-CHECK_EVERY_ROWS // n_samples)  # ceiling division
    return (
        evaluated
        or epoch <= CHECKED_FIRST_EPOCHS
        or epoch == last_epoch
        or epoch % every == 0
    )


class History:
    """Per-epoch (or per-step) figures, turned into ``history_``: a dict of
    1-D arrays of equal length, one entry per epoch, ready to plot.

    ``previous`` is a history to continue; ``names`` are columns that exist
    even while empty. A figure missing from an entry is recorded as NaN.
    """

    def __init__(self, previous=None, names=()):
        self.columns = {name: [] for name in names}
        self.length = 0
        for name, values in (previous or {}).items():
            self.columns[name] = list(values)
            self.length = len(values)

    def append(self, figures):
        for name in figures:
            if name not in self.columns:
                self.columns[name] = [np.nan] * self.length
        for name, column in self.columns.items():
            column.append(figures.get(name, np.nan))
        self.length += 1

    def drop_last(self, n):
        """Forget the last ``n`` entries."""
        if n > 0:
            for column in self.columns.values():
                del column[-n:]
            self.length -= n

    def as_dict(self):
        return {name: np.asarray(values) for name, values in self.columns.items()}


class EpochTrainingMixin(ABC):
    """The epoch loop of every estimator that trains by mini-batches.

    Needs the hyperparameters ``batch_size``, ``tol``, ``n_iter_no_change``,
    ``verbose``, and the hooks listed in the module docstring (the required
    ones are abstract methods: a class that misses one cannot be
    instantiated). Sets ``n_iter_`` (epochs run, counted across
    ``partial_fit`` calls), ``history_`` and the criterion's best-value
    attribute.
    """

    #: The held-out figure early stopping watches (subclasses set it).
    _criterion = Criterion("validation_score", True, "best_validation_score_")

    # ------------------------------------------------------------- hooks
    @abstractmethod
    def _make_step(self):
        """A function ``step(batch)`` making one update from a mini-batch."""

    @abstractmethod
    def _training_state(self):
        """Copies of every array training changes."""

    @abstractmethod
    def _set_training_state(self, state):
        """Restore a :meth:`_training_state` (and republish the parameters)."""

    @abstractmethod
    def _divergence(self):
        """``None``, or what went wrong and what to do."""

    @abstractmethod
    def _validation_score(self, validation):
        """The early-stopping criterion ``_criterion`` on held-out arrays."""

    def _begin_epoch(self, epoch):
        """Called before epoch ``epoch`` (1-based, counted across calls)."""
        return None

    def _end_epoch(self):
        """Called after the updates of an epoch, before it is checked."""
        return None

    def _epoch_figures(self):
        """Cheap figures of the epoch, recorded in ``history_`` every epoch."""
        return {}

    def _monitor(self, train, validation):
        """Figures that cost work, recorded and printed when ``verbose``."""
        return {}

    # -------------------------------------------------------------- loop
    def _start_history(self, keep=False):
        """A fresh history (``fit``), or the one to continue (``partial_fit``)."""
        previous = getattr(self, "history_", None) if keep else None
        self._history = History(previous)
        setattr(self, self._criterion.best_attribute, None)

    def _run_epochs(self, train, validation, n_epochs, rs, *, early_stopping):
        """Train for ``n_epochs`` epochs; see the module docstring.

        ``train`` and ``validation`` are tuples of arrays sharing their rows
        (``(X,)`` or ``(X, Y)``); ``validation`` may be None. ``rs`` is the
        ``RandomState`` that shuffles each epoch.
        """
        with compile_notice(self):
            self._epochs(train, validation, n_epochs, rs, early_stopping)

    def _epochs(self, train, validation, n_epochs, rs, early_stopping):
        """The loop of :meth:`_run_epochs`."""
        criterion = self._criterion
        stopper = EarlyStopping(
            self.tol,
            self.n_iter_no_change,
            greater_is_better=criterion.greater_is_better,
        )
        step = self._make_step()
        n_samples = train[0].shape[0]
        last_epoch = self.n_iter_ + n_epochs
        evaluated = validation is not None or bool(self.verbose)
        checked, saved = self.n_iter_, self._training_state()
        for _ in range(n_epochs):
            epoch = self.n_iter_ + 1
            start = time.perf_counter()
            self._begin_epoch(epoch)
            order = rs.permutation(n_samples)
            for batch in gen_batches(n_samples, self.batch_size):
                rows = order[batch]
                step(tuple(array[rows] for array in train))
            self._end_epoch()
            if check_due(epoch, last_epoch, n_samples, evaluated):
                self._check_divergence(epoch, saved, checked)
                checked, saved = epoch, self._training_state()
            self.n_iter_ = epoch
            figures = self._epoch_figures()
            if validation is not None:
                figures[criterion.name] = self._validation_score(validation)
            if self.verbose:
                figures.update(self._monitor(train, validation))
            seconds = time.perf_counter() - start
            self._history.append({"epoch": epoch, "seconds": seconds, **figures})
            stop = False
            if criterion.name in figures:
                stop = stopper.update(
                    figures[criterion.name], epoch, self._training_state
                )
            if self.verbose:
                print(progress_line(self, "epoch", epoch, last_epoch, seconds, figures))
            if early_stopping and stop:
                if self.verbose:
                    print(
                        f"[{type(self).__name__}] early stopping: the "
                        f"{_label(criterion.name)} has not improved by "
                        f"more than tol={self.tol:g} for {stopper.n_stale} epochs; "
                        f"keeping epoch {stopper.best_index}."
                    )
                break
        if early_stopping and stopper.best_state is not None:
            self._set_training_state(stopper.best_state)
        if stopper.best_value is not None:
            setattr(self, criterion.best_attribute, stopper.best_value)
        self.history_ = self._history.as_dict()

    def _check_divergence(self, epoch, saved, checked):
        """Raise ``DivergenceError`` if the model diverged in the epochs
        since epoch ``checked``, the last that passed its check, whose
        state ``saved`` is then restored (and ``n_iter_`` and the history
        with it)."""
        # The check looks for overflow and NaN: numpy's warnings about them
        # would only repeat its finding.
        with np.errstate(all="ignore"):
            problem = self._divergence()
        if problem is None:
            return
        self._set_training_state(saved)
        self._history.drop_last(epoch - 1 - checked)
        self.n_iter_ = checked
        self.history_ = self._history.as_dict()
        if checked == epoch - 1:
            where, kept = f"in epoch {epoch}", "from the start of that epoch"
        else:
            where = f"between epochs {checked + 1} and {epoch}"
            kept = f"after epoch {checked}, the last checked,"
        raise DivergenceError(
            f"Training diverged {where}: {problem} The parameters {kept} were kept."
        )
